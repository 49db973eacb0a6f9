// The console's entry: reads the session, draws the frame (top bar, side nav) and hands each
// route to its page module.
import { h, mount } from './dom.js';
import * as api from './api.js';
import * as router from './router.js';
import * as session from './session.js';
import { label } from './format.js';
import { toast } from './ui.js';
import { revokeSavedAccessors } from './file_browser.js';
import loginPage from './pages/login.js';
import instancesPage from './pages/instances.js';
import instanceNewPage from './pages/instance_new.js';
import instancePage from './pages/instance.js';
import storagesPage from './pages/storages.js';
import storagePage from './pages/storage.js';
import apiKeysPage from './pages/api_keys.js';
import membersPage from './pages/members.js';
import specsPage from './pages/admin_specs.js';
import stockPage from './pages/admin_stock.js';
import nodesPage from './pages/admin_nodes.js';
import tenantsPage from './pages/admin_tenants.js';

const app = document.getElementById('app');
let main = null;

const nav = [
  ['Instances', '/instances'],
  ['Storages', '/storages'],
  ['API keys', '/api-keys'],
  ['Members', '/members'],
];
const operatorNav = [
  ['Specs', '/admin/specs'],
  ['Stock', '/admin/stock'],
  ['Nodes', '/admin/nodes'],
  ['Tenants', '/admin/tenants'],
];

function tenantSwitcher(who) {
  const tenants = (who.memberships || []).map((m) => m.tenant_id);
  if (tenants.length < 2) {
    return who.tenant_id ? h('span.tenant', { title: 'Tenant' }, who.tenant_id) : null;
  }
  const select = h('select#tenant-switch', { 'aria-label': 'Tenant' },
    tenants.map((t) => h('option', { value: t, selected: t === who.tenant_id }, t)));
  select.addEventListener('change', async () => {
    try {
      await session.switchTenant(select.value);
      toast(`Now acting in ${select.value}`);
      frame();
      router.go('/instances');
    } catch (error) {
      toast(error.message, 'bad');
      select.value = who.tenant_id;
    }
  });
  return select;
}

function frame() {
  const who = session.current();
  const links = (items) => items.map(([text, href]) => h('a.nav-link', { href: '#' + href, 'data-path': href }, text));
  main = h('main#page');
  mount(app, h('div.shell',
    h('header.topbar',
      h('a.brand', { href: '#/instances' }, h('img', { src: 'favicon.svg', alt: '' }), 'gpuaas'),
      h('div.spacer'),
      tenantSwitcher(who),
      h('span.user', { title: label(who.role, 'ROLE_') }, who.user_name,
        h('small', label(who.role, 'ROLE_'))),
      h('button#logout.btn.ghost', { type: 'button', onclick: logout }, 'Log out')),
    h('nav.sidenav', links(nav),
      session.isPlatformAdmin() && [h('div.nav-title', 'Operator'), links(operatorNav)]),
    main));
}

async function logout() {
  await revokeSavedAccessors(api);
  await session.logout().catch(() => {});
  main = null;
  router.go('/login');
}

// Wraps a page: signed-out users get the login page, then come back here.
function page(render) {
  return (params, signal) => {
    if (!session.current()) return router.go('/login?next=' + encodeURIComponent(router.path()));
    if (!main || !app.contains(main)) frame();
    for (const a of app.querySelectorAll('.nav-link')) {
      a.classList.toggle('active', router.path().startsWith(a.dataset.path));
    }
    main.replaceChildren();
    window.scrollTo(0, 0);
    return Promise.resolve(render(main, params, signal)).catch((error) => {
      if (error.name === 'AbortError') return;
      main.append(h('div.alert.bad', { role: 'alert' }, error.message));
    });
  };
}

// Operator pages: platform admins only (the API refuses others anyway).
function operator(render) {
  return page((root, params, signal) => (session.isPlatformAdmin() ? render(root, params, signal)
    : mount(root, h('div.empty', h('h2', 'Operators only'), h('p', 'This page is for platform admins.')))));
}

router.route('/login', (params, signal) => {
  main = null;
  const next = new URLSearchParams(router.path().split('?')[1] || '').get('next') || '/instances';
  return loginPage(app, () => { frame(); router.go(next.startsWith('/login') ? '/instances' : next); }, signal);
});
router.route('/', page(() => router.go('/instances')));
router.route('/instances', page(instancesPage));
router.route('/instances/new', page(instanceNewPage));
router.route('/instances/:instance_id', page(instancePage));
router.route('/storages', page(storagesPage));
router.route('/storages/:storage_id', page(storagePage));
router.route('/api-keys', page(apiKeysPage));
router.route('/members', page(membersPage));
router.route('/admin/specs', operator(specsPage));
router.route('/admin/stock', operator(stockPage));
router.route('/admin/nodes', operator(nodesPage));
router.route('/admin/tenants', operator(tenantsPage));
router.route('/admin/tenants/:tenant_id/members', operator(membersPage));
router.otherwise(page((root) => mount(root, h('div.empty.not-found', h('h2', 'Page not found'),
  h('p', 'Nothing lives at this address.'), h('a.btn.primary', { href: '#/instances' }, 'Go to instances')))));

api.setSignedOutHandler(() => {
  if (!session.current()) return;
  session.forget();
  toast('Your session ended: log in again.', 'bad');
  router.go('/login?next=' + encodeURIComponent(router.path()));
});

session.load().then(() => router.start(), (error) => {
  mount(app, h('div.empty', h('h2', 'The console cannot reach the gateway'), h('p', error.message)));
});
