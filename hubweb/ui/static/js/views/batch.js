// #/batches/<id>?command=<id> — one batch: its commands with status, deliveries, error and
// result; cancel; «Повторить неудавшиеся» for a finished batch with failed commands, or the link
// to its retry once it has one (a batch is retried once: the hub answers a second retry 409).
import {get, post, seg} from '../api.js';
import {details, fill, h, message, table, valueList} from '../dom.js';
import {COMMAND_TYPE, batchStatus, commandStatus, counts, seconds, time} from '../format.js';
import {REFRESH_SECONDS, autoRefresh, batchLink, rememberedAuthor, section} from './common.js';

const OPEN = new Set(['queued', 'running']);

function commandsTable(batch, highlighted) {
  const bySeq = new Map(batch.commands.map((c) => [c.id, c.seq]));
  return table('Команды пакета', [
    {label: '№', cell: (c) => h('span', {id: `command-${c.id}`, title: `id ${c.id}`,
      class: String(c.id) === highlighted ? 'highlight' : null}, String(c.seq))},
    {label: 'Тип', cell: (c) => h('span', {title: c.type}, COMMAND_TYPE[c.type] || c.type)},
    {label: 'Параметры', cell: (c) => valueList(c.params)},
    {label: 'Зависит от', cell: (c) => (c.depends_on ? `№${bySeq.get(c.depends_on) ?? `id ${c.depends_on}`}` : '—')},
    {label: 'Статус', cell: (c) => commandStatus(c.status)},
    {label: 'Выдач', cell: (c) => String(c.deliveries), class: 'num'},
    {label: 'Выдана', cell: (c) => time(c.claimed_at)},
    {label: 'Завершена', cell: (c) => time(c.finished_at)},
    {label: 'Вызовы Jira', cell: (c) => String(c.jira_calls), class: 'num'},
    {label: 'Ошибка', cell: (c) => (c.error ? h('span', {class: 'error-text'}, c.error) : '—')},
    {label: 'Результат', cell: (c) => valueList(c.result)},
  ], batch.commands, {empty: 'Команд нет.', hideCaption: true});
}

function summary(batch) {
  return details([
    ['Статус', batchStatus(batch)],
    ['Автор', batch.author],
    ['Проект', batch.project],
    ['Создан', time(batch.created_at)],
    ['Отменён', batch.cancelled_at ? time(batch.cancelled_at) : null],
    ['Оценка по темпу агента', seconds(batch.estimate_seconds)],
    ['Команды', counts(batch.counts)],
    ['Повтор пакета', batch.retry_of ? batchLink(batch.retry_of) : null],
  ]);
}

function cancelControls(batch, refresh) {
  if (!OPEN.has(batch.status)) return null;
  const status = h('div', {class: 'form-status'});
  const start = h('button', {type: 'button', class: 'danger'}, 'Отменить пакет');
  const confirm = h('button', {type: 'button', class: 'danger'}, 'Да, отменить');
  const keep = h('button', {type: 'button', class: 'secondary'}, 'Нет, оставить');
  const question = h('div', {class: 'confirm', hidden: true},
    h('p', {}, 'Команды в очереди будут отменены; уже выданные агенту завершатся его отчётом.'),
    confirm, ' ', keep);
  start.addEventListener('click', () => {
    start.hidden = true;
    question.hidden = false;
    confirm.focus();
  });
  keep.addEventListener('click', () => {
    question.hidden = true;
    start.hidden = false;
    start.focus();
  });
  confirm.addEventListener('click', async () => {
    confirm.disabled = true;
    try {
      const updated = await post(`/batches/${seg(batch.id)}/cancel`);
      refresh(updated, 'Пакет отменён.');
    } catch (error) {
      if (error.status === 409) {
        // the agent finished it meanwhile (409 «пакет уже завершён»): show it as it is now
        refresh(await get(`/batches/${seg(batch.id)}`), `Отменять нечего: ${error.message}.`);
        return;
      }
      status.replaceChildren(message(`Не удалось отменить: ${error.message}`));
      confirm.disabled = false;
    }
  });
  return h('div', {class: 'cancel'}, start, question, status);
}

/** A new batch of copies of the failed commands (and the skipped ones that needed them). */
function retryControls(batch) {
  if (batch.retried_by) {
    return h('div', {class: 'retry'}, 'Неудавшиеся уже повторены: ', batchLink(batch.retried_by));
  }
  if (OPEN.has(batch.status) || !batch.counts.failed) return null;
  const status = h('div', {class: 'form-status'});
  const retry = h('button', {type: 'button'}, 'Повторить неудавшиеся');
  retry.addEventListener('click', async () => {
    retry.disabled = true;
    try {
      const created = await post(`/batches/${seg(batch.id)}/retry`, {author: rememberedAuthor() || null});
      location.hash = `#/batches/${created.id}`;
    } catch (error) {
      status.replaceChildren(message(`Не удалось повторить: ${error.message}`));
      retry.disabled = false;
    }
  });
  return h('div', {class: 'retry'}, retry, status);
}

export default async function batch(context) {
  const {args: [id], query} = context;
  const data = await get(`/batches/${seg(id)}`);
  const root = h('div', {});
  const facts = h('div', {});
  const commands = h('div', {});
  let shownOpen = null;
  // the summary and the commands are redrawn in place; the controls when the batch finishes
  const update = (current) => {
    if (shownOpen !== null && shownOpen !== OPEN.has(current.status)) {
      draw(current);
      return;
    }
    fill(facts, summary(current));
    fill(commands, commandsTable(current, query.command));
  };
  const draw = (current, notice = null) => {
    shownOpen = OPEN.has(current.status);
    fill(root,
      h('h1', {tabindex: '-1'}, `Пакет №${current.id}: `, h('span', {class: 'summary'}, current.title)),
      notice ? message(notice, 'ok') : null,
      facts, cancelControls(current, draw), retryControls(current),
      section('Команды', commands));
    update(current);
    if (notice) root.querySelector('h1').focus();
  };
  draw(data);
  if (OPEN.has(data.status)) {
    // the agent works on it: follow its reports without a reload until the batch is finished
    root.append(autoRefresh(context, async () => {
      const current = await get(`/batches/${seg(id)}`);
      update(current);
      return OPEN.has(current.status) ? REFRESH_SECONDS : null;
    }, REFRESH_SECONDS));
  }
  return root;
}
