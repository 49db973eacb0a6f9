// The storage's "Files" tab. A placeholder: the file browser (listing, uploads in parts with
// presigned URLs, downloads) is a separate piece that replaces this module's export; the
// storage page calls filesTab(panel, storage, signal) whenever the tab opens.
import { h, mount } from '../dom.js';

export function filesTab(panel, storage) {
  mount(panel, h('div.empty',
    h('h2', 'File browser coming soon'),
    h('p', `Until then, create an accessor and use any S3 client: the bucket is "${storage.storage_id}".`)));
}
