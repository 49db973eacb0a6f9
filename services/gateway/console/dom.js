// A tiny DOM helper: h('button#save.btn.primary', {onclick}, 'Save') builds elements without a
// framework. Children may be strings, numbers, nodes, arrays of them, or null/false (skipped).

export function h(tag, props, ...children) {
  if (props == null || typeof props !== 'object' || props instanceof Node || Array.isArray(props)) {
    children.unshift(props);
    props = {};
  }
  const parts = /^([\w-]*)(?:#([\w-]+))?((?:\.[\w-]+)*)$/.exec(tag);
  if (!parts) throw new Error(`h: bad tag ${tag}`);
  const [, name, id, classes] = parts;
  const el = document.createElement(name || 'div');
  if (id) el.id = id;
  if (classes) el.className = classes.slice(1).split('.').join(' ');
  for (const [key, value] of Object.entries(props)) {
    if (value == null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.classList.add(...String(value).split(' ').filter(Boolean));
    // Through the CSSOM: the gateway's Content-Security-Policy refuses style attributes.
    else if (key === 'style') el.style.cssText = value;
    else if (key === 'value' || key === 'checked' || key === 'disabled' || key === 'selected') el[key] = value;
    else el.setAttribute(key, value === true ? '' : value);
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child == null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

// Replaces an element's content.
export function mount(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// SVG elements need their namespace.
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value != null) el.setAttribute(key, value);
  }
  for (const child of children.flat(Infinity)) {
    if (child == null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}
