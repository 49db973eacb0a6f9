// The console's building blocks: page headers, tables, empty states, forms that put the
// server's error next to the field it names, confirmations, secrets shown once, notices.
import { h, mount } from './dom.js';

export function header(title, subtitle, ...actions) {
  return h('header.page-head',
    h('div', h('h1', title), subtitle && h('p.muted', subtitle)),
    h('div.actions', actions));
}

export function button(text, onclick, kind = '') {
  return h(`button.btn${kind ? '.' + kind.split(' ').join('.') : ''}`, { type: 'button', onclick }, text);
}

export const link = (text, href, kind = 'btn') => h(`a.${kind.split(' ').join('.')}`, { href }, text);

// columns: [{label, cell(row) -> node|string, class?}]; empty: the node shown when no rows.
export function table(columns, rows, empty, rowId) {
  if (!rows.length) return empty;
  return h('div.table-wrap', h('table',
    h('thead', h('tr', columns.map((c) => h('th', { class: c.class }, c.label)))),
    h('tbody', rows.map((row) => h('tr', { 'data-id': rowId && rowId(row) },
      columns.map((c) => h('td', { class: c.class }, c.cell(row))))))));
}

export function empty(title, text, ...actions) {
  return h('div.empty', h('h2', title), h('p', text), h('div.actions', actions));
}

export function notFound(root, what, back) {
  mount(root, h('div.empty.not-found',
    h('h2', `${what} not found`),
    h('p', `There is no ${what.toLowerCase()} with this id in your tenant. It may have been deleted, or the link may be for another tenant.`),
    back && h('div.actions', link(back.text, back.href, 'btn primary'))));
}

export function errorBox(error) {
  return h('div.alert.bad', { role: 'alert' }, error.message || String(error));
}

export function loading() { return h('p.muted.loading', 'Loading…'); }

let toastTimer = 0;
export function toast(text, tone = 'ok') {
  const el = document.getElementById('toast');
  el.className = `toast ${tone} show`;
  el.textContent = text;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => el.classList.remove('show'), 4000);
}

// Resolves true when the user confirms.
export function confirm(title, text, confirmLabel = 'Delete') {
  return new Promise((resolve) => {
    const dialog = h('dialog.confirm',
      h('h2', title), h('p', text),
      h('div.actions',
        button('Cancel', () => dialog.close('cancel')),
        button(confirmLabel, () => dialog.close('ok'), 'danger')));
    dialog.addEventListener('close', () => { dialog.remove(); resolve(dialog.returnValue === 'ok'); });
    document.body.append(dialog);
    dialog.showModal();
  });
}

// Runs action() (a call), then toasts `done` and calls after(); a refusal shows as a toast.
// With `ask` ({title, text, label}) the user confirms first.
export async function perform({ ask, action, done, after }) {
  if (ask && !await confirm(ask.title, ask.text, ask.label)) return;
  try {
    await action();
  } catch (error) {
    toast(error.message, 'bad');
    return;
  }
  toast(done);
  if (after) after();
}

async function copy(text, btn) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard permission (plain HTTP on another host): select the text instead.
    const range = document.createRange();
    range.selectNodeContents(btn.previousSibling);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    document.execCommand('copy');
  }
  btn.textContent = 'Copied';
  setTimeout(() => { btn.textContent = 'Copy'; }, 2000);
}

// A secret the server shows once: each [label, value] with a copy button.
export function secretBox(title, pairs, onDone) {
  return h('div.secret', { role: 'status' },
    h('h3', title),
    h('p', 'Copy it now: it is shown only this once and cannot be read again.'),
    pairs.map(([name, value]) => h('div.secret-row',
      h('span.secret-label', name),
      h('code.secret-value', value),
      h('button.btn.small', { type: 'button', onclick: (e) => copy(value, e.target) }, 'Copy'))),
    onDone && h('div.actions', button('Done', onDone)));
}

