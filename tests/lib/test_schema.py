"""Schema v9: first start, directory modes, fresh vs migrated shape, refusing a newer file."""
from __future__ import annotations

import json
import logging
import os
import sqlite3
import stat

import pytest

from hublib import SCHEMA_VERSION, SchemaError, open_hub
from tests.support.legacy import create_legacy_database

TABLES = {'issue', 'issue_link', 'issue_comment', 'issue_change', 'issue_attachment',
          'attachment_file', 'issue_note', 'issue_sprint', 'jira_board', 'jira_sprint', 'batch',
          'command', 'sync_run', 'agent_status', 'setting', 'project', 'jira_project'}
# The hub's own bookkeeping and derived indexes (models.INTERNAL_MODELS, hublib.search), made at
# every open when missing; FTS5 keeps its index in shadow tables named after it.
INTERNAL_TABLES = {'issue_member', 'slice_count', 'slice_facet', 'issue_search', 'refresh_written', 'batch_followup', 'late_done',
                   'batch_retry', 'idempotent_request',
                   'issue_fts', 'issue_fts_data', 'issue_fts_idx', 'issue_fts_docsize', 'issue_fts_config'}

posix_only = pytest.mark.skipif(os.name != 'posix', reason='file modes are POSIX')


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def schema_shape(db_path) -> dict:
    """Tables → (columns as PRAGMA table_info minus cid, indexes as sorted (columns, unique))."""
    conn = sqlite3.connect(db_path)
    try:
        shape = {}
        tables = [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        for table in tables:
            columns = [tuple(row[1:]) for row in conn.execute(f'PRAGMA table_info("{table}")')]
            indexes = sorted(
                (tuple(info[2] or '<expression>' for info in
                       conn.execute(f'PRAGMA index_info("{index[1]}")')), index[2])
                for index in conn.execute(f'PRAGMA index_list("{table}")'))
            shape[table] = (columns, indexes)
        return shape
    finally:
        conn.close()


def read_setting(db_path, key):
    conn = sqlite3.connect(db_path)
    try:
        row = conn.execute('SELECT value FROM setting WHERE key = ?', (key,)).fetchone()
        return json.loads(row[0]) if row else None
    finally:
        conn.close()


def test_scenario_first_start(data_dir, clock):
    assert not data_dir.exists()
    hub = open_hub(data_dir, clock=clock)
    hub.close()
    db_path = data_dir / 'hub.sqlite'
    assert db_path.is_file()
    shape = schema_shape(db_path)
    assert set(shape) == TABLES | INTERNAL_TABLES
    indexes = {table: [columns for columns, _ in shape[table][1]] for table in shape}
    assert ('target_key',) in indexes['issue_link']
    assert ('status',) in indexes['command']
    assert ('at',) in indexes['issue_change']
    assert ('key', 'at') in indexes['issue_change']
    assert ('key',) in indexes['issue_attachment']
    assert read_setting(db_path, 'schema_version') == SCHEMA_VERSION == 9
    assert read_setting(db_path, 'settings_version') == 1
    conn = sqlite3.connect(db_path)
    assert conn.execute('PRAGMA journal_mode').fetchone()[0] == 'wal'
    conn.close()
    assert (data_dir / 'backups').is_dir() and (data_dir / 'files').is_dir()
    assert list((data_dir / 'backups').iterdir()) == []  # a new file is created, not migrated
    if os.name == 'posix':
        for directory in (data_dir, data_dir / 'backups', data_dir / 'files'):
            assert mode(directory) == 0o700


def test_hub_connection_pragmas(hub):
    db = hub.db
    assert db.execute_sql('PRAGMA journal_mode').fetchone()[0] == 'wal'
    assert db.execute_sql('PRAGMA foreign_keys').fetchone()[0] == 1
    assert db.execute_sql('PRAGMA busy_timeout').fetchone()[0] >= 5000
    assert db.execute_sql('PRAGMA synchronous').fetchone()[0] == 1  # NORMAL


@posix_only
def test_scenario_open_data_directory(data_dir, clock):
    (data_dir / 'backups').mkdir(parents=True)
    (data_dir / 'files').mkdir()
    for directory in (data_dir, data_dir / 'backups', data_dir / 'files'):
        os.chmod(directory, 0o755)
    hub = open_hub(data_dir, clock=clock)
    hub.close()
    assert mode(data_dir) == 0o700
    assert mode(data_dir / 'backups') == 0o700
    assert mode(data_dir / 'files') == 0o700


@posix_only
def test_modes_restored_at_every_start(data_dir, clock):
    open_hub(data_dir, clock=clock).close()
    os.chmod(data_dir, 0o755)
    os.chmod(data_dir / 'backups', 0o777)
    open_hub(data_dir, clock=clock).close()
    assert mode(data_dir) == 0o700
    assert mode(data_dir / 'backups') == 0o700


def test_chmod_failure_is_a_warning(data_dir, clock, monkeypatch, caplog):
    def refuse(path, *args, **kwargs):
        raise PermissionError(1, 'Operation not permitted', str(path))

    monkeypatch.setattr(os, 'chmod', refuse)
    with caplog.at_level(logging.WARNING, logger='hublib'):
        hub = open_hub(data_dir, clock=clock)
    hub.close()
    assert read_setting(data_dir / 'hub.sqlite', 'schema_version') == 9
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and '0700' in r.getMessage()]
    assert len(warnings) == 3  # data dir, backups/, files/
    assert str(data_dir) in warnings[0].getMessage()


