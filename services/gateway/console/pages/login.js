// Login: user name and password; a user in several tenants then picks the one to act in.
import { h, mount } from '../dom.js';
import * as session from '../session.js';
import { form, button } from '../ui.js';
import { label } from '../format.js';

export default function loginPage(root, done) {
  const box = h('div.login-box');
  mount(root, h('div.login', box));
  showLogin();

  function showLogin() {
    mount(box,
      h('div.login-brand', h('img', { src: 'favicon.svg', alt: '' }), h('span', 'gpuaas')),
      h('h1', 'Log in'),
      h('p.muted', 'GPU instances, storage and keys for your team.'),
      form({
        fields: [
          { name: 'user_name', label: 'User name', autocomplete: 'username', required: true },
          { name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true },
        ],
        submit: 'Log in',
        onSubmit: async ({ user_name, password }) => {
          if (!user_name) throw new Error('user_name: enter your user name');
          if (!password) throw new Error('password: enter your password');
          const who = await session.login(user_name, password).catch((error) => {
            if (error.status === 401) throw new Error('Wrong user name or password.');
            throw error;
          });
          if ((who.memberships || []).length > 1) showTenants(who);
          else done();
        },
      }));
    box.querySelector('input').focus();
  }

  function showTenants(who) {
    const problem = h('div.form-error', { role: 'alert' });
    mount(box,
      h('h1', `Welcome, ${who.user_name}`),
      h('p.muted', 'You belong to several tenants. Choose the one to work in; you can switch later from the top bar.'),
      h('div.tenant-list', who.memberships.map((m) => h('button.tenant-choice', {
        type: 'button', 'data-tenant': m.tenant_id,
        onclick: async () => {
          try {
            if (m.tenant_id !== who.tenant_id) await session.switchTenant(m.tenant_id);
            done();
          } catch (error) {
            problem.textContent = error.message;
          }
        },
      }, h('strong', m.tenant_id), h('span.muted', label(m.role, 'ROLE_'))))),
      problem,
      button('Log in as someone else', () => session.logout().catch(() => {}).then(showLogin), 'ghost'));
  }
}
