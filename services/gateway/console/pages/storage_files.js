// The storage's "Files" tab: the file browser (../file_browser.js), which lists, uploads (in
// parts, with progress), downloads and deletes with presigned requests straight to S3.
import * as api from '../api.js';
import * as session from '../session.js';
import { mountFileBrowser } from '../file_browser.js';

export function filesTab(panel, storage, signal) {
  const who = session.current();
  mountFileBrowser(panel, {
    storageId: storage.storage_id, api, signal, owner: `${who?.user_id}@${who?.tenant_id}`,
  });
}
