// Operator: nodes with their GPUs' health and last XID; cordon, uncordon and drain.
import { h, mount } from '../dom.js';
import * as api from '../api.js';
import { header, button, table, empty, loading, perform } from '../ui.js';
import { badge, ago, num } from '../format.js';

export default async function nodesPage(root, params, signal) {
  const list = h('div', loading());
  mount(root, header('Nodes', 'Hosts with GPUs, as their agents report them.'), list);

  const act = (node, verb, done) => perform({
    ask: verb === 'drain' && { title: `Drain ${node.node_id}?`, label: 'Drain',
      text: 'It is cordoned and its available stocks are deleted; running instances finish.' },
    action: () => api.post(`/v1/nodes/${encodeURIComponent(node.node_id)}:${verb}`),
    done: `${node.node_id} ${done}`, after: load,
  });

  function gpus(node) {
    return h('div.gpus', (node.gpus || []).map((g, i) => h(`span.gpu.${g.healthy ? 'ok' : 'bad'}`, {
      title: `${g.uuid}\n${g.model}, ${num(g.memory_mib)} MiB${g.mig_enabled ? ', MIG' : ''}\n` +
        `${num(g.utilization_percent)} % used, ${num(g.temperature_celsius)} °C, ${num(g.power_watts)} W`,
    }, `${i} ${g.model}`, g.last_xid ? h('b', ` XID ${g.last_xid}`) : null)));
  }

  async function load() {
    const { items } = await api.listAll('/v1/nodes', 'nodes', {}, signal);
    mount(list, table([
      { label: 'Node', cell: (n) => h('span', h('strong', n.node_id), h('div.muted.small', `${n.cpu} CPU · ${n.memory} · agent ${n.agent_version || '—'}`)) },
      { label: 'State', cell: (n) => h('span', badge(n.state, 'NODE_STATE_'), n.cordoned && h('span.badge.warn', 'Cordoned')) },
      { label: 'GPUs (health, last XID)', cell: (n) => {
        const healthy = (n.gpus || []).filter((g) => g.healthy).length;
        return h('div', h('div.small', `${healthy} of ${(n.gpus || []).length} healthy`), gpus(n));
      } },
      { label: 'Heartbeat', cell: (n) => ago(n.heartbeat_time) },
      { label: '', class: 'row-actions', cell: (n) => [
        n.cordoned ? button('Uncordon', () => act(n, 'uncordon', 'uncordoned'), 'small')
          : button('Cordon', () => act(n, 'cordon', 'cordoned'), 'small'),
        button('Drain', () => act(n, 'drain', 'drained'), 'small danger'),
      ] },
    ], items, empty('No nodes', 'Nodes appear when their agents register (gpuaas-agent).'), (n) => n.node_id));
  }
  await load();
  const timer = setInterval(() => load().catch(() => {}), 10000);
  signal.addEventListener('abort', () => clearInterval(timer));
}
