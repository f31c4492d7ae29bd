// #/board/<label>?sprint=<id> — the project's board: columns with its own issues, the done
// column marked, a sprint filter, and the sprints with their done counts.
import {get, seg} from '../api.js';
import {field, h, table} from '../dom.js';
import {SPRINT_STATE, badge, time} from '../format.js';
import {address, filterForm, issueLink, section} from './common.js';

const SHOWN = 200;  // keys drawn per column before «показать все»

function keyList(keys) {
  const list = h('ul', {class: 'board-keys'});
  const draw = (count) => list.replaceChildren(...keys.slice(0, count).map((k) => h('li', {}, issueLink(k))));
  draw(SHOWN);
  if (keys.length <= SHOWN) return list;
  const more = h('button', {type: 'button', class: 'secondary'}, `Показать все (${keys.length})`);
  more.addEventListener('click', () => {
    draw(keys.length);
    more.remove();
  });
  return [list, more];
}

function column(col, index, total, members) {
  const done = index === total - 1;
  const keys = members ? col.issues.filter((k) => members.has(k)) : col.issues;
  return h('section', {class: done ? 'board-column done' : 'board-column',
    'aria-label': `${col.name}${done ? ' (готово)' : ''}: ${keys.length}`},
    h('h2', {}, col.name || 'без имени', ' ', h('span', {class: 'count'}, String(keys.length)),
      done ? [' ', badge('готово', 'done')] : null),
    h('p', {class: 'statuses'}, (col.statuses || []).join(', ') || 'статусов нет'),
    keys.length ? keyList(keys) : h('p', {class: 'empty'}, 'Пусто.'));
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

export default async function board({args: [label], query}) {
  const [data, sprints] = await Promise.all([
    get(`/projects/${seg(label)}/board`), get(`/projects/${seg(label)}/sprints`)]);
  const chosen = sprints.items.find((s) => String(s.sprint_id) === query.sprint) || null;
  const members = chosen ? new Set(chosen.issues) : null;
  const options = [['', 'все задачи доски'],
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
      [field('Спринт', 'sprint', {kind: 'select', options, value: chosen ? query.sprint : ''})]),
    columns.length
      ? h('div', {class: 'board'}, columns.map((c, i) => column(c, i, columns.length, members)))
      : h('p', {class: 'empty'}, 'Колонки доски ещё не получены от агента.'),
    h('p', {class: 'hint'}, 'На доске — свои задачи проекта; последняя колонка считается «готово».'),
    section('Спринты', sprintTable(sprints.items)),
  ];
}
