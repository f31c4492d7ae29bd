"""``Hub.write()`` under another process's lock: BusyError after the (injectable) busy timeout,
nothing written, and the next write after the lock is gone commits."""
from __future__ import annotations

import sqlite3

import pytest

from hublib import BusyError, HubError, notes, open_hub


def test_write_blocked_past_the_busy_timeout_raises_busy_error_and_writes_nothing(data_dir, clock):
    hub = open_hub(data_dir, clock=clock, busy_timeout_ms=50)
    other = sqlite3.connect(hub.db_path, isolation_level=None)
    try:
        other.execute('BEGIN IMMEDIATE')
        with pytest.raises(BusyError) as raised:
            notes.put_note(hub, 'AURORA-1', {'work_kind': 'x', 'updated_by': 'ivanov'})
        assert isinstance(raised.value, HubError)
        assert raised.value.message.startswith('хаб занят')
        other.execute('ROLLBACK')
        assert not hub.db.in_transaction()
        assert notes.put_note(hub, 'AURORA-1', {'work_kind': 'x', 'updated_by': 'ivanov'})
    finally:
        other.close()
        hub.close()
