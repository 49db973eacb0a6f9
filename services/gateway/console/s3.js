// The S3 endpoint from the browser: AWS Signature Version 4 query presigning with WebCrypto
// (HMAC-SHA256, SHA-256), and the calls the file browser makes with presigned URLs: list,
// download, delete, single PUT uploads and multipart uploads with progress. No dependencies.
//
// Every request is presigned with only `host` signed and UNSIGNED-PAYLOAD, as `aws s3 presign`
// does, so the browser sends no Authorization header and no cookie: the S3 endpoint answers
// the console's origin with CORS headers (gpuaas-storage --s3-cors-origins).

export const PART_SIZE = 8 * 1024 * 1024;
export const PARALLEL_PARTS = 4;

// An S3 error document (<Error><Code>...), or a request that never got an answer (code
// "NetworkError": the endpoint is down, or it does not allow this page's origin).
export class S3Error extends Error {
  constructor(status, code, message, requestId = '') {
    super(code ? `${code}: ${message}` : message);
    this.status = status;
    this.code = code;
    this.requestId = requestId;
  }
}

const encoder = new TextEncoder();

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
}

async function sha256Hex(text) {
  return hex(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
}

async function hmac(key, text) {
  const cryptoKey = await crypto.subtle.importKey(
    'raw', typeof key === 'string' ? encoder.encode(key) : key,
    { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return crypto.subtle.sign('HMAC', cryptoKey, encoder.encode(text));
}

// AWS's UriEncode: unreserved characters as they are, every other UTF-8 byte as %XX; '/' kept
// in paths only.
export function uriEncode(text, keepSlash = false) {
  const encoded = encodeURIComponent(text)
    .replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return keepSlash ? encoded.replace(/%2F/g, '/') : encoded;
}

// "20260126T133507Z" and "20260126".
function amzDate(now) {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  return { stamp, day: stamp.slice(0, 8) };
}

// A presigned URL for `method` on /bucket/key (key '' is the bucket) with the extra query
// parameters `query` ({name: value}), valid for `expires` seconds.
export async function presign(credentials, method, bucket, key, query = {}, expires = 900,
  now = new Date()) {
  const { endpoint, accessKeyId, secretAccessKey, region = 'us-east-1' } = credentials;
  const url = new URL(endpoint);
  const { stamp, day } = amzDate(now);
  const scope = `${day}/${region}/s3/aws4_request`;
  const params = {
    ...query,
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Credential': `${accessKeyId}/${scope}`,
    'X-Amz-Date': stamp,
    'X-Amz-Expires': String(expires),
    'X-Amz-SignedHeaders': 'host',
  };
  const canonicalQuery = Object.entries(params)
    .map(([name, value]) => [uriEncode(name), uriEncode(String(value))])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const path = `/${uriEncode(bucket)}${key ? '/' + uriEncode(key, true) : ''}`;
  const canonicalRequest = [method, path, canonicalQuery, `host:${url.host}`, '', 'host',
    'UNSIGNED-PAYLOAD'].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', stamp, scope, await sha256Hex(canonicalRequest)]
    .join('\n');
  let signingKey = await hmac('AWS4' + secretAccessKey, day);
  for (const part of [region, 's3', 'aws4_request']) signingKey = await hmac(signingKey, part);
  const signature = hex(await hmac(signingKey, stringToSign));
  return `${url.origin}${path}?${canonicalQuery}&X-Amz-Signature=${signature}`;
}

function xml(text) {
  return new DOMParser().parseFromString(text, 'application/xml');
}

function textOf(node, tag) {
  const found = node.getElementsByTagName(tag)[0];
  return found ? found.textContent : '';
}

function errorOf(status, body, statusText) {
  const doc = body ? xml(body) : null;
  const code = doc ? textOf(doc, 'Code') : '';
  if (!code) return new S3Error(status, `HTTP${status}`, statusText || 'request failed');
  return new S3Error(status, code, textOf(doc, 'Message'), textOf(doc, 'RequestId'));
}

function networkError(credentials) {
  return new S3Error(0, 'NetworkError',
    `cannot reach the S3 endpoint ${credentials.endpoint} (is it up, and does it allow this ` +
    `page's origin, ${location.origin}, in gpuaas-storage --s3-cors-origins?)`);
}

// One presigned request with fetch; resolves to the answer's text, rejects with S3Error.
async function call(credentials, method, bucket, key, query, body) {
  const url = await presign(credentials, method, bucket, key, query);
  let response;
  try {
    response = await fetch(url, { method, body, credentials: 'omit', cache: 'no-store' });
  } catch {
    throw networkError(credentials);
  }
  const text = await response.text();
  if (!response.ok) throw errorOf(response.status, text, response.statusText);
  return { text, response };
}

// Lists one "folder": {folders: [prefix], files: [{key, size, lastModified}], nextToken}.
export async function listObjects(credentials, bucket, prefix = '', continuationToken = '') {
  const query = { 'list-type': '2', delimiter: '/', prefix, 'max-keys': '1000' };
  if (continuationToken) query['continuation-token'] = continuationToken;
  const doc = xml((await call(credentials, 'GET', bucket, '', query)).text);
  const folders = Array.from(doc.getElementsByTagName('CommonPrefixes'), (p) => textOf(p, 'Prefix'));
  const files = Array.from(doc.getElementsByTagName('Contents'), (c) => ({
    key: textOf(c, 'Key'),
    size: Number(textOf(c, 'Size')),
    lastModified: textOf(c, 'LastModified'),
  }));
  const truncated = textOf(doc, 'IsTruncated') === 'true';
  return { folders, files, nextToken: truncated ? textOf(doc, 'NextContinuationToken') : '' };
}

// A link that downloads the object under `filename` (the answer says "attachment"), valid for
// `expires` seconds.
export function downloadUrl(credentials, bucket, key, filename, expires = 300) {
  const quoted = filename.replace(/["\\]/g, '_');
  return presign(credentials, 'GET', bucket, key, {
    'response-content-disposition':
      `attachment; filename="${quoted}"; filename*=UTF-8''${uriEncode(filename)}`,
  }, expires);
}

export async function deleteObject(credentials, bucket, key) {
  await call(credentials, 'DELETE', bucket, key, {});
}

// A PUT of `blob` with XMLHttpRequest, which reports upload progress (fetch does not):
// onProgress(bytes sent). Resolves to the ETag; rejects with S3Error, or an AbortError when
// `signal` aborts.
async function put(credentials, bucket, key, query, blob, onProgress, signal) {
  const url = await presign(credentials, 'PUT', bucket, key, query);
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('PUT', url);
    request.upload.onprogress = (e) => onProgress(e.loaded);
    request.onload = () => {
      const etag = request.getResponseHeader('ETag');
      if (request.status >= 200 && request.status < 300 && etag) {
        onProgress(blob.size);
        resolve(etag);
      } else if (request.status >= 200 && request.status < 300) {
        reject(new S3Error(request.status, 'NoETag', 'the S3 endpoint does not show this page ' +
          'the ETag header (Access-Control-Expose-Headers), which completing an upload needs'));
      } else {
        reject(errorOf(request.status, request.responseText, request.statusText));
      }
    };
    request.onerror = () => reject(networkError(credentials));
    request.onabort = () => reject(new DOMException('upload cancelled', 'AbortError'));
    if (signal) {
      if (signal.aborted) return request.abort();
      signal.addEventListener('abort', () => request.abort(), { once: true });
    }
    request.send(blob);
  });
}

export function putObject(credentials, bucket, key, blob, onProgress = () => {}, signal) {
  return put(credentials, bucket, key, {}, blob, onProgress, signal);
}

export async function createMultipartUpload(credentials, bucket, key) {
  const { text } = await call(credentials, 'POST', bucket, key, { uploads: '' });
  return textOf(xml(text), 'UploadId');
}

export function uploadPart(credentials, bucket, key, uploadId, partNumber, blob,
  onProgress = () => {}, signal) {
  return put(credentials, bucket, key, { partNumber: String(partNumber), uploadId }, blob,
    onProgress, signal);
}

function escapeXml(text) {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// parts: [{partNumber, etag}] in order. S3 may answer 200 and still put an <Error> in the body
// (a long assembly), so the body decides.
export async function completeMultipartUpload(credentials, bucket, key, uploadId, parts) {
  const body = '<CompleteMultipartUpload>' + parts.map((p) =>
    `<Part><PartNumber>${p.partNumber}</PartNumber><ETag>${escapeXml(p.etag)}</ETag></Part>`)
    .join('') + '</CompleteMultipartUpload>';
  const { text, response } = await call(credentials, 'POST', bucket, key, { uploadId }, body);
  if (xml(text).documentElement.nodeName === 'Error') throw errorOf(response.status, text);
}

export async function abortMultipartUpload(credentials, bucket, key, uploadId) {
  await call(credentials, 'DELETE', bucket, key, { uploadId });
}

// Uploads `file` to `key`: one PUT up to PART_SIZE, else a multipart upload in PART_SIZE parts,
// PARALLEL_PARTS at a time (a browser opens at most six connections to a host), aborted when a
// part fails or `signal` aborts, so no parts are left on the server. onProgress(bytes sent).
export async function uploadFile(credentials, bucket, key, file, onProgress = () => {}, signal) {
  if (file.size <= PART_SIZE) return putObject(credentials, bucket, key, file, onProgress, signal);
  const uploadId = await createMultipartUpload(credentials, bucket, key);
  // One failed part stops the others.
  const stop = new AbortController();
  signal?.addEventListener('abort', () => stop.abort(), { once: true });
  const count = Math.ceil(file.size / PART_SIZE);
  const sent = new Array(count).fill(0);
  const parts = [];
  let next = 0;
  async function sendParts() {
    while (next < count && !stop.signal.aborted) {
      const index = next++;
      const blob = file.slice(index * PART_SIZE, (index + 1) * PART_SIZE);
      const etag = await uploadPart(credentials, bucket, key, uploadId, index + 1, blob, (n) => {
        sent[index] = n;
        onProgress(sent.reduce((a, b) => a + b, 0));
      }, stop.signal);
      parts[index] = { partNumber: index + 1, etag };
    }
  }
  let failure = null;  // the first, not the others' AbortErrors it caused
  try {
    await Promise.all(Array.from({ length: Math.min(PARALLEL_PARTS, count) }, () =>
      sendParts().catch((error) => { failure ??= error; stop.abort(); })));
    if (failure || stop.signal.aborted) throw failure || new DOMException('upload cancelled', 'AbortError');
    await completeMultipartUpload(credentials, bucket, key, uploadId, parts);
  } catch (error) {
    abortMultipartUpload(credentials, bucket, key, uploadId).catch(() => {});
    throw error;
  }
}
