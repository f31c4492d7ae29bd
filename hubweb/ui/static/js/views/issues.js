// #/issues?jql=&project=&cursor= — the issues list on the hub's JQL (contract §15a, §16): a query
// field (the hub's refusal shown next to it), the total, sortable column headers (a click sets the
// query's ORDER BY, a second click reverses it), facet filters for status, assignee, type and
// priority offered from the values present (multi-select, case-insensitive: they become
// `field IN (…)` terms of the query; asked for when a list is opened), pages forward and back,
// the CSV of the query and examples.
// The address holds the whole query, so a list is a link that can be shared.
import {ApiError, cachedGet, download, get} from '../api.js';
import {field, h, message, uid} from '../dom.js';
import {ISSUE_WORDS, badge, plural, time} from '../format.js';
import {facetChoices, facetSelection, quote, firstSort, sortedBy, withFacet} from '../jql-text.js';
import {person} from '../people.js';
import {address, issueLink, pager, rememberedAuthor} from './common.js';

const PAGE = 100;
const TZ = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
// Filters of §15's addresses before the query language; an address with them is rewritten as JQL.
const LEGACY = ['neighbor', 'status', 'assignee', 'q', 'text', 'updated_since'];
const FACETS = [
  {key: 'status', label: 'Статус', field: 'status', names: ['status'], none: 'без статуса'},
  {key: 'assignee', label: 'Исполнитель', field: 'assignee', names: ['assignee'], none: 'не назначена',
    person: true},
  {key: 'issue_type', label: 'Тип', field: 'issuetype', names: ['issuetype', 'type'], none: 'без типа'},
  {key: 'priority', label: 'Приоритет', field: 'priority', names: ['priority'], none: 'без приоритета'},
];
const COLUMNS = [
  {label: 'Ключ', sort: 'key', cell: (i) => issueLink(i.key)},
  {label: 'Тип', sort: 'issuetype', cell: (i) => i.issue_type || '—'},
  {label: 'Сводка', sort: 'summary', cell: (i) => [h('span', {class: 'summary'}, i.summary || '—'),
    i.snippet ? h('p', {class: 'snippet'}, i.snippet) : null]},
  {label: 'Статус', sort: 'status', cell: (i) => i.status || '—'},
  {label: 'Исполнитель', sort: 'assignee', cell: (i) => person(i.assignee)},
  {label: 'Приоритет', sort: 'priority', cell: (i) => i.priority || '—'},
  {label: 'Обновлена', sort: 'updated', cell: (i) => time(i.jira_updated)},
  {label: 'Сосед', cell: (i) => (i.neighbor ? badge('сосед', 'neighbor') : '—')},
  {label: 'Заметка', cell: (i) => (i.note ? badge('есть', 'note') : '—')},
];
const openFacets = new Set();  // which facet lists stay open across the re-render a choice causes

function examples() {
  const me = rememberedAuthor();
  return [
    me ? [`назначенные на ${me}, не решённые`,
      `assignee = ${quote(me)} AND resolution = Unresolved ORDER BY priority DESC, updated DESC`] : null,
    ['обновлённые за неделю', 'updated >= -7d ORDER BY updated DESC'],
    ['активный спринт, не готовые', 'sprint in openSprints() AND statusCategory != Done ORDER BY rank'],
    ['переведённые в «Готово» за 14 дней', 'status CHANGED TO "Готово" AFTER -14d ORDER BY updated DESC'],
    ['без исполнителя', 'assignee IS EMPTY AND resolution = Unresolved ORDER BY created DESC'],
    ['со словом «отчёт»', 'text ~ "отчёт*"'],
  ].filter(Boolean);
}

/** The JQL of an address from before the query language (status=, neighbor=, …), or null. */
function legacyJql(query) {
  if (!LEGACY.some((name) => query[name])) return null;
  const terms = query.jql ? [`(${query.jql})`] : [];
  if (query.project && query.neighbor) {
    terms.push(`${query.neighbor === 'true' ? 'NOT ' : ''}labels = ${quote(query.project)}`);
  }
  if (query.status) terms.push(`status = ${quote(query.status)}`);
  if (query.assignee) terms.push(`assignee = ${quote(query.assignee)}`);
  for (const text of [query.q, query.text].filter(Boolean)) terms.push(`text ~ ${quote(text)}`);
  if (query.updated_since) {
    const moment = new Date(query.updated_since);
    if (!Number.isNaN(moment.getTime())) terms.push(`updated >= ${quote(moment.toISOString().slice(0, 16).replace('T', ' '))}`);
  }
  return terms.join(' AND ');
}

/** Facet values merged case-insensitively (JQL compares them so): [{value, count, spellings}]. */
function merged(values) {
  const byFold = new Map();
  for (const {value, count} of values || []) {
    const fold = value === null ? null : value.toLocaleLowerCase('ru');
    const entry = byFold.get(fold) || {value, count: 0, best: 0};
    entry.count += count;
    if (count > entry.best) {
      entry.value = value;  // the most frequent spelling names the group
      entry.best = count;
    }
    byFold.set(fold, entry);
  }
  return [...byFold.values()].sort((a, b) => b.count - a.count);
}

