// #/ — agents (online, last seen, current and redelivered commands), queued and running batches,
// the last sync runs.
import {get} from '../api.js';
import {fill, h, table} from '../dom.js';
import {RUN_KIND, badge, plural, time} from '../format.js';
import {IDLE_REFRESH_SECONDS, REFRESH_SECONDS, anyOpen, autoRefresh, batchTable, commandLink,
  section} from './common.js';

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
        commandLink(c.id), ` (${c.type}), ${plural(c.deliveries, ['выдача', 'выдачи', 'выдач'])}, последняя `,
        time(c.claimed_at))))
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

async function load() {
  const [agents, running, queued, runs] = await Promise.all([
    get('/agents'),
    get('/batches', {status: 'running', limit: 20}),
    get('/batches', {status: 'queued', limit: 20}),
    get('/sync-runs', {limit: 10}),
  ]);
  return {agents: agents.items, active: [...running.items, ...queued.items], runs: runs.items,
    more: running.next_cursor || queued.next_cursor};
}

export default async function overview(context) {
  const data = await load();
  const agents = h('div', {});
  const active = h('div', {});
  const more = h('span', {});
  const runs = h('div', {});
  const draw = (current) => {
    fill(agents, agentsTable(current.agents));
    fill(active, batchTable('Выполняются и ждут очереди', current.active, {empty: 'Очередь пуста.'}));
    fill(more, current.more ? 'Показаны первые 20 каждого статуса. ' : null);
    fill(runs, runsTable(current.runs));
    // every few seconds while the agent has work, else now and then for new work
    return anyOpen(current.active) ? REFRESH_SECONDS : IDLE_REFRESH_SECONDS;
  };
  const first = draw(data);
  return [
    h('h1', {}, 'Обзор'),
    section('Агенты', agents),
    section('Пакеты в работе', active,
      h('p', {class: 'more'}, more,
        h('a', {href: '#/batches?status=running'}, 'Все выполняющиеся'), ' · ',
        h('a', {href: '#/batches?status=queued'}, 'все в очереди'), ' · ',
        h('a', {href: '#/new-batch'}, 'новый пакет'))),
    section('Синхронизации', runs),
    autoRefresh(context, async () => draw(await load()), first),
  ];
}
