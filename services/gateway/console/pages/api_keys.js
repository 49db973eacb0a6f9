// API keys: long-lived credentials for scripts, acting in this tenant; the secret is shown
// once at creation; revoking is final.
import { h, mount } from '../dom.js';
import * as api from '../api.js';
import * as session from '../session.js';
import { header, button, table, empty, form, card, loading, perform, secretBox } from '../ui.js';
import { badge, label, time } from '../format.js';

const roles = ['ROLE_VIEWER', 'ROLE_MEMBER', 'ROLE_TENANT_ADMIN'];

export default async function apiKeysPage(root, params, signal) {
  const top = h('div');
  const list = h('div', loading());
  mount(root, header('API keys', 'Keys let scripts and services call the API as this tenant, with a role you choose.',
    button('New API key', showForm, 'primary')), top, list);

  function showForm() {
    mount(top, card('New API key', form({
      fields: [
        { name: 'name', label: 'Name', placeholder: 'render-farm', hint: 'What the key is for.' },
        { name: 'role', label: 'Role', type: 'select', value: 'ROLE_MEMBER',
          hint: 'Never more than your own role.',
          options: [{ value: '', label: 'My own role' }, ...roles.map((r) => ({ value: r, label: label(r, 'ROLE_') }))] },
        { name: 'ttl_days', label: 'Expires after (days)', type: 'number', min: 1, keys: ['ttl'], placeholder: 'never' },
      ],
      submit: 'Create key',
      onCancel: () => top.replaceChildren(),
      onSubmit: async (v) => {
        const body = { name: v.name, request_id: api.requestId() };
        if (v.role) body.role = v.role;
        if (v.ttl_days) body.ttl = `${Math.round(Number(v.ttl_days) * 86400)}s`;
        const created = await api.post('/v1/apiKeys', body);
        mount(top, secretBox(`API key "${created.api_key.name}"`, [['Secret', created.secret]],
          () => top.replaceChildren()));
        load();
      },
    })));
    top.querySelector('input').focus();
  }

  const revoke = (key) => perform({
    ask: { title: `Revoke ${key.name}?`, text: 'Scripts using it stop working at once. Revoking is final.', label: 'Revoke' },
    action: () => api.post(`/v1/apiKeys/${encodeURIComponent(key.api_key_id)}:revoke`),
    done: 'Key revoked', after: load,
  });

  async function load() {
    const { items } = await api.listAll('/v1/apiKeys', 'api_keys', {}, signal);
    const now = Date.now();
    mount(list, table([
      { label: 'Name', cell: (k) => h('span', h('strong', k.name), h('div.muted.small', k.api_key_id)) },
      { label: 'Role', cell: (k) => label(k.role, 'ROLE_') },
      { label: 'Status', cell: (k) => (k.revoked ? h('span.badge.bad', 'Revoked')
        : k.expire_time && new Date(k.expire_time) < now ? h('span.badge.idle', 'Expired') : h('span.badge.ok', 'Active')) },
      { label: 'Created', cell: (k) => time(k.create_time) },
      { label: 'Expires', cell: (k) => (k.expire_time ? time(k.expire_time) : 'never') },
      { label: '', class: 'row-actions', cell: (k) => !k.revoked && button('Revoke', () => revoke(k), 'small danger') },
    ], items, empty('No API keys',
      'Create a key for a script or a CI job; it acts in this tenant with the role you give it.'), (k) => k.api_key_id));
  }
  await load();
}
