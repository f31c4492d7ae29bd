"""Migrations v1 → v9 (spec «Схема базы хаба», «Проекты»; contract §5): data rules, backups, failure."""
from __future__ import annotations

import json
import logging
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hublib import MigrationError, mirror, open_hub, projects, queue, settings
from hublib.migrations import steps
from tests.support.legacy import create_legacy_database

OLD_JQL = 'project = AURORA AND labels = AWPCA'
NEW_JQL = 'project = AURORA AND labels in ("AWPCA")'
BACKUP_NAME = re.compile(r'^\d{8}-\d{6}-schema-v(\d+)\.sqlite$')


def legacy(data_dir: Path, version: int, settings_values: dict | None = None,
           rows: tuple[tuple[str, tuple], ...] = ()) -> Path:
    """A vN data directory built from the frozen DDL plus the scenario's rows (plain sqlite3)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    db_path = data_dir / 'hub.sqlite'
    create_legacy_database(db_path, version, settings_values)
    conn = sqlite3.connect(db_path)
    for sql, params in rows:
        conn.execute(sql, params)
    conn.commit()
    conn.close()
    return db_path


def query(db_path, sql, params=()) -> list[tuple]:
    conn = sqlite3.connect(db_path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def setting_of(db_path, key):
    rows = query(db_path, 'SELECT value FROM setting WHERE key = ?', (key,))
    return json.loads(rows[0][0]) if rows else None


def columns(db_path, table) -> list[str]:
    return [row[1] for row in query(db_path, f'PRAGMA table_info("{table}")')]


def tables(db_path) -> set[str]:
    return {row[0] for row in query(
        db_path, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}


def backups(data_dir: Path) -> list[Path]:
    return sorted((data_dir / 'backups').iterdir())


def only_backup(data_dir: Path, old_version: int) -> Path:
    [backup] = backups(data_dir)
    match = BACKUP_NAME.match(backup.name)
    assert match, backup.name
    assert int(match.group(1)) == old_version
    assert query(backup, 'PRAGMA integrity_check') == [('ok',)]
    assert setting_of(backup, 'schema_version') == old_version
    return backup


def migrate(data_dir, clock):
    hub = open_hub(data_dir, clock=clock)
    return hub


ISSUE = ('INSERT INTO issue (key, summary, status, labels, sprint, fetched_at) '
         'VALUES (?, ?, ?, ?, ?, ?)')
NOTE_V1 = ('INSERT INTO issue_note (key, work_kind, fact_status, done_text, updated_at, updated_by) '
           'VALUES (?, ?, ?, ?, ?, ?)')
NOTE = 'INSERT INTO issue_note (key, work_kind, done_text, updated_at, updated_by) VALUES (?, ?, ?, ?, ?)'
BATCH = 'INSERT INTO batch (id, title, author, created_at) VALUES (?, ?, ?, ?)'
COMMAND = 'INSERT INTO command (id, batch_id, seq, type, params, status) VALUES (?, ?, ?, ?, ?, ?)'
LINK = 'INSERT INTO issue_link (source_key, target_key, link_type) VALUES (?, ?, ?)'
RUN = ('INSERT INTO sync_run (id, started_at, finished_at, kind, query, issues_count, command_id) '
       'VALUES (?, ?, ?, ?, ?, ?, ?)')

ISSUES_AND_NOTES = (
    (ISSUE, ('AURORA-1', 'Первая', 'В работе', '["AWPCA"]', 'Спринт 2', '2026-10-01T00:00:00+00:00')),
    (ISSUE, ('AURORA-2', 'Вторая', 'Готово', '["AWPCA", "x"]', None, '2026-10-01T00:00:00+00:00')),
)


def test_scenario_migration_of_v1(data_dir, clock):
    db_path = legacy(data_dir, 1, {'project_key': 'AURORA'}, ISSUES_AND_NOTES + (
        (NOTE_V1, ('AURORA-1', 'Аналитика', 'В работе', 'сделано', '2026-10-02T00:00:00+00:00', 'ivanov')),
        (BATCH, (1, 'Пакет', 'ivanov', '2026-10-03T00:00:00+00:00')),
        (COMMAND, (1, 1, 1, 'add_comment', '{"key": "AURORA-1", "body": "x"}', 'done')),
        (COMMAND, (2, 1, 2, 'add_comment', '{"key": "AURORA-1", "body": "y"}', 'claimed')),
        (COMMAND, (3, 1, 3, 'add_comment', '{"key": "AURORA-1", "body": "z"}', 'queued')),
    ))
    migrate(data_dir, clock).close()
    backup = only_backup(data_dir, 1)
    assert 'deliveries' not in columns(backup, 'command')
    assert query(backup, 'SELECT count(*) FROM command') == [(3,)]
    assert query(db_path, 'SELECT id, status, deliveries FROM command ORDER BY id') == [
        (1, 'done', 0), (2, 'claimed', 1), (3, 'queued', 0)]
    assert query(db_path, 'SELECT count(*) FROM issue_comment') == [(0,)]
    assert query(db_path, 'SELECT key, summary, status, labels, sprint FROM issue ORDER BY key') == [
        ('AURORA-1', 'Первая', 'В работе', '["AWPCA"]', 'Спринт 2'),
        ('AURORA-2', 'Вторая', 'Готово', '["AWPCA", "x"]', None)]
    assert query(db_path, 'SELECT key, work_kind, done_text, updated_at, updated_by FROM issue_note') == [
        ('AURORA-1', 'Аналитика', 'сделано', '2026-10-02T00:00:00+00:00', 'ivanov')]
    assert query(db_path, 'SELECT id, title, author, created_at, project FROM batch') == [
        (1, 'Пакет', 'ivanov', '2026-10-03T00:00:00+00:00', None)]
    assert setting_of(db_path, 'schema_version') == 9


def test_scenario_migration_of_v2(data_dir, clock):
    db_path = legacy(data_dir, 2, {'project_key': 'AURORA'}, ISSUES_AND_NOTES + (
        (LINK, ('AURORA-1', 'AURORA-2', 'Blocks')),
        (LINK, ('AURORA-2', 'AURORA-7', 'Relates')),
        (NOTE_V1, ('AURORA-2', 'Разработка', None, 'готово', '2026-10-02T00:00:00+00:00', 'petrov')),
    ))
    migrate(data_dir, clock).close()
    only_backup(data_dir, 2)
    assert query(db_path, 'SELECT count(*) FROM issue_comment') == [(0,)]
    assert query(db_path, 'SELECT source_key, target_key, link_type FROM issue_link ORDER BY 1') == [
        ('AURORA-1', 'AURORA-2', 'Blocks'), ('AURORA-2', 'AURORA-7', 'Relates')]
    assert query(db_path, 'SELECT key FROM issue ORDER BY key') == [('AURORA-1',), ('AURORA-2',)]
    assert query(db_path, 'SELECT key, work_kind, done_text, updated_by FROM issue_note') == [
        ('AURORA-2', 'Разработка', 'готово', 'petrov')]
    assert setting_of(db_path, 'schema_version') == 9


def test_scenario_migration_of_v3(data_dir, clock):
    db_path = legacy(data_dir, 3, {'project_key': 'AURORA', 'base_jql': OLD_JQL, 'board_id': 4216},
                     ISSUES_AND_NOTES + (
        (NOTE_V1, ('AURORA-1', 'Аналитика', None, 'сделано', '2026-10-02T00:00:00+00:00', 'ivanov')),
        (BATCH, (1, 'Обновление', 'hub', '2026-10-03T00:00:00+00:00')),
        (COMMAND, (1, 1, 1, 'refresh', json.dumps({'jql': OLD_JQL}), 'done')),
        (RUN, (1, '2026-10-03T00:00:00+00:00', '2026-10-03T00:01:00+00:00', 'jql', OLD_JQL, 2, 1)),
        (RUN, (2, '2026-10-04T00:00:00+00:00', None, 'keys', 'AURORA-1', 1, None)),
    ))
    hub = migrate(data_dir, clock)
    only_backup(data_dir, 3)
    assert query(db_path, 'SELECT label, name, created_at FROM project') == [
        ('AWPCA', 'АРМ КА', '2026-11-30T10:00:00+00:00')]
    assert query(db_path, 'SELECT label, board_id, board_type FROM jira_project') == [
        ('AWPCA', 4216, None)]
    assert setting_of(db_path, 'base_jql') == OLD_JQL
    assert setting_of(db_path, 'board_id') == 4216
    assert query(db_path, 'SELECT id, query FROM sync_run ORDER BY id') == [
        (1, NEW_JQL), (2, 'AURORA-1')]
    # A finished refresh keeps its params: only queued/claimed ones are rewritten.
    assert query(db_path, 'SELECT params FROM command') == [(json.dumps({'jql': OLD_JQL}),)]
    assert query(db_path, 'SELECT key FROM issue ORDER BY key') == [('AURORA-1',), ('AURORA-2',)]
    assert query(db_path, 'SELECT key, work_kind FROM issue_note') == [('AURORA-1', 'Аналитика')]
    assert query(db_path, 'SELECT id, title, project FROM batch') == [(1, 'Обновление', None)]
    assert projects.base_jql(hub) == NEW_JQL
    assert settings.agent_settings(hub, 'jira')['board_id'] == 4216
    assert settings.client_settings(hub)['base_jql'] == NEW_JQL
    assert setting_of(db_path, 'schema_version') == 9
    hub.close()


def test_v3_without_project_key_takes_it_from_base_jql(data_dir, clock):
    """Decision of hublib: a v3 file without ``project_key`` gets the one its base_jql names."""
    db_path = legacy(data_dir, 3, {'base_jql': OLD_JQL},
                     ((RUN, (1, '2026-10-03T00:00:00+00:00', None, 'jql', OLD_JQL, 0, None)),))
    hub = migrate(data_dir, clock)
    assert setting_of(db_path, 'project_key') == 'AURORA'
    assert query(db_path, 'SELECT query FROM sync_run') == [(NEW_JQL,)]
    assert projects.base_jql(hub) == NEW_JQL
    hub.close()


def test_scenario_refresh_queued_during_migration(data_dir, clock):
    db_path = legacy(data_dir, 3, {'project_key': 'AURORA', 'base_jql': OLD_JQL}, ISSUES_AND_NOTES + (
        (BATCH, (1, 'Обновление', 'ivanov', '2026-10-03T00:00:00+00:00')),
        (COMMAND, (1, 1, 1, 'refresh', json.dumps({'jql': OLD_JQL}), 'queued')),
        (COMMAND, (2, 1, 2, 'refresh', json.dumps({'jql': OLD_JQL}), 'claimed')),
        (COMMAND, (3, 1, 3, 'refresh', json.dumps({'jql': 'project = AURORA AND key = AURORA-1'}),
                   'queued')),
        (COMMAND, (4, 1, 4, 'refresh', json.dumps({'keys': ['AURORA-1']}), 'queued')),
        (COMMAND, (5, 1, 5, 'refresh', json.dumps({'jql': OLD_JQL}), 'failed')),
    ))
    hub = migrate(data_dir, clock)
    params = {cid: json.loads(text) for cid, text in query(db_path, 'SELECT id, params FROM command')}
    assert params[1] == {'jql': NEW_JQL}
    assert params[2] == {'jql': NEW_JQL}
    assert params[3] == {'jql': 'project = AURORA AND key = AURORA-1'}
    assert params[4] == {'keys': ['AURORA-1']}
    assert params[5] == {'jql': OLD_JQL}
    # It counts as a full run: a full run is a refresh whose jql equals the base JQL (contract §9.4).
    assert params[1]['jql'] == projects.base_jql(hub)
    assert query(db_path, 'SELECT deliveries FROM command ORDER BY id') == [(0,), (0,), (0,), (0,), (0,)]
    assert query(db_path, 'SELECT key, neighbor FROM issue ORDER BY key') == [
        ('AURORA-1', 0), ('AURORA-2', 0)]
    # Run both rewritten refreshes through the queue. The one claimed before the migration lost
    # its delivery, so it is handed out first; then the queued one. Each writes one issue of the
    # mirror and leaves the other (written earlier) alone: as a full run it marks that one.
    try:
        for command_id, written, untouched in ((2, 'AURORA-1', 'AURORA-2'),
                                               (1, 'AURORA-2', 'AURORA-1')):
            clock.advance(minutes=10)
            delivered = queue.claim_command(hub, agent='jira', agent_version='15',
                                            settings_version=None)['command']
            assert (delivered['id'], delivered['type'], delivered['params'], delivered['deliveries']) \
                == (command_id, 'refresh', {'jql': NEW_JQL}, 1)
            started = hub.now()
            assert mirror.ingest_state(hub, 'jira', command_id, [
                {'key': written, 'summary': 'Из Jira', 'labels': ['AWPCA']}]) == {'issues': 1,
                                                                                  'links': 0, 'unparsed_times': 0}
            clock.advance(minutes=1)
            done = queue.report_command(
                hub, command_id, agent='jira', status='done',
                result={'history': {'issues': 1, 'changes': 0, 'incomplete': []}}, error=None,
                jira_calls=3, rate_limited=0)
            assert (done['status'], done['late']) == ('done', False)
            assert query(db_path, 'SELECT kind, query, started_at, finished_at, history_at, '
                                  'issues_count FROM sync_run WHERE command_id = ?', (command_id,)) == [
                ('jql', NEW_JQL, started, hub.now(), hub.now(), 1)]
            assert query(db_path, 'SELECT key, neighbor FROM issue ORDER BY key') == sorted(
                [(written, 0), (untouched, 1)])
    finally:
        hub.close()


def test_v3_labels_in_form_makes_two_projects_and_keeps_the_board_from_both(data_dir, clock, caplog):
    old = 'project = AURORA AND labels in (AWPCA, STOCKS_DRRK)'
    db_path = legacy(data_dir, 3, {'project_key': 'AURORA', 'base_jql': old, 'board_id': 4216},
                     ((RUN, (1, '2026-10-03T00:00:00+00:00', None, 'jql', old, 0, None)),))
    with caplog.at_level(logging.WARNING):
        hub = migrate(data_dir, clock)
    assert query(db_path, 'SELECT label, name FROM project ORDER BY label') == [
        ('AWPCA', 'АРМ КА'), ('STOCKS_DRRK', 'STOCKS_DRRK')]
    assert query(db_path, 'SELECT label, board_id, board_type FROM jira_project ORDER BY label') == [
        ('AWPCA', None, None), ('STOCKS_DRRK', None, None)]
    assert setting_of(db_path, 'board_id') == 4216
    assert setting_of(db_path, 'base_jql') == old
    expected = 'project = AURORA AND labels in ("AWPCA", "STOCKS_DRRK")'
    assert query(db_path, 'SELECT query FROM sync_run') == [(expected,)]
    assert projects.base_jql(hub) == expected
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any('4216' in message and 'board_id' in message for message in warnings), warnings
    hub.close()


@pytest.mark.parametrize('old, labels', [
    ('project = AURORA AND labels = AWPCA', ['AWPCA']),
    ('project = AURORA AND labels = "AWPCA"', ['AWPCA']),
    ('project = AURORA AND labels in (AWPCA)', ['AWPCA']),
    ('project = AURORA AND labels in ("B1", "A2")', ['B1', 'A2']),
    ('project = AURORA AND LABELS IN (X,Y , Z) ORDER BY key', ['X', 'Y', 'Z']),
    ('project = AURORA AND labels in (awpca, AWPCA, Other)', ['awpca', 'Other']),
    ('project = AURORA', None),
    ('project = AURORA AND component = Core', None),
    ('labels in ()', None),
    ('', None),
    (None, None),
    (42, None),
])
def test_parse_base_jql_labels(old, labels):
    assert steps.parse_base_jql_labels(old) == labels


@pytest.mark.parametrize('stored, given', [('4216', 4216), ('доска', None), (0, None)])
def test_v3_board_id_of_odd_type(data_dir, clock, caplog, stored, given):
    db_path = legacy(data_dir, 3, {'project_key': 'AURORA', 'base_jql': OLD_JQL, 'board_id': stored})
    with caplog.at_level(logging.WARNING):
        migrate(data_dir, clock).close()
    assert query(db_path, 'SELECT label, board_id FROM jira_project') == [('AWPCA', given)]
    assert setting_of(db_path, 'board_id') == stored
    if given is None:
        assert any('board_id' in r.getMessage() for r in caplog.records)


def test_failing_backup_copy_is_a_migration_error(data_dir, clock, monkeypatch):
    import hublib.db
    db_path = legacy(data_dir, 2, {'project_key': 'AURORA'}, ISSUES_AND_NOTES)

    def broken_copy(source, target):
        raise OSError(28, 'No space left on device')

    monkeypatch.setattr(hublib.db, 'copy_database', broken_copy)
    with pytest.raises(MigrationError, match='No space left'):
        open_hub(data_dir, clock=clock)
    assert backups(data_dir) == []
    assert setting_of(db_path, 'schema_version') == 2


def test_copy_database_leaves_no_temp_file_on_failure(tmp_path):
    import hublib.db

    source = tmp_path / 'garbage.sqlite'
    source.write_bytes(b'not a database, the copy fails half way' * 200)
    copies = tmp_path / 'copies'
    copies.mkdir()
    with pytest.raises(sqlite3.DatabaseError):
        hublib.db.copy_database(source, copies / 'copy.sqlite')
    assert list(copies.iterdir()) == []


def test_v3_unparseable_base_jql_makes_no_projects(data_dir, clock, caplog):
    old = 'project = AURORA AND component = Core'
    db_path = legacy(data_dir, 3, {'project_key': 'AURORA', 'base_jql': old, 'board_id': 4216},
                     ((RUN, (1, '2026-10-03T00:00:00+00:00', None, 'jql', old, 0, None)),))
    with caplog.at_level(logging.WARNING):
        hub = migrate(data_dir, clock)
    assert query(db_path, 'SELECT count(*) FROM project') == [(0,)]
    assert query(db_path, 'SELECT count(*) FROM jira_project') == [(0,)]
    assert query(db_path, 'SELECT query FROM sync_run') == [(old,)]
    assert setting_of(db_path, 'base_jql') == old
    assert projects.base_jql(hub) is None
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(old in message for message in warnings), warnings
    assert setting_of(db_path, 'schema_version') == 9
    hub.close()


def test_scenario_migration_of_v4(data_dir, clock):
    created = '2026-10-22T13:05:11.000+0300'
    db_path = legacy(data_dir, 4, {'project_key': 'AURORA'}, ISSUES_AND_NOTES + (
        ('INSERT INTO issue_comment (key, comment_id, author, created, updated, body) '
         'VALUES (?, ?, ?, ?, ?, ?)', ('AURORA-1', '101', 'ivanov', created, created, 'текст')),
        ('INSERT INTO issue_comment (key, comment_id, author, created, updated, body) '
         'VALUES (?, ?, ?, ?, ?, ?)', ('AURORA-1', '102', 'ivanov', 'вчера', None, 'ещё')),
        (RUN, (1, '2026-10-03T00:00:00+00:00', '2026-10-03T00:01:00+00:00', 'jql', 'q', 2, None)),
    ))
    migrate(data_dir, clock).close()
    only_backup(data_dir, 4)
    assert query(db_path, 'SELECT count(*) FROM issue_change') == [(0,)]
    assert query(db_path, 'SELECT comment_id, created, created_at, body FROM issue_comment '
                          'ORDER BY comment_id') == [
        ('101', created, '2026-10-22T10:05:11+00:00', 'текст'), ('102', 'вчера', None, 'ещё')]
    assert query(db_path, 'SELECT id, finished_at, history_at FROM sync_run') == [
        (1, '2026-10-03T00:01:00+00:00', None)]
    # … and then v5 → v6 ran as well.
    assert {'issue_attachment', 'attachment_file'} <= tables(db_path)
    assert setting_of(db_path, 'schema_version') == 9


def snapshot(db_path, table_names) -> dict:
    return {table: sorted(query(db_path, f'SELECT * FROM "{table}"')) for table in table_names}


def test_scenario_migration_of_v5(data_dir, clock):
    db_path = legacy(data_dir, 5, {'project_key': 'AURORA'}, ISSUES_AND_NOTES + (
        (NOTE, ('AURORA-1', 'Аналитика', 'сделано', '2026-10-02T00:00:00+00:00', 'ivanov')),
        ('INSERT INTO project (label, name, board_id, board_type, created_at) VALUES (?, ?, ?, ?, ?)',
         ('AWPCA', 'АРМ КА', 4216, None, '2026-10-01T00:00:00+00:00')),
        ('INSERT INTO issue_change (history_id, seq, key, at, created, field, fetched_at) '
         'VALUES (?, ?, ?, ?, ?, ?, ?)',
         ('5001', 0, 'AURORA-1', '2026-10-22T06:00:00+00:00', '2026-10-22T09:00:00.000+0300',
          'status', '2026-10-22T07:00:00+00:00')),
    ))
    untouched = ('issue', 'issue_link', 'issue_comment', 'issue_change', 'batch', 'command',
                 'sync_run', 'agent_status')
    before = snapshot(db_path, untouched)
    before_note = query(db_path, 'SELECT key, work_kind, done_text, updated_at, updated_by FROM issue_note')
    migrate(data_dir, clock).close()
    only_backup(data_dir, 5)
    assert query(db_path, 'SELECT count(*) FROM issue_attachment') == [(0,)]
    assert query(db_path, 'SELECT count(*) FROM attachment_file') == [(0,)]
    # v8 → v9 adds rank and story_points to issue (NULL): compare the v5 columns only.
    after = snapshot(db_path, untouched)
    after['issue'] = sorted(query(db_path, 'SELECT ' + ', '.join(
        columns(only_backup(data_dir, 5), 'issue')) + ' FROM issue'))
    assert after == before
    assert query(db_path, 'SELECT key, work_kind, done_text, updated_at, updated_by FROM issue_note') \
        == before_note
    assert query(db_path, 'SELECT label, name, created_at FROM project') == [
        ('AWPCA', 'АРМ КА', '2026-10-01T00:00:00+00:00')]
    assert setting_of(db_path, 'schema_version') == 9


def test_scenario_boards_after_migration_v7(data_dir, clock):
    project = ('INSERT INTO project (label, name, board_id, board_type, created_at) '
               'VALUES (?, ?, ?, ?, ?)')
    db_path = legacy(data_dir, 6, {'project_key': 'AURORA'}, (
        (project, ('AWPCA', 'АРМ КА', 4216, 'scrum', '2026-10-01T00:00:00+00:00')),
        (project, ('sfm_kedr', 'Кедр', None, None, '2026-10-02T00:00:00+00:00')),
    ))
    hub = migrate(data_dir, clock)
    backup = only_backup(data_dir, 6)
    assert 'board_id' in columns(backup, 'project')
    assert columns(db_path, 'project') == ['label', 'name', 'created_at']
    assert query(db_path, 'SELECT label, board_id, board_type FROM jira_project ORDER BY label') == [
        ('AWPCA', 4216, 'scrum'), ('sfm_kedr', None, None)]
    assert query(db_path, 'SELECT label, name, created_at FROM project ORDER BY label') == [
        ('AWPCA', 'АРМ КА', '2026-10-01T00:00:00+00:00'), ('sfm_kedr', 'Кедр', '2026-10-02T00:00:00+00:00')]
    assert [(p['label'], p['board_id'], p['board_type']) for p in projects.projects(hub)] == [
        ('AWPCA', 4216, 'scrum'), ('sfm_kedr', None, None)]
    assert query(db_path, 'PRAGMA foreign_key_check') == []
    hub.close()


def test_scenario_migration_of_v7(data_dir, clock):
    db_path = legacy(data_dir, 7, {'project_key': 'AURORA', 'status_labels': {'В работе': 'wip'},
                                   'transitions_map': {'a': 'b'}, 'settings_version': 12},
                     ISSUES_AND_NOTES + (
        ('INSERT INTO issue_note (key, work_kind, fact_status, done_text, rest_text, owner_note, '
         'updated_at, updated_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
         ('AURORA-1', 'Аналитика', 'В работе', 'сделано', 'осталось', 'заметка',
          '2026-10-02T00:00:00+00:00', 'ivanov')),
    ))
    migrate(data_dir, clock).close()
    backup = only_backup(data_dir, 7)
    assert query(backup, 'SELECT fact_status FROM issue_note') == [('В работе',)]
    assert 'fact_status' not in columns(db_path, 'issue_note')
    assert query(db_path, 'SELECT key, work_kind, done_text, rest_text, owner_note, updated_at, '
                          'updated_by FROM issue_note') == [
        ('AURORA-1', 'Аналитика', 'сделано', 'осталось', 'заметка', '2026-10-02T00:00:00+00:00',
         'ivanov')]
    assert setting_of(db_path, 'status_labels') is None
    assert setting_of(db_path, 'transitions_map') is None
    assert setting_of(db_path, 'settings_version') == 13
    assert setting_of(db_path, 'project_key') == 'AURORA'
    assert setting_of(db_path, 'schema_version') == 9


@pytest.mark.parametrize('present, expected_version', [
    ({'status_labels': {}}, 13), ({'transitions_map': {}}, 13), ({}, 12)])
def test_v7_bumps_settings_version_only_when_a_key_was_deleted(data_dir, clock, present,
                                                                 expected_version):
    db_path = legacy(data_dir, 7, {'settings_version': 12, **present})
    migrate(data_dir, clock).close()
    assert setting_of(db_path, 'settings_version') == expected_version
    assert setting_of(db_path, 'status_labels') is None
    assert setting_of(db_path, 'transitions_map') is None


def test_scenario_migration_of_v8(data_dir, clock):
    db_path = legacy(data_dir, 8, {'project_key': 'AURORA'}, ISSUES_AND_NOTES)
    migrate(data_dir, clock).close()
    only_backup(data_dir, 8)
    assert query(db_path, 'SELECT key, rank, story_points, sprint FROM issue ORDER BY key') == [
        ('AURORA-1', None, None, 'Спринт 2'), ('AURORA-2', None, None, None)]
    for table in ('jira_board', 'jira_sprint', 'issue_sprint'):
        assert query(db_path, f'SELECT count(*) FROM {table}') == [(0,)]
    assert setting_of(db_path, 'schema_version') == 9


def test_backup_is_a_consistent_copy_of_the_old_file(data_dir, clock):
    db_path = legacy(data_dir, 2, {'project_key': 'AURORA'}, ISSUES_AND_NOTES)
    # Part of the old data lives only in the WAL when the hub starts: the copy must include it.
    conn = sqlite3.connect(db_path)
    conn.execute('PRAGMA journal_mode=wal')
    conn.execute('PRAGMA wal_autocheckpoint=0')
    conn.execute(ISSUE, ('AURORA-3', 'Из WAL', 'Новая', '[]', None, None))
    conn.commit()
    keeper = sqlite3.connect(db_path)  # keeps the WAL from being checkpointed away on close
    keeper.execute('SELECT 1 FROM issue').fetchall()
    conn.close()
    assert (data_dir / 'hub.sqlite-wal').stat().st_size > 0
    main_file_only = sqlite3.connect(f'file:{db_path}?mode=ro&immutable=1', uri=True)
    assert main_file_only.execute('SELECT count(*) FROM issue').fetchone() == (2,)
    main_file_only.close()
    hub = migrate(data_dir, clock)
    keeper.close()
    backup = only_backup(data_dir, 2)
    assert backup.name == '20261130-100000-schema-v2.sqlite'
    assert query(backup, 'SELECT key, summary FROM issue ORDER BY key') == [
        ('AURORA-1', 'Первая'), ('AURORA-2', 'Вторая'), ('AURORA-3', 'Из WAL')]
    assert 'issue_comment' not in tables(backup)
    assert not list((data_dir / 'backups').glob('*.tmp'))
    hub.close()


def test_current_database_is_not_backed_up_again(data_dir, clock):
    legacy(data_dir, 4)
    open_hub(data_dir, clock=clock).close()
    clock.advance(minutes=5)
    open_hub(data_dir, clock=clock).close()
    assert len(backups(data_dir)) == 1


def failing_step(table):
    def step(db, now):
        db.execute_sql(f'CREATE TABLE {table} (x INTEGER)')
        db.execute_sql('ALTER TABLE issue ADD COLUMN half_done TEXT')
        raise RuntimeError('шаг сломан')
    return step


@pytest.mark.parametrize('old, broken', [(1, 1), (1, 6), (3, 8), (7, 7)])
def test_failing_step_leaves_the_old_version(data_dir, clock, monkeypatch, caplog, old, broken):
    db_path = legacy(data_dir, old, {'project_key': 'AURORA', 'base_jql': OLD_JQL}, ISSUES_AND_NOTES)
    shape_before = query(db_path, "SELECT type, name, sql FROM sqlite_master ORDER BY name")
    settings_before = query(db_path, 'SELECT key, value FROM setting ORDER BY key')
    monkeypatch.setitem(steps.STEPS, broken, failing_step('partial_table'))
    with caplog.at_level(logging.ERROR, logger='hublib'), pytest.raises(MigrationError) as raised:
        open_hub(data_dir, clock=clock)
    message = str(raised.value)
    assert f'v{old} -> v9' in message and 'шаг сломан' in message and f'осталась v{old}' in message
    assert setting_of(db_path, 'schema_version') == old
    assert query(db_path, "SELECT type, name, sql FROM sqlite_master ORDER BY name") == shape_before
    assert 'partial_table' not in tables(db_path)
    assert query(db_path, 'SELECT key, value FROM setting ORDER BY key') == settings_before
    assert query(db_path, 'SELECT key FROM issue ORDER BY key') == [('AURORA-1',), ('AURORA-2',)]
    assert backups(data_dir) == []
    assert any(record.levelno == logging.ERROR for record in caplog.records)
    # With the bug gone the same file migrates normally.
    monkeypatch.undo()
    open_hub(data_dir, clock=clock).close()
    assert setting_of(db_path, 'schema_version') == 9
    assert len(backups(data_dir)) == 1


def test_scenario_two_connections_to_v1(data_dir, clock):
    db_path = legacy(data_dir, 1, {'project_key': 'AURORA'}, ISSUES_AND_NOTES + (
        (BATCH, (1, 'Пакет', 'ivanov', '2026-10-03T00:00:00+00:00')),
        (COMMAND, (1, 1, 1, 'add_comment', '{}', 'claimed')),
    ))
    barrier = threading.Barrier(2)
    hubs, errors = [], []

    def start():
        try:
            barrier.wait()
            hubs.append(open_hub(data_dir, clock=clock))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
        assert not thread.is_alive(), 'open_hub did not return within 60 s'
    assert errors == []
    assert len(hubs) == 2
    for hub in hubs:
        assert settings.setting(hub, 'schema_version') == 9
        hub.close()
    [backup] = backups(data_dir)
    assert BACKUP_NAME.match(backup.name).group(1) == '1'
    # Migrated once: the claimed command was counted as delivered exactly once.
    assert query(db_path, 'SELECT deliveries FROM command') == [(1,)]


WORKER = r'''
import json, os, sys, time
from pathlib import Path
data_dir, flag, me = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
from hublib import open_hub, settings
(flag.parent / f'ready-{me}').touch()
deadline = time.monotonic() + 120
while not flag.exists():
    if time.monotonic() > deadline:
        sys.exit('no go flag within 120 s')
    time.sleep(0.005)
hub = open_hub(data_dir)
print(json.dumps({'schema_version': settings.setting(hub, 'schema_version'),
                  'issues': hub.db.execute_sql('SELECT count(*) FROM issue').fetchone()[0],
                  'deliveries': hub.db.execute_sql('SELECT deliveries FROM command').fetchone()[0]}))
hub.close()
'''


def test_five_processes_open_one_v1_database(tmp_path):
    data_dir = tmp_path / 'hub-data'
    db_path = legacy(data_dir, 1, {'project_key': 'AURORA', 'base_jql': OLD_JQL}, ISSUES_AND_NOTES + (
        (BATCH, (1, 'Пакет', 'ivanov', '2026-10-03T00:00:00+00:00')),
        (COMMAND, (1, 1, 1, 'refresh', json.dumps({'jql': OLD_JQL}), 'claimed')),
    ))
    flag = tmp_path / 'go'
    workers: list[subprocess.Popen] = []
    try:
        for n in range(5):
            workers.append(subprocess.Popen(
                [sys.executable, '-c', WORKER, str(data_dir), str(flag), str(n)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                cwd=Path(__file__).resolve().parents[2]))
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob('ready-*'))) < 5:
            assert time.monotonic() < deadline, 'workers did not start'
            ended = [(w.returncode, w.stderr.read()) for w in workers if w.poll() is not None]
            assert not ended, f'a worker ended before the go flag: {ended}'
            time.sleep(0.01)
        flag.touch()
        results = []
        for worker in workers:
            out, err = worker.communicate(timeout=120)
            assert worker.returncode == 0, err
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
            worker.communicate()
    assert results == [{'schema_version': 9, 'issues': 2, 'deliveries': 1}] * 5
    [backup] = backups(data_dir)
    assert BACKUP_NAME.match(backup.name).group(1) == '1'
    assert setting_of(backup, 'schema_version') == 1
    assert setting_of(db_path, 'schema_version') == 9
    assert query(db_path, 'SELECT params FROM command') == [(json.dumps({'jql': NEW_JQL}),)]
    assert query(db_path, 'SELECT label FROM project') == [('AWPCA',)]
    assert query(db_path, 'PRAGMA integrity_check') == [('ok',)]