/**
 * One facet list: a <details> whose summary says what the query chooses (read from its text) and
 * whose values (with counts) are asked of the hub when the list is first opened.
 */
function facetControl(spec, jql, go, facets) {
  const chosen = facetSelection(jql, spec.names) || {values: [], empty: false};
  const folded = new Set(chosen.values.map((v) => v.toLocaleLowerCase('ru')));
  const isChosen = (value) => (value === null ? chosen.empty : folded.has(value.toLocaleLowerCase('ru')));
  const shown = [...chosen.values, ...(chosen.empty ? [spec.none] : [])];
  const body = h('div', {class: 'facet-body'}, h('p', {class: 'loading'}, 'Загрузка…'));
  const details = h('details', {class: 'facet', open: openFacets.has(spec.key)},
    h('summary', {}, spec.label, shown.length ? [': ', h('strong', {}, shown.join(', '))] : null), body);
  const draw = (values) => {
    const options = merged(values);
    const boxes = options.map((o) => {
      const box = h('input', {type: 'checkbox', name: spec.key, value: o.value ?? '', id: uid(spec.key),
        checked: isChosen(o.value)});
      box.addEventListener('change', () => {
        const selected = options.filter((item, index) => boxes[index].checked);
        openFacets.add(spec.key);
        go(withFacet(jql, spec.names, spec.field,
          selected.filter((item) => item.value !== null).map((item) => item.value),
          selected.some((item) => item.value === null)));
      });
      return box;
    });
    body.replaceChildren(options.length ? h('ul', {class: 'facet-values'}, options.map((o, index) => h('li', {},
      h('label', {for: boxes[index].id}, boxes[index], ' ', o.value === null ? h('span', {class: 'muted'}, spec.none)
        : spec.person ? person(o.value) : o.value, ' ', h('span', {class: 'count'}, String(o.count))))))
      : h('p', {class: 'empty'}, 'Значений нет.'));
  };
  const load = () => facets().then((answer) => draw(answer[spec.key]), (error) => {
    body.replaceChildren(h('p', {class: 'error-text'}, `Значения не получены: ${error.message}`));
  });
  details.addEventListener('toggle', () => {
    if (details.open) {
      openFacets.add(spec.key);
      load();
    } else {
      openFacets.delete(spec.key);
    }
  });
  if (details.open) load();
  return details;
}

function header(column, jql, go) {
  if (!column.sort) return h('th', {scope: 'col'}, column.label);
  const sort = firstSort(jql);
  const current = sort && sort.field === column.sort ? (sort.desc ? 'descending' : 'ascending') : null;
  const button = h('button', {type: 'button', class: 'sort',
    title: current === 'ascending' ? 'Сортировать по убыванию' : 'Сортировать по возрастанию'},
  column.label, current ? h('span', {class: 'sort-mark', 'aria-hidden': 'true'}, current === 'ascending' ? ' ▲' : ' ▼')
    : null);
  button.addEventListener('click', () => go(sortedBy(jql, column.sort)));
  return h('th', {scope: 'col', 'aria-sort': current}, button);
}

function issueTable(items, jql, go, caption) {
  return h('div', {class: 'table-wrap'}, h('table', {class: 'issues'},
    h('caption', {class: 'visually-hidden'}, caption),
    h('thead', {}, h('tr', {}, COLUMNS.map((c) => header(c, jql, go)))),
    h('tbody', {}, items.map((item) => h('tr', {}, COLUMNS.map((c) => h('td', {}, c.cell(item))))))));
}

/**
 * What the header search did with a text the hub refused as JQL: the hub's refusal, the words it
 * searched instead, and a link that opens the text as a query to correct it.
 */
function typedNotice(query, refusal) {
  const reason = [refusal.fields.jql || refusal.message].flat().join('; ');
  return h('p', {class: 'message message-info typed-refusal', role: 'status'},
    'Не запрос JQL: ', h('span', {class: 'refusal'}, reason), '. Искали слова «',
    h('span', {class: 'typed'}, query.typed), '» в тексте задач. ',
    h('a', {href: address('/issues', {project: query.project, jql: query.typed})},
      'Исправить как запрос JQL'));
}

async function saveCsv(query, status) {
  status.textContent = 'Готовится CSV…';
  try {
    const blob = await download(`/issues.csv?${new URLSearchParams(Object.entries(query)
      .filter(([, value]) => value))}`);
    const url = URL.createObjectURL(blob);
    const link = h('a', {href: url, download: 'issues.csv', class: 'visually-hidden'}, 'CSV');
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    status.textContent = '';
  } catch (error) {
    status.textContent = `CSV не получен: ${error.message}`;
  }
}

