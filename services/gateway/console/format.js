// How values read on the page: enum names as words, int64 strings as numbers, money, bytes,
// times and durations.
import { h } from './dom.js';

// 'STATE_RUNNING' -> 'Running'; 'ROLE_TENANT_ADMIN' -> 'Tenant admin'.
export function label(value, prefix) {
  if (!value) return '';
  const words = value.replace(prefix, '').toLowerCase().replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

// int64 fields arrive as JSON strings; missing fields are their default.
export const num = (value) => Number(value || 0);

const tones = {
  RUNNING: 'ok', READY: 'ok', AVAILABLE: 'ok',
  PENDING: 'busy', STOPPING: 'busy', DELETING: 'busy', CREATING: 'busy',
  STOPPED: 'idle', CLAIMED: 'info', FAILED: 'bad', UNAVAILABLE: 'bad', NOT_READY: 'bad',
};

// A colored badge for a state enum ('STATE_RUNNING', 'STORAGE_STATE_READY', ...).
export function badge(value, prefix) {
  const name = (value || '').replace(prefix, '') || 'UNSPECIFIED';
  return h(`span.badge.${tones[name] || 'idle'}`, { 'data-state': name }, label(name, ''));
}

export function money(micros, currency = 'USD') {
  const amount = num(micros) / 1e6;
  try {
    return new Intl.NumberFormat(undefined, {
      style: 'currency', currency: currency || 'USD', minimumFractionDigits: 2, maximumFractionDigits: 4,
    }).format(amount);
  } catch {
    return `${amount.toFixed(4)} ${currency}`;
  }
}

export const pricePerHour = (price) => (price ? `${money(price.micros_per_hour, price.currency)}/h` : 'free');

const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
export function bytes(value) {
  let n = num(value);
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n >= 10 || i === 0 ? Math.round(n) : n.toFixed(1)} ${units[i]}`;
}

// A timestamp as local date and time, with the exact value on hover.
export function time(ts) {
  if (!ts) return '—';
  const date = new Date(ts);
  return h('time', { datetime: ts, title: date.toString() }, date.toLocaleString());
}

export function ago(ts) {
  if (!ts) return '—';
  const seconds = Math.round((Date.now() - new Date(ts)) / 1000);
  if (seconds < 60) return `${Math.max(seconds, 0)} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} d ago`;
}

// Seconds as '1 h 02 min', '45 s'.
export function duration(seconds) {
  const s = Math.round(num(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

// A proto Duration ("3600s") in seconds.
export const seconds = (value) => (value ? parseFloat(value) : 0);
