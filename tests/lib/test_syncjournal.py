"""The sync journal's lifecycle (hublib.syncjournal), called by the queue's claim and report."""
from __future__ import annotations

import json

import pytest

from hublib import mirror, projects, settings, syncjournal

BASE_JQL = 'project = AURORA AND labels in ("AWPCA")'


@pytest.fixture
def aurora(hub):
    settings.update_settings(hub, {'project_key': 'AURORA'})
    projects.create_project(hub, 'AWPCA', 'АРМ КА')
    return hub


def command(hub, params: dict) -> int:
    with hub.write():
        batch = hub.db.execute_sql("INSERT INTO batch (title, created_at) VALUES ('x', ?)",
                                   (hub.now(),)).lastrowid
        return hub.db.execute_sql(
            "INSERT INTO command (batch_id, seq, type, params, status, deliveries) "
            "VALUES (?, 1, 'refresh', ?, 'claimed', 1)", (batch, json.dumps(params))).lastrowid


def run(hub, command_id):
    row = hub.db.execute_sql(
        'SELECT started_at, finished_at, kind, query, issues_count, links_count, jira_calls, '
        'rate_limited, history_at FROM sync_run WHERE command_id = ?', (command_id,)).fetchall()
    assert len(row) == 1
    return dict(zip(('started_at', 'finished_at', 'kind', 'query', 'issues_count', 'links_count',
                     'jira_calls', 'rate_limited', 'history_at'), row[0]))


@pytest.mark.parametrize('params, kind, query', [
    ({'jql': BASE_JQL}, 'jql', BASE_JQL),
    ({'keys': ['AURORA-1', 'AURORA-20']}, 'keys', 'AURORA-1,AURORA-20'),
])
def test_open_run(aurora, params, kind, query):
    command_id = command(aurora, params)
    syncjournal.open_run(aurora, command_id, params)
    syncjournal.open_run(aurora, command_id, params)  # idempotent
    assert run(aurora, command_id) == {
        'started_at': '2026-11-30T10:00:00+00:00', 'finished_at': None, 'kind': kind,
        'query': query, 'issues_count': 0, 'links_count': 0, 'jira_calls': 0, 'rate_limited': 0,
        'history_at': None}


def test_restart_run_resets_counters_keeps_start(aurora, clock):
    command_id = command(aurora, {'jql': BASE_JQL})
    syncjournal.open_run(aurora, command_id, {'jql': BASE_JQL})
    mirror.ingest_state(aurora, 'jira', command_id, [
        {'key': 'AURORA-1', 'links': [{'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-2'}]}])
    assert (run(aurora, command_id)['issues_count'], run(aurora, command_id)['links_count']) == (1, 1)
    clock.advance(minutes=3)
    syncjournal.restart_run(aurora, command_id, {'jql': BASE_JQL})
    got = run(aurora, command_id)
    assert (got['issues_count'], got['links_count'], got['started_at']) == (
        0, 0, '2026-11-30T10:00:00+00:00')


def test_restart_run_creates_a_missing_run(aurora):
    command_id = command(aurora, {'keys': ['AURORA-1']})
    syncjournal.restart_run(aurora, command_id, {'keys': ['AURORA-1']})
    assert run(aurora, command_id)['query'] == 'AURORA-1'


def test_close_run_nests_in_the_callers_transaction(aurora, clock):
    command_id = command(aurora, {'jql': BASE_JQL})
    syncjournal.open_run(aurora, command_id, {'jql': BASE_JQL})
    clock.advance(minutes=2)
    with aurora.write():
        aurora.db.execute_sql("UPDATE command SET status = 'done' WHERE id = ?", (command_id,))
        syncjournal.close_run(aurora, command_id, status='done', params={'jql': BASE_JQL},
                              result={'history': {'issues': 0, 'changes': 0, 'incomplete': []}},
                              jira_calls=7, rate_limited=2)
    got = run(aurora, command_id)
    assert (got['finished_at'], got['jira_calls'], got['rate_limited'], got['history_at']) == (
        '2026-11-30T10:02:00+00:00', 7, 2, '2026-11-30T10:02:00+00:00')


def test_close_run_rolls_back_with_the_caller(aurora):
    command_id = command(aurora, {'jql': BASE_JQL})
    syncjournal.open_run(aurora, command_id, {'jql': BASE_JQL})
    with pytest.raises(RuntimeError):
        with aurora.write():
            syncjournal.close_run(aurora, command_id, status='done', params={'jql': BASE_JQL},
                                  result=None, jira_calls=1, rate_limited=0)
            raise RuntimeError('report failed later')
    assert run(aurora, command_id)['finished_at'] is None


