// Instances: the tenant's instances with their live states (ListInstances, then
// WatchInstances from the list's revision, updating rows as changes arrive).
import { h, mount } from '../dom.js';
import * as session from '../session.js';
import { header, link, table, empty, loading } from '../ui.js';
import { badge, label, time } from '../format.js';
import { watchInstances } from '../watch.js';

export default async function instancesPage(root, params, signal) {
  const canCreate = session.atLeast('ROLE_MEMBER') || session.isPlatformAdmin();
  const body = h('div', loading());
  const live = h('span.live', { title: 'Live updates' }, 'connecting…');
  mount(root, header('Instances', 'GPU machines running your notebooks, apps and jobs.',
    live, canCreate && link('New instance', '#/instances/new', 'btn primary')), body);

  const instances = new Map();
  const columns = [
    { label: 'Instance', cell: (i) => h('a', { href: `#/instances/${i.instance_id}` },
      h('strong', i.name || i.instance_id), i.name && h('div.muted.small', i.instance_id)) },
    { label: 'State', cell: (i) => h('span', badge(i.state, 'STATE_'),
      i.reason && h('div.muted.small', label(i.reason, 'REASON_'))) },
    { label: 'Spec', cell: (i) => i.spec_name },
    { label: 'Image', cell: (i) => i.image || '—' },
    { label: 'GPUs', class: 'num', cell: (i) => String(i.gpu_num || 0) },
    { label: 'Node', cell: (i) => i.node_id || '—' },
    session.isPlatformAdmin() && { label: 'Tenant', cell: (i) => i.tenant_id },
    { label: 'Created', cell: (i) => time(i.create_time) },
  ].filter(Boolean);

  function draw() {
    const rows = [...instances.values()].sort((a, b) => a.instance_id.localeCompare(b.instance_id));
    mount(body, table(columns, rows, empty('No instances yet',
      'An instance is a GPU machine running an image such as Jupyter. Create one and open it in your browser within a minute.',
      canCreate && link('Create an instance', '#/instances/new', 'btn primary')), (i) => i.instance_id));
  }

  watchInstances({
    signal,
    onList: (list) => { instances.clear(); list.forEach((i) => instances.set(i.instance_id, i)); draw(); },
    onChange: (change) => {
      if (change.type === 'TYPE_DELETED') instances.delete(change.instance.instance_id);
      else instances.set(change.instance.instance_id, change.instance);
      draw();
    },
    onStatus: (connected) => {
      live.textContent = connected ? 'live' : 'reconnecting…';
      live.classList.toggle('on', connected);
    },
  });
}
