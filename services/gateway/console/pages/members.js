// Members: who belongs to the tenant and with which role; tenant admins add people (an
// existing user by id, or a new user), change roles and remove members.
import { h, mount } from '../dom.js';
import * as api from '../api.js';
import * as session from '../session.js';
import { header, button, table, empty, form, card, loading, perform, toast } from '../ui.js';
import { label, time } from '../format.js';

const roles = ['ROLE_VIEWER', 'ROLE_MEMBER', 'ROLE_TENANT_ADMIN'];
const roleOptions = roles.map((r) => ({ value: r, label: label(r, 'ROLE_') }));

// The session's tenant; an operator's any tenant (/admin/tenants/:tenant_id/members).
export default async function membersPage(root, params, signal) {
  const tenant = params.tenant_id || session.tenantId();
  if (!tenant) {
    mount(root, header('Members'), empty('No tenant', 'You act in no tenant. Operators manage tenants under Tenants.'));
    return;
  }
  const path = `/v1/tenants/${encodeURIComponent(tenant)}/members`;
  const canManage = session.atLeast('ROLE_TENANT_ADMIN') || session.isPlatformAdmin();
  const top = h('div');
  const list = h('div', loading());
  mount(root, header('Members', `People in ${tenant} and what they may do.`,
    canManage && button('Add existing user', showAdd),
    canManage && button('Create user', showCreate, 'primary')), top, list);

  function showAdd() {
    mount(top, card('Add an existing user', form({
      fields: [
        { name: 'user_id', label: 'User id', placeholder: 'usr_…', hint: 'The user\'s id, as `gpuaasctl whoami` shows it.' },
        { name: 'role', label: 'Role', type: 'select', value: 'ROLE_MEMBER', options: roleOptions },
      ],
      submit: 'Add member',
      onCancel: () => top.replaceChildren(),
      onSubmit: async (v) => {
        await api.post(path, { tenant_id: tenant, ...v });
        top.replaceChildren();
        toast('Member added');
        load();
      },
    })));
  }

  function showCreate() {
    mount(top, card('Create a user in this tenant', form({
      fields: [
        { name: 'user_name', label: 'User name', keys: ['user_name', 'user.user_name'], hint: '3-63 of a-z, 0-9, ".", "_" and "-".' },
        { name: 'display_name', label: 'Full name', keys: ['display_name', 'user.display_name'] },
        { name: 'password', label: 'Password', type: 'password', hint: 'At least 8 characters; tell it to them safely.', autocomplete: 'new-password' },
        { name: 'role', label: 'Role', type: 'select', value: 'ROLE_MEMBER', options: roleOptions },
      ],
      submit: 'Create user',
      onCancel: () => top.replaceChildren(),
      onSubmit: async (v) => {
        await api.post('/v1/users', {
          user: { user_name: v.user_name, display_name: v.display_name }, password: v.password,
          tenant_id: tenant, role: v.role, request_id: api.requestId(),
        });
        top.replaceChildren();
        toast(`${v.user_name} can log in now`);
        load();
      },
    })));
  }

  async function changeRole(m, select) {
    try {
      await api.patch(`${path}/${encodeURIComponent(m.user_id)}`, { role: select.value });
      toast(`${m.user_name || m.user_id} is now ${label(select.value, 'ROLE_')}`);
    } catch (error) {
      select.value = m.role;
      toast(error.message, 'bad');
    }
  }

  const remove = (m) => perform({
    ask: { title: `Remove ${m.user_name || m.user_id}?`, text: `They lose access to ${tenant} at once.`, label: 'Remove' },
    action: () => api.del(`${path}/${encodeURIComponent(m.user_id)}`),
    done: 'Member removed', after: load,
  });

  async function load() {
    const { items } = await api.listAll(path, 'members', {}, signal);
    mount(list, table([
      { label: 'User', cell: (m) => h('span', h('strong', m.user_name || m.user_id), h('div.muted.small', m.user_id)) },
      { label: 'Role', cell: (m) => (canManage
        ? h('select', { 'aria-label': 'Role', onchange: (e) => changeRole(m, e.target) },
          roleOptions.map((o) => h('option', { value: o.value, selected: o.value === m.role }, o.label)))
        : label(m.role, 'ROLE_')) },
      { label: 'Member since', cell: (m) => time(m.create_time) },
      canManage && { label: '', class: 'row-actions', cell: (m) => button('Remove', () => remove(m), 'small danger') },
    ].filter(Boolean), items, empty('No members', 'Add people so they can log in to this tenant.'), (m) => m.user_id));
  }
  await load();
}
