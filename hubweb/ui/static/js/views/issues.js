// #/issues?project=&status=&assignee=&neighbor=&q=&text=&updated_since=&cursor= — the filters of
// GET /issues, one page of 100 at a time by cursor; the order is the API's.
import {cachedGet, get} from '../api.js';
import {field, h, table} from '../dom.js';
import {badge, fromLocalInput, time, toLocalInput} from '../format.js';
import {filterForm, issueLink, pager} from './common.js';

const FILTERS = ['project', 'status', 'assignee', 'neighbor', 'q', 'text', 'updated_since'];
const PAGE = 100;

function filters(query, projects) {
  const projectOptions = [['', 'все задачи зеркала'],
    ...projects.map((p) => [p.label, `${p.label} — ${p.name}`])];
  if (query.project && !projects.some((p) => p.label === query.project)) {
    projectOptions.push([query.project, query.project]);
  }
  const fields = [
    field('Проект', 'project', {kind: 'select', options: projectOptions, value: query.project}),
    field('Свои или соседи', 'neighbor', {kind: 'select', value: query.neighbor, options: [
      ['', 'все'], ['false', 'только свои'], ['true', 'только соседи']]}),
    field('Статус', 'status', {value: query.status, hint: 'точное имя, например «В работе»'}),
    field('Исполнитель', 'assignee', {value: query.assignee}),
    field('Ключ или сводка содержит', 'q', {type: 'search', value: query.q}),
    field('Полнотекстовый поиск', 'text', {type: 'search', value: query.text,
      hint: 'по сводке, описанию и комментариям; слова и префиксы: отчёт*'}),
    field('Обновлены с', 'updated_since', {type: 'datetime-local',
      value: toLocalInput(query.updated_since), hint: 'время вашего часового пояса'}),
  ];
  return filterForm('/issues', 'Фильтры задач', fields, {transform: (values) => {
    if (values.updated_since) values.updated_since = fromLocalInput(values.updated_since);
    return values;
  }});
}

function summaryCell(issue) {
  return [h('span', {class: 'summary'}, issue.summary || '—'),
    issue.snippet ? h('p', {class: 'snippet'}, issue.snippet) : null];
}

export default async function issues({query}) {
  const apiQuery = {limit: PAGE, cursor: query.cursor};
  for (const name of FILTERS) apiQuery[name] = query[name];
  const [page, projects] = await Promise.all([get('/issues', apiQuery), cachedGet('/projects')]);
  const project = query.project ? projects.items.find((p) => p.label === query.project) : null;
  const title = project ? `Задачи проекта ${project.label}` : 'Задачи';
  return [
    h('h1', {}, title),
    project ? h('p', {class: 'lead'}, project.name, ' · ',
      h('a', {href: `#/board/${encodeURIComponent(project.label)}`}, 'доска проекта')) : null,
    filters(query, projects.items),
    table(`${title}: ${page.items.length} на странице`, [
      {label: 'Ключ', cell: (i) => issueLink(i.key)},
      {label: 'Тип', cell: (i) => i.issue_type || '—'},
      {label: 'Сводка', cell: summaryCell},
      {label: 'Статус', cell: (i) => i.status || '—'},
      {label: 'Исполнитель', cell: (i) => i.assignee || '—'},
      {label: 'Приоритет', cell: (i) => i.priority || '—'},
      {label: 'Обновлена', cell: (i) => time(i.jira_updated)},
      {label: 'Сосед', cell: (i) => (i.neighbor ? badge('сосед', 'neighbor') : '—')},
      {label: 'Заметка', cell: (i) => (i.note ? badge('есть', 'note') : '—')},
    ], page.items, {empty: 'Задач с такими условиями нет.'}),
    pager('/issues', query, page.next_cursor),
  ];
}
