// A terminal inside the running instance: xterm.js (vendor/xterm, loaded on first use) over one
// WebSocket to the gateway's /v1/instances/{id}/exec, which runs a shell in the instance's
// container as its user (InstanceSessionService.ExecInstance: MEMBER and above, recorded).
// Keys go up as binary frames, the terminal's size as a JSON text frame; the shell's output
// comes down as binary frames, its exit status as {"exit_code": N}.
import { h } from '../dom.js';

let loaded = null;

// xterm.js is a classic script (a global `Terminal`), so it is added once as a <script>.
function loadXterm() {
  if (!loaded) {
    loaded = new Promise((resolve, reject) => {
      const css = h('link', { rel: 'stylesheet', href: 'vendor/xterm/xterm.css' });
      const script = h('script', { src: 'vendor/xterm/xterm.js' });
      script.onload = () => resolve(window.Terminal);
      script.onerror = () => { loaded = null; reject(new Error('the terminal could not load')); };
      document.head.append(css, script);
    });
  }
  return loaded;
}

export function terminalPanel(id, signal) {
  const screen = h('div.terminal-screen', { 'data-terminal': id });
  const status = h('span.muted.small', 'Not connected.');
  const connect = h('button.btn', { type: 'button' }, 'Open a shell');
  const el = h('div.terminal-panel', h('div.logs-bar', status, connect), screen);
  let socket = null;
  let term = null;

  async function open() {
    connect.disabled = true;
    const Terminal = await loadXterm().catch((error) => { status.textContent = error.message; });
    if (!Terminal) { connect.disabled = false; return; }
    if (!term) {
      term = new Terminal({ cursorBlink: true, rows: 30, cols: 100, scrollback: 5000 });
      term.open(screen);
      term.onData((data) => socket?.readyState === 1 && socket.send(new TextEncoder().encode(data)));
      term.onResize(({ rows, cols }) =>
        socket?.readyState === 1 && socket.send(JSON.stringify({ resize: { rows, cols } })));
    }
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const query = new URLSearchParams({ rows: term.rows, cols: term.cols });
    socket = new WebSocket(`${scheme}://${location.host}/v1/instances/${encodeURIComponent(id)}/exec?${query}`);
    socket.binaryType = 'arraybuffer';
    socket.onopen = () => { status.textContent = 'Connected: a shell inside the instance.'; term.focus(); };
    socket.onmessage = (event) => {
      if (typeof event.data === 'string') {
        const message = JSON.parse(event.data);
        if ('exit_code' in message) term.write(`\r\n[the shell exited with status ${message.exit_code}]\r\n`);
        if (message.error) term.write(`\r\n[${message.error}]\r\n`);
        return;
      }
      term.write(new Uint8Array(event.data));
    };
    socket.onclose = () => {
      status.textContent = 'Disconnected.';
      connect.disabled = false;
      connect.textContent = 'Open a new shell';
      socket = null;
    };
  }

  connect.addEventListener('click', open);
  signal.addEventListener('abort', () => { socket?.close(); term?.dispose(); });
  return { el };
}
