// Russian plurals, relative times and batch states of hubweb/ui/static/js/format.js.
import assert from 'node:assert/strict';
import {test} from 'node:test';

import './dom-shim.mjs';
import {batchStatus, counts, plural, relative} from '../../hubweb/ui/static/js/format.js';

const ISSUES = ['задача', 'задачи', 'задач'];

test('plural picks the Russian form by Intl.PluralRules', () => {
  assert.deepEqual([0, 1, 2, 4, 5, 11, 12, 14, 21, 22, 25, 101, 111].map((n) => plural(n, ISSUES)), [
    '0 задач', '1 задача', '2 задачи', '4 задачи', '5 задач', '11 задач', '12 задач', '14 задач',
    '21 задача', '22 задачи', '25 задач', '101 задача', '111 задач']);
  assert.equal(plural(17272, ISSUES).replace(/\s/g, ' '), '17 272 задачи');
});

test('command counts agree with their number', () => {
  assert.equal(counts({done: 6, queued: 2}), '2 в очереди · 6 выполнено');
  assert.equal(counts({done: 1, failed: 1}), '1 выполнена · 1 с ошибкой');
  assert.equal(counts({done: 3, skipped: 2}), '3 выполнены · 2 пропущены');
  assert.equal(counts({}), 'нет команд');
});

test('relative times', () => {
  const now = Date.parse('2026-12-01T12:00:00Z');
  const at = (text) => relative(new Date(text), now);
  assert.equal(at('2026-12-01T11:59:30Z'), 'только что');
  assert.equal(at('2026-12-01T11:55:00Z'), '5 минут назад');
  assert.equal(at('2026-12-01T09:00:00Z'), '3 часа назад');
  assert.equal(at('2026-11-30T12:00:00Z'), '1 день назад');
  assert.equal(at('2026-11-29T12:00:00Z'), '2 дня назад');
  assert.equal(at('2026-11-26T12:00:00Z'), '5 дней назад');
  assert.equal(at('2026-12-03T12:00:00Z'), 'через 2 дня');
  assert.equal(at('2026-09-01T12:00:00Z'), '3 месяца назад');
  assert.equal(at('2024-12-01T12:00:00Z'), '2 года назад');
});

test('relative times are elapsed time, one rule across calendar years', () => {
  const now = Date.parse('2026-12-03T12:00:00Z');
  const at = (text) => relative(new Date(text), now);
  // the same year or the one before: never «в прошлом году» for a date 11 months ago
  assert.equal(at('2026-01-05T12:00:00Z'), '11 месяцев назад');
  assert.equal(at('2026-02-02T12:00:00Z'), '10 месяцев назад');
  assert.equal(at('2025-12-20T12:00:00Z'), '11 месяцев назад');
  assert.equal(at('2025-12-10T12:00:00Z'), '1 год назад');  // 358 days: 11.8 months
  assert.equal(at('2025-08-03T12:00:00Z'), '1 год назад');  // 1.3 years
  assert.equal(at('2024-12-03T12:00:00Z'), '2 года назад');
  assert.equal(at('2026-11-05T12:00:00Z'), '1 месяц назад');  // 28 days
  assert.equal(at('2026-11-08T12:00:00Z'), '25 дней назад');
  assert.equal(at('2027-11-03T12:00:00Z'), 'через 11 месяцев');
  // every elapsed time from 1 s to 3 years names a unit and a count that fits it
  for (let days = 0; days < 3 * 366; days += 0.37) {
    const text = relative(new Date(now - days * 86400000), now);
    assert.match(text, /^(только что|\d+ (секунд[уы]?|минут[уы]?|час(а|ов)?|(день|дня|дней)|месяц(а|ев)?|(год|года|лет)) назад)$/);
  }
});

test('plural forms of the counts the page shows', () => {
  const POINTS = ['очко', 'очка', 'очков'];
  assert.deepEqual([1, 2, 5, 21, 11, 34, 0, 1.5].map((n) => plural(n, POINTS)), [
    '1 очко', '2 очка', '5 очков', '21 очко', '11 очков', '34 очка', '0 очков', '1,5 очка']);
  assert.deepEqual([1, 3, 12, 101].map((n) => plural(n, ['день', 'дня', 'дней'])),
    ['1 день', '3 дня', '12 дней', '101 день']);
});

test('a finished batch with failed or skipped commands says so; the API status is kept', () => {
  const shown = (batch) => batchStatus(batch).textContent;
  assert.equal(shown({status: 'done', counts: {done: 2}}), 'завершён');
  assert.equal(shown({status: 'done', counts: {done: 1, failed: 1}}), 'завершён с ошибками');
  assert.equal(shown({status: 'done', counts: {skipped: 1}}), 'завершён с ошибками');
  assert.equal(shown({status: 'running', counts: {failed: 1, queued: 1}}), 'выполняется');
  assert.equal(shown({status: 'cancelled', counts: {failed: 1, cancelled: 1}}), 'отменён');
});
