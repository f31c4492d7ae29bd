// #/batches?status=&project=&cursor= — batches newest first with their command counts; the page
// refreshes itself every few seconds while one of them is queued or running.
import {cachedGet, get} from '../api.js';
import {field, fill, h} from '../dom.js';
import {BATCH_STATUS} from '../format.js';
import {IDLE_REFRESH_SECONDS, REFRESH_SECONDS, anyOpen, autoRefresh, batchTable, filterForm,
  pager} from './common.js';

const PAGE = 50;

export default async function batches(context) {
  const {query} = context;
  const load = () => get('/batches', {status: query.status, project: query.project, limit: PAGE,
    cursor: query.cursor});
  const [page, projects] = await Promise.all([load(), cachedGet('/projects')]);
  const list = h('div', {});
  const draw = (current) => {
    fill(list, batchTable('Пакеты, новые сначала', current.items, {empty: 'Пакетов с такими условиями нет.'}));
    return anyOpen(current.items) ? REFRESH_SECONDS : IDLE_REFRESH_SECONDS;
  };
  const first = draw(page);
  const statusOptions = [['', 'все'], ...Object.entries(BATCH_STATUS)];
  const projectOptions = [['', 'все'], ...projects.items.map((p) => [p.label, `${p.label} — ${p.name}`])];
  return [
    h('h1', {}, 'Пакеты команд'),
    h('p', {class: 'lead'}, h('a', {href: '#/new-batch'}, 'Поставить новый пакет')),
    filterForm('/batches', 'Фильтры пакетов', [
      field('Статус', 'status', {kind: 'select', options: statusOptions, value: query.status}),
      field('Проект', 'project', {kind: 'select', options: projectOptions, value: query.project}),
    ]),
    list,
    pager('/batches', query, page.next_cursor),
    autoRefresh(context, async () => draw(await load()), first),
  ];
}
