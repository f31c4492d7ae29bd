// Times relative to now (exact local time and UTC on hover), Russian plurals, sizes and the
// Russian names of states.
import {h} from './dom.js';

const LOCAL = new Intl.DateTimeFormat('ru-RU', {
  year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit',
  second: '2-digit'});
// numeric 'always': «1 день назад», never «вчера» / «в прошлом году», calendar words that an
// elapsed time rounded to a unit cannot know (see relative()).
const RELATIVE = new Intl.RelativeTimeFormat('ru', {numeric: 'always'});
const PLURAL = new Intl.PluralRules('ru');
const NUMBER = new Intl.NumberFormat('ru-RU');
const pad = (n) => String(n).padStart(2, '0');
const DAY = 86400;
const MONTH = 365.25 / 12 * DAY;  // the average month and year: elapsed time, not the calendar
const YEAR = 365.25 * DAY;
// [unit, seconds in it, up to how many seconds this unit is used]: a unit is used while the
// elapsed time rounds to less than one of the next (11.5 months is «12 месяцев», so «1 год»)
const UNITS = [['second', 1, 45], ['minute', 60, 45 * 60], ['hour', 3600, 22 * 3600],
  ['day', DAY, 26 * DAY], ['month', MONTH, 11.5 * MONTH], ['year', YEAR, Infinity]];

// The forms of the nouns counted on more than one page (one / few / many), for plural().
export const ISSUE_WORDS = ['задача', 'задачи', 'задач'];
export const POINT_WORDS = ['очко', 'очка', 'очков'];

/**
 * A count with its noun in the right Russian form: plural(5, ['задача', 'задачи', 'задач']) is
 * «5 задач» (Intl.PluralRules('ru'): one / few / many; a fraction takes the «few» form).
 */
export function plural(count, [one, few, many]) {
  const form = {one, few, many}[PLURAL.select(count)] ?? few;
  return `${NUMBER.format(count)} ${form}`;
}

/**
 * «2 дня назад», «через 3 часа», «только что» for a Date. One rule for every moment: the elapsed
 * time in the largest unit it fills (45 s, 45 min, 22 h, 26 days, 11.5 average months), rounded,
 * whatever the calendar: on 2026-12-03, 2026-01-05 is «11 месяцев назад» and 2026-02-02
 * «10 месяцев назад» (2026-01-05 was «в прошлом году», a calendar word, while a date a month
 * later in the same year was months ago).
 */
export function relative(moment, now = Date.now()) {
  const seconds = (moment.getTime() - now) / 1000;
  if (Math.abs(seconds) < 45) return 'только что';
  const [unit, size] = UNITS.find(([, , upTo]) => Math.abs(seconds) < upTo);
  return RELATIVE.format(Math.round(seconds / size), unit);
}

/**
 * A Date from a hub time (`2026-10-22T06:00:00+00:00`) or a Jira time as stored
 * (`2026-10-22T09:00:00.000+0300`, space instead of T, no offset = UTC); null when unreadable.
 */
export function parseTime(text) {
  if (typeof text !== 'string' || !text) return null;
  const match = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(Z|[+-]\d{2}:?\d{2})?$/i
    .exec(text.trim());
  if (!match) return null;
  let [, day, clock, offset] = match;
  clock = clock.replace(/(\.\d{3})\d+$/, '$1');
  if (!offset || offset.toUpperCase() === 'Z') offset = 'Z';
  else if (!offset.includes(':')) offset = `${offset.slice(0, 3)}:${offset.slice(3)}`;
  const moment = new Date(`${day}T${clock}${offset}`);
  return Number.isNaN(moment.getTime()) ? null : moment;
}

export function utcText(moment) {
  return `${moment.getUTCFullYear()}-${pad(moment.getUTCMonth() + 1)}-${pad(moment.getUTCDate())} `
    + `${pad(moment.getUTCHours())}:${pad(moment.getUTCMinutes())}:${pad(moment.getUTCSeconds())} UTC`;
}

/** The exact moment as shown on hover: local time, then UTC. */
export function exactText(moment) {
  return `${LOCAL.format(moment)} (${utcText(moment)})`;
}

/**
 * <time> relative to now («2 дня назад») with the exact local time and UTC in its title; the raw
 * text when it is not a time. refreshTimes() keeps the relative texts current.
 */
export function time(text) {
  if (text === null || text === undefined || text === '') return '—';
  const moment = parseTime(text);
  if (!moment) return String(text);
  return h('time', {datetime: moment.toISOString(), title: exactText(moment), 'data-relative': true},
    relative(moment));
}

/** Rewrite every relative time under `root` for the present moment (a date stays a date). */
export function refreshTimes(root) {
  const now = Date.now();
  for (const element of root.querySelectorAll('time[data-relative]')) {
    const moment = new Date(element.getAttribute('datetime'));
    if (!Number.isNaN(moment.getTime())) element.textContent = relative(moment, now);
  }
}