// A form whose fields are [{name, label, type, options, value, hint, placeholder, keys}]:
// type is text, password, number, select or checkbox; options [{value, label}]; keys are the
// names the server may use for the field in its errors (default: name). onSubmit(values)
// returns a promise; when it rejects with an ApiError its message goes next to the field it
// names, or above the buttons.
export function form({ fields, submit, onSubmit, onCancel, inline = false }) {
  const inputs = {};
  const errors = {};
  const general = h('div.form-error', { role: 'alert' });
  const rows = fields.map((f) => {
    let input;
    if (f.type === 'select') {
      input = h('select', { name: f.name, id: `f-${f.name}` },
        f.options.map((o) => h('option', { value: o.value, selected: o.value === f.value }, o.label)));
    } else if (f.type === 'checkbox') {
      input = h('input', { type: 'checkbox', name: f.name, id: `f-${f.name}`, checked: !!f.value });
    } else {
      input = h('input', {
        type: f.type || 'text', name: f.name, id: `f-${f.name}`, value: f.value ?? '',
        placeholder: f.placeholder, min: f.min, step: f.step, autocomplete: f.autocomplete || 'off',
        required: f.required,
      });
    }
    if (f.oninput) input.addEventListener('input', () => f.oninput(input, inputs));
    inputs[f.name] = input;
    errors[f.name] = h('div.field-error', { id: `e-${f.name}` });
    return h(`div.field${f.type === 'checkbox' ? '.check' : ''}`,
      h('label', { for: `f-${f.name}` }, f.label),
      input, f.hint && h('div.hint', f.hint), errors[f.name]);
  });
  const submitButton = h('button.btn.primary', { type: 'submit' }, submit);
  const el = h(`form.form${inline ? '.inline' : ''}`, { novalidate: true }, rows, general,
    h('div.actions', submitButton, onCancel && button('Cancel', onCancel)));
  el.addEventListener('submit', async (event) => {
    event.preventDefault();
    for (const node of [general, ...Object.values(errors)]) node.textContent = '';
    el.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
    const values = {};
    for (const [name, input] of Object.entries(inputs)) {
      values[name] = input.type === 'checkbox' ? input.checked : input.value.trim();
    }
    submitButton.disabled = true;
    try {
      await onSubmit(values);
    } catch (error) {
      const field = fieldOf(error.message || '', fields);
      if (field) {
        errors[field].textContent = error.message;
        inputs[field].classList.add('invalid');
        inputs[field].focus();
      } else {
        general.textContent = error.message || String(error);
      }
    } finally {
      submitButton.disabled = false;
    }
  });
  el.inputs = inputs;
  return el;
}

// The field whose name (or one of its keys) the message names; the longest match wins, so
// "spec.gpu_num" goes to gpu_num rather than to a field called "spec".
function fieldOf(message, fields) {
  let best = null;
  let bestLength = 0;
  for (const f of fields) {
    for (const key of f.keys || [f.name]) {
      const at = message.search(new RegExp(`(^|[^a-z0-9_])${key.replace(/\./g, '\\.')}($|[^a-z0-9_])`));
      if (at >= 0 && key.length > bestLength) { best = f.name; bestLength = key.length; }
    }
  }
  return best;
}

// Definition list of [label, value] pairs.
export function facts(pairs) {
  return h('dl.facts', pairs.filter(Boolean).map(([k, v]) => [h('dt', k), h('dd', v ?? '—')]));
}

export function card(title, ...children) {
  return h('section.card', title && h('h2', title), children);
}

// Tabs: [{id, label, render(panel)}]; renders the first, others on click.
export function tabs(items) {
  const panel = h('div.tab-panel');
  const buttons = items.map((item) => h('button.tab', {
    type: 'button', 'data-tab': item.id,
    onclick: () => show(item),
  }, item.label));
  function show(item) {
    buttons.forEach((b) => b.classList.toggle('active', b.dataset.tab === item.id));
    panel.replaceChildren();
    item.render(panel);
  }
  const el = h('div.tabs', h('div.tab-bar', { role: 'tablist' }, buttons), panel);
  show(items[0]);
  return el;
}
