// Line charts over time as inline SVG, drawn by hand: a few polylines, grid lines and labels
// need no charting library.
import { svg, h } from './dom.js';

const colors = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563'];

// series: [{label, points: [{t: ms, v: number}]}]; max: the y axis' top (else the data's);
// unit: appended to values. The x axis ends now and reaches back to the oldest point (one
// minute at least, ten at most), so the lines fill the chart from the first readings on.
export function lineChart({ title, series, max, unit = '' }) {
  const oldest = Math.min(...series.flatMap((s) => s.points.map((p) => p.t)), Date.now());
  const span = Math.min(Math.max((Date.now() - oldest) / 1000 * 1.05, 60), 600);
  const width = 480;
  const height = 160;
  const pad = { left: 44, right: 8, top: 10, bottom: 22 };
  const now = Date.now();
  const top = max || Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.v))) * 1.1;
  const x = (t) => pad.left + (width - pad.left - pad.right) * (1 - (now - t) / (span * 1000));
  const y = (v) => pad.top + (height - pad.top - pad.bottom) * (1 - Math.min(v, top) / top);
  const grid = [0, 0.5, 1].map((f) => [
    svg('line', { x1: pad.left, x2: width - pad.right, y1: y(top * f), y2: y(top * f), class: 'grid' }),
    svg('text', { x: pad.left - 6, y: y(top * f) + 4, 'text-anchor': 'end', class: 'axis' }, round(top * f)),
  ]);
  const lines = series.map((s, i) => {
    const visible = s.points.filter((p) => now - p.t <= span * 1000);
    if (!visible.length) return null;
    const color = colors[i % colors.length];
    if (visible.length === 1) {
      return svg('circle', { cx: x(visible[0].t), cy: y(visible[0].v), r: 3, fill: color });
    }
    return svg('polyline', {
      points: visible.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(' '),
      fill: 'none', stroke: color, 'stroke-width': 2, 'stroke-linejoin': 'round',
    });
  });
  const axis = [
    svg('text', { x: pad.left, y: height - 6, class: 'axis' }, span < 90 ? `${Math.round(span)} s ago` : `${Math.round(span / 60)} min ago`),
    svg('text', { x: width - pad.right, y: height - 6, 'text-anchor': 'end', class: 'axis' }, 'now'),
  ];
  const chart = svg('svg', {
    viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'aria-label': title,
  }, grid, axis, lines);
  const legend = h('div.legend', series.map((s, i) => {
    const last = s.points[s.points.length - 1];
    return h('span', h('i', { style: `background:${colors[i % colors.length]}` }),
      `${s.label}: ${last ? round(last.v) + unit : '—'}`);
  }));
  return h('figure.chart-box', h('figcaption', title), chart, legend);
}

function round(v) { return v >= 100 ? Math.round(v) : Math.round(v * 10) / 10; }
