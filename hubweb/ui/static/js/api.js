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

async function send(method, path, {query, body, bearer = token()} = {}) {
  const headers = {Accept: 'application/json', Authorization: `Bearer ${bearer}`};
  const init = {method, headers, credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer'};
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  try {
    return await fetch(withQuery(path, query), init);
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
