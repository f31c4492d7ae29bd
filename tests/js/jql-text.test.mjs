// Editing JQL text for the issues list (hubweb/ui/static/js/jql-text.js): ORDER BY from a header
// click, facet terms in and out, everything else kept as typed.
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {facetChoices, facetSelection, firstSort, sortedBy, splitOrder, withFacet} from '../../hubweb/ui/static/js/jql-text.js';

const STATUS = ['status'];
const TYPE = ['issuetype', 'type'];

test('ORDER BY is found at the top level only', () => {
  assert.deepEqual(splitOrder('project = X order by updated DESC'), {where: 'project = X', order: 'updated DESC'});
  assert.deepEqual(splitOrder('summary ~ "order by" AND (a = 1)'), {where: 'summary ~ "order by" AND (a = 1)', order: ''});
  assert.deepEqual(splitOrder('ORDER BY key'), {where: '', order: 'key'});
  assert.deepEqual(splitOrder(''), {where: '', order: ''});
});

test('a header click sorts ascending, a second click reverses', () => {
  let jql = 'assignee = ivanov ORDER BY priority DESC, updated DESC';
  jql = sortedBy(jql, 'status');
  assert.equal(jql, 'assignee = ivanov ORDER BY status ASC');
  assert.deepEqual(firstSort(jql), {field: 'status', desc: false});
  jql = sortedBy(jql, 'status');
  assert.equal(jql, 'assignee = ivanov ORDER BY status DESC');
  assert.equal(sortedBy(jql, 'status'), 'assignee = ivanov ORDER BY status ASC');
  assert.equal(sortedBy('', 'key'), 'ORDER BY key ASC');
  assert.equal(sortedBy('', '"Story Points"'.replace(/"/g, '')), 'ORDER BY "Story Points" ASC');
});

test('facet terms are added, read back and replaced; other terms stay as typed', () => {
  let jql = 'project = AURORA ORDER BY key';
  jql = withFacet(jql, STATUS, 'status', ['В работе', 'Готово']);
  assert.equal(jql, 'project = AURORA AND status IN ("В работе", "Готово") ORDER BY key');
  assert.deepEqual(facetSelection(jql, STATUS), {values: ['В работе', 'Готово'], empty: false});
  // «no value» is EMPTY in the list: the hub refuses `issuetype IS EMPTY`, not `IN (…, EMPTY)`
  jql = withFacet(jql, TYPE, 'issuetype', ['Ошибка'], true);
  assert.equal(jql, 'project = AURORA AND status IN ("В работе", "Готово") AND '
    + 'issuetype IN ("Ошибка", EMPTY) ORDER BY key');
  assert.deepEqual(facetSelection(jql, TYPE), {values: ['Ошибка'], empty: true});
  jql = withFacet(jql, STATUS, 'status', []);
  assert.equal(jql, 'project = AURORA AND issuetype IN ("Ошибка", EMPTY) ORDER BY key');
  assert.equal(facetSelection(jql, STATUS), null);
  assert.equal(withFacet('', ['assignee'], 'assignee', [], true), 'assignee IN (EMPTY)');
  assert.deepEqual(facetSelection('assignee IN (EMPTY)', ['assignee']), {values: [], empty: true});
});

test('the facet choices are taken out of the query for the facets call, one list each', () => {
  const facets = [{key: 'status', names: STATUS}, {key: 'assignee', names: ['assignee']},
    {key: 'issue_type', names: TYPE}];
  assert.deepEqual(facetChoices('project = AURORA AND status IN ("На проверке", "В работе") AND '
    + 'assignee IN ("ivanov", EMPTY) ORDER BY key', facets), {
    jql: 'project = AURORA ORDER BY key',
    chosen: {status: ['На проверке', 'В работе'], assignee: ['ivanov', null]}});
  // hand-written shapes count as choices; a quoted "EMPTY" is a value, not the keyword
  assert.deepEqual(facetChoices('type = Ошибка AND assignee = "EMPTY" AND (status IN (a) OR status IS EMPTY)',
    facets), {jql: '', chosen: {issue_type: ['Ошибка'], assignee: ['EMPTY'], status: ['a', null]}});
  // a field chosen twice stays in the query; a top-level OR is no choice at all
  assert.deepEqual(facetChoices('status = a AND status IN (a, b) AND assignee = x', facets),
    {jql: 'status = a AND status IN (a, b)', chosen: {assignee: ['x']}});
  assert.deepEqual(facetChoices('status = a OR assignee = x', facets),
    {jql: 'status = a OR assignee = x', chosen: {}});
  assert.deepEqual(facetChoices('', facets), {jql: '', chosen: {}});
});

test('hand-written facet shapes are recognised', () => {
  assert.deepEqual(facetSelection('Status = "в работе"', STATUS), {values: ['в работе'], empty: false});
  assert.deepEqual(facetSelection("type in (Задача, 'Эпик')", TYPE), {values: ['Задача', 'Эпик'], empty: false});
  assert.deepEqual(facetSelection('assignee is EMPTY', ['assignee']), {values: [], empty: true});
  assert.equal(facetSelection('status = a OR status = b', STATUS), null);
  assert.equal(facetSelection('status WAS Готово', STATUS), null);
});

test('a condition with a top-level OR is kept whole in parentheses', () => {
  assert.equal(withFacet('a = 1 OR b = 2', STATUS, 'status', ['x']), '(a = 1 OR b = 2) AND status IN ("x")');
});

test('values with quotes and backslashes are escaped', () => {
  const jql = withFacet('', ['assignee'], 'assignee', ['o"neil\\x']);
  assert.equal(jql, 'assignee IN ("o\\"neil\\\\x")');
  assert.deepEqual(facetSelection(jql, ['assignee']), {values: ['o"neil\\x'], empty: false});
});
