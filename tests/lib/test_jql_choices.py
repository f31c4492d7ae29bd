"""Case-insensitive choice fields (status, assignee, issue type, priority) on the fast path: JQL
compares and orders them through the stored spellings (hublib/jql/sql.py ``stored_values``), not a
casefold of every row; facets count from the issue_facet index. The answers must be the same as a
casefold of each row would give."""
from __future__ import annotations

import pytest

from hublib import mirror, projects, reads, settings

ISSUES = [
    {'key': 'AURORA-1', 'status': 'В работе', 'assignee': 'Ivanov', 'issue_type': 'Задача',
     'priority': 'Высокий', 'labels': ['AWPCA']},
    {'key': 'AURORA-2', 'status': 'в работе', 'assignee': 'ivanov', 'issue_type': 'задача',
     'priority': 'высокий', 'labels': ['AWPCA']},
    {'key': 'AURORA-3', 'status': 'ГОТОВО', 'assignee': 'petrov', 'issue_type': 'Ошибка',
     'priority': 'Низкий', 'labels': []},
    {'key': 'AURORA-4', 'status': 'Straße', 'assignee': None, 'issue_type': 'Задача',
     'priority': None, 'labels': ['AWPCA']},
    {'key': 'AURORA-5', 'status': '', 'assignee': '', 'issue_type': 'Задача',
     'priority': '', 'labels': []},
    {'key': 'AURORA-6', 'status': None, 'assignee': 'Petrov', 'issue_type': 'Ошибка',
     'priority': 'Низкий', 'labels': ['AWPCA']},
    {'key': 'AURORA-7', 'status': 'Готово', 'assignee': 'sidorova', 'issue_type': 'Задача',
     'priority': 'Высокий', 'labels': []},
]
ALL = [issue['key'] for issue in ISSUES]


@pytest.fixture
def spelled(hub, claimed_refresh):
    settings.update_settings(hub, {'project_key': 'AURORA',
                                   'priority_map': {'high': 'Высокий', 'low': 'Низкий'}})
    projects.create_project(hub, 'AWPCA', 'АРМ КА')
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [
        {**issue, 'summary': issue['key'], 'created': '2026-11-01T00:00:00Z',
         'updated': '2026-11-02T00:00:00Z'} for issue in ISSUES])
    return hub


def found(hub, query: str, **options) -> list[str]:
    return [item['key'] for item in reads.issues(hub, jql=query, limit=1000, **options)['items']]


def stored(field: str) -> dict[str, object]:
    return {issue['key']: issue[field] for issue in ISSUES}


@pytest.mark.parametrize('query, expected', [
    # a value stored «В работе» found by its lower-case spelling, and both spellings by either
    ('status = "в работе"', ['AURORA-1', 'AURORA-2']),
    ('status = "В РАБОТЕ"', ['AURORA-1', 'AURORA-2']),
    ('status IN (готово)', ['AURORA-3', 'AURORA-7']),
    # Unicode casefold, not lower(): ß is ss
    ('status = STRASSE', ['AURORA-4']),
    ('status = "нет такого"', []),
    # != and NOT IN: never the issues without a value ('' or none), as in Jira
    ('status != "В Работе"', ['AURORA-3', 'AURORA-4', 'AURORA-7']),
    ('status NOT IN (готово, straße)', ['AURORA-1', 'AURORA-2']),
    ('status NOT IN ("нет такого")', ['AURORA-1', 'AURORA-2', 'AURORA-3', 'AURORA-4', 'AURORA-7']),
    # EMPTY in a list: '' and none both count as empty
    ('status IN (EMPTY, готово)', ['AURORA-3', 'AURORA-5', 'AURORA-6', 'AURORA-7']),
    ('status NOT IN (EMPTY, готово)', ['AURORA-1', 'AURORA-2', 'AURORA-4']),
    ('status IS EMPTY', ['AURORA-5', 'AURORA-6']),
    ('assignee = IVANOV', ['AURORA-1', 'AURORA-2']),
    ('assignee IN (petrov) AND status IS NOT EMPTY', ['AURORA-3']),
    ('assignee NOT IN (ivanov, petrov)', ['AURORA-7']),
    ('issuetype = "ЗАДАЧА" AND priority = высокий', ['AURORA-1', 'AURORA-2', 'AURORA-7']),
    ('priority IN (EMPTY)', ['AURORA-4', 'AURORA-5']),
    # NOT is the negative operator: no issue without a status (as != above)
    ('NOT status = "в работе"', ['AURORA-3', 'AURORA-4', 'AURORA-7']),
])
def test_choice_comparisons_are_case_insensitive_over_every_spelling(spelled, query, expected):
    assert found(spelled, query) == expected
    assert reads.issue_count(spelled, jql=query) == {'count': len(expected)}


@pytest.mark.parametrize('field, column', [('status', 'status'), ('assignee', 'assignee'),
                                           ('issuetype', 'issue_type')])
@pytest.mark.parametrize('descending', [False, True])
def test_order_by_a_choice_sorts_spellings_together_and_empty_last(spelled, field, column,
                                                                  descending):
    values = stored(column)
    filled = sorted((key for key in ALL if values[key]),
                    key=lambda key: (values[key].casefold(), int(key.split('-')[1])))
    if descending:  # each folded value reversed, ties still by key ascending
        filled = sorted(filled, key=lambda key: (values[key].casefold(), -int(key.split('-')[1])),
                        reverse=True)
    expected = filled + [key for key in ALL if not values[key]]
    way = ' DESC' if descending else ''
    assert found(spelled, f'ORDER BY {field}{way}') == expected
    pages, cursor = [], None
    while True:  # the cursor holds the folded value: pages join to the whole order
        page = reads.issues(spelled, jql=f'ORDER BY {field}{way}', limit=2, cursor=cursor)
        pages += [item['key'] for item in page['items']]
        if not (cursor := page['next_cursor']):
            break
    assert pages == expected


