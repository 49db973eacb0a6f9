// Operator: tenants and their quotas; create a tenant, edit a quota.
import { h, mount } from '../dom.js';
import * as api from '../api.js';
import { header, button, link, table, empty, form, card, loading, toast } from '../ui.js';
import { bytes, num, time } from '../format.js';

const GiB = 1024 ** 3;

function quotaFields(q = {}) {
  return [
    { name: 'max_gpus', label: 'GPUs', type: 'number', min: 0, value: String(num(q.max_gpus)), keys: ['max_gpus', 'quota.max_gpus'] },
    { name: 'max_instances', label: 'Instances', type: 'number', min: 0, value: String(num(q.max_instances)), keys: ['max_instances', 'quota.max_instances'] },
    { name: 'max_storage_gib', label: 'Storage (GiB)', type: 'number', min: 0, value: String(Math.round(num(q.max_storage_bytes) / GiB)),
      keys: ['max_storage_bytes', 'quota.max_storage_bytes'] },
  ];
}

const quotaOf = (v) => ({
  max_gpus: String(num(v.max_gpus)), max_instances: String(num(v.max_instances)),
  max_storage_bytes: String(Math.round(Number(v.max_storage_gib || 0) * GiB)),
});

export default async function tenantsPage(root, params, signal) {
  const top = h('div');
  const list = h('div', loading());
  mount(root, header('Tenants', 'Customers of the platform and what each may use.',
    button('New tenant', showCreate, 'primary')), top, list);

  function showCreate() {
    mount(top, card('New tenant', form({
      fields: [
        { name: 'tenant_id', label: 'ID', placeholder: 'studio-a', keys: ['tenant_id', 'tenant.tenant_id'],
          hint: '3-63 of a-z, 0-9 and "-", starting with a letter; it never changes.' },
        { name: 'display_name', label: 'Display name', placeholder: 'Studio A', keys: ['display_name', 'tenant.display_name'] },
        ...quotaFields({ max_gpus: 8, max_instances: 10, max_storage_bytes: 1024 * GiB }),
      ],
      submit: 'Create tenant',
      onCancel: () => top.replaceChildren(),
      onSubmit: async (v) => {
        await api.post('/v1/tenants', {
          tenant: { tenant_id: v.tenant_id, display_name: v.display_name, quota: quotaOf(v) },
          request_id: api.requestId(),
        });
        top.replaceChildren();
        toast(`Tenant ${v.tenant_id} created`);
        load();
      },
    })));
  }

  function showEdit(t) {
    mount(top, card(`Quota of ${t.tenant_id}`, form({
      inline: true,
      fields: quotaFields(t.quota),
      submit: 'Save quota',
      onCancel: () => top.replaceChildren(),
      onSubmit: async (v) => {
        await api.patch(`/v1/tenants/${encodeURIComponent(t.tenant_id)}`,
          { tenant_id: t.tenant_id, quota: quotaOf(v) }, { update_mask: 'quota' });
        top.replaceChildren();
        toast(`Quota of ${t.tenant_id} saved`);
        load();
      },
    })));
    top.scrollIntoView({ behavior: 'smooth' });
  }

  async function load() {
    const { items } = await api.listAll('/v1/tenants', 'tenants', {}, signal);
    mount(list, table([
      { label: 'Tenant', cell: (t) => h('span', h('strong', t.tenant_id), t.display_name && h('div.muted.small', t.display_name)) },
      { label: 'GPUs', class: 'num', cell: (t) => String(num(t.quota?.max_gpus)) },
      { label: 'Instances', class: 'num', cell: (t) => String(num(t.quota?.max_instances)) },
      { label: 'Storage', class: 'num', cell: (t) => bytes(t.quota?.max_storage_bytes) },
      { label: 'Created', cell: (t) => time(t.create_time) },
      { label: '', class: 'row-actions', cell: (t) => h('span',
        link('Members', `#/admin/tenants/${encodeURIComponent(t.tenant_id)}/members`, 'btn small'), ' ',
        button('Edit quota', () => showEdit(t), 'small')) },
    ], items, empty('No tenants', 'Create a tenant, then its users under Members on its row.'), (t) => t.tenant_id));
  }
  await load();
}
