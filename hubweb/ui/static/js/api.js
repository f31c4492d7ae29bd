// The REST API client: the client token lives in sessionStorage and goes only in the
// Authorization header (never in an address); a 401 signs the page out.

const TOKEN_KEY = 'sdlc-hub.token';
const memo = new Map();  // cachedGet's answers

export class ApiError extends Error {
  constructor(status, body) {
    const text = (body && (body.description || body.title)) || `HTTP ${status}`;
    super(text);
    this.status = status;
    this.body = body || {};
    this.fields = this.body.fields || {};
  }
}

/**
 * No answer at all (the browser's «Failed to fetch»: the hub is stopped or the network is down);
 * an ApiError with status 0, so every view shows it where it shows the hub's own errors.
 */
export class Unreachable extends ApiError {
  constructor() {
    super(0, {title: 'Хаб недоступен',
      description: 'хаб недоступен: нет ответа по сети. Проверьте, что sdlc-hub serve запущен, '
        + 'и повторите.'});
  }
}

/** Thrown after a 401: the page has gone back to the sign-in form; views just stop. */
export class SignedOut extends Error {}

let onSignedOut = () => {};

export function setSignedOutHandler(handler) {
  onSignedOut = handler;
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function signOut(reason = null) {
  sessionStorage.removeItem(TOKEN_KEY);
  memo.clear();
  onSignedOut(reason);
}

/** A path with the non-empty query values appended. */
export function withQuery(path, query = {}) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== null && value !== undefined && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

// Every write carries an Idempotency-Key (contract §9.4b): one per distinct request (method,
// address and body) until the hub has answered it. A double click sends the same request twice
// under one key, and a retry after a network error (no answer: perhaps done, perhaps not) reuses
// it, so the hub does the write once and answers both alike. Once answered (2xx or 4xx) the key
// is dropped: sending the same text again later on purpose is a new write.
const openKeys = new Map();  // request → its key, oldest first
const OPEN_KEYS_MAX = 200;

function newKey() {
  // getRandomValues works on plain http too (randomUUID needs a secure context)
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function keyFor(request) {
  let key = openKeys.get(request);
  if (!key) {
    key = newKey();
    openKeys.set(request, key);
    if (openKeys.size > OPEN_KEYS_MAX) openKeys.delete(openKeys.keys().next().value);
  }
  return key;
}

async function send(method, path, {query, body, bearer = token()} = {}) {
  const headers = {Accept: 'application/json', Authorization: `Bearer ${bearer}`};
  const init = {method, headers, credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer'};
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const address = withQuery(path, query);
  if (method !== 'GET') {
    const request = `${method} ${address}\n${init.body ?? ''}`;
    headers['Idempotency-Key'] = keyFor(request);
    const response = await reach(address, init);  // a network error keeps the key for the retry
    if (response.status < 500) openKeys.delete(request);
    return response;
  }
  return reach(address, init);
}

/** Whether the hub answers at all (`GET /health`, open, touches no table). */
export async function hubAnswers() {
  try {
    await fetch('/health', {cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer'});
    return true;
  } catch {
    return false;
  }
}

/** fetch, with «no answer at all» as Unreachable instead of the browser's «Failed to fetch». */
async function reach(address, init) {
  try {
    return await fetch(address, init);
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw new Unreachable();
  }
}

async function errorBody(response) {
  try {
    return await response.json();
  } catch {
    return null;
  }
}

/** One API call; JSON answer, or ApiError; a 401 signs out and throws SignedOut. */
export async function api(method, path, options = {}) {
  const response = await send(method, path, options);
  if (response.status === 401) {
    signOut('Токен не подошёл или больше не действует. Войдите снова.');
    throw new SignedOut();
  }
  if (!response.ok) throw new ApiError(response.status, await errorBody(response));
  if (response.status === 204) return null;
  return response.json();
}

export const get = (path, query) => api('GET', path, {query});
export const post = (path, body) => api('POST', path, {body});
export const put = (path, body) => api('PUT', path, {body});

/** Check a token without storing it: the settings on success, else ApiError. */
export async function tryToken(candidate) {
  const response = await send('GET', '/settings', {bearer: candidate});
  if (!response.ok) throw new ApiError(response.status, await errorBody(response));
  const settings = await response.json();
  sessionStorage.setItem(TOKEN_KEY, candidate);
  return settings;
}

/** The bytes of a ready attachment as a Blob (the token goes in the header, not in a link). */
export async function download(path) {
  const response = await send('GET', path);
  if (response.status === 401) {
    signOut('Токен не подошёл или больше не действует. Войдите снова.');
    throw new SignedOut();
  }
  if (!response.ok) throw new ApiError(response.status, await errorBody(response));
  return response.blob();
}

/** `encodeURIComponent` for one path segment (keys and labels come from Jira). */
export const seg = (value) => encodeURIComponent(String(value));

/**
 * A GET answer kept for `seconds` in this tab (lists that change rarely and are only used to
 * fill selects: projects, settings). Signing out forgets them.
 */
export function cachedGet(path, seconds = 300) {
  const entry = memo.get(path);
  if (entry && entry.until > Date.now()) return entry.promise;
  const promise = get(path);
  memo.set(path, {promise, until: Date.now() + seconds * 1000});
  promise.catch(() => memo.delete(path));
  return promise;
}

/** Forget a cached answer (after a change this page made itself). */
export function forget(path) {
  memo.delete(path);
}
