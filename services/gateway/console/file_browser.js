// The storage's file browser: lists the bucket one "folder" (key prefix up to a '/') at a
// time with breadcrumbs, uploads files (picker or drag and drop; multipart in 8 MiB parts
// above 8 MiB) with a progress bar each, downloads through presigned links and deletes after a
// confirmation. Bytes go straight between the browser and the S3 endpoint (s3.js); the gateway
// only hands out a short-lived accessor for the storage and says where S3 is (/api/config).
//
//   mountFileBrowser(element, { storageId, api, signal, owner })
//
// `api` is the console's api.js module, or any object with get(path) and post(path, body)
// returning the parsed JSON answer (throwing on errors); `signal` (optional) aborts uploads in
// progress when the page goes away; `owner` (optional, e.g. "user@tenant") keeps one signed-in
// person's saved accessor from another's who later signs in in the same browser tab.
import { h, mount } from './dom.js';
import { button, confirm, toast } from './ui.js';
import { bytes, time } from './format.js';
import * as s3 from './s3.js';

const ACCESSOR_TTL_SECONDS = 3600;
// A saved key this close to its expiry is replaced rather than used.
const RENEW_MARGIN_MS = 5 * 60 * 1000;
// Download links live as long as this, or less when the key expires sooner.
const LINK_SECONDS = 3600;

let endpointPromise = null;
function s3Endpoint(api) {
  endpointPromise ??= api.get('/api/config').then((config) => {
    if (!config.s3_endpoint) {
      throw new Error('the gateway does not say where the S3 endpoint is (/api/config has no s3_endpoint)');
    }
    return config.s3_endpoint.replace(/\/+$/, '');
  }).catch((error) => { endpointPromise = null; throw error; });
  return endpointPromise;
}

// The storage's accessor for this browser tab: kept in sessionStorage until close to its
// expiry, so opening the tab again does not mint another key.
async function accessorFor(storageId, owner, api, renew) {
  const slot = `gpuaas.fileBrowser.accessor.${owner}/${storageId}`;
  const saved = JSON.parse(sessionStorage.getItem(slot) || 'null');
  if (!renew && saved && saved.expires - Date.now() > RENEW_MARGIN_MS) {
    return { ...saved, saved: true };
  }
  const answer = await api.post(`/v1/storages/${encodeURIComponent(storageId)}/accessors`, {
    ttl: `${ACCESSOR_TTL_SECONDS}s`, description: 'console file browser',
  });
  const accessor = {
    accessKeyId: answer.access_key_id,
    secretAccessKey: answer.secret_access_key,
    expires: Date.parse(answer.accessor?.expire_time) || Date.now() + ACCESSOR_TTL_SECONDS * 1000,
  };
  sessionStorage.setItem(slot, JSON.stringify(accessor));
  return accessor;
}

// Deletes the accessors this tab minted and forgets them: signing out must not leave a working
// S3 secret in the tab's storage. Best effort: an accessor another tab already deleted is gone.
export async function revokeSavedAccessors(api) {
  const prefix = 'gpuaas.fileBrowser.accessor.';
  for (const slot of Object.keys(sessionStorage).filter((k) => k.startsWith(prefix))) {
    const storageId = slot.slice(slot.lastIndexOf('/') + 1);
    const saved = JSON.parse(sessionStorage.getItem(slot) || 'null');
    sessionStorage.removeItem(slot);
    if (!saved?.accessKeyId) continue;
    await api.del(`/v1/storages/${encodeURIComponent(storageId)}/accessors/${encodeURIComponent(saved.accessKeyId)}`)
      .catch(() => {});
  }
}