export default async function issues({query: asked, isCurrent}) {
  let query = asked;
  const legacy = legacyJql(asked);
  if (legacy !== null) {
    // an address of §15 (status=, neighbor=, q=…) shows the same list as a JQL query, and the
    // address says so (replaced in place: no second render, no history entry)
    query = {project: asked.project, jql: legacy};
    if (isCurrent()) history.replaceState(history.state, '', address('/issues', query));
  }
  const jql = query.jql || '';
  const scope = {jql, project: query.project, tz: TZ};
  const go = (text) => {
    location.hash = address('/issues', {project: query.project, jql: text});
  };
  const projects = await cachedGet('/projects');
  let page = null;
  let total = null;
  let refusal = null;
  // Each facet list counts within the query and the other lists' choices, without its own, so
  // a list keeps offering every value while some are chosen (multi-select) and a choice can be
  // widened: the query goes without its facet terms, the choices beside it (`chosen`), one
  // request for all lists, asked for once, when a list is first opened.
  const {jql: unchosen, chosen} = facetChoices(jql, FACETS);
  let facetsAnswer = null;
  const facets = () => {
    facetsAnswer = facetsAnswer || get('/issues/facets', {...scope, jql: unchosen,
      chosen: Object.keys(chosen).length ? JSON.stringify(chosen) : null});
    return facetsAnswer;
  };
  // the header search ran `typed` as words because the hub refused it as JQL: ask for that
  // refusal again (the address alone says what was typed, so a reload or a shared link shows it)
  const typedRefusal = query.typed && query.typed !== jql
    ? get('/issues/count', {jql: query.typed, project: query.project, tz: TZ}).then(() => null,
      (error) => {
        if (!(error instanceof ApiError) || error.status !== 422) throw error;
        return error;
      })
    : null;
  let refusedTyped = null;
  try {
    [page, total, refusedTyped] = await Promise.all([
      get('/issues', {...scope, limit: PAGE, cursor: query.cursor}),
      get('/issues/count', scope), typedRefusal]);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 422) throw error;
    refusal = error;
  }
  const project = query.project ? projects.items.find((p) => p.label === query.project) : null;
  const title = project ? `Задачи проекта ${project.label}` : 'Задачи';

  const projectOptions = [['', 'все задачи зеркала'],
    ...projects.items.map((p) => [p.label, `${p.label} — ${p.name}`])];
  if (query.project && !project) projectOptions.push([query.project, query.project]);
  const jqlField = field('Запрос JQL', 'jql', {type: 'search', value: jql,
    hint: 'например: status = "В работе" AND assignee = ivanov ORDER BY updated DESC',
    attrs: {spellcheck: 'false', autocomplete: 'off', class: 'jql'}});
  const projectField = field('Проект', 'project', {kind: 'select', options: projectOptions,
    value: query.project || '', hint: 'свои задачи проекта и соседи'});
  if (refusal) {
    jqlField.setError(refusal.fields.jql || refusal.fields.tz || refusal.fields.project
      || refusal.message);
  }
  const form = h('form', {class: 'filters jql-form', role: 'search', 'aria-label': 'Запрос задач',
    novalidate: true},
  jqlField.wrap, projectField.wrap,
  h('div', {class: 'actions'},
    h('button', {type: 'submit'}, 'Найти'),
    h('a', {href: '#/issues', class: 'button secondary'}, 'Сбросить')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = address('/issues', {project: projectField.input.value,
      jql: jqlField.input.value.trim()});
  });
  const examplesLine = h('p', {class: 'presets'}, 'Примеры: ', examples().map(([label, text], index) => [
    index ? ' · ' : '', h('a', {href: address('/issues', {project: query.project, jql: text}), title: text}, label)]));

  const head = [
    h('h1', {}, title),
    project ? h('p', {class: 'lead'}, project.name, ' · ',
      h('a', {href: `#/board/${encodeURIComponent(project.label)}`}, 'доска проекта')) : null,
    form, refusedTyped ? typedNotice(query, refusedTyped) : null, examplesLine];
  if (refusal) return [...head, message('Хаб не принял запрос: исправьте его в поле выше.', 'info')];

  const csvStatus = h('span', {class: 'inline-status', role: 'status'});
  const csv = h('button', {type: 'button', class: 'secondary'}, 'Скачать CSV');
  csv.addEventListener('click', () => saveCsv(scope, csvStatus));
  const first = query.cursor ? null : 1;
  return [
    ...head,
    h('div', {class: 'facets', role: 'group', 'aria-label': 'Фильтры по значениям'},
      FACETS.map((spec) => facetControl(spec, jql, go, facets))),
    h('p', {class: 'total'},
      h('strong', {class: 'count', 'aria-live': 'polite'}, `Найдено: ${plural(total.count, ISSUE_WORDS)}`),
      page.items.length && first && total.count > page.items.length
        ? ` · на странице первые ${page.items.length}` : '',
      page.ranked_within ? ` · по релевантности среди ${page.ranked_within} новейших` : '',
      ' · ', csv, ' ', csvStatus),
    page.items.length ? issueTable(page.items, jql, go, `${title}: ${page.items.length} на странице`)
      : h('p', {class: 'empty'}, 'Задач с такими условиями нет.'),
    pager('/issues', query, page.next_cursor),
  ];
}
