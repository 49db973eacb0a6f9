// An instance's GPU readings (GetInstanceMetrics, polled while it runs) drawn over time:
// utilization, memory, temperature and power, one line per GPU.
import { h, mount } from '../dom.js';
import * as api from '../api.js';
import { lineChart } from '../chart.js';
import { num } from '../format.js';

const POLL_MS = 3000;
const KEEP_MS = 10 * 60 * 1000;
const FAILED_PRECONDITION = 9;

export function metricsPanel(id, signal) {
  const el = h('div.metrics', h('p.muted', 'GPU readings appear here while the instance runs.'));
  const history = new Map();  // gpu_uuid -> {model, points: {util, mem, temp, power}}
  let lastRead = '';
  let memTotal = 0;
  let running = false;
  let timer = 0;

  async function poll() {
    try {
      const m = await api.get(`/v1/instances/${encodeURIComponent(id)}/metrics`, {}, signal);
      if (m.read_time && m.read_time === lastRead) return;
      lastRead = m.read_time || '';
      const t = Date.now();
      for (const g of m.gpus || []) {
        if (!history.has(g.gpu_uuid)) {
          history.set(g.gpu_uuid, { model: g.model, util: [], mem: [], temp: [], power: [] });
        }
        const s = history.get(g.gpu_uuid);
        s.util.push({ t, v: num(g.utilization_percent) });
        s.mem.push({ t, v: num(g.memory_used_mib) });
        s.temp.push({ t, v: num(g.temperature_celsius) });
        s.power.push({ t, v: num(g.power_watts) });
        for (const key of ['util', 'mem', 'temp', 'power']) {
          while (s[key].length && t - s[key][0].t > KEEP_MS) s[key].shift();
        }
        memTotal = Math.max(memTotal, num(g.memory_total_mib));
      }
      draw(m);
    } catch (error) {
      if (error.name === 'AbortError') return;
      if (error.code === FAILED_PRECONDITION) {
        mount(el, h('p.muted', 'No readings: the instance holds no GPU now.'));
      } else {
        mount(el, h('p.muted', `Readings unavailable: ${error.message}`));
      }
    }
  }

  function series(key) {
    let i = 0;
    return [...history.values()].map((s) => ({ label: `GPU ${i++} ${s.model || ''}`.trim(), points: s[key] }));
  }

  function draw(m) {
    mount(el,
      h('p.muted.small', `Node ${m.node_id || '—'}; last reading ${m.read_time ? new Date(m.read_time).toLocaleTimeString() : '—'}, every few seconds.`),
      h('div.charts',
        lineChart({ title: 'Utilization', series: series('util'), max: 100, unit: ' %' }),
        lineChart({ title: 'Memory used', series: series('mem'), max: memTotal || undefined, unit: ' MiB' }),
        lineChart({ title: 'Temperature', series: series('temp'), unit: ' °C' }),
        lineChart({ title: 'Power', series: series('power'), unit: ' W' })));
  }

  // Called with the instance on every refresh: polls only while it holds GPUs.
  function update(instance) {
    const now = ['STATE_READY', 'STATE_RUNNING'].includes(instance.state);
    if (now === running) return;
    running = now;
    clearInterval(timer);
    if (running) {
      poll();
      timer = setInterval(poll, POLL_MS);
    } else if (!history.size) {
      mount(el, h('p.muted', 'GPU readings appear here while the instance runs.'));
    }
  }
  signal.addEventListener('abort', () => clearInterval(timer));
  return { el, update };
}