def test_fresh_and_migrated_v1_have_the_same_shape(tmp_path, clock):
    fresh_dir, migrated_dir = tmp_path / 'fresh', tmp_path / 'migrated'
    migrated_dir.mkdir()
    create_legacy_database(migrated_dir / 'hub.sqlite', 1,
                           {'base_jql': 'project = AURORA AND labels = AWPCA', 'board_id': 4216})
    open_hub(fresh_dir, clock=clock).close()
    open_hub(migrated_dir, clock=clock).close()
    fresh = schema_shape(fresh_dir / 'hub.sqlite')
    migrated = schema_shape(migrated_dir / 'hub.sqlite')
    assert set(fresh) == set(migrated) == TABLES | INTERNAL_TABLES
    for table in sorted(TABLES | INTERNAL_TABLES):
        assert migrated[table] == fresh[table], table


@pytest.mark.parametrize('version', range(1, 9))
def test_every_legacy_version_reaches_the_fresh_shape(tmp_path, clock, version):
    fresh_dir, old_dir = tmp_path / 'fresh', tmp_path / 'old'
    old_dir.mkdir()
    create_legacy_database(old_dir / 'hub.sqlite', version)
    open_hub(fresh_dir, clock=clock).close()
    open_hub(old_dir, clock=clock).close()
    assert schema_shape(old_dir / 'hub.sqlite') == schema_shape(fresh_dir / 'hub.sqlite')
    assert read_setting(old_dir / 'hub.sqlite', 'schema_version') == 9


def test_legacy_v9_is_the_fresh_shape(tmp_path, clock):
    """A v9 file of an earlier release (frozen DDL, no derived tables) gets them at open."""
    fresh_dir, old_dir = tmp_path / 'fresh', tmp_path / 'old'
    open_hub(fresh_dir, clock=clock).close()
    old_dir.mkdir()
    create_legacy_database(old_dir / 'hub.sqlite', 9)
    assert set(schema_shape(old_dir / 'hub.sqlite')) == TABLES
    open_hub(old_dir, clock=clock).close()
    assert schema_shape(old_dir / 'hub.sqlite') == schema_shape(fresh_dir / 'hub.sqlite')


