// Operator: GPU specs, what one instance of each gets and what an hour costs.
import { h, mount } from '../dom.js';
import * as api from '../api.js';
import { header, button, table, empty, form, card, loading, toast } from '../ui.js';
import { pricePerHour, time } from '../format.js';
import { specSummary } from './instance_new.js';

export default async function specsPage(root, params, signal) {
  const top = h('div');
  const list = h('div', loading());
  mount(root, header('GPU specs', 'What an instance of each spec gets, and its price per hour.',
    button('New spec', showForm, 'primary')), top, list);

  function showForm() {
    mount(top, card('New spec', form({
      fields: [
        { name: 'spec_name', label: 'Name', placeholder: 'l4.1x', keys: ['spec_name', 'spec.spec_name'] },
        { name: 'gpu_type', label: 'GPU model', placeholder: 'L4', keys: ['gpu_type', 'spec.gpu_type'] },
        { name: 'gpu_num', label: 'GPUs', type: 'number', value: '1', min: 1, keys: ['gpu_num', 'spec.gpu_num'] },
        { name: 'gpu_share_milli', label: 'GPU share (thousandths)', type: 'number', min: 0, placeholder: 'whole GPUs',
          keys: ['gpu_share_milli', 'spec.gpu_share_milli'], hint: 'Time-sliced share of one GPU, 1-999; empty for whole GPUs.' },
        { name: 'mig_profile', label: 'MIG profile', placeholder: 'none', keys: ['mig_profile', 'spec.mig_profile'] },
        { name: 'cpu', label: 'CPU', placeholder: '8', keys: ['cpu', 'spec.cpu'] },
        { name: 'memory', label: 'Memory', placeholder: '32Gi', keys: ['memory', 'spec.memory'] },
        { name: 'disk', label: 'Disk', placeholder: '200Gi', keys: ['disk', 'spec.disk'] },
        { name: 'price', label: 'Price per hour', type: 'number', step: '0.01', min: 0, placeholder: '0.80', keys: ['price', 'spec.price', 'micros_per_hour'] },
        { name: 'currency', label: 'Currency', value: 'USD', keys: ['currency', 'spec.price.currency'] },
        { name: 'description', label: 'Description', keys: ['description', 'spec.description'] },
      ],
      submit: 'Create spec',
      onCancel: () => top.replaceChildren(),
      onSubmit: async (v) => {
        const spec = {
          spec_name: v.spec_name, gpu_type: v.gpu_type, gpu_num: Number(v.gpu_num || 0),
          gpu_share_milli: Number(v.gpu_share_milli || 0), mig_profile: v.mig_profile,
          cpu: v.cpu, memory: v.memory, disk: v.disk, description: v.description,
          price: { micros_per_hour: String(Math.round(Number(v.price || 0) * 1e6)), currency: v.currency },
        };
        await api.post('/v1/specs', { spec });
        top.replaceChildren();
        toast(`Spec ${v.spec_name} created`);
        load();
      },
    })));
  }

  async function load() {
    const { items } = await api.listAll('/v1/specs', 'specs', { show_deprecated: true }, signal);
    mount(list, table([
      { label: 'Spec', cell: (s) => h('span', h('strong', s.spec_name), s.deprecated && h('span.badge.idle', ' Deprecated')) },
      { label: 'Gets', cell: (s) => specSummary(s) },
      { label: 'Disk', cell: (s) => s.disk || '—' },
      { label: 'Price', cell: (s) => pricePerHour(s.price) },
      { label: 'Description', cell: (s) => s.description || '—' },
      { label: 'Created', cell: (s) => time(s.create_time) },
    ], items, empty('No specs', 'Define a GPU spec, then place stock of it on the nodes.'), (s) => s.spec_name));
  }
  await load();
}
