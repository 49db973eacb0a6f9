// Follows the caller tenant's instances: lists them, then watches from the list's revision;
// after a break it resumes from the last revision seen, and lists again when the server no
// longer remembers that far back (OUT_OF_RANGE).
import * as api from './api.js';

const OUT_OF_RANGE = 11;

export async function watchInstances({ signal, onList, onChange, onStatus = () => {} }) {
  let revision = null;
  let delay = 1000;
  while (!signal.aborted) {
    try {
      if (revision === null) {
        const { items, last } = await api.listAll('/v1/instances', 'instances', {}, signal);
        revision = last.revision || '0';
        onList(items);
      }
      await api.stream('/v1/instances:watch', { since_revision: revision }, (change) => {
        delay = 1000;
        if (change.type === 'TYPE_SYNCED') onStatus(true);
        else onChange(change);
        if (change.revision) revision = change.revision;
      }, signal);
    } catch (error) {
      if (signal.aborted || error.name === 'AbortError') return;
      if (error.code === OUT_OF_RANGE) revision = null;
    }
    onStatus(false);
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 15000);
  }
}
