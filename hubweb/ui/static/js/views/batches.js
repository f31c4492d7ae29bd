// #/batches?status=&project=&cursor= — batches newest first with their command counts.
import {cachedGet, get} from '../api.js';
import {field, h} from '../dom.js';
import {BATCH_STATUS} from '../format.js';
import {batchTable, filterForm, pager} from './common.js';

const PAGE = 50;

export default async function batches({query}) {
  const [page, projects] = await Promise.all([
    get('/batches', {status: query.status, project: query.project, limit: PAGE, cursor: query.cursor}),
    cachedGet('/projects')]);
  const statusOptions = [['', 'все'], ...Object.entries(BATCH_STATUS)];
  const projectOptions = [['', 'все'], ...projects.items.map((p) => [p.label, `${p.label} — ${p.name}`])];
  return [
    h('h1', {}, 'Пакеты команд'),
    h('p', {class: 'lead'}, h('a', {href: '#/new-batch'}, 'Поставить новый пакет')),
    filterForm('/batches', 'Фильтры пакетов', [
      field('Статус', 'status', {kind: 'select', options: statusOptions, value: query.status}),
      field('Проект', 'project', {kind: 'select', options: projectOptions, value: query.project}),
    ]),
    batchTable('Пакеты, новые сначала', page.items, {empty: 'Пакетов с такими условиями нет.'}),
    pager('/batches', query, page.next_cursor),
  ];
}