// Runs op(credentials); when S3 no longer takes a saved key (deleted on the Accessors tab,
// expired), once more with a new one.
function s3Session(storageId, owner, api) {
  let current = null;
  function credentials(renew = false) {
    if (!current || renew) {
      current = Promise.all([s3Endpoint(api), accessorFor(storageId, owner, api, renew)])
        .then(([endpoint, accessor]) => ({ endpoint, ...accessor }));
      current.catch(() => { current = null; });
    }
    return current;
  }
  return async function run(op) {
    const used = await credentials();
    try {
      return await op(used);
    } catch (error) {
      if (!used.saved || !['InvalidAccessKeyId', 'AccessDenied'].includes(error.code)) throw error;
      return op(await credentials(true));
    }
  };
}

// The gateway's refusal to mint the key, in the words of what the person tried.
function explain(error) {
  if (error.code === 7) {  // PERMISSION_DENIED
    return new Error('the file browser works with an S3 key of this storage, and creating one takes ' +
      'the member role or above');
  }
  return error;
}

// "a/b/c.txt" -> "c.txt"; a folder "a/b/" -> "b/".
const baseName = (key) => key.slice(key.replace(/\/$/, '').lastIndexOf('/') + 1);

function breadcrumbs(bucket, prefix, go) {
  const parts = prefix.split('/').filter(Boolean);
  const crumbs = [h('a.fb-crumb', { href: '#', onclick: (e) => { e.preventDefault(); go(''); } }, bucket)];
  parts.forEach((part, i) => {
    const target = parts.slice(0, i + 1).join('/') + '/';
    crumbs.push(' / ', i === parts.length - 1
      ? h('span.fb-crumb.current', part)
      : h('a.fb-crumb', { href: '#', onclick: (e) => { e.preventDefault(); go(target); } }, part));
  });
  return h('nav.fb-crumbs', { 'aria-label': 'Folder' }, crumbs);
}

function loadStyle() {
  if (document.getElementById('file-browser-css')) return;
  document.head.append(h('link#file-browser-css', { rel: 'stylesheet', href: 'file_browser.css' }));
}

