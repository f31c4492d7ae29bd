// #/reports/<label>?sprint=<id>&tz=<IANA zone> — how the work goes (contract §17): the burndown
// of the active (or chosen) sprint with its ideal line, the cumulative flow, velocity and cycle
// time, each an SVG chart (role="img", its key figures in aria-label) followed by its numbers in a
// table. Days are the browser's calendar days unless the address names a zone.
// The router imports this module on demand, so neither it nor charts.js is in the first load.
import {ApiError, get, seg} from '../api.js';
import {field, h, message, table} from '../dom.js';
import {ISSUE_WORDS, POINT_WORDS, SPRINT_STATE, day, exactText, parseTime, plural, time} from '../format.js';
import {barChart, lineChart, number, scatter, stackedArea} from '../charts.js';
import {address, filterForm, issueLink, section} from './common.js';

const STYLESHEET = 'reports.css';
const CYCLE_ROWS = 200;  // cycle-time rows drawn at first and added by «показать ещё»
const CYCLE_PAGE = 1000;  // cycle-time items asked for at once (the hub's largest page)

function loadStyles() {
  if (!document.querySelector(`link[href="${STYLESHEET}"]`)) {
    document.head.append(h('link', {rel: 'stylesheet', href: STYLESHEET}));
  }
}

function browserZone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** 'YYYY-MM-DD' of a moment in `zone` (the days the reports count in). */
function dayIn(moment, zone) {
  const parts = new Intl.DateTimeFormat('en-CA', {timeZone: zone, year: 'numeric', month: '2-digit',
    day: '2-digit'}).formatToParts(moment);
  const part = (type) => parts.find((p) => p.type === type).value;
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/** A hub time as its date in `zone` («03.12.2026»), the exact moment on hover; not relative. */
function dateIn(text, zone) {
  const moment = parseTime(text);
  if (!moment) return text || '—';
  return h('time', {datetime: moment.toISOString(), title: exactText(moment)}, day(dayIn(moment, zone)));
}

/** A count of points or issues with its noun: «34 очка», «1 задача»; fractions to 0.01. */
const amount = (value, forms) => (value === null || value === undefined ? '—'
  : plural(Math.round(value * 100) / 100, forms));

function nextDay(text) {
  const moment = new Date(`${text}T00:00:00Z`);
  moment.setUTCDate(moment.getUTCDate() + 1);
  return moment.toISOString().slice(0, 10);
}

function legend(items) {
  return h('ul', {class: 'legend'}, items.map(([name, cls]) => h('li', {},
    h('span', {class: `swatch ${cls}`, 'aria-hidden': 'true'}), name)));
}

function figure(svg, legendItems, caption) {
  return h('figure', {class: 'chart'}, svg, legendItems ? legend(legendItems) : null,
    caption ? h('figcaption', {}, caption) : null);
}

const idealText = (value) => (value === null || value === undefined ? '—' : number(Math.round(value * 10) / 10));

function figures(pairs) {
  return h('dl', {class: 'report-figures'}, pairs.map(([term, value]) => h('div', {},
    h('dt', {}, term), h('dd', {}, value))));
}

// --- burndown --------------------------------------------------------------------------------------

function startedSprints(items) {
  return items.filter((s) => s.state !== 'future' && s.start_date);
}

function defaultSprint(items) {
  const started = startedSprints(items);
  const active = started.filter((s) => s.state === 'active');
  return (active.length ? active : started).at(-1) || null;
}

async function sprintReport(label, sprintId, zone) {
  try {
    return await get(`/projects/${seg(label)}/sprints/${seg(sprintId)}/report`, {tz: zone});
  } catch (error) {
    if (error instanceof ApiError && (error.status === 409 || error.status === 404)) return error;
    throw error;
  }
}

function burndownSection(label, sprints, chosen, report, zone) {
  const path = `/reports/${encodeURIComponent(label)}`;
  const options = sprints.map((s) => [String(s.sprint_id),
    `${s.name || s.sprint_id} (${SPRINT_STATE[s.state] || s.state || '—'})`]);
  const picker = options.length ? filterForm(path, 'Выбор спринта', [
    field('Спринт', 'sprint', {kind: 'select', options, value: chosen ? String(chosen.sprint_id) : ''})],
  {resetLabel: 'Активный спринт'}) : null;
  if (!chosen) {
    return section('Сгорание спринта', picker,
      h('p', {class: 'empty'}, sprints.length ? 'Выберите спринт.' : 'У доски проекта нет спринтов.'));
  }
  if (report instanceof ApiError) return section('Сгорание спринта', picker, message(report.message, 'info'));
  const byPoints = report.points.committed > 0;
  const forms = byPoints ? POINT_WORDS : ISSUE_WORDS;
  const unit = forms[2];  // «Осталось очков»: the genitive plural a label without a number takes
  const committed = byPoints ? report.points.committed : report.committed.length;
  const remaining = report.burndown.map((d) => (byPoints ? d.remaining_points : d.remaining_issues));
  // the ideal line runs from the commitment to zero on the sprint's planned end (or its last day)
  const days = report.burndown.map((d) => d.date);
  const planned = parseTime(report.sprint.end_date);  // Jira's own time (+0300): not Date's format
  const lastPlanned = planned ? dayIn(planned, zone) : days.at(-1);
  while (days.at(-1) < lastPlanned && days.length < 400) days.push(nextDay(days.at(-1)));
  const idealEnd = Math.max(1, days.indexOf(lastPlanned) > 0 ? days.indexOf(lastPlanned) : days.length - 1);
  const ideal = days.map((_, index) => (index <= idealEnd ? committed * (1 - index / idealEnd) : null));
  const actual = days.map((_, index) => (index < remaining.length ? remaining[index] : null));
  const last = report.burndown.at(-1);
  const name = report.sprint.name || String(report.sprint.sprint_id);
  const aria = `Сгорание спринта «${name}» в ${byPoints ? 'очках' : 'задачах'}: взято ${amount(committed, forms)}, `
    + `на ${day(last.date)} осталось ${amount(byPoints ? last.remaining_points : last.remaining_issues, forms)}; `
    + `задач взято ${report.committed.length}, добавлено ${report.added.length}, убрано ${report.removed.length}, `
    + `выполнено ${report.completed.length}, не выполнено ${report.not_completed.length}.`;
  const lists = [['Взято в спринт', 'committed'], ['Добавлено', 'added'], ['Убрано', 'removed'],
    ['Выполнено', 'completed'], ['Не выполнено', 'not_completed']];
  return section(`Сгорание спринта «${name}»`, picker,
    h('p', {class: 'lead'}, SPRINT_STATE[report.sprint.state] || report.sprint.state, ' · с ',
      dateIn(report.start, zone), ' по ', dateIn(report.end, zone),
      report.sprint.goal ? ` · цель: ${report.sprint.goal}` : ''),
    figures(lists.map(([title, key]) => [title,
      `${amount(report[key].length, ISSUE_WORDS)} · ${amount(report.points[key], POINT_WORDS)}`])),
    figure(lineChart({label: aria, days, whole: !byPoints, series: [
      {name: `Осталось ${unit}`, values: actual, cls: 'series-0'},
      {name: 'Идеальная линия', values: ideal, cls: 'ideal', dashed: true}]}),
    [[`Осталось ${unit}`, 'series-0'], ['Идеальная линия', 'dashed']],
    byPoints ? 'По story points взятых в спринт задач.' : 'У задач спринта нет story points: по числу задач.'),
    table(`Сгорание спринта «${name}» по дням`, [
      {label: 'День', cell: (row) => day(row.date)},
      {label: 'Осталось задач', cell: (row) => String(row.remaining_issues), class: 'num'},
      {label: 'Осталось очков', cell: (row) => number(row.remaining_points), class: 'num'},
      {label: 'Идеальная линия', cell: (row) => idealText(ideal[days.indexOf(row.date)]), class: 'num'},
    ], report.burndown),
    h('details', {class: 'sprint-issues'}, h('summary', {}, 'Задачи спринта'),
      table('Задачи спринта по спискам отчёта', [
        {label: 'Список', cell: (row) => row[0]},
        {label: 'Задачи', cell: (row) => (row[1].length ? row[1].flatMap((key, i) => (i ? [', ', issueLink(key)] : [issueLink(key)])) : '—')},
      ], lists.map(([title, key]) => [title, report[key]]))));
}

// --- cumulative flow -------------------------------------------------------------------------------

function flowSection(flow) {
  const columns = flow.columns;
  const days = flow.days.map((d) => d.date);
  // Jira's order: the last column (done) at the bottom, the first on top, the unmapped above
  const layers = columns.map((name, index) => ({name, cls: `series-${index % 6}`,
    values: flow.days.map((d) => d.counts[index])})).reverse();
  const unmappedTotal = flow.days.reduce((sum, d) => sum + d.unmapped, 0);
  if (unmappedTotal || !columns.length) {
    layers.push({name: 'Вне колонок', cls: 'unmapped', values: flow.days.map((d) => d.unmapped)});
  }
  const last = flow.days.at(-1);
  const aria = `Накопительная диаграмма потока с ${day(days[0])} по ${day(days.at(-1))}; на ${day(last.date)}: `
    + columns.map((name, index) => `${name} — ${last.counts[index]}`).concat(
      unmappedTotal || !columns.length ? [`вне колонок — ${last.unmapped}`] : []).join(', ') + '.';
  return section('Накопительная диаграмма потока',
    figure(stackedArea({label: aria, days, layers}),
      [...columns.map((name, index) => [name, `series-${index % 6}`]),
        ...(unmappedTotal || !columns.length ? [['Вне колонок', 'unmapped']] : [])],
      columns.length ? 'Свои задачи проекта по колонкам доски на конец каждого дня.'
        : 'У проекта нет доски: все задачи вне колонок.'),
    table('Задачи по колонкам доски по дням', [
      {label: 'День', cell: (row) => day(row.date)},
      ...columns.map((name, index) => ({label: name, cell: (row) => String(row.counts[index]), class: 'num'})),
      {label: 'Вне колонок', cell: (row) => String(row.unmapped), class: 'num'},
    ], flow.days));
}

// --- velocity --------------------------------------------------------------------------------------

function velocitySection(velocity) {
  const items = velocity.items;
  if (!items.length) {
    return section('Скорость команды', h('p', {class: 'empty'}, 'Закрытых спринтов нет.'));
  }
  const byPoints = items.some((item) => item.committed_points > 0);
  const forms = byPoints ? POINT_WORDS : ISSUE_WORDS;
  const unit = forms[2];  // «Взято очков»
  const value = (item, what) => (byPoints ? item[`${what}_points`] : item[`${what}_issues`]);
  const average = items.reduce((sum, item) => sum + value(item, 'completed'), 0) / items.length;
  const last = items.at(-1);
  const aria = `Скорость за ${plural(items.length, ['закрытый спринт', 'закрытых спринта', 'закрытых спринтов'])} `
    + `в ${byPoints ? 'очках' : 'задачах'}: в среднем выполнено ${amount(average, forms)} за спринт; `
    + `последний, «${last.name}»: взято ${number(value(last, 'committed'))}, `
    + `выполнено ${number(value(last, 'completed'))}.`;
  return section('Скорость команды',
    figure(barChart({label: aria, whole: !byPoints, groups: items.map((item) => ({name: item.name || String(item.sprint_id),
      values: [value(item, 'committed'), value(item, 'completed')]})),
    series: [{name: 'Взято', cls: 'series-4'}, {name: 'Выполнено', cls: 'series-2'}]}),
    [[`Взято ${unit}`, 'series-4'], [`Выполнено ${unit}`, 'series-2']],
    `В среднем выполнено ${amount(average, forms)} за спринт.`),
    table('Взято и выполнено по закрытым спринтам', [
      {label: 'Спринт', cell: (item) => item.name || String(item.sprint_id)},
      {label: 'Взято задач', cell: (item) => String(item.committed_issues), class: 'num'},
      {label: 'Выполнено задач', cell: (item) => String(item.completed_issues), class: 'num'},
      {label: 'Взято очков', cell: (item) => number(item.committed_points), class: 'num'},
      {label: 'Выполнено очков', cell: (item) => number(item.completed_points), class: 'num'},
    ], items));
}

// --- cycle time ------------------------------------------------------------------------------------

// The items come in pages (`next_cursor`); `summary` is over all of them. The table shows
// CYCLE_ROWS rows, and each «показать ещё» adds as many, asking the hub for the next page once
// the loaded ones are shown.
function cycleTable(cycle, more) {
  const columns = [
    {label: 'Задача', cell: (item) => issueLink(item.key)},
    {label: 'Создана', cell: (item) => time(item.created)},
    {label: 'Начата', cell: (item) => time(item.started)},
    {label: 'Выполнена', cell: (item) => time(item.done)},
    {label: 'Lead time, дн.', cell: (item) => number(item.lead_days), class: 'num'},
    {label: 'Cycle time, дн.', cell: (item) => number(item.cycle_days), class: 'num'},
  ];
  const items = [...cycle.items];
  let cursor = cycle.next_cursor;
  let rows = CYCLE_ROWS;
  const wrap = h('div', {});
  const render = () => {
    const shown = Math.min(rows, items.length);
    const left = cycle.summary.count - shown;
    const parts = [table('Время выполнения задач', columns, items.slice(0, shown),
      {empty: 'За период задачи не выполнялись.'})];
    if (left > 0 && (shown < items.length || cursor)) {
      const button = h('button', {type: 'button', class: 'secondary'},
        `Показать ещё ${Math.min(left, CYCLE_ROWS)} (всего ${plural(cycle.summary.count, ISSUE_WORDS)})`);
      button.addEventListener('click', async () => {
        button.disabled = true;
        if (rows + CYCLE_ROWS > items.length && cursor) {
          const next = await more(cursor);
          items.push(...next.items);
          cursor = next.next_cursor;
        }
        rows += CYCLE_ROWS;
        render();
      });
      parts.push(button);
    }
    wrap.replaceChildren(...parts);
  };
  render();
  return wrap;
}

function cycleSection(cycle, zone, more) {
  const {items, summary} = cycle;
  const points = items.filter((item) => item.cycle_days !== null).map((item) => ({
    at: parseTime(item.done).getTime(), value: item.cycle_days,
    title: `${item.key}: ${number(item.cycle_days)} дн., выполнена ${day(dayIn(parseTime(item.done), zone))}`}));
  const stats = [['Задач выполнено', String(summary.count)],
    ['Cycle time p50 / p85', `${number(summary.cycle_days.p50)} / ${number(summary.cycle_days.p85)} дн.`],
    ['Lead time p50 / p85', `${number(summary.lead_days.p50)} / ${number(summary.lead_days.p85)} дн.`]];
  let chart = h('p', {class: 'empty'}, 'Нет выполненных задач, вышедших из первой колонки доски.');
  if (points.length) {
    const from = Math.min(...points.map((p) => p.at));
    const to = Math.max(...points.map((p) => p.at));
    const ticks = [0, 1, 2, 3, 4].map((i) => from + ((to - from) * i) / 4)
      .map((at) => ({at, text: day(dayIn(new Date(at), zone)).slice(0, 5)}));
    const aria = `Время цикла ${plural(points.length, ['выполненной задачи', 'выполненных задач', 'выполненных задач'])} за последние 90 дней: p50 — `
      + `${number(summary.cycle_days.p50)} дн., p85 — ${number(summary.cycle_days.p85)} дн., p95 — `
      + `${number(summary.cycle_days.p95)} дн.; lead time p50 — ${number(summary.lead_days.p50)} дн.`;
    const partial = items.length < summary.count
      ? ` Точки — первые ${items.length} по ключу из ${plural(summary.count, ISSUE_WORDS)}; p50 и p85 — по всем.` : '';
    chart = figure(scatter({label: aria, points, from, to: to === from ? from + 86400000 : to, ticks: to === from ? ticks.slice(0, 1) : ticks,
      lines: [{name: 'p50', value: summary.cycle_days.p50, cls: 'series-2'},
        {name: 'p85', value: summary.cycle_days.p85, cls: 'series-5'}]}),
    [['Задача (дата выполнения, дней в работе)', 'series-0'], ['p50', 'series-2'], ['p85', 'series-5']],
    `Дни от выхода из первой колонки доски до последнего входа в «готово».${partial}`);
  }
  return section('Время выполнения (cycle time)', figures(stats), chart, cycleTable(cycle, more));
}

// --- the view --------------------------------------------------------------------------------------

const cyclePage = (label, zone, cursor) => get(`/projects/${seg(label)}/cycle-time`,
  {tz: zone, limit: CYCLE_PAGE, ...(cursor ? {cursor} : {})});

async function load(label, zone) {
  const base = `/projects/${seg(label)}`;
  return Promise.all([get(`${base}/sprints`), get(`${base}/flow`, {tz: zone}),
    get(`${base}/velocity`), cyclePage(label, zone)]);
}

export default async function reports({args: [label], query}) {
  loadStyles();
  const project = await get(`/projects/${seg(label)}`);
  let zone = query.tz || browserZone();
  let loaded;
  try {
    loaded = await load(label, zone);
  } catch (error) {
    // a browser zone the hub's zone database lacks: count in UTC rather than show nothing
    if (!(error instanceof ApiError && error.fields.tz) || query.tz) throw error;
    zone = 'UTC';
    loaded = await load(label, zone);
  }
  const [sprints, flow, velocity, cycle] = loaded;
  const started = startedSprints(sprints.items);
  const chosen = sprints.items.find((s) => String(s.sprint_id) === query.sprint) || defaultSprint(sprints.items);
  const report = chosen ? await sprintReport(label, chosen.sprint_id, zone) : null;
  return [
    h('h1', {}, `Отчёты проекта ${label}`),
    h('p', {class: 'lead'}, project.name, ' · ',
      h('a', {href: address(`/board/${encodeURIComponent(label)}`)}, 'доска'), ' · ',
      h('a', {href: address('/issues', {project: label})}, 'задачи'), ` · дни по часовому поясу ${zone}`),
    burndownSection(label, started.length ? started : sprints.items, chosen, report, zone),
    flowSection(flow),
    velocitySection(velocity),
    cycleSection(cycle, zone, (cursor) => cyclePage(label, zone, cursor)),
    h('p', {class: 'hint'}, 'Всё восстановлено по журналу изменений зеркала: статусы и спринты задач '
      + 'на каждый момент. Выполнено — статус в последней колонке доски.'),
  ];
}
