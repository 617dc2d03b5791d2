// Every call the dashboard makes: SigV4-signed (service `batch`) requests to this same origin,
// with the keys the user signed in with. The server decides what the caller may see; a refusal
// comes back as an ApiError the page shows in place of the data.
import { AwsClient } from 'aws4fetch';

const STORE_KEY = 'allot.session';
const KEY_REFUSED = new Set(['UnrecognizedClientException', 'InvalidSignatureException']);

export class ApiError extends Error {
  constructor(status, type, message) {
    super(message || `${status} ${type || ''}`.trim());
    this.status = status;
    this.type = type || '';
  }
  get denied() {
    return this.status === 403;
  }
  get missing() {
    return this.status === 404;
  }
}

export function loadSession() {
  try {
    const s = JSON.parse(sessionStorage.getItem(STORE_KEY) || 'null');
    return s && s.accessKeyId && s.secretAccessKey ? s : null;
  } catch {
    return null;
  }
}

export function saveSession(s) {
  if (s) sessionStorage.setItem(STORE_KEY, JSON.stringify(s));
  else sessionStorage.removeItem(STORE_KEY);
}

export class Api {
  // notifyRefusal: tell the page when the server refuses the key itself (not while signing in).
  constructor({ accessKeyId, secretAccessKey, region }, { notifyRefusal = true } = {}) {
    this.notifyRefusal = notifyRefusal;
    this.accessKeyId = accessKeyId;
    this.region = region || 'local';
    this.aws = new AwsClient({ accessKeyId, secretAccessKey, service: 'batch', region: this.region });
  }

  async request(method, path, { query, body } = {}) {
    const url = new URL(path, location.origin);
    for (const [k, v] of Object.entries(query || {})) {
      if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
    }
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await this.aws.fetch(url.toString(), init);
    } catch (e) {
      throw new ApiError(0, 'NetworkError', `the server did not answer: ${e.message}`);
    }
    const text = await res.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      json = null;
    }
    if (!res.ok) {
      const type = res.headers.get('x-amzn-ErrorType') || (json && json.__type) || '';
      const message = (json && (json.message || json.Message)) || text || `${res.status} ${res.statusText}`;
      const kind = type.split(':')[0];
      // The key itself is refused (deleted, rotated, a wrong secret): every call would fail alike.
      if (this.notifyRefusal && KEY_REFUSED.has(kind)) dispatchEvent(new CustomEvent('allot-key-refused', { detail: kind }));
      throw new ApiError(res.status, kind, message);
    }
    if (json === null) throw new ApiError(res.status, 'BadResponse', 'the answer is not JSON');
    return json;
  }

  // An AWS Batch action: POST /v1/<action in lower case>.
  call(action, body = {}) {
    return this.request('POST', `/v1/${action.toLowerCase()}`, { body });
  }

  get(path, query) {
    return this.request('GET', path, { query });
  }

  post(path, body) {
    return this.request('POST', path, { body });
  }
}
