// Storages: the tenant's volumes, and a form to create one of a storage spec.
import { h, mount } from '../dom.js';
import * as api from '../api.js';
import * as router from '../router.js';
import * as session from '../session.js';
import { header, button, table, empty, form, card, loading } from '../ui.js';
import { badge, bytes, time, money, num } from '../format.js';

export function storageSpecLabel(s) {
  return `${s.spec_name} — ${s.size}, up to ${num(s.max_files).toLocaleString()} files — ${money(s.price_per_gb_hour_micros)}/GB·h`;
}

export default async function storagesPage(root, params, signal) {
  const canCreate = session.atLeast('ROLE_MEMBER') || session.isPlatformAdmin();
  const formSlot = h('div');
  const body = h('div', loading());
  mount(root, header('Storages', 'Volumes for models, datasets and notebooks; they outlive instances.',
    canCreate && button('New storage', () => showForm(), 'primary')), formSlot, body);

  // The form may open before the list arrives: it waits for the specs alone.
  const specsLoaded = api.listAll('/v1/storageSpecs', 'specs', {}, signal);
  const storages = await api.listAll('/v1/storages', 'storages', {}, signal);

  async function showForm() {
    if (formSlot.firstChild) return;
    const specs = await specsLoaded;
    mount(formSlot, card('New storage', form({
      fields: [
        { name: 'name', label: 'Name', placeholder: 'SD models', hint: 'For people.' },
        { name: 'storage_id', label: 'ID', placeholder: 'chosen for you',
          hint: 'Also its S3 bucket name: 3-63 of a-z, 0-9 and "-", starting with a letter; unique across the platform.' },
        { name: 'spec_name', label: 'Size', type: 'select', keys: ['spec_name', 'spec'],
          options: specs.items.map((s) => ({ value: s.spec_name, label: storageSpecLabel(s) })) },
        session.isPlatformAdmin() && { name: 'tenant_id', label: 'Tenant', value: session.tenantId() },
      ].filter(Boolean),
      submit: 'Create storage',
      onCancel: () => formSlot.replaceChildren(),
      onSubmit: async (v) => {
        const created = await api.post('/v1/storages', {
          ...v, request_id: v.storage_id ? '' : api.requestId(),
        });
        router.go(`/storages/${created.storage_id}`);
      },
    })));
    formSlot.querySelector('input').focus();
  }

  const columns = [
    { label: 'Storage', cell: (s) => h('a', { href: `#/storages/${s.storage_id}` },
      h('strong', s.name || s.storage_id), s.name && h('div.muted.small', s.storage_id)) },
    { label: 'State', cell: (s) => badge(s.state, 'STORAGE_STATE_') },
    { label: 'Spec', cell: (s) => s.spec_name },
    { label: 'Size', class: 'num', cell: (s) => bytes(s.size_bytes) },
    { label: 'Attached to', cell: (s) => (s.attachments || []).map((a) => a.instance_id).join(', ') || '—' },
    session.isPlatformAdmin() && { label: 'Tenant', cell: (s) => s.tenant_id },
    { label: 'Created', cell: (s) => time(s.create_time) },
  ].filter(Boolean);
  mount(body, table(columns, storages.items, empty('No storages yet',
    'A storage keeps your models, datasets and notebooks across instances, and you can reach it over S3.',
    canCreate && button('Create a storage', () => showForm(), 'primary')), (s) => s.storage_id));
}
