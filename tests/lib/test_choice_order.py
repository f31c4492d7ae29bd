"""ORDER BY a choice (status, priority, assignee, issue type) walks the choice's values in rank
order (reads._by_choice): the same pages and cursors as the sort of every issue it replaces."""
from __future__ import annotations

import random

import pytest

from hublib import mirror, projects, reads, settings
from hublib.jql import sql as jql_sql
from hublib.slices import natural_key

STATUSES = ['Открыта', 'открыта', 'Готово', 'В работе', 'в работе', "Don't", "DON'T", None, '']
PEOPLE = ['ivanov', 'Ivanov', 'petrov', None, '']
TYPES = ['Ошибка', 'Задача', 'задача', None]
PRIORITIES = ['High', 'high', 'Low', 'Medium', 'Неизвестный', None, '']
SORTED = '(summary IS EMPTY OR summary IS NOT EMPTY)'  # a filter: the old path sorts every issue


@pytest.fixture
def mirrored(hub, claimed_refresh):
    settings.update_settings(hub, {'project_key': 'AURORA',
                                   'priority_map': {'1': 'Low', '2': 'Medium', '3': 'High'}})
    projects.create_project(hub, 'P', 'P')
    rng = random.Random(20261202)
    issues = [{'key': f'{project}-{n}', 'summary': f'задача {n}',
               'labels': ['P'] if rng.random() < 0.8 else [],
               'status': rng.choice(STATUSES), 'assignee': rng.choice(PEOPLE),
               'issue_type': rng.choice(TYPES), 'priority': rng.choice(PRIORITIES)}
              for project in ('AURORA', 'AB') for n in range(1, 31)]
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), issues)
    return hub


def walk(hub, jql: str, project: str | None = None, limit: int = 4) -> tuple[list, list]:
    keys, cursors, cursor = [], [], None
    while True:
        found = reads.issues(hub, jql=jql, project=project, limit=limit, cursor=cursor)
        keys += [item['key'] for item in found['items']]
        cursor = found['next_cursor']
        if cursor is None:
            return keys, cursors
        cursors.append(cursor)


def expected(hub, field: str, column: str, descending: bool, project: str | None) -> list[str]:
    """Casefold rank (priority: the map's first value ranks highest, a priority not in the map
    below every named one, by name), empty last both ways, ties by natural key ascending."""
    rows = hub.db.execute_sql(f'SELECT key, {column}, labels FROM issue').fetchall()
    if project is not None:
        rows = [row for row in rows if f'"{project}"' in row[2]]
    names = ['low', 'medium', 'high']

    def rank(value):
        folded = value.casefold()
        if field == 'priority':
            return (len(names) - names.index(folded) if folded in names else 0, folded)
        return (folded,)

    filled = sorted((row for row in rows if row[1]), key=lambda row: natural_key(row[0]))
    filled.sort(key=lambda row: rank(row[1])[1:])  # priorities of one rank by name A→Z
    filled.sort(key=lambda row: rank(row[1])[:1], reverse=descending)
    empty = sorted((row for row in rows if not row[1]), key=lambda row: natural_key(row[0]))
    return [row[0] for row in filled + empty]


@pytest.mark.parametrize('few', [32, 0])
@pytest.mark.parametrize('project', [None, 'P'])
@pytest.mark.parametrize('way', ['ASC', 'DESC'])
@pytest.mark.parametrize('field, column', [('status', 'status'), ('priority', 'priority'),
                                           ('assignee', 'assignee'), ('issuetype', 'issue_type')])
def test_a_choice_order_walks_values_with_the_sorts_pages_and_cursors(mirrored, monkeypatch, few,
                                                                      field, column, way, project):
    """Pages of 4 across value boundaries (mixed-case spellings of one value, NULL and '' last
    both ways, a quote in a spelling): the same keys and cursors as the sort of every issue, and
    the expected order; with the few spellings' CASE of literals and with a casefold per row."""
    monkeypatch.setattr(jql_sql, 'FEW_SPELLINGS', few)
    query = f'ORDER BY {field} {way}'
    walked, walked_cursors = walk(mirrored, query, project)
    sorted_, sorted_cursors = walk(mirrored, f'{SORTED} {query}', project)
    assert walked == sorted_ == expected(mirrored, field, column, way == 'DESC', project)
    assert walked_cursors == sorted_cursors
    # a cursor of the sorted path continues the walk (and the other way round)
    middle = sorted_cursors[len(sorted_cursors) // 2]
    assert (reads.issues(mirrored, jql=query, project=project, limit=7, cursor=middle)['items']
            == reads.issues(mirrored, jql=f'{SORTED} {query}', project=project, limit=7,
                            cursor=middle)['items'])


def test_the_walk_reads_ranges_of_the_choice_index(mirrored):
    statements: list[str] = []
    connection = mirrored.db.connection()
    connection.set_trace_callback(statements.append)
    try:
        reads.issues(mirrored, jql='ORDER BY status DESC', limit=3)
    finally:
        connection.set_trace_callback(None)
    plans = [' | '.join(row[-1] for row in connection.execute('EXPLAIN QUERY PLAN ' + sql))
             for sql in statements if 'LIMIT' in sql.upper() and 'sort_key' in sql]
    assert plans and all('issue_choice_walk_status' in plan and 'TEMP B-TREE' not in plan
                         for plan in plans), plans


@pytest.mark.parametrize('cursor_values', [[5, None], ['zzz'], [None], [1.0, 'high']])
def test_a_cursor_with_values_no_issue_has_continues_in_order(mirrored, cursor_values):
    """A value gone between two pages (or a cursor made by hand): the walk starts at the first
    value after it, like the sort's keyset condition."""
    from hublib.paging import encode_cursor

    field = 'priority' if len(cursor_values) == 2 else 'status'
    cursor = encode_cursor([*cursor_values, 'AURORA-00000000000000000015AURORA-15'])
    query = f'ORDER BY {field} DESC'
    assert (reads.issues(mirrored, jql=query, limit=50, cursor=cursor)['items']
            == reads.issues(mirrored, jql=f'{SORTED} {query}', limit=50, cursor=cursor)['items'])
