"""A backup that fails on a full disk leaves nothing behind in ``backups/``: not the temp copy,
nor what SQLite keeps beside it (``-journal``, ``-wal``, ``-shm``). Found on a real full disk:
the copy fitted, then turning it from WAL into a one-file database needed a few more KB and left
``.tmp-wal``/``.tmp-shm`` (and a traceback: «disk I/O error» is not SQLITE_FULL)."""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import uuid

import pytest

from hublib import backups, notes
from hublib.errors import StorageFullError

SIDECARS = ('-journal', '-wal', '-shm')


def test_a_failed_copy_removes_the_files_sqlite_left_beside_it(hub, monkeypatch):
    real_connect = sqlite3.connect

    def connect(database, *args, **kwargs):
        connection = real_connect(database, *args, **kwargs)
        if str(database).endswith('.tmp'):
            for suffix in SIDECARS:  # what a copy interrupted by a full disk leaves
                with open(f'{database}{suffix}', 'wb') as handle:
                    handle.write(b'x')
            connection.execute('PRAGMA max_page_count = 2')
        return connection
    monkeypatch.setattr(sqlite3, 'connect', connect)
    with pytest.raises(StorageFullError):
        backups.backup(hub)
    assert os.listdir(hub.backups_dir) == []


def test_a_backup_is_one_file_in_rollback_journal_mode(hub):
    path = backups.backup(hub)
    assert os.listdir(hub.backups_dir) == [path.name]
    header = path.read_bytes()[:20]
    assert (header[18], header[19]) == (1, 1)  # not WAL: it opens without a -wal beside it
    connection = sqlite3.connect(f'file:{path}?mode=ro', uri=True)
    try:
        assert connection.execute('PRAGMA journal_mode').fetchone()[0] == 'delete'
        assert connection.execute('PRAGMA integrity_check').fetchone()[0] == 'ok'
    finally:
        connection.close()


@pytest.fixture
def small_disk(tmp_path):
    """A tmpfs of ``size`` for ``backups/`` (Linux, allowed to mount: root in a container)."""
    mounted = []

    def mount(size: str):
        target = tmp_path / f'disk-{uuid.uuid4().hex[:8]}'
        target.mkdir()
        done = subprocess.run(['mount', '-t', 'tmpfs', '-o', f'size={size}', 'tmpfs', str(target)],
                              capture_output=True)
        if done.returncode != 0:
            pytest.skip('no permission to mount a small tmpfs here')
        mounted.append(target)
        return target
    yield mount
    for target in mounted:
        subprocess.run(['umount', str(target)], capture_output=True)


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which('mount') or os.name != 'posix', reason='needs mount(8)')
def test_backup_on_a_really_full_disk_is_storage_full_and_leaves_nothing(hub, small_disk):
    for number in range(300):
        notes.put_note(hub, f'AURORA-{number}', {'work_kind': 'ж' * 2500, 'updated_by': 'ivanov'})
    hub.db.execute_sql('PRAGMA wal_checkpoint(TRUNCATE)')
    size = hub.db_path.stat().st_size
    failures = 0
    # Disks a little smaller than the database up to a little larger: the copy fails at every
    # point of the way (pages, journal, the switch out of WAL) or succeeds.
    for kib in range(size // 1024 - 64, size // 1024 + 64, 8):
        disk = small_disk(f'{kib}k')
        shutil.rmtree(hub.backups_dir)
        os.symlink(disk, hub.backups_dir)
        try:
            made = backups.backup(hub)
        except StorageFullError:
            failures += 1
            assert os.listdir(disk) == [], kib
        else:
            assert os.listdir(disk) == [made.name], kib
        os.unlink(hub.backups_dir)
        hub.backups_dir.mkdir()
    assert failures
