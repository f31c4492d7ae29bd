"""A full disk through hublib (issue 10, point 8): ``hub.write()`` rolls back once, raises
StorageFullError, and the hub remembers it until a write commits. The disk is "full" at
SQLite's ``PRAGMA max_page_count`` on this thread's connection; backups get the same at the
copy's own connection."""
from __future__ import annotations

import errno
import sqlite3

import pytest

from hublib import NotFoundError, backups, notes
from hublib.errors import StorageFullError, is_storage_full
from tests.support.hubs import fill_disk, fill_disk_for_copies, free_disk

BIG_NOTE = {'owner_note': 'заметка ' * 2000, 'updated_by': 'ivanov'}


def test_write_on_a_full_disk_raises_storage_full_and_is_remembered_until_a_commit(hub, clock):
    assert hub.storage_full_since is None
    fill_disk(hub)
    with pytest.raises(StorageFullError, match='на диске нет места'):
        notes.put_note(hub, 'AURORA-1', BIG_NOTE)
    failed_at = hub.now()
    assert hub.storage_full_since == failed_at
    clock.advance(minutes=5)
    with pytest.raises(StorageFullError):
        notes.put_note(hub, 'AURORA-2', BIG_NOTE)
    assert hub.storage_full_since == failed_at  # since the first failure
    assert not hub.db.in_transaction() and not hub.db.connection().in_transaction
    with pytest.raises(NotFoundError):
        notes.note(hub, 'AURORA-1')  # nothing was written
    free_disk(hub)
    notes.put_note(hub, 'AURORA-1', BIG_NOTE)
    assert hub.storage_full_since is None
    assert notes.note(hub, 'AURORA-1')['owner_note'] == BIG_NOTE['owner_note']


def test_nested_write_on_a_full_disk_rolls_back_the_whole_transaction(hub):
    fill_disk(hub)
    with pytest.raises(StorageFullError):
        with hub.write():
            notes.put_note(hub, 'AURORA-1', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
            with hub.write():  # a savepoint
                notes.put_note(hub, 'AURORA-2', BIG_NOTE)
    assert not hub.db.in_transaction() and not hub.db.connection().in_transaction
    free_disk(hub)
    with hub.write():  # the connection is usable, the peewee transaction stack is empty
        pass
    for key in ('AURORA-1', 'AURORA-2'):
        with pytest.raises(NotFoundError):
            notes.note(hub, key)


def test_other_errors_in_a_write_are_not_storage_full(hub):
    with pytest.raises(ZeroDivisionError):
        with hub.write():
            1 / 0
    assert hub.storage_full_since is None


@pytest.mark.parametrize('error, expected', [
    (OSError(errno.ENOSPC, 'No space left on device'), True),
    (OSError(errno.EACCES, 'Permission denied'), False),
    (sqlite3.OperationalError('database is locked'), False),
    (ValueError('database or disk is full'), False),  # the words alone prove nothing
])
def test_is_storage_full_reads_the_error_codes(error, expected):
    assert is_storage_full(error) is expected
    try:
        try:
            raise error
        except Exception as inner:
            raise RuntimeError('cannot rollback - no transaction is active') from inner
    except RuntimeError as outer:
        assert is_storage_full(outer) is expected  # found under a later error, too


def test_backup_on_a_full_disk_raises_and_leaves_no_partial_copy(hub, monkeypatch):
    fill_disk_for_copies(monkeypatch)
    with pytest.raises(StorageFullError, match='резервная копия не сделана'):
        backups.backup(hub)
    assert list(hub.backups_dir.iterdir()) == []
    monkeypatch.undo()
    assert backups.backup(hub).is_file()
