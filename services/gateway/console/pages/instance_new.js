// New instance: a spec (with its price), an image from the catalog, a storage, and the
// tenant's quota with what is already used, so the choice is made knowing what fits.
import { h, mount } from '../dom.js';
import * as api from '../api.js';
import * as router from '../router.js';
import * as session from '../session.js';
import { header, form, card, loading, empty } from '../ui.js';
import { pricePerHour, num } from '../format.js';

export function specSummary(s) {
  const gpu = s.mig_profile ? `${s.gpu_type} MIG ${s.mig_profile}`
    : s.gpu_share_milli ? `${(s.gpu_share_milli / 10).toFixed(0)}% of a ${s.gpu_type}`
      : `${s.gpu_num || 1}× ${s.gpu_type}`;
  return `${gpu} · ${s.cpu} CPU · ${s.memory} memory`;
}

// An id the user may keep: the name as [a-z0-9-], starting with a letter.
// An image whose reference is not pinned yet, or could not be (ImageState): instances from it
// are refused until it is READY, so the picker says so.
function pinState(image) {
  if (image.state === 'IMAGE_STATE_PENDING') return ' [pinning…]';
  if (image.state === 'IMAGE_STATE_FAILED') return ` [failed: ${image.state_reason || 'unknown'}]`;
  return '';
}

function idFrom(name) {
  const id = name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^[^a-z]+/, '').replace(/-+$/, '');
  return id.slice(0, 63).replace(/-+$/, '');
}

export default async function instanceNewPage(root, params, signal) {
  mount(root, header('New instance', 'Pick a GPU, an image and a storage; it starts at once.'), loading());
  const tenant = session.tenantId();
  const [specs, images, storages, instances, tenantInfo] = await Promise.all([
    api.listAll('/v1/specs', 'specs', {}, signal),
    api.listAll('/v1/images', 'images', {}, signal),
    api.listAll('/v1/storages', 'storages', {}, signal),
    api.listAll('/v1/instances', 'instances', {}, signal),
    tenant ? api.get(`/v1/tenants/${encodeURIComponent(tenant)}`, {}, signal).catch(() => null) : null,
  ]);
  root.lastChild.remove();

  if (!specs.items.length) {
    root.append(empty('No GPU specs yet', 'An operator has to define GPU specs and stock before instances can start.'));
    return;
  }
  const quota = tenantInfo?.quota || {};
  const active = instances.items.filter((i) => i.state !== 'STATE_DELETING');
  const gpusInUse = active.filter((i) => ['STATE_PENDING', 'STATE_READY', 'STATE_RUNNING'].includes(i.state))
    .reduce((sum, i) => sum + (i.gpu_num || 0), 0);
  const specByName = new Map(specs.items.map((s) => [s.spec_name, s]));
  const readyStorages = storages.items.filter((s) => s.state === 'STORAGE_STATE_READY');
  const priceNote = h('div.price-note');

  const fields = [
    { name: 'name', label: 'Name', placeholder: 'my-notebook', hint: 'For people; letters, digits and dashes make a good one.',
      oninput: (input, inputs) => {
        if (!inputs.instance_id.dataset.edited) inputs.instance_id.value = idFrom(input.value);
      } },
    { name: 'instance_id', label: 'ID', placeholder: 'chosen from the name',
      hint: 'Names its web address: lowercase letters, digits and "-", starting with a letter.',
      oninput: (input) => { input.dataset.edited = '1'; } },
    { name: 'spec_name', label: 'GPU spec', type: 'select', keys: ['spec_name', 'spec'],
      options: specs.items.map((s) => ({ value: s.spec_name, label: `${s.spec_name} — ${specSummary(s)} — ${pricePerHour(s.price)}` })) },
    { name: 'image', label: 'Image', type: 'select',
      options: [...images.items.map((i) => ({ value: `${i.name}:${i.version}`,
        label: `${i.name}:${i.version}${i.description ? ' — ' + i.description : ''}${i.tenant_id ? ' (yours)' : ''}${pinState(i)}` })),
      { value: '', label: 'No image (the template command only)' }] },
    { name: 'storage_id', label: 'Storage', type: 'select', keys: ['storage_id', 'storage'],
      hint: readyStorages.length ? 'Mounted at the image\'s volume path (/data for the catalog images).'
        : 'You have no storage yet: images with volumes (Jupyter) need one. Create it under Storages.',
      options: [...readyStorages.map((s) => ({ value: s.storage_id, label: `${s.name || s.storage_id} (${s.storage_id})` })),
        { value: '', label: 'No storage' }] },
    { name: 'idle_minutes', label: 'Stop when idle for (minutes)', type: 'number', min: 1, keys: ['idle_timeout'],
      placeholder: 'never', hint: 'Optional: stops it (never deletes it) after its GPUs and web pages were idle this long.' },
    session.isPlatformAdmin() && { name: 'tenant_id', label: 'Tenant', value: tenant, hint: 'Operators create instances in a tenant they name.' },
  ].filter(Boolean);

  const theForm = form({
    fields, submit: 'Create instance',
    onCancel: () => router.go('/instances'),
    onSubmit: async (v) => {
      const body = {
        instance_id: v.instance_id, name: v.name, spec_name: v.spec_name, image: v.image,
        storage_id: v.storage_id,
      };
      if (v.idle_minutes) body.idle_timeout = `${Math.round(Number(v.idle_minutes) * 60)}s`;
      if (v.tenant_id) body.tenant_id = v.tenant_id;
      const created = await api.post('/v1/instances', body);
      router.go(`/instances/${created.instance_id}`);
    },
  });
  const jupyter = images.items.find((i) => i.name === 'jupyter');
  if (jupyter) theForm.inputs.image.value = `${jupyter.name}:${jupyter.version}`;

  function showPrice() {
    const spec = specByName.get(theForm.inputs.spec_name.value);
    mount(priceNote, spec && [h('strong', pricePerHour(spec.price)), ' while it runs, billed per second. ',
      spec.description || '', ` Disk ${spec.disk || '—'}.`]);
  }
  theForm.inputs.spec_name.addEventListener('change', showPrice);
  theForm.insertBefore(priceNote, theForm.querySelector('.form-error'));
  showPrice();

  const quotaCard = tenantInfo && card('Your quota',
    h('div.quota', meter('Instances', active.length, num(quota.max_instances)),
      meter('GPUs in use', gpusInUse, num(quota.max_gpus))),
    h('p.muted.small', 'Stopped instances count toward instances but hold no GPU. Ask an operator to raise the quota.'));
  root.append(h('div.split', card(null, theForm), quotaCard));
}

function meter(name, used, max) {
  const full = max > 0 ? Math.min(used / max, 1) : 1;
  return h('div.meter', h('div.meter-label', h('span', name), h('strong', `${used} of ${max}`)),
    h('div.meter-bar', h('div', { style: `width:${(full * 100).toFixed(0)}%`, class: full >= 1 ? 'full' : '' })));
}
