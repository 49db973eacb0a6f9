// One storage: its usage against its size, resize (move to a bigger spec), delete, its
// accessors (S3 keys; the secret shown once), its snapshots (storage_snapshots.js) and a Files
// tab for the file browser.
import { h, mount } from '../dom.js';
import * as api from '../api.js';
import * as router from '../router.js';
import * as session from '../session.js';
import { header, button, card, facts, notFound, perform, toast, loading, tabs, table, empty, form, secretBox } from '../ui.js';
import { badge, bytes, time, num } from '../format.js';
import { storageSpecLabel } from './storages.js';
import { filesTab } from './storage_files.js';
import { snapshotsTab } from './storage_snapshots.js';

export default async function storagePage(root, { storage_id: id }, signal) {
  mount(root, loading());
  const path = `/v1/storages/${encodeURIComponent(id)}`;
  let storage;
  try {
    storage = await api.get(path, {}, signal);
  } catch (error) {
    if (error.notFound || error.code === 3) return notFound(root, 'Storage', { text: 'Back to storages', href: '#/storages' });
    throw error;
  }
  const specs = (await api.listAll('/v1/storageSpecs', 'specs', {}, signal)).items;
  const canDrive = session.atLeast('ROLE_MEMBER') || session.isPlatformAdmin();
  const head = h('div');
  const resizeSlot = h('div');
  const overview = h('div');

  const remove = () => perform({
    ask: { title: `Delete ${storage.name || id}?`, label: 'Delete',
      text: 'Everything stored in it is deleted, and its accessors stop working. This cannot be undone.' },
    action: () => api.del(path), done: `Deleting ${id}`, after: () => router.go('/storages'),
  });

  function showResize() {
    const bigger = specs.filter((s) => num(s.size_bytes) > num(storage.size_bytes)
      && (s.backend_class || 'local') === (storage.backend_class || 'local'));
    if (!bigger.length) return toast('There is no bigger storage spec to move to.', 'bad');
    mount(resizeSlot, card('Resize', h('p.muted', 'Storages only grow: pick a bigger spec. Your quota applies.'), form({
      fields: [{ name: 'spec_name', label: 'New size', type: 'select', keys: ['spec_name', 'storage.spec_name'],
        options: bigger.map((s) => ({ value: s.spec_name, label: storageSpecLabel(s) })) }],
      submit: 'Resize',
      onCancel: () => resizeSlot.replaceChildren(),
      onSubmit: async ({ spec_name }) => {
        storage = await api.patch(path, { storage_id: id, spec_name }, { update_mask: 'spec_name' });
        resizeSlot.replaceChildren();
        toast(`Resized to ${spec_name}`);
        draw();
      },
    })));
  }

  function draw() {
    const s = storage;
    mount(head, header(h('span', s.name || s.storage_id, ' ', badge(s.state, 'STORAGE_STATE_')), s.storage_id,
      canDrive && button('Resize', showResize),
      canDrive && button('Delete', remove, 'danger')));
    const used = num(s.used_bytes) / Math.max(num(s.size_bytes), 1);
    mount(overview, h('div.split',
      card('Usage',
        h('div.meter', h('div.meter-label', h('span', 'Space'), h('strong', `${bytes(s.used_bytes)} of ${bytes(s.size_bytes)}`)),
          h('div.meter-bar', h('div', { style: `width:${Math.min(used * 100, 100).toFixed(1)}%` }))),
        h('div.meter', h('div.meter-label', h('span', 'Files'), h('strong', `${num(s.used_files).toLocaleString()} of ${num(s.max_files).toLocaleString()}`)))),
      card('Details', facts([
        ['Spec', s.spec_name], ['Backend', s.backend_class || 'local'],
        ['S3 bucket', h('code', s.storage_id)],
        ['Attached to', (s.attachments || []).length ? (s.attachments || []).map((a) => h('div',
          h('a', { href: `#/instances/${a.instance_id}` }, a.instance_id), a.read_only ? ' (read-only)' : '')) : 'nothing'],
        ['Created', time(s.create_time)],
        session.isPlatformAdmin() && ['Tenant', s.tenant_id],
      ]))));
  }

  draw();
  mount(root, head, resizeSlot, tabs([
    { id: 'overview', label: 'Overview', render: (panel) => panel.append(overview) },
    { id: 'accessors', label: 'Accessors', render: (panel) => accessorsTab(panel, storage, canDrive, signal) },
    { id: 'snapshots', label: 'Snapshots', render: (panel) => snapshotsTab(panel, storage, specs, canDrive, signal) },
    { id: 'files', label: 'Files', render: (panel) => filesTab(panel, storage, signal) },
  ]));
}

async function accessorsTab(panel, storage, canDrive, signal) {
  const path = `/v1/storages/${encodeURIComponent(storage.storage_id)}/accessors`;
  const top = h('div');
  const list = h('div', loading());
  mount(panel, h('div.panel-head', h('p.muted', 'Accessors are S3 keys that reach this storage only, until they expire.'),
    canDrive && button('New accessor', showForm, 'primary')), top, list);

  function showForm() {
    mount(top, card('New accessor', form({
      fields: [
        { name: 'description', label: 'Description', placeholder: 'laptop sync' },
        { name: 'ttl_hours', label: 'Valid for (hours)', type: 'number', value: '24', min: 1, keys: ['ttl'],
          hint: 'At most 720 (30 days).' },
        { name: 'read_only', label: 'Read-only (list and download only)', type: 'checkbox' },
      ],
      submit: 'Create accessor',
      onCancel: () => top.replaceChildren(),
      onSubmit: async (v) => {
        const created = await api.post(path, {
          description: v.description, read_only: v.read_only,
          ttl: `${Math.round(Number(v.ttl_hours || 24) * 3600)}s`, request_id: api.requestId(),
        });
        const { s3_endpoint: endpoint } = await api.config();
        mount(top, secretBox('Your S3 keys', [
          ['Access key id', created.access_key_id],
          ['Secret access key', created.secret_access_key],
          ['Bucket', storage.storage_id],
          endpoint && ['Endpoint', endpoint],
        ].filter(Boolean), () => top.replaceChildren()));
        load();
      },
    })));
  }

  const remove = (a) => perform({
    ask: { title: `Delete accessor ${a.access_key_id}?`, text: 'The key stops working at once.', label: 'Delete' },
    action: () => api.del(`${path}/${encodeURIComponent(a.access_key_id)}`),
    done: 'Accessor deleted', after: load,
  });

  async function load() {
    const { items } = await api.listAll(path, 'accessors', {}, signal);
    const now = Date.now();
    mount(list, table([
      { label: 'Access key id', cell: (a) => h('code', a.access_key_id) },
      { label: 'Description', cell: (a) => a.description || '—' },
      { label: 'Access', cell: (a) => (a.read_only ? 'read-only' : 'read-write') },
      { label: 'Expires', cell: (a) => (new Date(a.expire_time) < now ? h('span.badge.bad', 'Expired') : time(a.expire_time)) },
      { label: 'Created by', cell: (a) => a.creator || '—' },
      canDrive && { label: '', class: 'row-actions', cell: (a) => button('Delete', () => remove(a), 'small danger') },
    ].filter(Boolean), items, empty('No accessors',
      'Create one to upload and download with the AWS CLI, rclone or any S3 client.'), (a) => a.access_key_id));
  }
  load().catch((error) => mount(list, h('div.alert.bad', error.message)));
}