def test_confirmed_by_state_full_run_marks_neighbors_but_no_history_at(aurora, clock):
    first = command(aurora, {'jql': BASE_JQL})
    syncjournal.open_run(aurora, first, {'jql': BASE_JQL})
    mirror.ingest_state(aurora, 'jira', first, [{'key': 'AURORA-1'}, {'key': 'AURORA-2'}])
    clock.advance(minutes=1)
    second = command(aurora, {'jql': BASE_JQL})
    syncjournal.open_run(aurora, second, {'jql': BASE_JQL})
    mirror.ingest_state(aurora, 'jira', second, [{'key': 'AURORA-2'}])
    syncjournal.close_run(aurora, second, status='confirmed_by_state', params={'jql': BASE_JQL},
                          result={'history': {}}, jira_calls=1, rate_limited=0)
    assert aurora.db.execute_sql('SELECT key, neighbor FROM issue ORDER BY key').fetchall() == [
        ('AURORA-1', 1), ('AURORA-2', 0)]
    assert run(aurora, second)['history_at'] is None


def test_full_run_is_judged_by_base_jql_at_report_time(aurora, clock):
    first = command(aurora, {'jql': BASE_JQL})
    syncjournal.open_run(aurora, first, {'jql': BASE_JQL})
    mirror.ingest_state(aurora, 'jira', first, [{'key': 'AURORA-1'}])
    clock.advance(minutes=1)
    second = command(aurora, {'jql': BASE_JQL})
    syncjournal.open_run(aurora, second, {'jql': BASE_JQL})
    mirror.ingest_state(aurora, 'jira', second, [{'key': 'AURORA-2'}])
    projects.create_project(aurora, 'STOCKS', 'Запасы')  # base JQL changed meanwhile
    syncjournal.close_run(aurora, second, status='done', params={'jql': BASE_JQL},
                          result={'history': {}}, jira_calls=1, rate_limited=0)
    assert aurora.db.execute_sql('SELECT sum(neighbor) FROM issue').fetchone() == (0,)
    assert run(aurora, second)['history_at'] is None


def test_latest_full_run_started(aurora, clock):
    assert syncjournal.latest_full_run_started(aurora, BASE_JQL) is None
    full = command(aurora, {'jql': BASE_JQL})
    syncjournal.open_run(aurora, full, {'jql': BASE_JQL})
    clock.advance(minutes=30)
    keys = command(aurora, {'keys': ['AURORA-1']})
    syncjournal.open_run(aurora, keys, {'keys': ['AURORA-1']})
    other = command(aurora, {'jql': 'project = AURORA'})
    syncjournal.open_run(aurora, other, {'jql': 'project = AURORA'})
    assert syncjournal.latest_full_run_started(aurora, BASE_JQL) == '2026-11-30T10:00:00+00:00'


def finish(hub, clock, params: dict, status: str) -> int:
    """A refresh that ran and ended with ``status`` (the queue's report sets the command's)."""
    command_id = command(hub, params)
    syncjournal.open_run(hub, command_id, params)
    clock.advance(minutes=1)
    with hub.write():
        syncjournal.close_run(hub, command_id, status=status, params=params, result={},
                              jira_calls=1, rate_limited=0)
        hub.db.execute_sql('UPDATE command SET status = ? WHERE id = ?', (status, command_id))
    return command_id


def test_mirror_as_of_is_the_end_of_the_newest_successful_refresh(aurora, clock):
    assert syncjournal.mirror_as_of(aurora) is None
    finish(aurora, clock, {'jql': BASE_JQL}, 'done')
    assert syncjournal.mirror_as_of(aurora) == '2026-11-30T10:01:00+00:00'
    finish(aurora, clock, {'keys': ['AURORA-1']}, 'failed')  # says nothing about the mirror
    syncjournal.open_run(aurora, command(aurora, {'jql': BASE_JQL}), {'jql': BASE_JQL})  # running
    assert syncjournal.mirror_as_of(aurora) == '2026-11-30T10:01:00+00:00'
    finish(aurora, clock, {'keys': ['AURORA-1']}, 'confirmed_by_state')
    assert syncjournal.mirror_as_of(aurora) == '2026-11-30T10:03:00+00:00'
