// Times in the browser's time zone (UTC value on hover), sizes and the Russian names of states.
import {h} from './dom.js';

const LOCAL = new Intl.DateTimeFormat('ru-RU', {
  year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit',
  second: '2-digit'});
const pad = (n) => String(n).padStart(2, '0');

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

/** <time> in local time with the UTC value in its title; the raw text when it is not a time. */
export function time(text) {
  if (text === null || text === undefined || text === '') return '—';
  const moment = parseTime(text);
  if (!moment) return String(text);
  return h('time', {datetime: moment.toISOString(), title: utcText(moment)}, LOCAL.format(moment));
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

export function batchStatus(status) {
  return badge(BATCH_STATUS[status] || status, status);
}

export function commandStatus(status) {
  return badge(COMMAND_STATUS[status] || status, status);
}

/** "2 в очереди · 1 выполнена" from a batch's counts, zeros left out. */
export function counts(values) {
  const parts = COUNT_ORDER.filter((name) => values && values[name])
    .map((name) => `${values[name]} ${COMMAND_STATUS[name]}`);
  return parts.length ? parts.join(' · ') : 'нет команд';
}
