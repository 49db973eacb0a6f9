// Operator: stock per spec (available / claimed / unavailable), placing new stocks and
// removing unclaimed ones.
import { h, mount } from '../dom.js';
import * as api from '../api.js';
import { header, table, empty, form, card, loading, toast } from '../ui.js';
import { num } from '../format.js';

// A count, colored by its meaning unless it is zero.
const count = (value, tone) => h(`span.count${num(value) ? '.' + tone : '.muted'}`, String(num(value)));

export default async function stockPage(root, params, signal) {
  const top = h('div');
  const list = h('div', loading());
  mount(root, header('Stock', 'Warm GPU slots per spec: instances start on an available one at once.'), top, list);
  const specs = (await api.listAll('/v1/specs', 'specs', {}, signal)).items;

  mount(top, card('Place or remove stock', form({
    inline: true,
    fields: [
      { name: 'spec_name', label: 'Spec', type: 'select', options: specs.map((s) => ({ value: s.spec_name, label: s.spec_name })) },
      { name: 'number', label: 'Number', type: 'number', value: '1', min: 1 },
      { name: 'allow_partial', label: 'Place what fits', type: 'checkbox' },
    ],
    submit: 'Create stock',
    onSubmit: async (v) => {
      const answer = await api.post('/v1/stocks', {
        spec_name: v.spec_name, number: Number(v.number), allow_partial: v.allow_partial,
        operation_id: api.requestId(),
      });
      toast(`Placed ${answer.placed || 0} of ${v.number}${answer.shortfall_reason ? ': ' + answer.shortfall_reason : ''}`,
        num(answer.placed) < Number(v.number) ? 'bad' : 'ok');
      load();
    },
  })));
  const removeButton = h('button.btn.danger', { type: 'button' }, 'Remove unclaimed');
  removeButton.addEventListener('click', async () => {
    const f = top.querySelector('form');
    try {
      const answer = await api.request('DELETE', '/v1/stocks', { body: {
        spec_name: f.inputs.spec_name.value, number: Number(f.inputs.number.value), operation_id: api.requestId(),
      } });
      toast(`Removed ${answer.deleted || 0}`);
      load();
    } catch (error) {
      toast(error.message, 'bad');
    }
  });
  top.querySelector('.actions').append(removeButton);

  async function load() {
    const summary = await api.get('/v1/stocks:summary', {}, signal);
    mount(list, table([
      { label: 'Spec', cell: (c) => h('strong', c.spec_name) },
      { label: 'Available', class: 'num', cell: (c) => count(c.available, 'ok') },
      { label: 'Claimed', class: 'num', cell: (c) => count(c.claimed, 'info') },
      { label: 'Unavailable', class: 'num', cell: (c) => count(c.unavailable, 'bad') },
      { label: 'Deleting', class: 'num', cell: (c) => String(num(c.deleting)) },
      { label: 'Total', class: 'num', cell: (c) => String(num(c.total)) },
    ], summary.counts || [], empty('No stock yet', 'Place stock of a spec above so instances of it can start.'), (c) => c.spec_name));
  }
  await load();
}
