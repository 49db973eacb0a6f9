// Who is signed in: the gateway's WhoAmI answer for the session cookie, and the session calls
// (login, tenant switch, logout).
import * as api from './api.js';

let whoami = null;

export const current = () => whoami;
export const tenantId = () => whoami?.tenant_id || '';
export const isPlatformAdmin = () => whoami?.role === 'ROLE_PLATFORM_ADMIN';

const rank = { ROLE_VIEWER: 1, ROLE_MEMBER: 2, ROLE_TENANT_ADMIN: 3, ROLE_SERVICE: 4, ROLE_PLATFORM_ADMIN: 5 };
// Whether the session's role is at least `role` (MEMBER drives resources, TENANT_ADMIN manages
// people); the server decides, this only hides buttons that would be refused.
export const atLeast = (role) => (rank[whoami?.role] || 0) >= rank[role];

// Reads the session; null when there is none (the refresh cookie is gone or spent).
export async function load() {
  try {
    whoami = await api.get('/api/session');
  } catch (error) {
    if (error.status !== 401) throw error;
    // The access token expired while the page was closed: the refresh cookie renews it.
    whoami = await api.post('/api/session:refresh', {}).catch(() => null);
  }
  return whoami;
}

export async function login(userName, password) {
  whoami = await api.post('/api/session', { user_name: userName, password });
  return whoami;
}

export async function switchTenant(tenant) {
  whoami = await api.post('/api/session:refresh', { tenant_id: tenant });
  return whoami;
}

// Forgets the session here (the gateway already refused it).
export function forget() { whoami = null; }

export async function logout() {
  try {
    await api.del('/api/session');
  } finally {
    whoami = null;
  }
}