export function mountFileBrowser(element, { storageId, api, signal, owner = '' }) {
  loadStyle();
  const run = s3Session(storageId, owner, api);
  let prefix = '';
  let nextToken = '';
  let uploading = 0;

  const errorBox = h('div.alert.bad.fb-error', { role: 'alert', hidden: true });
  const uploads = h('div.fb-uploads');
  const listing = h('div.fb-listing');
  const picker = h('input.fb-picker', { type: 'file', multiple: true, hidden: true,
    onchange: () => { uploadAll(picker.files); picker.value = ''; } });
  const crumbSlot = h('div.fb-crumb-slot');
  const drop = h('div.fb-drop', listing,
    h('p.fb-drop-hint.muted', 'Drop files here to upload them to this folder.'));
  mount(element, h('div.file-browser',
    h('div.fb-toolbar', crumbSlot, h('div.actions',
      button('Refresh', () => list()), button('Upload files', () => picker.click(), 'primary'), picker)),
    errorBox, uploads, drop));

  function showError(what, error) {
    errorBox.hidden = !error;
    errorBox.textContent = error ? `${what}: ${error.message || error}` : '';
  }

  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('dragging'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('dragging'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('dragging');
    uploadAll(e.dataTransfer.files);
  });
  const warnOnLeave = (e) => {
    if (uploading) { e.preventDefault(); e.returnValue = ''; }
  };
  window.addEventListener('beforeunload', warnOnLeave);
  signal?.addEventListener('abort', () => window.removeEventListener('beforeunload', warnOnLeave));

  async function list(more = false) {
    mount(crumbSlot, breadcrumbs(storageId, prefix, (target) => { prefix = target; list(); }));
    const shown = prefix;
    try {
      const page = await run((c) => s3.listObjects(c, storageId, shown, more ? nextToken : ''));
      const rows = await run((c) => Promise.all([
        ...page.folders.map((folder) => folderRow(folder)),
        ...page.files.map((file) => fileRow(c, file)),
      ]));
      if (shown !== prefix) return;  // the user moved on meanwhile
      nextToken = page.nextToken;
      showError('', null);
      drawListing(rows, more);
    } catch (error) {
      showError('Could not list the files', explain(error));
      if (!more) mount(listing);
    }
  }

  function drawListing(rows, more) {
    let body = listing.querySelector('tbody');
    if (!more || !body) {
      body = h('tbody');
      mount(listing, h('div.table-wrap', h('table.fb-table',
        h('thead', h('tr', h('th', 'Name'), h('th.num', 'Size'), h('th', 'Modified'), h('th'))), body)));
    }
    body.append(...rows);
    listing.querySelector('.fb-more')?.remove();
    if (!body.children.length) {
      mount(listing, h('div.empty.fb-empty', h('h2', prefix ? 'This folder is empty' : 'No files yet'),
        h('p', 'Drop files here, or use Upload files. Large files go up in parts, with progress shown.')));
    }
    if (nextToken) listing.append(h('div.fb-more', button('Load more', () => list(true))));
  }

  function folderRow(folder) {
    const open = (e) => { e.preventDefault(); prefix = folder; list(); };
    return h('tr.fb-folder', { 'data-key': folder },
      h('td', h('a.fb-name', { href: '#', onclick: open }, baseName(folder))),
      h('td.num', ''), h('td', ''), h('td', ''));
  }

  async function fileRow(credentials, file) {
    const name = baseName(file.key);
    const seconds = Math.min(LINK_SECONDS, Math.floor((credentials.expires - Date.now()) / 1000));
    const href = await s3.downloadUrl(credentials, storageId, file.key, name, seconds);
    return h('tr.fb-file', { 'data-key': file.key },
      h('td', h('a.fb-name', { href, title: `Download ${name}` }, name)),
      h('td.num', bytes(file.size)),
      h('td', time(file.lastModified)),
      h('td.row-actions',
        h('a.btn.small.fb-download', { href }, 'Download'),
        button('Delete', () => remove(file.key), 'small danger fb-delete')));
  }

  async function remove(key) {
    const text = `${key} is removed from the storage. This cannot be undone.`;
    if (!await confirm(`Delete ${baseName(key)}?`, text)) return;
    try {
      await run((c) => s3.deleteObject(c, storageId, key));
      toast(`Deleted ${baseName(key)}`);
      list();
    } catch (error) {
      showError(`Could not delete ${key}`, error);
    }
  }

  function uploadAll(files) {
    const target = prefix;
    // One file after another: a large file's parts already fill the connections.
    let chain = Promise.resolve();
    for (const file of Array.from(files)) chain = chain.then(() => upload(file, target));
  }

  async function upload(file, target) {
    if (signal?.aborted) return;
    const key = target + file.name;
    const cancel = new AbortController();
    signal?.addEventListener('abort', () => cancel.abort(), { once: true });
    const bar = h('progress', { max: Math.max(file.size, 1), value: 0 });
    const status = h('span.fb-status.muted', 'starting');
    const cancelButton = button('Cancel', () => cancel.abort(), 'small');
    const row = h('div.fb-upload', { 'data-key': key },
      h('span.fb-upload-name', key), bar, status, cancelButton);
    uploads.append(row);
    uploading++;
    try {
      await run((c) => s3.uploadFile(c, storageId, key, file, (sent) => {
        bar.value = sent;
        const percent = Math.floor((100 * sent) / Math.max(file.size, 1));
        status.textContent = `${bytes(sent)} of ${bytes(file.size)} (${percent} %)`;
      }, cancel.signal));
      row.classList.add('done');
      status.textContent = `uploaded, ${bytes(file.size)}`;
      cancelButton.remove();
      setTimeout(() => row.remove(), 5000);
      if (prefix === target) list();
    } catch (error) {
      row.classList.add('failed');
      status.textContent = error.name === 'AbortError' ? 'cancelled' : `failed: ${error.message}`;
      status.classList.remove('muted');
      cancelButton.replaceWith(button('Dismiss', () => row.remove(), 'small'));
    } finally {
      uploading--;
    }
  }

  list();
}
