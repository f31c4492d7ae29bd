"""Slice facet counts kept by triggers (hublib.facet_counts): after every kind of write they
equal a GROUP BY of the slice from scratch, and the facets of a whole slice read them."""
from __future__ import annotations

import random
import sqlite3

import pytest

from hublib import facet_counts, open_hub, projects, reads, slices
from hublib import startup
from hublib.models import SCHEMA_VERSION
from hublib.startup import rebuild_derived
from tests.support.legacy import create_legacy_database

SCRATCH = ("SELECT m.label, coalesce(i.status, ''), coalesce(i.assignee, ''), "
           "coalesce(i.issue_type, ''), coalesce(i.priority, ''), coalesce(i.labels, ''), count(*) "
           'FROM issue_member m JOIN issue i ON i.key = m.key GROUP BY 1, 2, 3, 4, 5, 6')
KEPT = 'SELECT label, status, assignee, issue_type, priority, labels, count FROM slice_facet'


def kept(hub) -> set[tuple]:
    return set(hub.db.execute_sql(KEPT).fetchall())


def scratch(hub) -> set[tuple]:
    return set(hub.db.execute_sql(SCRATCH).fetchall())


def assert_counts_right(hub) -> None:
    counted = kept(hub)
    assert counted == scratch(hub)
    assert all(row[-1] > 0 for row in counted)  # a combination that left has no row


def issue(key, labels=(), **fields):
    return {'key': key, 'labels': list(labels), **fields}


def test_counts_follow_state_ingest_of_random_pages(two, ingest):
    """New issues, changed choices (to and from empty), labels moving issues between slices,
    links and epics making neighbours: after each page the kept counts are the GROUP BY."""
    rng = random.Random(20261202)
    keys = [f'AURORA-{n}' for n in range(1, 31)]
    for _ in range(20):
        page = []
        for key in rng.sample(keys, 6):
            fields = {name: rng.choice(values) for name, values in (
                ('status', ['Открыта', 'открыта', 'Готово', None, '']),
                ('assignee', ['ivanov', 'Ivanov', None]),
                ('issue_type', ['Ошибка', 'Задача']), ('priority', ['High', None]))}
            if rng.random() < 0.5:
                fields['epic_key'] = rng.choice(keys)
            if rng.random() < 0.6:
                fields['links'] = [{'type': 'Blocks', 'direction': rng.choice(['outward', 'inward']),
                                    'key': rng.choice(keys)} for _ in range(rng.randint(0, 2))]
            page.append(issue(key, rng.sample(['P', 'Q', 'срочно'], rng.randint(0, 2)), **fields))
        ingest(two, *page)
        assert_counts_right(two)
    assert {row[0] for row in kept(two)} == {'P', 'Q'}


def test_a_key_sent_twice_in_a_page_is_counted_once(two, ingest):
    ingest(two, issue('AURORA-1', ['P'], status='Открыта'))
    ingest(two, issue('AURORA-1', ['P'], status='Готово'), issue('AURORA-1', ['P'], status='Снято'))
    assert_counts_right(two)
    assert {row[1] for row in kept(two)} == {'Снято'}


def test_counts_follow_slice_rebuild_project_creation_and_membership_writes(two, ingest):
    ingest(two, issue('AURORA-1', ['P', 'R'], status='Открыта', links=[
        {'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-2'}]),
        issue('AURORA-2', ['Q'], status='Готово', assignee='ivanov'), issue('AURORA-3', ['R']))
    projects.create_project(two, 'R', 'R')  # a new project's slice, built set-based
    assert_counts_right(two)
    with two.write():
        slices.build_slice(two, 'P')  # delete and insert every row of a slice
        # membership written by something else: the triggers on issue_member count it
        two.db.execute_sql("UPDATE issue_member SET key = 'AURORA-3' "
                           "WHERE label = 'Q' AND key = 'AURORA-2'")
        two.db.execute_sql("INSERT OR REPLACE INTO issue_member VALUES ('Q', 'AURORA-1', 'x', 0)")
    assert_counts_right(two)
    with two.write():
        two.db.execute_sql("DELETE FROM issue_member WHERE label = 'R'")  # as a project deletion
    assert_counts_right(two)
    with two.write():
        slices.build_slice(two, 'R')
    assert_counts_right(two)
    assert kept(two)


def test_issue_writes_other_than_ingest_are_counted_by_a_rebuild(two, ingest):
    """State ingest is the one writer of an issue's columns in the hub; a bulk load or a
    migration is followed by a rebuild (rebuild_derived, the open after a migration)."""
    ingest(two, issue('AURORA-1', ['P'], status='Открыта'), issue('AURORA-2', ['P', 'Q']))
    with two.write():
        two.db.execute_sql("UPDATE issue SET status = 'В работе' WHERE key = 'AURORA-1'")
        two.db.execute_sql("DELETE FROM issue WHERE key = 'AURORA-2'")
    assert kept(two) != scratch(two)
    rebuild_derived(two)
    assert_counts_right(two)


