// #/ — agents (online, last seen, current and redelivered commands), queued and running batches,
// the last sync runs.
import {get} from '../api.js';
import {h, table} from '../dom.js';
import {RUN_KIND, badge, time} from '../format.js';
import {batchTable, commandLink, section} from './common.js';

function agentsTable(agents) {
  return table('Агенты модулей', [
    {label: 'Модуль', cell: (a) => a.agent},
    {label: 'Состояние', cell: (a) => (a.online ? badge('в сети', 'online') : badge('не в сети', 'offline'))},
    {label: 'Последний запрос', cell: (a) => time(a.last_seen_at)},
    {label: 'Версия агента', cell: (a) => a.agent_version || '—'},
    {label: 'Версия настроек', cell: (a) => a.settings_version ?? '—'},
    {label: 'Текущая команда', cell: (a) => commandLink(a.current_command_id)},
    {label: 'Последний вызов Jira', cell: (a) => time(a.last_call_at)},
    {label: 'Выдано повторно', cell: (a) => (a.redelivered.length
      ? h('ul', {class: 'plain'}, a.redelivered.map((c) => h('li', {},
        commandLink(c.id), ` (${c.type}), выдач: ${c.deliveries}, последняя `, time(c.claimed_at))))
      : '—')},
  ], agents, {empty: 'Модулей нет.', hideCaption: true});
}

function runsTable(runs) {
  return table('Последние синхронизации', [
    {label: '№', cell: (r) => String(r.id)},
    {label: 'Начата', cell: (r) => time(r.started_at)},
    {label: 'Завершена', cell: (r) => (r.finished_at ? time(r.finished_at) : badge('идёт', 'running'))},
    {label: 'Вид', cell: (r) => RUN_KIND[r.kind] || r.kind || '—'},
    {label: 'Запрос', cell: (r) => h('span', {class: 'query', title: r.query || ''}, r.query || '—')},
    {label: 'Задач', cell: (r) => String(r.issues_count ?? 0), class: 'num'},
    {label: 'Связей', cell: (r) => String(r.links_count ?? 0), class: 'num'},
    {label: 'Вызовов Jira', cell: (r) => String(r.jira_calls ?? '—'), class: 'num'},
    {label: 'Ответов 429', cell: (r) => String(r.rate_limited ?? '—'), class: 'num'},
    {label: 'Журнал по', cell: (r) => time(r.history_at)},
    {label: 'Команда', cell: (r) => commandLink(r.command_id)},
  ], runs, {empty: 'Синхронизаций ещё не было.', hideCaption: true});
}

export default async function overview() {
  const [agents, running, queued, runs] = await Promise.all([
    get('/agents'),
    get('/batches', {status: 'running', limit: 20}),
    get('/batches', {status: 'queued', limit: 20}),
    get('/sync-runs', {limit: 10}),
  ]);
  const active = [...running.items, ...queued.items];
  const more = running.next_cursor || queued.next_cursor;
  return [
    h('h1', {}, 'Обзор'),
    section('Агенты', agentsTable(agents.items)),
    section('Пакеты в работе',
      batchTable('Выполняются и ждут очереди', active, {empty: 'Очередь пуста.'}),
      h('p', {class: 'more'},
        more ? 'Показаны первые 20 каждого статуса. ' : null,
        h('a', {href: '#/batches?status=running'}, 'Все выполняющиеся'), ' · ',
        h('a', {href: '#/batches?status=queued'}, 'все в очереди'), ' · ',
        h('a', {href: '#/new-batch'}, 'новый пакет'))),
    section('Синхронизации', runsTable(runs.items)),
  ];
}
