// #/issues/<key> — the issue card: fields, the description and comments with their Jira markup
// rendered, links both ways (with the linked issue's summary and status), an epic's issues,
// attachments (state, download through fetch + Blob, fetch request), sprints, actions that queue
// a batch after a preview, the service note editor and the change history.
import {cachedGet, download, get, post, put, seg} from '../api.js';
import {details, field, fill, h, message, table} from '../dom.js';
import {ATTACHMENT_STATE, FIELD_NAME, ISSUE_WORDS, SPRINT_STATE, badge, day, plural, size, time} from '../format.js';
import {markupInSteps} from '../markup.js';
import {learnPeople, nameOf, person} from '../people.js';
import {address, commandLink, issueLink, rememberAuthor, rememberedAuthor, section, showErrors} from './common.js';
import issueActions from './issue-actions.js';

const NOTE_TEXTS = [
  ['work_kind', 'Вид работ', 'input'],
  ['done_text', 'Что сделано', 'textarea'],
  ['rest_text', 'Что осталось', 'textarea'],
  ['owner_note', 'Заметка владельца', 'textarea'],
];
const CHANGES_PAGE = 100;
const EPIC_PAGE = 50;
const EPIC_NAMES = new Set(['Epic', 'Эпик']);  // when issue_types has no epic: Jira's own names
// Big descriptions and comments render in part, the rest on request (a 130 KB wiki table is
// ~40,000 nodes: seconds of a blocked tab when built at once). Each text renders up to
// PREVIEW_CHARS at once (to a line's end), a card up to CARD_PREVIEW_CHARS in all (then each
// further text its first MIN_PREVIEW_CHARS); «Показать всё» renders the rest in idle time,
// SLICE_MS at a time.
const PREVIEW_CHARS = 16_000;
const CARD_PREVIEW_CHARS = 32_000;
const MIN_PREVIEW_CHARS = 2_000;
const SLICE_MS = 12;
const later = (callback) => (window.requestIdleCallback
  ? requestIdleCallback(callback, {timeout: 200}) : setTimeout(callback, 0));

/** The rest of a text rendered in idle-time slices, its progress in `note`; then `done()`. */
function renderRest(steps, wrap, note, done) {
  const slice = (deadline) => {
    if (!wrap.isConnected) return;  // the page went on to another view
    const idle = deadline && !deadline.didTimeout ? deadline.timeRemaining() : SLICE_MS;
    const until = performance.now() + Math.min(SLICE_MS, idle);
    if (steps.advance(() => performance.now() >= until)) {
      done();
      return;
    }
    note.textContent = `Отображается… ${Math.floor((100 * steps.rendered) / steps.size)} %`;
    later(slice);
  };
  later(slice);
}

/**
 * Jira markup of a description or comment as nodes; a big one in part with «Показать всё».
 * `allowance.left`: the characters the card may still render at once.
 */
function markup(text, allowance) {
  const budget = Math.max(MIN_PREVIEW_CHARS, Math.min(PREVIEW_CHARS, allowance.left));
  const steps = markupInSteps(text, {person: nameOf, budget});
  allowance.left -= steps.rendered;
  if (steps.done) return steps.element;
  const note = h('span', {}, `Показано начало: ${Math.floor((100 * steps.rendered) / steps.size)} % текста. `);
  const button = h('button', {type: 'button', class: 'secondary'}, 'Показать всё');
  const footer = h('p', {class: 'markup-more', role: 'status'}, note, button);
  const wrap = h('div', {class: 'markup-partial'}, steps.element, footer);
  button.addEventListener('click', () => {
    button.remove();
    note.textContent = 'Отображается…';
    renderRest(steps, wrap, note, () => {
      footer.remove();
      wrap.classList.remove('markup-partial');
    });
  });
  return wrap;
}

