// A storage's Snapshots tab: its snapshots (read-only copies kept in Ceph), take one, delete
// one, and restore one into a new storage of the same tenant. Storages of the local backend
// have none, which the tab says instead of failing, naming the specs that have them; viewers
// see the snapshots and are told that members take, restore and delete them.
import { h, mount } from '../dom.js';
import * as api from '../api.js';
import * as router from '../router.js';
import * as session from '../session.js';
import { button, card, empty, form, loading, perform, table, toast } from '../ui.js';
import { bytes, num, time } from '../format.js';
import { storageSpecLabel } from './storages.js';

export async function snapshotsTab(panel, storage, specs, canDrive, signal) {
  const id = storage.storage_id;
  const path = `/v1/storages/${encodeURIComponent(id)}/snapshots`;
  if ((storage.backend_class || 'local') !== 'ceph') {
    mount(panel, noSnapshots(storage, specs));
    return;
  }
  const top = h('div');
  const list = h('div', loading());
  mount(panel, h('div.panel-head',
    h('p.muted', 'A snapshot is a read-only copy of this storage at one moment. Restore one into a new storage.',
      !canDrive && ` You are a ${roleName()} in this tenant: members take, restore and delete snapshots.`),
    canDrive && button('Take snapshot', showTake, 'primary')), top, list);

  function showTake() {
    mount(top, card('Take a snapshot', form({
      fields: [{ name: 'snapshot_id', label: 'Snapshot id', placeholder: 'before-training', keys: ['snapshot_id'],
        hint: 'Lowercase letters, digits and -, 3 to 63, starting with a letter.' }],
      submit: 'Take snapshot',
      onCancel: () => top.replaceChildren(),
      onSubmit: async ({ snapshot_id }) => {
        await api.post(path, { snapshot_id });
        top.replaceChildren();
        toast(`Snapshot ${snapshot_id} taken`);
        load();
      },
    })));
  }

  function showRestore(snapshot) {
    const fitting = specs.filter((s) => (s.backend_class || 'local') === 'ceph'
      && num(s.size_bytes) >= num(snapshot.used_bytes));
    if (!fitting.length) return toast('There is no Ceph storage spec large enough for this snapshot.', 'bad');
    mount(top, card(`Restore ${snapshot.snapshot_id} into a new storage`, form({
      fields: [
        { name: 'storage_id', label: 'New storage id', placeholder: `${id}-restored`, keys: ['storage_id'],
          hint: 'Also its S3 bucket name: lowercase letters, digits and -, 3 to 63.' },
        { name: 'name', label: 'Name', placeholder: `${storage.name || id} as of ${snapshot.snapshot_id}` },
        { name: 'spec_name', label: 'Size', type: 'select', keys: ['spec_name'],
          value: storage.spec_name,
          options: fitting.map((s) => ({ value: s.spec_name, label: storageSpecLabel(s) })) },
      ],
      submit: 'Restore',
      onCancel: () => top.replaceChildren(),
      onSubmit: async (v) => {
        const created = await api.post('/v1/storages', {
          storage_id: v.storage_id, name: v.name, spec_name: v.spec_name,
          request_id: v.storage_id ? undefined : api.requestId(),
          source_snapshot: { storage_id: id, snapshot_id: snapshot.snapshot_id },
        });
        toast(`Restored into ${created.storage_id}`);
        router.go(`/storages/${encodeURIComponent(created.storage_id)}`);
      },
    })));
  }

  const remove = (snapshot) => perform({
    ask: { title: `Delete snapshot ${snapshot.snapshot_id}?`, label: 'Delete',
      text: 'The copy is gone for good. Storages restored from it keep their data.' },
    action: () => api.del(`${path}/${encodeURIComponent(snapshot.snapshot_id)}`),
    done: 'Snapshot deleted', after: load,
  });

  async function load() {
    const { items } = await api.listAll(path, 'snapshots', {}, signal);
    mount(list, table([
      { label: 'Snapshot', cell: (s) => h('code', s.snapshot_id) },
      { label: 'Held', cell: (s) => bytes(s.used_bytes) },
      { label: 'Taken', cell: (s) => time(s.create_time) },
      canDrive && { label: '', class: 'row-actions', cell: (s) => h('span',
        button('Restore…', () => showRestore(s), 'small'), ' ',
        button('Delete', () => remove(s), 'small danger')) },
    ].filter(Boolean), items, empty('No snapshots',
      'Take one before a risky change: you can restore it into a new storage later.'), (s) => s.snapshot_id));
  }
  load().catch((error) => {
    // The backend has no snapshots after all (a storage service without its Ceph cluster).
    if (error.code === UNIMPLEMENTED) mount(panel, empty('No snapshots here', error.message));
    else mount(list, h('div.alert.bad', error.message));
  });
}

const UNIMPLEMENTED = 12;

function roleName() {
  return (session.current()?.role || 'ROLE_VIEWER').replace('ROLE_', '').toLowerCase().replace(/_/g, ' ');
}

// What a storage without snapshots says: they need a Ceph-backed storage, and which specs make one.
function noSnapshots(storage, specs) {
  const ceph = specs.filter((s) => s.backend_class === 'ceph').map((s) => s.spec_name);
  return empty('Snapshots need a Ceph-backed storage',
    `This storage keeps its data on the ${storage.backend_class || 'local'} backend, which has no snapshots. `
    + (ceph.length ? `Storages of a Ceph spec (${ceph.join(', ')}) have them: create one and copy your data there.`
      : 'This platform offers no Ceph storage spec yet.'));
}