def test_counts_of_a_migrated_file_and_of_lost_triggers_are_built_at_open(data_dir, clock):
    data_dir.mkdir(parents=True, exist_ok=True)
    db_path = data_dir / 'hub.sqlite'
    create_legacy_database(db_path, 1, {'project_key': 'AURORA'})
    conn = sqlite3.connect(db_path)
    conn.executemany('INSERT INTO issue (key, summary, status, labels, fetched_at) VALUES (?, ?, ?, ?, ?)',
                     [('AURORA-1', 'a', 'В работе', '["AWPCA"]', '2026-10-01T00:00:00+00:00'),
                      ('AURORA-2', 'b', 'Готово', '["AWPCA", "x"]', '2026-10-01T00:00:00+00:00'),
                      ('AURORA-3', 'c', None, '["AWPCA"]', '2026-10-01T00:00:00+00:00')])
    conn.commit()
    conn.close()
    hub = open_hub(data_dir, clock=clock)
    try:
        if not any(p['label'] == 'AWPCA' for p in projects.projects(hub)):
            projects.create_project(hub, 'AWPCA', 'АРМ')
        assert_counts_right(hub)
        assert sum(row[-1] for row in kept(hub)) == 3
        # a table rebuilt without its triggers (as a migration's copy-and-rename does): the next
        # open puts them back and counts again
        with hub.write():
            for name in facet_counts.TRIGGERS:
                hub.db.execute_sql(f'DROP TRIGGER {name}')
            hub.db.execute_sql("UPDATE issue SET status = 'Снято' WHERE key = 'AURORA-1'")
    finally:
        hub.close()
    hub = open_hub(data_dir, clock=clock)
    try:
        assert_counts_right(hub)
        assert ('AWPCA', 'Снято', '', '', '', '["AWPCA"]', 1) in kept(hub)
        assert set(facet_counts.TRIGGERS) <= {name for (name,) in hub.db.execute_sql(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    finally:
        hub.close()


def test_counts_are_built_again_at_the_open_after_a_migration(data_dir, clock, monkeypatch):
    hub = open_hub(data_dir, clock=clock)
    try:
        projects.create_project(hub, 'AWPCA', 'АРМ')
        with hub.write():
            hub.db.execute_sql("INSERT INTO issue (key, status, labels) VALUES "
                               "('AURORA-1', 'Открыта', '[\"AWPCA\"]')")
            slices.build_slice(hub, 'AWPCA')
            hub.db.execute_sql("UPDATE issue SET status = 'Готово'")  # as a migration step would
        assert kept(hub) != scratch(hub)
    finally:
        hub.close()
    monkeypatch.setattr(startup, 'prepare_schema', lambda hub: (SCHEMA_VERSION - 1, SCHEMA_VERSION))
    hub = open_hub(data_dir, clock=clock)
    try:
        assert_counts_right(hub)
    finally:
        hub.close()


def grouped(hub, label: str) -> dict:
    """The facets of a whole slice as the grouped scan computes them (a filter that is always
    true keeps issue_facets off the kept counts)."""
    return reads.issue_facets(hub, project=label, jql='summary IS EMPTY OR summary IS NOT EMPTY')


def test_facets_of_a_whole_slice_read_the_counts_and_equal_the_scan(two, ingest):
    ingest(two, issue('AURORA-1', ['P', 'a'], status='Открыта', assignee='ivanov'),
           issue('AURORA-2', ['P'], status='открыта', priority=''),
           issue('AURORA-3', ['P', 'a', 'b'], status=None, issue_type='Ошибка'),
           issue('AURORA-4', ['Q'], status='Готово'))
    facets = reads.issue_facets(two, project='P')
    assert facets == grouped(two, 'P')
    assert facets['status'] == [{'value': 'Открыта', 'count': 1}, {'value': 'открыта', 'count': 1},
                                {'value': None, 'count': 1}]
    assert facets['labels'] == [{'value': 'P', 'count': 3}, {'value': 'a', 'count': 2},
                                {'value': 'b', 'count': 1}]
    # the counts answer: changed behind the scan's back, the answer follows them
    with two.write():
        two.db.execute_sql("UPDATE slice_facet SET count = count + 5 WHERE label = 'P' "
                           "AND status = 'Открыта'")
    assert reads.issue_facets(two, project='P')['status'][0] == {'value': 'Открыта', 'count': 6}


@pytest.mark.parametrize('jql', ['text ~ отчёт', 'text ~ отчёт AND status = открыта',
                                 'key IN (AURORA-1, AURORA-3)'])
def test_facets_of_found_keys_read_the_key_index_and_count_right(two, ingest, jql):
    """A list of keys (``~``, key IN …) finds the issues by key: their facet columns come from
    the covering key index (not the wide rows), and the counts are those of the matches."""
    ingest(two, issue('AURORA-1', ['P'], summary='отчёт', status='Открыта', assignee='ivanov'),
           issue('AURORA-2', [], summary='отчёт', status='открыта'),
           issue('AURORA-3', ['P', 'a'], summary='отчёт и план', status=None),
           issue('AURORA-4', ['Q'], summary='план', status='Готово'))
    statements: list[str] = []
    connection = two.db.connection()
    connection.set_trace_callback(statements.append)
    try:
        facets = reads.issue_facets(two, jql=jql)
    finally:
        connection.set_trace_callback(None)
    grouped_sql = [sql for sql in statements if 'GROUP BY' in sql][-1]
    plan = ' | '.join(row[-1] for row in connection.execute('EXPLAIN QUERY PLAN ' + grouped_sql))
    assert 'COVERING INDEX issue_key_facet' in plan, plan
    keys = [item['key'] for item in reads.issues(two, jql=jql, limit=100)['items']]
    statuses: dict = {}
    for key in keys:
        status = reads.issue_card(two, key)['status'] or None
        statuses[status] = statuses.get(status, 0) + 1
    assert {entry['value']: entry['count'] for entry in facets['status']} == statuses
    assert sum(entry['count'] for entry in facets['assignee']) == len(keys) > 0