/** A Jira date (`2026-12-01`) as `01.12.2026`; no time zone applies to a date. */
export function day(text) {
  const match = typeof text === 'string' && /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  return match ? `${match[3]}.${match[2]}.${match[1]}` : (text || '—');
}

/** A local `datetime-local` value for a hub time, and back to UTC ISO for the API. */
export function toLocalInput(text) {
  const moment = parseTime(text);
  if (!moment) return '';
  return `${moment.getFullYear()}-${pad(moment.getMonth() + 1)}-${pad(moment.getDate())}T`
    + `${pad(moment.getHours())}:${pad(moment.getMinutes())}`;
}

export function fromLocalInput(value) {
  if (!value) return '';
  const moment = new Date(value);  // datetime-local values are read as local time
  return Number.isNaN(moment.getTime()) ? '' : moment.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function size(bytes) {
  if (bytes === null || bytes === undefined) return '—';
  if (bytes < 1024) return `${bytes} Б`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} КБ`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} МБ`;
  return `${(bytes / 1024 ** 3).toFixed(1)} ГБ`;
}

export function seconds(value) {
  if (value === null || value === undefined) return '—';
  if (value < 60) return `${value} с`;
  const minutes = Math.floor(value / 60);
  if (minutes < 60) return `${minutes} мин ${value % 60} с`;
  return `${Math.floor(minutes / 60)} ч ${minutes % 60} мин`;
}

export const BATCH_STATUS = {
  queued: 'в очереди', running: 'выполняется', cancelled: 'отменён', done: 'завершён'};
export const COMMAND_STATUS = {
  queued: 'в очереди', claimed: 'выдана агенту', done: 'выполнена', failed: 'ошибка',
  skipped: 'пропущена', cancelled: 'отменена', confirmed_by_state: 'подтверждена состоянием'};
export const COUNT_ORDER = ['queued', 'claimed', 'done', 'confirmed_by_state', 'failed', 'skipped',
  'cancelled'];
export const COMMAND_TYPE = {
  refresh: 'обновление из Jira', ensure_issue: 'задача (создать или изменить)',
  ensure_link: 'связь', add_comment: 'комментарий', transition: 'переход статуса',
  fetch_attachment: 'скачивание вложения'};
export const ATTACHMENT_STATE = {
  none: 'не скачано', fetching: 'скачивается', ready: 'в хабе', failed: 'ошибка скачивания'};
export const SPRINT_STATE = {active: 'активный', closed: 'закрыт', future: 'будущий'};
export const RUN_KIND = {jql: 'по JQL', keys: 'по ключам'};
export const FIELD_NAME = {
  status: 'статус', description: 'описание', summary: 'сводка', assignee: 'исполнитель',
  priority: 'приоритет', duedate: 'срок', labels: 'метки', resolution: 'резолюция',
  planned_start: 'плановое начало', planned_end: 'плановое окончание', epic_link: 'эпик'};

/** A small coloured label: badge('в очереди', 'queued'). */
export function badge(text, kind) {
  return h('span', {class: `badge badge-${kind}`}, text);
}

/**
 * A batch's status badge. A finished batch with failed or skipped commands says «завершён с
 * ошибками» (the API status stays `done`, contract §9.1).
 */
export function batchStatus(batch) {
  const {status, counts: values} = batch;
  if (status === 'done' && values && (values.failed || values.skipped)) {
    return badge('завершён с ошибками', 'done-with-errors');
  }
  return badge(BATCH_STATUS[status] || status, status);
}

export function commandStatus(status) {
  return badge(COMMAND_STATUS[status] || status, status);
}

// A count of commands in a state, in the form its number takes: «1 выполнена», «6 выполнено».
const COUNT_FORMS = {
  queued: ['в очереди', 'в очереди', 'в очереди'],
  claimed: ['выдана агенту', 'выданы агенту', 'выдано агенту'],
  done: ['выполнена', 'выполнены', 'выполнено'],
  confirmed_by_state: ['подтверждена состоянием', 'подтверждены состоянием', 'подтверждено состоянием'],
  failed: ['с ошибкой', 'с ошибкой', 'с ошибкой'],
  skipped: ['пропущена', 'пропущены', 'пропущено'],
  cancelled: ['отменена', 'отменены', 'отменено']};

/** "2 в очереди · 6 выполнено" from a batch's counts, zeros left out. */
export function counts(values) {
  const parts = COUNT_ORDER.filter((name) => values && values[name])
    .map((name) => plural(values[name], COUNT_FORMS[name]));
  return parts.length ? parts.join(' · ') : 'нет команд';
}