function fields(issue) {
  return details([
    ['Тип', issue.issue_type],
    ['Статус', issue.status],
    ['Приоритет', issue.priority],
    ['Исполнитель', issue.assignee ? person(issue.assignee) : null],
    ['Автор', issue.reporter ? person(issue.reporter) : null],
    ['Срок', issue.duedate ? day(issue.duedate) : null],
    ['Плановое начало', issue.planned_start ? day(issue.planned_start) : null],
    ['Плановое окончание', issue.planned_end ? day(issue.planned_end) : null],
    ['Эпик', issue.epic_key ? issueLink(issue.epic_key) : null],
    ['Метки', issue.labels && issue.labels.length ? issue.labels.join(', ') : null],
    ['Спринт', issue.sprint],
    ['Оценка', issue.story_points === null || issue.story_points === undefined ? null : String(issue.story_points)],
    ['Создана', time(issue.created)],
    ['Обновлена в Jira', time(issue.jira_updated)],
    ['Получена хабом', time(issue.fetched_at)],
    ['Сосед', issue.neighbor ? 'да' : 'нет'],
  ]);
}

/** A linked issue: its key as a link, its summary and status (or «нет в зеркале»). */
function linkedIssue(item) {
  return [issueLink(item.key), ' ',
    item.summary === null || item.summary === undefined
      ? h('span', {class: 'muted'}, 'нет в зеркале')
      : [h('span', {class: 'link-summary'}, item.summary), ' ',
        item.status ? badge(item.status, 'status') : null]];
}

function links({outward, inward}) {
  const list = (items, empty) => (items.length
    ? h('ul', {class: 'links'}, items.map((l) => h('li', {}, h('span', {class: 'link-type'}, l.type), ' ',
      linkedIssue(l))))
    : h('p', {class: 'empty'}, empty));
  return h('div', {class: 'two-columns'},
    h('div', {}, h('h3', {}, 'Исходящие'), list(outward, 'Нет.')),
    h('div', {}, h('h3', {}, 'Входящие'), list(inward, 'Нет.')));
}

function comments(items, allowance) {
  if (!items.length) return h('p', {class: 'empty'}, 'Комментариев нет.');
  return h('ol', {class: 'comments'}, items.map((c) => h('li', {class: 'comment'},
    h('p', {class: 'comment-meta'}, h('span', {class: 'author'}, c.author ? person(c.author) : 'без автора'),
      ' · ', time(c.created_at || c.created),
      c.updated && c.updated !== c.created ? [' · изменён ', time(c.updated)] : null),
    h('div', {class: 'text'}, markup(c.body || '', allowance)))));
}

