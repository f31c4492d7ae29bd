// #/projects — projects with their own and neighbour counts, links to their issues and board.
import {get} from '../api.js';
import {h, table} from '../dom.js';
import {time} from '../format.js';
import {quote} from '../jql-text.js';
import {address} from './common.js';

export default async function projects() {
  const {items} = await get('/projects');
  return [
    h('h1', {}, 'Проекты'),
    table('Проекты хаба', [
      {label: 'Метка', cell: (p) => h('a', {href: address('/issues', {project: p.label})}, p.label)},
      {label: 'Название', cell: (p) => p.name},
      // own issues carry the project's label; neighbours are the rest of its slice (JQL, §16)
      {label: 'Свои задачи', cell: (p) => h('a', {href: address('/issues', {project: p.label,
        jql: `labels = ${quote(p.label)}`})}, String(p.own_count)), class: 'num'},
      {label: 'Соседи', cell: (p) => h('a', {href: address('/issues', {project: p.label,
        jql: `NOT labels = ${quote(p.label)}`})}, String(p.neighbor_count)), class: 'num'},
      {label: 'Доска', cell: (p) => (p.board_id
        ? h('a', {href: address(`/board/${encodeURIComponent(p.label)}`)},
          `№${p.board_id}${p.board_type ? ` (${p.board_type})` : ''}`)
        : 'нет')},
      {label: 'Изменения', cell: (p) => h('a', {href: address('/changes', {project: p.label})}, 'лента')},
      {label: 'Отчёты', cell: (p) => h('a', {href: address(`/reports/${encodeURIComponent(p.label)}`)}, 'отчёты')},
      {label: 'Создан', cell: (p) => time(p.created_at)},
    ], items, {empty: 'Проектов нет: их заводит sdlc-hub init или POST /projects.', hideCaption: true}),
    h('p', {class: 'hint'}, 'Соседи — задачи других меток, связанные со своими задачами проекта '
      + 'или являющиеся их эпиками.'),
  ];
}
