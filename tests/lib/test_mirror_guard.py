"""The mirror guard of interface processes (contract §14): with ``open_hub(guard_mirror=True)``
every connection of the hub, in every thread, refuses writes to the mirror tables, while notes,
the queue and settings stay writable; migrations before the guard still rewrite mirror rows."""
from __future__ import annotations

import sqlite3
import threading

import pytest
from peewee import DatabaseError

from hublib import models, notes, open_hub, queue
from hublib.db import MIRROR_GUARD_TABLES
from tests.support.legacy import create_legacy_database

# One write per guarded table, each valid without the guard (the last test proves it).
WRITES = {
    'issue': "INSERT INTO issue (key, labels) VALUES ('AURORA-7', '[]')",
    'issue_link': "INSERT INTO issue_link VALUES ('AURORA-7', 'AURORA-8', 'Blocks')",
    'issue_comment': "INSERT INTO issue_comment (key, comment_id) VALUES ('AURORA-7', '1')",
    'issue_attachment': "INSERT INTO issue_attachment (attachment_id, key) "
                        "VALUES ('9', 'AURORA-7')",
    'issue_sprint': "INSERT INTO issue_sprint VALUES ('AURORA-7', 101)",
    'issue_change': "INSERT INTO issue_change (history_id, seq, key, fetched_at) "
                    "VALUES ('1', 0, 'AURORA-7', 'x')",
    'jira_board': 'INSERT INTO jira_board (board_id) VALUES (4216)',
    'jira_sprint': 'INSERT INTO jira_sprint (sprint_id) VALUES (101)',
    'attachment_file': "INSERT INTO attachment_file VALUES ('9', 'abc', 1, 'x')",
    'sync_run': "INSERT INTO sync_run (started_at, kind) VALUES ('x', 'keys')",
    # derived from the mirror
    'issue_member': "INSERT INTO issue_member VALUES ('AWPCA', 'AURORA-7', 'x', 0)",
    'slice_count': "INSERT INTO slice_count VALUES ('NEWLABEL', 1, 0)",
    # the row the issue_member insert above counted (its trigger), written again
    'slice_facet': "INSERT OR REPLACE INTO slice_facet VALUES ('AWPCA', '', '', '', '', '[]', 1)",
    'issue_search': "INSERT INTO issue_search (key) VALUES ('AURORA-7')",
    'refresh_written': "INSERT INTO refresh_written VALUES (1, 'AURORA-7')",
    'issue_fts': "INSERT INTO issue_fts (summary) VALUES ('текст')",
}


def test_guarded_tables_are_the_contract_list_and_what_is_derived_from_it():
    assert MIRROR_GUARD_TABLES == set(models.GUARDED_TABLES)
    assert MIRROR_GUARD_TABLES >= {  # contract §14
        'issue', 'issue_link', 'issue_comment', 'issue_attachment', 'issue_sprint', 'issue_change',
        'jira_board', 'jira_sprint', 'attachment_file', 'sync_run'}
    assert not MIRROR_GUARD_TABLES & {'issue_note', 'batch', 'command', 'setting', 'project'}
    assert set(WRITES) == MIRROR_GUARD_TABLES


@pytest.fixture
def guarded(data_dir, clock):
    hub = open_hub(data_dir, clock=clock, guard_mirror=True)
    yield hub
    hub.close()


@pytest.mark.parametrize('table', sorted(MIRROR_GUARD_TABLES))
def test_guard_refuses_insert_update_delete(guarded, table):
    column = guarded.db.execute_sql(f'SELECT * FROM {table} LIMIT 0').description[0][0]
    for sql in (WRITES[table], f'UPDATE {table} SET {column} = {column}', f'DELETE FROM {table}'):
        with pytest.raises(DatabaseError, match='not authorized'):
            with guarded.write():
                guarded.db.execute_sql(sql)
    assert guarded.db.execute_sql(f'SELECT count(*) FROM {table}').fetchone() == (0,)


def test_guard_leaves_notes_queue_and_settings_writable(guarded):
    notes.put_note(guarded, 'AURORA-1', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    batch = queue.create_batch(guarded, title='Комментарий', author='ivanov', commands=[
        {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'текст'}}])
    assert queue.cancel_batch(guarded, batch['id'])['status'] == 'cancelled'
    with guarded.write():
        guarded.db.execute_sql("UPDATE setting SET value = value WHERE key = 'pacing'")
    assert guarded.db.execute_sql('SELECT count(*) FROM issue').fetchone() == (0,)  # reads work


def test_every_worker_thread_connection_is_guarded(guarded):
    outcomes, connections = [], []

    def worker():
        connection = guarded.db.connection()  # this thread's own connection, opened now
        connections.append(connection)
        try:
            with guarded.write():
                guarded.db.execute_sql(WRITES['issue'])
            outcomes.append('written')
        except DatabaseError as exc:
            outcomes.append(str(exc))
        finally:
            guarded.close()

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert outcomes == ['not authorized'] * 3
    assert len({id(connection) for connection in connections}) == 3  # never shared
    assert guarded.db.connection() not in connections


def test_guard_is_installed_after_a_migration_that_rewrites_mirror_rows(data_dir, clock):
    data_dir.mkdir(parents=True)
    create_legacy_database(data_dir / 'hub.sqlite', 3, {
        'base_jql': 'project = AURORA AND labels = AWPCA', 'project_key': 'AURORA'})
    conn = sqlite3.connect(data_dir / 'hub.sqlite')
    conn.execute("INSERT INTO sync_run (started_at, kind, query) VALUES "
                 "('2026-10-01T00:00:00+00:00', 'jql', 'project = AURORA AND labels = AWPCA')")
    conn.commit()
    conn.close()
    hub = open_hub(data_dir, clock=clock, guard_mirror=True)
    try:
        assert hub.db.execute_sql('SELECT query FROM sync_run').fetchone() == (
            'project = AURORA AND labels in ("AWPCA")',)
        with pytest.raises(DatabaseError, match='not authorized'):
            hub.db.execute_sql(WRITES['sync_run'])
    finally:
        hub.close()


def test_without_the_guard_the_same_writes_succeed(hub):
    with hub.write():
        for sql in WRITES.values():
            hub.db.execute_sql(sql)
    for table in WRITES:
        assert hub.db.execute_sql(f'SELECT count(*) FROM {table}').fetchone() == (1,)