async function saveBlob(attachment) {
  const blob = await download(`/attachments/${seg(attachment.attachment_id)}/content`);
  const url = URL.createObjectURL(blob);
  const link = h('a', {href: url, download: attachment.filename || `attachment-${attachment.attachment_id}`,
    class: 'visually-hidden'}, 'файл');
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function attachmentState(attachment) {
  const state = attachment.state || 'none';
  return [badge(ATTACHMENT_STATE[state] || state, `file-${state}`),
    attachment.error ? h('span', {class: 'error-text'}, ` ${attachment.error}`) : null];
}

function attachmentAction(attachment, stateCell) {
  const cell = h('div', {class: 'cell-actions'});
  const status = h('span', {role: 'status', class: 'inline-status'});
  const render = () => {
    const label = `«${attachment.filename || attachment.attachment_id}»`;
    let button;
    if (attachment.state === 'ready') {
      button = h('button', {type: 'button', 'aria-label': `Скачать ${label}`}, 'Скачать');
      button.addEventListener('click', async () => {
        button.disabled = true;
        status.textContent = '';
        try {
          await saveBlob(attachment);
        } catch (error) {
          status.textContent = `не удалось: ${error.message}`;
        } finally {
          button.disabled = false;
        }
      });
    } else if (attachment.state !== 'fetching') {
      button = h('button', {type: 'button', 'aria-label': `Скачать в хаб ${label}`}, 'Скачать в хаб');
      button.addEventListener('click', async () => {
        button.disabled = true;
        try {
          const answer = await post(`/attachments/${seg(attachment.attachment_id)}/fetch`,
            rememberedAuthor() ? {author: rememberedAuthor()} : {});
          attachment.state = answer.state;
          attachment.error = null;
          attachment.command_id = answer.command_id;
          fill(stateCell, attachmentState(attachment));
          render();
        } catch (error) {
          status.textContent = `не удалось: ${error.message}`;
          button.disabled = false;
        }
      });
    }
    fill(cell, button,
      attachment.state === 'fetching' ? ['ждёт агента: ', commandLink(attachment.command_id)] : null,
      status);
  };
  render();
  return cell;
}

function attachments(items) {
  return table('Вложения', [
    {label: 'Файл', cell: (a) => a.filename || a.attachment_id},
    {label: 'Размер', cell: (a) => size(a.size), class: 'num'},
    {label: 'Тип', cell: (a) => a.mime_type || '—'},
    {label: 'Автор', cell: (a) => a.author || '—'},
    {label: 'Добавлено', cell: (a) => time(a.created_at || a.created)},
    {label: 'Состояние', cell: (a) => {
      a.stateCell = h('span', {}, attachmentState(a));
      return a.stateCell;
    }},
    {label: 'Действие', cell: (a) => attachmentAction(a, a.stateCell)},
  ], items, {empty: 'Вложений нет.', hideCaption: true});
}

function sprints(items) {
  if (!items.length) return h('p', {class: 'empty'}, 'В спринты не входила.');
  return h('ul', {class: 'plain'}, items.map((s) => h('li', {},
    s.name || `спринт ${s.sprint_id}`, ' — ', SPRINT_STATE[s.state] || s.state || 'неизвестно')));
}

function noteMeta(note) {
  return note && note.updated_at
    ? ['Изменена ', time(note.updated_at), note.updated_by ? ` · ${note.updated_by}` : '']
    : 'Заметки ещё нет.';
}

function noteEditor(key, note) {
  const inputs = {};
  for (const [name, label, kind] of NOTE_TEXTS) {
    inputs[name] = field(label, name, {kind, value: note ? note[name] : '',
      attrs: {maxlength: 20000}});
  }
  inputs.updated_by = field('Кто правит', 'updated_by', {value: rememberedAuthor(), required: true,
    attrs: {autocomplete: 'username'}});
  const meta = h('p', {class: 'note-meta'}, noteMeta(note));
  const status = h('div', {class: 'form-status'});
  const button = h('button', {type: 'submit'}, 'Сохранить заметку');
  const form = h('form', {class: 'note-editor', novalidate: true, 'aria-label': 'Служебная заметка'},
    meta, Object.values(inputs).map((f) => f.wrap), h('div', {class: 'actions'}, button), status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = {updated_by: inputs.updated_by.input.value.trim()};
    for (const [name] of NOTE_TEXTS) body[name] = inputs[name].input.value || null;
    button.disabled = true;
    status.replaceChildren();
    try {
      const saved = await put(`/notes/${seg(key)}`, body);
      for (const f of Object.values(inputs)) f.setError(null);
      rememberAuthor(body.updated_by);
      fill(meta, noteMeta(saved));
      status.replaceChildren(message('Заметка сохранена.', 'ok'));
    } catch (error) {
      showErrors(error, inputs, status);
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

function changeRows(items) {
  return items.map((c) => h('tr', {},
    h('td', {}, time(c.at)),
    h('td', {}, person(c.author)),
    h('td', {}, FIELD_NAME[c.field] || c.field || c.field_name || '—'),
    h('td', {class: 'text'}, c.from_string ?? c.from_value ?? '—'),
    h('td', {class: 'text'}, c.to_string ?? c.to_value ?? '—')));
}

function history(key, first) {
  if (!first.items.length) return h('p', {class: 'empty'}, 'Изменений в журнале нет.');
  const body = h('tbody', {}, changeRows(first.items));
  const more = h('button', {type: 'button', class: 'secondary'}, 'Показать ещё');
  let cursor = first.next_cursor;
  more.hidden = !cursor;
  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      const page = await get(`/issues/${seg(key)}/changes`, {limit: CHANGES_PAGE, cursor});
      learnPeople(page.items);
      body.append(...changeRows(page.items));
      cursor = page.next_cursor;
      more.hidden = !cursor;
    } finally {
      more.disabled = false;
    }
  });
  return [h('div', {class: 'table-wrap'}, h('table', {},
    h('caption', {class: 'visually-hidden'}, 'Журнал изменений'),
    h('thead', {}, h('tr', {}, ['Когда', 'Автор', 'Поле', 'Было', 'Стало'].map((t) => h('th', {scope: 'col'}, t)))),
    body)), more];
}

/**
 * An epic's issues, by the JQL of the issues list (`"Epic Link" = KEY`): the first page and the
 * total, with a link to all of them. Shown on an epic (issue_types.epic, else «Epic»/«Эпик»).
 */
function epicIssues(key) {
  const jql = `"Epic Link" = ${key} ORDER BY key`;
  const body = h('div', {}, h('p', {class: 'loading'}, 'Загрузка…'));
  const wrap = h('div', {class: 'epic-issues', hidden: true});
  Promise.all([get('/issues', {jql, limit: EPIC_PAGE}), get('/issues/count', {jql})]).then(([page, total]) => {
    if (!page.items.length) {
      fill(body, h('p', {class: 'empty'}, 'В эпике нет задач зеркала.'));
      wrap.hidden = false;
      return;
    }
    fill(body,
      h('p', {}, `В эпике ${plural(total.count, ISSUE_WORDS)}`,
        total.count > page.items.length ? ['; первые ', String(page.items.length), ' · '] : ' · ',
        h('a', {href: address('/issues', {jql})}, 'в списке задач')),
      h('ul', {class: 'links'}, page.items.map((i) => h('li', {}, linkedIssue(i)))));
    wrap.hidden = false;
  }, (error) => {
    fill(body, h('p', {class: 'error-text'}, `Задачи эпика не получены: ${error.message}`));
    wrap.hidden = false;
  });
  fill(wrap, section('Задачи эпика', body));
  return wrap;
}

export default async function issue({args: [key]}) {
  const [card, changes] = await Promise.all([
    get(`/issues/${seg(key)}`),
    get(`/issues/${seg(key)}/changes`, {limit: CHANGES_PAGE}),
  ]);
  learnPeople(changes.items);
  const [actions, settings] = await Promise.all([issueActions(card), cachedGet('/settings')]);
  const epicType = (settings.issue_types && settings.issue_types.epic && settings.issue_types.epic.name)
    || null;
  const isEpic = card.issue_type && (epicType ? card.issue_type === epicType : EPIC_NAMES.has(card.issue_type));
  const allowance = {left: CARD_PREVIEW_CHARS};  // the description first, then the comments
  const description = card.description ? h('div', {class: 'description'}, markup(card.description, allowance))
    : h('p', {class: 'empty'}, 'Описания нет.');
  return [
    h('h1', {}, h('span', {class: 'key'}, card.key), ' ', h('span', {class: 'summary'}, card.summary || '')),
    h('p', {class: 'lead'},
      h('a', {href: address('/changes', {key: card.key})}, 'в ленте изменений'), ' · ',
      h('a', {href: address('/new-batch', {key: card.key})}, 'команда для этой задачи')),
    h('div', {class: 'card-grid'},
      h('div', {class: 'card-main'},
        section('Поля', fields(card)),
        section('Описание', description),
        section('Связи', links(card.links)),
        isEpic ? epicIssues(card.key) : null,
        section(`Комментарии (${card.comments.length})`, comments(card.comments, allowance)),
        section('Вложения', attachments(card.attachments)),
        section('Спринты', sprints(card.sprints))),
      h('div', {class: 'card-side'},
        actions,
        section('Служебная заметка', noteEditor(card.key, card.note)))),
    section('Журнал изменений', history(card.key, changes)),
  ];
}
