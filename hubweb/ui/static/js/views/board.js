// #/board/<label>?sprint=<id>|all — the project's board: columns of cards (key, summary, type,
// priority, assignee) of its own issues, the done column marked; it opens on the active sprint,
// with a control to choose another sprint or the whole board; the sprints with their done counts.
import {get, seg} from '../api.js';
import {field, h, table} from '../dom.js';
import {ISSUE_WORDS, SPRINT_STATE, badge, plural, time} from '../format.js';
import {person} from '../people.js';
import {address, filterForm, issueLink, section} from './common.js';

const WHOLE_BOARD = 'all';

function card(c) {
  return h('li', {class: 'card'},
    h('p', {class: 'card-head'}, issueLink(c.key),
      c.issue_type ? h('span', {class: 'card-type'}, c.issue_type) : null),
    h('p', {class: 'card-summary'}, c.summary || '—'),
    h('p', {class: 'card-meta'},
      h('span', {class: 'card-priority', title: 'Приоритет'}, c.priority || 'без приоритета'),
      h('span', {class: 'card-assignee', title: 'Исполнитель'},
        c.assignee ? person(c.assignee) : 'не назначена')));
}

/** The column's cards, then its other keys (the API gives cards for the first ones) on demand. */
function cardList(col) {
  const list = h('ul', {class: 'board-cards'}, col.cards.map(card));
  const rest = col.issues.slice(col.cards.length);
  if (!rest.length) return list;
  const more = h('button', {type: 'button', class: 'secondary'},
    `Показать остальные: ${plural(rest.length, ISSUE_WORDS)}`);
  more.addEventListener('click', () => {
    list.append(...rest.map((key) => h('li', {class: 'card card-key'}, issueLink(key))));
    more.remove();
  });
  return [list, more];
}

function column(col, index, total) {
  const done = index === total - 1;
  const count = plural(col.issues.length, ISSUE_WORDS);
  return h('section', {class: done ? 'board-column done' : 'board-column',
    'aria-label': `${col.name}${done ? ' (готово)' : ''}: ${count}`},
    h('h2', {}, col.name || 'без имени', ' ', h('span', {class: 'count'}, count),
      done ? [' ', badge('готово', 'done')] : null),
    h('p', {class: 'statuses'}, (col.statuses || []).join(', ') || 'статусов нет'),
    col.issues.length ? cardList(col) : h('p', {class: 'empty'}, 'Пусто.'));
}

function sprintTable(items) {
  return table('Спринты доски', [
    {label: 'Спринт', cell: (s) => h('a', {href: `#/board/${seg(s.label)}?sprint=${s.sprint_id}`}, s.name || String(s.sprint_id))},
    {label: 'Состояние', cell: (s) => SPRINT_STATE[s.state] || s.state || '—'},
    {label: 'Начало', cell: (s) => time(s.start_date)},
    {label: 'Окончание', cell: (s) => time(s.end_date)},
    {label: 'Завершён', cell: (s) => time(s.complete_date)},
    {label: 'Задач проекта', cell: (s) => String(s.issues_count), class: 'num'},
    {label: 'Готово', cell: (s) => String(s.done_count), class: 'num'},
    {label: 'Цель', cell: (s) => s.goal || '—'},
  ], items, {empty: 'У доски нет спринтов.', hideCaption: true});
}

/** The sprint the board shows: the one in the address, else the active one; null = whole board. */
function chosenSprint(sprints, wanted) {
  if (wanted === WHOLE_BOARD) return null;
  if (wanted) return sprints.find((s) => String(s.sprint_id) === wanted) || null;
  return sprints.find((s) => s.state === 'active') || null;
}

export default async function board({args: [label], query}) {
  const sprints = await get(`/projects/${seg(label)}/sprints`);
  const chosen = chosenSprint(sprints.items, query.sprint);
  const data = await get(`/projects/${seg(label)}/board`, {sprint: chosen ? chosen.sprint_id : null});
  const options = [[WHOLE_BOARD, 'вся доска'],
    ...sprints.items.map((s) => [String(s.sprint_id), `${s.name} (${SPRINT_STATE[s.state] || s.state})`])];
  const path = `/board/${encodeURIComponent(label)}`;
  const heading = h('h1', {}, `Доска проекта ${label}`);
  if (!data.board_id) {
    return [heading, h('p', {}, 'У проекта нет доски: её номер задаётся при создании проекта (board_id).')];
  }
  const columns = data.columns || [];
  for (const s of sprints.items) s.label = label;
  return [
    heading,
    h('p', {class: 'lead'}, `Доска №${data.board_id}`, data.type ? ` (${data.type})` : '',
      data.fetched_at ? [' · получена ', time(data.fetched_at)] : null, ' · ',
      h('a', {href: address('/issues', {project: label})}, 'задачи проекта'), ' · ',
      h('a', {href: address(`/reports/${encodeURIComponent(label)}`)}, 'отчёты')),
    filterForm(path, 'Фильтр доски',
      [field('Спринт', 'sprint', {kind: 'select', options, value: chosen ? String(chosen.sprint_id) : WHOLE_BOARD,
        hint: 'открывается на активном спринте'})]),
    h('p', {class: 'board-scope'}, chosen
      ? ['Спринт «', chosen.name || String(chosen.sprint_id), '» — ', SPRINT_STATE[chosen.state] || chosen.state || '',
        chosen.goal ? ['; цель: ', chosen.goal] : null]
      : 'Вся доска: все свои задачи проекта.'),
    columns.length
      ? h('div', {class: 'board'}, columns.map((c, i) => column(c, i, columns.length)))
      : h('p', {class: 'empty'}, 'Колонки доски ещё не получены от агента.'),
    h('p', {class: 'hint'}, 'На доске — свои задачи проекта; последняя колонка считается «готово».'),
    section('Спринты', sprintTable(sprints.items)),
  ];
}
