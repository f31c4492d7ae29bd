// #/changes?project=&key=&field=&since=&until=&order=&cursor= — the change feed of the mirror,
// newest first (GET /changes?order=desc), or oldest first with order=asc; «since» presets.
import {cachedGet, get} from '../api.js';
import {field, h, table} from '../dom.js';
import {FIELD_NAME, fromLocalInput, time, toLocalInput} from '../format.js';
import {person, learnPeople} from '../people.js';
import {address, filterForm, issueLink, pager} from './common.js';

const PAGE = 100;
const PRESETS = [['за сутки', 1], ['за неделю', 7], ['за 30 дней', 30]];

function sinceDaysAgo(days) {
  return new Date(Date.now() - days * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export default async function changes({query}) {
  const order = query.order === 'asc' ? 'asc' : 'desc';
  const [page, projects] = await Promise.all([
    get('/changes', {project: query.project, key: query.key, field: query.field, since: query.since,
      until: query.until, order, limit: PAGE, cursor: query.cursor}),
    cachedGet('/projects')]);
  learnPeople(page.items);
  const projectOptions = [['', 'все'], ...projects.items.map((p) => [p.label, `${p.label} — ${p.name}`])];
  const fieldOptions = [['', 'все'], ...Object.entries(FIELD_NAME)];
  if (query.field && !FIELD_NAME[query.field]) fieldOptions.push([query.field, query.field]);
  const form = filterForm('/changes', 'Фильтры ленты', [
    field('Проект', 'project', {kind: 'select', options: projectOptions, value: query.project}),
    field('Задача', 'key', {value: query.key, hint: 'ключ, например AURORA-1'}),
    field('Поле', 'field', {kind: 'select', options: fieldOptions, value: query.field}),
    field('С', 'since', {type: 'datetime-local', value: toLocalInput(query.since)}),
    field('До', 'until', {type: 'datetime-local', value: toLocalInput(query.until),
      hint: 'время вашего часового пояса'}),
    field('Порядок', 'order', {kind: 'select', value: order === 'asc' ? 'asc' : '',
      options: [['', 'новые сначала'], ['asc', 'старые сначала']]}),
  ], {transform: (values) => {
    for (const name of ['since', 'until']) if (values[name]) values[name] = fromLocalInput(values[name]);
    return values;
  }});
  const base = {...query};
  delete base.cursor;
  return [
    h('h1', {}, 'Лента изменений'),
    form,
    h('p', {class: 'presets'}, 'Быстро: ', PRESETS.map(([label, days], i) => [i ? ' · ' : '',
      h('a', {href: address('/changes', {...base, since: sinceDaysAgo(days)})}, label)])),
    table(order === 'asc' ? 'Изменения задач, старые сначала' : 'Изменения задач, новые сначала', [
      {label: 'Когда', cell: (c) => time(c.at)},
      {label: 'Задача', cell: (c) => issueLink(c.key)},
      {label: 'Автор', cell: (c) => person(c.author)},
      {label: 'Поле', cell: (c) => FIELD_NAME[c.field] || c.field || c.field_name || '—'},
      {label: 'Было', cell: (c) => c.from_string ?? c.from_value ?? '—', class: 'text'},
      {label: 'Стало', cell: (c) => c.to_string ?? c.to_value ?? '—', class: 'text'},
    ], page.items, {empty: 'Изменений с такими условиями нет.', hideCaption: true}),
    pager('/changes', query, page.next_cursor),
  ];
}