def test_newer_schema_is_refused_and_untouched(data_dir, clock):
    data_dir.mkdir()
    db_path = data_dir / 'hub.sqlite'
    create_legacy_database(db_path, 9)
    conn = sqlite3.connect(db_path)
    conn.execute("UPDATE setting SET value = '10' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    before = db_path.read_bytes()
    with pytest.raises(SchemaError) as raised:
        open_hub(data_dir, clock=clock)
    assert 'v10' in str(raised.value)
    assert db_path.read_bytes() == before
    assert not (data_dir / 'hub.sqlite-wal').exists()
    assert [path.name for path in data_dir.iterdir()] == ['hub.sqlite']  # nothing created


def test_newer_schema_in_wal_mode_is_refused(data_dir, clock):
    hub = open_hub(data_dir, clock=clock)
    hub.db.execute_sql("UPDATE setting SET value = '12' WHERE key = 'schema_version'")
    hub.close()
    with pytest.raises(SchemaError, match='v12'):
        open_hub(data_dir, clock=clock)
    assert read_setting(data_dir / 'hub.sqlite', 'schema_version') == 12


def test_foreign_file_is_refused(data_dir, clock):
    data_dir.mkdir()
    conn = sqlite3.connect(data_dir / 'hub.sqlite')
    conn.execute('CREATE TABLE something (x)')
    conn.commit()
    conn.close()
    before = (data_dir / 'hub.sqlite').read_bytes()
    with pytest.raises(SchemaError, match='не база хаба'):
        open_hub(data_dir, clock=clock)
    assert (data_dir / 'hub.sqlite').read_bytes() == before  # not even switched to WAL
    assert [path.name for path in data_dir.iterdir()] == ['hub.sqlite']


def test_reopen_keeps_settings_and_does_nothing(data_dir, clock):
    hub = open_hub(data_dir, clock=clock)
    first = dict(hub.db.execute_sql('SELECT key, value FROM setting').fetchall())
    hub.close()
    hub = open_hub(data_dir, clock=clock)
    second = dict(hub.db.execute_sql('SELECT key, value FROM setting').fetchall())
    hub.close()
    assert first == second
    assert list((data_dir / 'backups').iterdir()) == []


def test_hublib_loads_no_web_framework():
    import subprocess
    import sys
    code = ('import sys, hublib, hublib.settings, hublib.projects, hublib.migrations; '
            'print(sorted(m for m in sys.modules if m.split(".")[0] in '
            '("falcon", "waitress", "hubweb", "apispec")))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == '[]'


def test_file_that_is_not_sqlite_is_refused_untouched(data_dir, clock):
    data_dir.mkdir()
    db_path = data_dir / 'hub.sqlite'
    db_path.write_bytes(b'this is not a database at all' * 100)
    with pytest.raises(SchemaError, match='SQLite'):
        open_hub(data_dir, clock=clock)
    assert db_path.read_bytes() == b'this is not a database at all' * 100


@pytest.mark.parametrize('stored', ['"nine"', 'null', '0', 'true', '{', '9.5'])
def test_garbage_schema_version_is_a_schema_error(data_dir, clock, stored):
    data_dir.mkdir()
    db_path = data_dir / 'hub.sqlite'
    create_legacy_database(db_path, 9)
    conn = sqlite3.connect(db_path)
    conn.execute("UPDATE setting SET value = ? WHERE key = 'schema_version'", (stored,))
    conn.commit()
    conn.close()
    with pytest.raises(SchemaError, match='schema_version'):
        open_hub(data_dir, clock=clock)


def test_opened_at_version_tells_what_open_hub_found(data_dir, clock):
    """``sdlc-hub migrate`` prints ``schema v<old> -> v9`` from this value."""
    hub = open_hub(data_dir, clock=clock)
    assert hub.opened_at_version is None  # a new file
    hub.close()
    hub = open_hub(data_dir, clock=clock)
    assert hub.opened_at_version == 9
    hub.close()
    old_dir = data_dir.parent / 'old'
    old_dir.mkdir()
    create_legacy_database(old_dir / 'hub.sqlite', 4)
    hub = open_hub(old_dir, clock=clock)
    assert hub.opened_at_version == 4
    hub.close()
