// An instance's output, live: GetInstanceLogs with follow as server-sent events, from the
// last lines on. A new run (a new start_time) starts a new stream.
import { h, mount } from '../dom.js';
import * as api from '../api.js';

const MAX_CHARS = 400000;
const FAILED_PRECONDITION = 9;

// LogChunk.data is bytes: base64 in JSON.
function decode(data) {
  const binary = atob(data || '');
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

export function logsPanel(id, signal) {
  const out = h('pre.logs', { 'aria-live': 'off' });
  const status = h('span.muted.small');
  const follow = h('input', { type: 'checkbox', checked: true });
  const el = h('div.logs-panel',
    h('div.logs-bar', status, h('label.check', follow, ' Scroll with new output')), out);
  let streamedRun = null;
  let controller = null;

  function write(text, cls) {
    const node = cls ? h(`span.${cls}`, text) : document.createTextNode(text);
    out.append(node);
    while (out.textContent.length > MAX_CHARS && out.firstChild) out.firstChild.remove();
    if (follow.checked) out.scrollTop = out.scrollHeight;
  }

  async function start(run) {
    controller?.abort();
    controller = new AbortController();
    const stop = controller;
    signal.addEventListener('abort', () => stop.abort());
    streamedRun = run;
    out.replaceChildren();
    status.textContent = 'Following the output…';
    try {
      await api.stream(`/v1/instances/${encodeURIComponent(id)}/logs`, { follow: true, tail_lines: 500 },
        (chunk) => write(decode(chunk.data), chunk.stream === 'LOG_STREAM_STDERR' ? 'stderr' : ''), stop.signal);
      status.textContent = 'The run ended; this is its last output.';
    } catch (error) {
      if (error.name === 'AbortError') return;
      status.textContent = error.code === FAILED_PRECONDITION
        ? 'No output yet: the instance has not run.' : `Logs unavailable: ${error.message}`;
      if (error.code !== FAILED_PRECONDITION) streamedRun = null;  // retried on the next refresh
    }
  }

  // Called with the instance on every refresh.
  function update(instance) {
    const run = instance.start_time || '';
    if (!run) {
      if (!streamedRun) status.textContent = 'No output yet: the instance has not run.';
      return;
    }
    if (run !== streamedRun) start(run);
  }
  mount(status, 'No output yet.');
  return { el, update };
}
