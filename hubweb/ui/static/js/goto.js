// The header's search field (contract §15a): a key in any case opens its card; other text runs as
// a JQL query in the issues list, or as `text ~ "…"` when the hub refuses it as JQL — then the
// address keeps the typed text (`typed=`) and the list shows the hub's refusal beside the words it
// searched. `/` focuses it.
import {ApiError, get} from './api.js';

const KEY = /^[a-z][a-z0-9_]*-\d+$/i;

/** The JQL of a full-text search for `text` (a quoted value: `\` and `"` escaped). */
export function textQuery(text) {
  return `text ~ "${text.replace(/[\\"]/g, (ch) => `\\${ch}`)}"`;
}

/** Where the field's text leads: `#/issues/<KEY>`, `#/issues?jql=…` or, for a text the hub
 * refuses as JQL, `#/issues?jql=text ~ "…"&typed=…`. */
export async function destination(text) {
  const value = text.trim();
  if (KEY.test(value)) return `#/issues/${encodeURIComponent(value.toUpperCase())}`;
  try {
    await get('/issues/count', {jql: value});
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 422) throw error;
    return `#/issues?${new URLSearchParams({jql: textQuery(value), typed: value})}`;
  }
  return `#/issues?${new URLSearchParams({jql: value})}`;
}

const typing = (element) => element && (element.isContentEditable
  || ['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName));

/** Wire the header form: submit goes to the destination, `/` anywhere else focuses the field. */
export function installGoto(form) {
  const input = form.querySelector('input[name="goto"]');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!input.value.trim()) return;
    input.setAttribute('aria-busy', 'true');
    try {
      const target = await destination(input.value);
      input.removeAttribute('aria-invalid');
      input.value = '';
      if (location.hash === target) window.dispatchEvent(new HashChangeEvent('hashchange'));
      else location.hash = target;
    } catch (error) {
      input.setAttribute('aria-invalid', 'true');
      input.title = error.message;
    } finally {
      input.removeAttribute('aria-busy');
    }
  });
  document.addEventListener('keydown', (event) => {
    if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    event.preventDefault();
    input.focus();
    input.select();
  });
}
