// Hash routing: '#/instances/ins-1' runs the page registered for '/instances/:id'. Each page
// gets an AbortSignal that aborts when the user leaves it, so its streams and timers stop.

const routes = [];
let current = null;
let fallback = null;

// pattern: '/instances/:instance_id'; page(params, signal) renders the page.
export function route(pattern, page) {
  const names = [];
  const regex = new RegExp('^' + pattern.replace(/:(\w+)/g, (_, name) => {
    names.push(name);
    return '([^/]+)';
  }) + '$');
  routes.push({ regex, names, page });
}

// page for paths no route matches.
export function otherwise(page) { fallback = page; }

export function path() { return location.hash.replace(/^#/, '') || '/'; }

export function go(to) {
  if (location.hash === '#' + to) render();
  else location.hash = to;
}

export function render() {
  if (current) current.abort();
  current = new AbortController();
  const here = path().split('?')[0];
  for (const { regex, names, page } of routes) {
    const match = regex.exec(here);
    if (!match) continue;
    const params = {};
    names.forEach((name, i) => { params[name] = decodeURIComponent(match[i + 1]); });
    return page(params, current.signal);
  }
  return fallback && fallback({}, current.signal);
}

export function start() {
  window.addEventListener('hashchange', render);
  render();
}
