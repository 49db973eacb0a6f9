// One instance: its state and reason, Open (a one-time link in a new tab), Stop, Start,
// Delete, cost so far, GPU metrics as charts, live logs, its events and (MEMBER and above) a
// terminal. Another tenant's id,
// or a missing one, shows "not found".
import { h, mount } from '../dom.js';
import * as api from '../api.js';
import * as router from '../router.js';
import * as session from '../session.js';
import { header, button, card, facts, notFound, perform, toast, loading, tabs } from '../ui.js';
import { badge, label, time, money, duration } from '../format.js';
import { metricsPanel } from './instance_metrics.js';
import { logsPanel } from './instance_logs.js';
import { terminalPanel } from './instance_terminal.js';

const RUNNING = ['STATE_READY', 'STATE_RUNNING'];
const POLL_MS = 3000;

export default async function instancePage(root, { instance_id: id }, signal) {
  mount(root, loading());
  const path = `/v1/instances/${encodeURIComponent(id)}`;
  let instance;
  try {
    instance = await api.get(path, {}, signal);
  } catch (error) {
    if (error.notFound || error.code === 3) return notFound(root, 'Instance', { text: 'Back to instances', href: '#/instances' });
    throw error;
  }
  const canDrive = session.atLeast('ROLE_MEMBER') || session.isPlatformAdmin();
  const head = h('div');
  const summary = h('div');
  const cost = h('div.cost', loading());
  const events = h('div');
  const metrics = metricsPanel(id, signal);
  const logs = logsPanel(id, signal);
  const terminal = terminalPanel(id, signal);
  mount(root, head,
    h('div.split', card('Details', summary), card('Cost so far', cost)),
    tabs([
      { id: 'metrics', label: 'GPU metrics', render: (panel) => panel.append(metrics.el) },
      { id: 'logs', label: 'Logs', render: (panel) => panel.append(logs.el) },
      { id: 'events', label: 'Events', render: (panel) => panel.append(events) },
      ...(canDrive ? [{ id: 'terminal', label: 'Terminal', render: (panel) => panel.append(terminal.el) }] : []),
    ]));

  async function act(verb, done) {
    try {
      instance = await api.post(`${path}:${verb}`);
      draw();
      toast(done);
    } catch (error) {
      toast(error.message, 'bad');
    }
  }

  async function open(btn) {
    // Open the tab now, while the click still allows pop-ups, and point it at the link after.
    const tab = window.open('about:blank', '_blank');
    btn.disabled = true;
    try {
      const access = await api.post(`${path}:access`);
      if (tab) {
        tab.opener = null;
        tab.location.href = access.url;
      } else {
        location.assign(access.url);
      }
    } catch (error) {
      if (tab) tab.close();
      toast(error.message, 'bad');
    } finally {
      btn.disabled = false;
    }
  }

  const remove = () => perform({
    ask: { title: `Delete ${instance.name || id}?`, label: 'Delete',
      text: 'The instance stops and is forgotten. Its storage and its usage records stay.' },
    action: () => api.del(path), done: `Deleting ${id}`, after: () => router.go('/instances'),
  });

  function draw() {
    const i = instance;
    const running = RUNNING.includes(i.state);
    const hasHttp = (i.template?.ports || []).some((p) => p.protocol !== 'PROTOCOL_TCP');
    const wantsRunning = i.desired_state === 'DESIRED_STATE_RUNNING';
    mount(head, header(h('span', i.name || i.instance_id, ' ', badge(i.state, 'STATE_')),
      [i.instance_id, i.image && `${i.image} on ${i.spec_name}`].filter(Boolean).join(' · '),
      canDrive && hasHttp && h('button#open.btn.primary', {
        type: 'button', disabled: !running, title: running ? 'Opens in a new tab' : 'Available while it runs',
        onclick: (e) => open(e.target),
      }, 'Open'),
      canDrive && wantsRunning && button('Stop', () => act('stop', `Stopping ${id}`), 'stop'),
      canDrive && !wantsRunning && i.state !== 'STATE_DELETING' && button('Start', () => act('start', `Starting ${id}`)),
      canDrive && i.state !== 'STATE_DELETING' && button('Delete', remove, 'danger')),
    stateNote(i));
    mount(summary, facts([
      ['State', h('span', badge(i.state, 'STATE_'), i.reason && ` ${label(i.reason, 'REASON_')}`)],
      i.message && ['Message', i.message],
      i.exit_code && ['Exit code', String(i.exit_code)],
      ['Spec', i.spec_name],
      ['Image', i.image || 'none'],
      ['Storage', i.storage_id ? h('a', { href: `#/storages/${i.storage_id}` }, i.storage_id) : 'none'],
      ['Node', i.node_id || '—'],
      ['GPUs', i.gpu_uuids?.length ? i.gpu_uuids.join(', ') : String(i.gpu_num || 0)],
      (i.ports || []).length && ['Ports', (i.ports || []).map((p) => `${p.port} → ${p.host}:${p.host_port}`).join(', ')],
      ['Created', time(i.create_time)],
      ['Started', time(i.start_time)],
      i.stop_time && ['Stopped', time(i.stop_time)],
      session.isPlatformAdmin() && ['Tenant', i.tenant_id],
    ]));
    mount(events, (i.events || []).length ? h('ol.timeline', [...i.events].reverse().map((e) => h('li',
      badge(e.state, 'STATE_'), ' ', time(e.time),
      e.reason && h('span.muted', ` · ${label(e.reason, 'REASON_')}`),
      e.message && h('div.muted.small', e.message))))
      : h('p.muted', 'No events yet.'));
    metrics.update(i);
    logs.update(i);
  }

  async function drawCost() {
    try {
      const usage = await api.get('/v1/usage', { instance_id: id }, signal);
      const totals = usage.totals || [];
      mount(cost, totals.length ? totals.map((t) => h('div.cost-line',
        h('strong.amount', money(t.amount_micros, t.currency)),
        h('span.muted', ` for ${duration(t.seconds)} of GPU time`)))
        : h('p.muted', 'Nothing yet: it is billed per second from the moment its workload starts.'),
      h('p.muted.small', `${(usage.records || []).length} billed interval(s); updated ${new Date().toLocaleTimeString()}.`));
    } catch (error) {
      if (error.name !== 'AbortError') mount(cost, h('p.muted', `Cost unavailable: ${error.message}`));
    }
  }

  draw();
  drawCost();
  let ticks = 0;
  const timer = setInterval(async () => {
    try {
      instance = await api.get(path, {}, signal);
      draw();
      if (++ticks % 3 === 0 || !RUNNING.includes(instance.state)) drawCost();
    } catch (error) {
      if (error.notFound) {
        clearInterval(timer);
        notFound(root, 'Instance', { text: 'Back to instances', href: '#/instances' });
      }
    }
  }, POLL_MS);
  signal.addEventListener('abort', () => clearInterval(timer));
}

function stateNote(i) {
  const notes = {
    STATE_PENDING: 'Claiming a GPU, attaching the storage and starting the image…',
    STATE_READY: 'Started; waiting for its web page to answer.',
    STATE_STOPPING: 'Stopping: the GPU goes back to the pool, the storage stays.',
    STATE_STOPPED: 'Stopped: no GPU held and nothing billed. Start it again any time.',
    STATE_DELETING: 'Being deleted.',
  };
  if (i.state === 'STATE_FAILED') {
    return h('div.alert.bad', `Failed: ${label(i.reason, 'REASON_') || 'unknown reason'}${i.message ? ' — ' + i.message : ''}`);
  }
  return notes[i.state] ? h('p.state-note.muted', notes[i.state]) : null;
}
