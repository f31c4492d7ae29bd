"""Regular backups and their rotation (hublib.backups)."""
from __future__ import annotations

import os
import sqlite3
import threading

import pytest

from hublib import backups, settings

MIGRATION_COPIES = ('20261001-080000-schema-v5.sqlite', '20261130-095959-schema-v8.sqlite',
                    '20200101-000000-schema-v1.sqlite')


def integrity(path) -> str:
    conn = sqlite3.connect(f'file:{path}?mode=ro', uri=True)
    try:
        return conn.execute('PRAGMA integrity_check').fetchone()[0]
    finally:
        conn.close()


def stored_version(path) -> int:
    conn = sqlite3.connect(f'file:{path}?mode=ro', uri=True)
    try:
        return int(conn.execute("SELECT value FROM setting WHERE key = 'schema_version'").fetchone()[0])
    finally:
        conn.close()


def names(hub) -> list[str]:
    return sorted(os.listdir(hub.backups_dir))


@pytest.fixture
def keep(hub):
    settings.update_settings(hub, {'backup_keep': 3})
    for name in MIGRATION_COPIES:
        (hub.backups_dir / name).write_bytes(b'migration copy')
    return 3


def test_backup_keep_plus_two_runs_leave_backup_keep(hub, clock, keep):
    made = []
    for _ in range(keep + 2):
        path = backups.backup(hub)
        assert integrity(path) == 'ok' and stored_version(path) == 9
        made.append(path.name)
        clock.advance(hours=7)

    assert made[0] == '20261130-100000.sqlite' and made[1] == '20261130-170000.sqlite'
    assert names(hub) == sorted(list(MIGRATION_COPIES) + made[-keep:])
    for name in made[-keep:]:
        assert integrity(hub.backups_dir / name) == 'ok'
    for name in MIGRATION_COPIES:
        assert (hub.backups_dir / name).read_bytes() == b'migration copy'


def test_default_keep_is_14(hub, clock):
    for _ in range(16):
        backups.backup(hub)
        clock.advance(days=1)
    assert len(backups.regular_backups(hub)) == 14
    assert backups.regular_backups(hub)[0].name == '20261202-100000.sqlite'


def test_same_second_gets_a_number_suffix(hub, keep):
    paths = [backups.backup(hub) for _ in range(4)]
    assert [p.name for p in paths] == ['20261130-100000.sqlite', '20261130-100000-1.sqlite',
                                       '20261130-100000-2.sqlite', '20261130-100000-3.sqlite']
    # rotation orders same-second backups by their number: the unnumbered one is the oldest
    assert [p.name for p in backups.regular_backups(hub)] == [p.name for p in paths[1:]]
    assert all(integrity(p) == 'ok' for p in paths[1:])


def test_backup_sees_committed_data_and_leaves_no_temp(hub):
    with hub.write():
        hub.db.execute_sql("INSERT INTO project (label, name, created_at) VALUES ('AWPCA', 'АРМ КА', ?)",
                           (hub.now(),))
    path = backups.backup(hub)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute('SELECT label, name FROM project').fetchall() == [('AWPCA', 'АРМ КА')]
        assert conn.execute('PRAGMA journal_mode').fetchone()[0] == 'delete'
    finally:
        conn.close()
    assert names(hub) == [path.name]


def test_backup_while_another_connection_writes(hub):
    writer = sqlite3.connect(hub.db_path, timeout=5)
    try:
        writer.execute('BEGIN IMMEDIATE')
        writer.execute("INSERT INTO project (label, name, created_at) VALUES ('X', 'x', 'now')")
        path = backups.backup(hub)  # sees the last committed state, not the open transaction
        writer.commit()
    finally:
        writer.close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute('SELECT COUNT(*) FROM project').fetchone() == (0,)
    finally:
        conn.close()
    assert integrity(path) == 'ok'


def test_backup_if_due_once_per_utc_day(hub, clock, keep):
    first = backups.backup_if_due(hub)
    assert first.name == '20261130-100000.sqlite'
    clock.set('2026-11-30T23:59:59+00:00')
    assert backups.backup_if_due(hub) is None
    clock.set('2026-12-01T02:30:00+03:00')  # 2026-11-30T23:30 UTC: still the same UTC day
    assert backups.backup_if_due(hub) is None
    clock.set('2026-12-01T00:00:01+00:00')
    assert backups.backup_if_due(hub).name == '20261201-000001.sqlite'
    assert all(name in names(hub) for name in MIGRATION_COPIES)


def test_daily_backup_thread(hub, keep):
    stop = threading.Event()
    thread = backups.start_daily_backups(hub, stop, check_seconds=0.05)
    assert thread.daemon
    for _ in range(200):
        if backups.regular_backups(hub):
            break
        stop.wait(0.02)
    stop.set()
    thread.join(5)
    assert not thread.is_alive()
    assert [p.name for p in backups.regular_backups(hub)] == ['20261130-100000.sqlite']


def test_daily_backup_thread_survives_a_failure(hub, monkeypatch, caplog):
    calls = []

    def flaky(hub):
        calls.append(1)
        if len(calls) == 1:
            raise OSError('disk full')
        return None

    monkeypatch.setattr(backups, 'backup_if_due', flaky)
    stop = threading.Event()
    thread = backups.start_daily_backups(hub, stop, check_seconds=0.01)
    for _ in range(200):
        if len(calls) >= 2:
            break
        stop.wait(0.01)
    stop.set()
    thread.join(5)
    assert len(calls) >= 2 and not thread.is_alive()
    assert 'ежедневная резервная копия не удалась' in caplog.text


def test_a_backup_removes_partial_copies_a_killed_process_left_and_spares_fresh_ones(hub, caplog):
    # what a server stopped in the middle of its daily backup leaves behind
    stale = [hub.backups_dir / name for name in
             ('.backup-k1llq.tmp', '.backup-k1llq.tmp.tmp', '.backup-k1llq.tmp.tmp-journal',
              '20261130-101500-schema-v9.sqlite.tmp')]
    fresh = hub.backups_dir / '.backup-l1ve.tmp'  # a copy another process is writing now
    for path in (*stale, fresh):
        path.write_bytes(b'partial')
    hour_ago = os.stat(fresh).st_mtime - backups.STALE_TEMP_SECONDS - 1
    for path in stale:
        os.utime(path, (hour_ago, hour_ago))
    made = backups.backup(hub)
    assert not any(path.exists() for path in stale)
    assert fresh.exists() and made.exists()
    assert '.backup-k1llq.tmp' in caplog.text