def test_order_by_priority_follows_the_map_whatever_the_case(spelled):
    # «высокий» and «Высокий» are the map's first entry (the most important: first with DESC),
    # «Низкий» the second; empty last both ways
    assert found(spelled, 'ORDER BY priority DESC') == [
        'AURORA-1', 'AURORA-2', 'AURORA-7', 'AURORA-3', 'AURORA-6', 'AURORA-4', 'AURORA-5']
    assert found(spelled, 'ORDER BY priority') == [
        'AURORA-3', 'AURORA-6', 'AURORA-1', 'AURORA-2', 'AURORA-7', 'AURORA-4', 'AURORA-5']


def test_facets_keep_each_spelling_and_count_empty_once(spelled):
    facets = reads.issue_facets(spelled)
    # by count, then the value as text (code points: Latin before Cyrillic, capitals first)
    assert facets['status'] == [
        {'value': None, 'count': 2}, {'value': 'Straße', 'count': 1},
        {'value': 'В работе', 'count': 1}, {'value': 'ГОТОВО', 'count': 1},
        {'value': 'Готово', 'count': 1}, {'value': 'в работе', 'count': 1}]
    assert {entry['value']: entry['count'] for entry in facets['assignee']} == {
        'Ivanov': 1, 'ivanov': 1, 'petrov': 1, 'Petrov': 1, 'sidorova': 1, None: 2}
    narrowed = reads.issue_facets(spelled, jql='status = "в работе"')
    assert narrowed['status'] == [{'value': 'В работе', 'count': 1}, {'value': 'в работе', 'count': 1}]
    assert narrowed['labels'] == [{'value': 'AWPCA', 'count': 2}]


def test_facets_of_a_slice_count_its_members_only(spelled):
    # the AWPCA slice: the issues labelled AWPCA (1, 2, 4, 6)
    facets = reads.issue_facets(spelled, project='AWPCA')
    assert {entry['value']: entry['count'] for entry in facets['status']} == {
        'В работе': 1, 'в работе': 1, 'Straße': 1, None: 1}
    narrowed = reads.issue_facets(spelled, project='AWPCA', jql='status IN ("В РАБОТЕ", EMPTY)')
    assert {entry['value']: entry['count'] for entry in narrowed['assignee']} == {
        'Ivanov': 1, 'ivanov': 1, 'Petrov': 1}
    assert reads.issue_count(spelled, project='AWPCA', jql='status = "в работе"') == {'count': 2}


def test_facets_and_counts_of_a_jira_project_are_its_issues_only(spelled, claimed_refresh):
    """``project = AURORA`` (the team's own project: read from the facet index whole) and
    ``project = ORBIT`` (a neighbour's: its key range) count their own issues, in any case."""
    aurora = reads.issue_facets(spelled)
    mirror.ingest_state(spelled, 'jira', claimed_refresh(spelled), [
        {'key': 'ORBIT-1', 'summary': 'соседняя', 'status': 'Открыта', 'assignee': 'orlov',
         'issue_type': 'Задача', 'priority': 'Высокий', 'labels': ['AWPCA'], 'neighbor': True,
         'created': '2026-11-01T00:00:00Z', 'updated': '2026-11-02T00:00:00Z'}])
    assert reads.issue_facets(spelled, jql='project = AURORA') == aurora
    assert reads.issue_facets(spelled, jql='project = aurora') == aurora
    assert reads.issue_facets(spelled, jql='project IN (AURORA, ORBIT)') == \
        reads.issue_facets(spelled)
    orbit = reads.issue_facets(spelled, jql='project = ORBIT')
    assert orbit['status'] == [{'value': 'Открыта', 'count': 1}]
    assert orbit['labels'] == [{'value': 'AWPCA', 'count': 1}]
    assert reads.issue_facets(spelled, jql='project != AURORA') == orbit
    assert [reads.issue_count(spelled, jql=query)['count'] for query in (
        'project = AURORA', 'project = ORBIT', 'project != ORBIT', 'project IN (AURORA, ORBIT)',
        'project = AURORA AND status = "в работе"')] == [7, 1, 7, 8, 2]


@pytest.mark.parametrize('jql', [
    'status = "в работе"',
    'status IN ("в работе", готово) AND assignee = ivanov ORDER BY updated DESC',
    'issuetype = задача ORDER BY created DESC'])
def test_a_page_walks_its_order_and_a_count_takes_the_choice_index(spelled, jql):
    """A page stops after its rows on the walk of its order (natural key, updated, created): the
    choice index would collect every issue of the choice and sort them all (200,000 issues:
    95-401 ms against 4-7 ms CPU); a count has no order and takes the choice index."""
    statements: list[str] = []
    connection = spelled.db.connection()
    connection.set_trace_callback(statements.append)
    try:
        reads.issues(spelled, jql=jql, limit=2)
        page = [sql for sql in statements if 'LIMIT' in sql.upper()][-1]
        statements.clear()
        reads.issue_count(spelled, jql=jql)
        count = [sql for sql in statements if 'count(' in sql.lower()][-1]
    finally:
        connection.set_trace_callback(None)

    def plan(sql: str) -> str:
        return ' | '.join(row[-1] for row in connection.execute('EXPLAIN QUERY PLAN ' + sql))

    assert 'issue_facet' not in plan(page) and 'issue_choice' not in plan(page), plan(page)
    assert 'issue_facet' in plan(count) or 'issue_choice' in plan(count), plan(count)
