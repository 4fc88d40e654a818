// The JSON API, called same-origin with the key the operator gave (sessionStorage: it
// lives as long as the tab and never leaves this origin). No cookie carries authority:
// every call sends credentials: 'omit'.

const KEY = 'toolgate.key';

export function getKey() {
  return sessionStorage.getItem(KEY) || '';
}

export function setKey(key) {
  if (key) {
    sessionStorage.setItem(KEY, key);
  } else {
    sessionStorage.removeItem(KEY);
  }
}

// ApiError is a failed call: the API's own code and message when it answered one,
// otherwise the HTTP status (the body of a non-JSON answer is never shown).
export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

// api calls method path with body (JSON, when not undefined) and returns the decoded
// answer, or throws an ApiError.
export async function api(method, path, body, {signal} = {}) {
  const headers = {Accept: 'application/json'};
  const key = getKey();
  if (key) {
    headers.Authorization = 'Bearer ' + key;
  }
  const init = {method, headers, signal, credentials: 'omit', cache: 'no-store', redirect: 'error'};
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (err) {
    if (err.name === 'AbortError') {
      throw err;
    }
    throw new ApiError(0, 'unreachable', `${method} ${path}: the server could not be reached (${err.message})`);
  }
  const text = await resp.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!resp.ok) {
    const e = data && data.error;
    if (e && typeof e.message === 'string') {
      throw new ApiError(resp.status, String(e.code || ''), e.message, e.details);
    }
    throw new ApiError(resp.status, 'http_' + resp.status, `${method} ${path} answered ${resp.status} ${resp.statusText}`.trim());
  }
  return data;
}

export function get(path, opts) {
  return api('GET', path, undefined, opts);
}

export function post(path, body, opts) {
  return api('POST', path, body, opts);
}

// seg encodes one path segment (a tool, source, profile or experiment name).
export function seg(name) {
  return encodeURIComponent(name);
}

// query builds a query string of the params that have a value.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') {
      q.set(k, String(v));
    }
  }
  const s = q.toString();
  return s ? '?' + s : '';
}
