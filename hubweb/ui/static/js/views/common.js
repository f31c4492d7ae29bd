// Pieces several views share: links to issues, batches and commands, the batch table, filter
// forms whose submit writes the address, cursor paging links, API errors next to their fields.
import {ApiError, SignedOut, seg, withQuery} from '../api.js';
import {h, message, table, uid} from '../dom.js';
import {batchStatus, counts, seconds, time} from '../format.js';

const AUTHOR_KEY = 'sdlc-hub.author';
export const REFRESH_SECONDS = 3;  // while a batch is queued or running
export const IDLE_REFRESH_SECONDS = 15;  // lists that wait for new work

export const issueLink = (key) => (key ? h('a', {href: `#/issues/${seg(key)}`, class: 'key'}, key) : '—');
export const batchLink = (id, text = `№${id}`) => h('a', {href: `#/batches/${seg(id)}`}, text);
export const commandLink = (id) => (id === null || id === undefined ? '—'
  : h('a', {href: `#/commands/${seg(id)}`}, `команда №${id}`));

/** An address of this UI: hash path plus the non-empty query values. */
export const address = (path, query = {}) => `#${withQuery(path, query)}`;

export function batchTable(caption, items, {empty = 'Пакетов нет.'} = {}) {
  return table(caption, [
    {label: '№', cell: (b) => batchLink(b.id)},
    {label: 'Название', cell: (b) => batchLink(b.id, b.title)},
    {label: 'Автор', cell: (b) => b.author || '—'},
    {label: 'Проект', cell: (b) => b.project || '—'},
    {label: 'Создан', cell: (b) => time(b.created_at)},
    {label: 'Статус', cell: (b) => batchStatus(b)},
    {label: 'Команды', cell: (b) => counts(b.counts)},
    {label: 'Оценка', cell: (b) => seconds(b.estimate_seconds)},
  ], items, {empty});
}

/**
 * A GET-style filter form: its submit puts the non-empty named values into the address
 * (`path?name=value…`), so a filtered list is a link that can be shared.
 */
export function filterForm(path, label, fields, {resetLabel = 'Сбросить', transform = (q) => q} = {}) {
  const form = h('form', {class: 'filters', role: 'search', 'aria-label': label, novalidate: true},
    fields.map((f) => f.wrap),
    h('div', {class: 'actions'},
      h('button', {type: 'submit'}, 'Показать'),
      h('a', {href: `#${path}`, class: 'button secondary'}, resetLabel)));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const query = {};
    for (const [name, value] of new FormData(form)) {
      if (typeof value === 'string' && value.trim() !== '') query[name] = value.trim();
    }
    location.hash = address(path, transform(query));
  });
  return form;
}

// next page's address -> the address it was reached from (this tab, while the page is loaded)
const previousPages = new Map();

/**
 * "first page" / "previous page" / "next page" links for a keyset-paged list. A cursor only
 * leads forward, so the way back is the address the next link was followed from (remembered in
 * this tab; a shared link to a later page offers the first page instead).
 */
export function pager(path, query, nextCursor) {
  const first = {...query};
  delete first.cursor;
  if (!query.cursor && !nextCursor) return null;
  const here = address(path, query);
  const next = nextCursor ? address(path, {...first, cursor: nextCursor}) : null;
  if (next) previousPages.set(next, here);
  const back = query.cursor ? previousPages.get(here) : null;
  return h('nav', {class: 'pager', 'aria-label': 'Страницы'},
    query.cursor ? h('a', {href: address(path, first)}, '⇤ К первой странице') : null,
    back && back !== address(path, first) ? h('a', {href: back, rel: 'prev'}, '← Предыдущая страница')
      : null,
    next ? h('a', {href: next, rel: 'next'}, 'Следующая страница →') : null);
}

export function section(title, ...content) {
  const id = uid('section');
  return h('section', {'aria-labelledby': id}, h('h2', {id}, title), ...content);
}

/** The name this browser last signed notes and batches with (not a secret: localStorage). */
export function rememberedAuthor() {
  return localStorage.getItem(AUTHOR_KEY) || '';
}

export function rememberAuthor(name) {
  if (name) localStorage.setItem(AUTHOR_KEY, name);
}

/** Show an API error: field messages next to their fields, the rest in `status`. */
export function showErrors(error, fieldsByName, status) {
  for (const f of Object.values(fieldsByName)) f.setError(null);
  if (!(error instanceof ApiError)) {
    status.replaceChildren(message(`Ошибка страницы: ${error.message}`));
    return;
  }
  const unplaced = [];
  let first = null;
  for (const [name, messages] of Object.entries(error.fields)) {
    const target = fieldsByName[name];
    if (target) {
      target.setError(messages);
      first = first || target.input;
    } else {
      unplaced.push(`${name}: ${[messages].flat().join('; ')}`);
    }
  }
  status.replaceChildren(message(unplaced.length ? `${error.message} (${unplaced.join('; ')})`
    : (first ? 'Исправьте отмеченные поля.' : error.message)));
  if (first) first.focus();
}


/**
 * Refresh a view in place while it stays open: `step()` reloads and redraws, and answers how many
 * seconds to wait before the next time (0 or null: stop). A hidden tab waits without asking the
 * hub; a failed step shows its message in the returned status line and is tried again.
 */
export function autoRefresh({isCurrent}, step, seconds) {
  const status = h('p', {class: 'auto-refresh', role: 'status'});
  const schedule = (wait) => {
    if (wait) setTimeout(tick, wait * 1000);
  };
  async function tick() {
    if (!isCurrent()) return;
    if (document.hidden) {
      schedule(REFRESH_SECONDS);
      return;
    }
    try {
      const next = await step();
      status.textContent = '';
      if (isCurrent()) schedule(next);
    } catch (error) {
      if (error instanceof SignedOut || !isCurrent()) return;
      status.textContent = `Не удалось обновить: ${error.message}`;
      schedule(REFRESH_SECONDS);
    }
  }
  schedule(seconds);
  return status;
}

/** Whether any of these batches is still queued or running. */
export const anyOpen = (batches) => batches.some((b) => b.status === 'queued' || b.status === 'running');
