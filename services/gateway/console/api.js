// The gateway's REST API from the browser: JSON requests with the session cookie, the CSRF
// header on every non-GET request, one shared session refresh on a 401, and server streams
// (server-sent events) read with fetch so they get the same refresh and error handling.

export class ApiError extends Error {
  // status: the HTTP status; code: the google.rpc.Status code; message names the field for
  // INVALID_ARGUMENT.
  constructor(status, body) {
    super(body.message || `HTTP ${status}`);
    this.status = status;
    this.code = body.code || 0;
    this.details = body.details || [];
  }
  get notFound() { return this.status === 404 || this.code === 5; }
}

let onSignedOut = () => {};
// Called when the session cannot be renewed: the app shows the login page.
export function setSignedOutHandler(handler) { onSignedOut = handler; }

function cookie(name) {
  const found = document.cookie.split('; ').find((c) => c.startsWith(name + '='));
  return found ? decodeURIComponent(found.slice(name.length + 1)) : '';
}

function headers(method, hasBody, accept = 'application/json') {
  const result = { Accept: accept };
  if (hasBody) result['Content-Type'] = 'application/json';
  if (method !== 'GET') result['X-CSRF-Token'] = cookie('gpuaas_csrf');
  return result;
}

async function errorOf(response) {
  const text = await response.text();
  try {
    return new ApiError(response.status, JSON.parse(text));
  } catch {
    return new ApiError(response.status, { message: text.trim() || response.statusText });
  }
}

// One refresh at a time: concurrent 401s wait for the same one.
let refreshing = null;
function refreshSession() {
  if (!refreshing) {
    refreshing = fetch('/api/session:refresh', {
      method: 'POST', headers: headers('POST', true), body: '{}',
    }).then((r) => r.ok).catch(() => false).finally(() => { refreshing = null; });
  }
  return refreshing;
}

// fetch with one refresh-and-retry on 401; a failed refresh signs the user out.
async function send(method, path, init) {
  let response = await fetch(path, { method, credentials: 'same-origin', ...init(method) });
  if (response.status === 401 && !path.startsWith('/api/session')) {
    if (await refreshSession()) {
      response = await fetch(path, { method, credentials: 'same-origin', ...init(method) });
    }
    if (response.status === 401) onSignedOut();
  }
  return response;
}

export function withQuery(path, query) {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(key, value);
  }
  const text = params.toString();
  return text ? `${path}${path.includes('?') ? '&' : '?'}${text}` : path;
}

export async function request(method, path, { body, query, signal } = {}) {
  const url = withQuery(path, query);
  const json = body === undefined ? undefined : JSON.stringify(body);
  const response = await send(method, url, (m) => ({
    headers: headers(m, json !== undefined), body: json, signal,
  }));
  if (!response.ok) throw await errorOf(response);
  const text = await response.text();
  return text ? JSON.parse(text) : {};
}

export const get = (path, query, signal) => request('GET', path, { query, signal });
export const post = (path, body = {}, query) => request('POST', path, { body, query });
export const patch = (path, body, query) => request('PATCH', path, { body, query });
export const del = (path, query) => request('DELETE', path, { query });

// Every item of a paged List call: follows next_page_token.
export async function listAll(path, key, query = {}, signal) {
  const items = [];
  let pageToken = '';
  let last = {};
  do {
    last = await get(path, { ...query, page_size: 500, page_token: pageToken }, signal);
    items.push(...(last[key] || []));
    pageToken = last.next_page_token || '';
  } while (pageToken);
  return { items, last };
}

// Reads a server stream: calls onMessage with each `data:` message parsed. Resolves when the
// server ends the stream, rejects with ApiError on `event: error` or a failed request, and with
// an AbortError when `signal` aborts.
export async function stream(path, query, onMessage, signal) {
  const url = withQuery(path, query);
  const response = await send('GET', url, (m) => ({
    headers: headers(m, false, 'text/event-stream'), signal,
  }));
  if (!response.ok) throw await errorOf(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (!data.length) continue;
      const parsed = JSON.parse(data.join('\n'));
      if (event === 'error') throw new ApiError(0, parsed);
      onMessage(parsed);
    }
  }
}

// A fresh idempotency key (request_id, operation_id). crypto.randomUUID exists only in secure
// contexts (HTTPS, localhost); getRandomValues everywhere.
export function requestId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

// What the gateway says that no API does ({"s3_endpoint"}), read once.
let configAnswer = null;
export function config() {
  if (!configAnswer) configAnswer = get('/api/config').catch(() => ({}));
  return configAnswer;
}
