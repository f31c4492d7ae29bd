"""The read budget (contract §20, «Deadline»): a read that runs past ``read_deadline_seconds`` is
ended by SQLite's progress handler and comes out as DeadlineError; a read whose client has gone
ends as ClientGoneError; writes always run to their end; scripts and the CLI read unbounded."""
from __future__ import annotations

import threading
import time

import pytest

from hublib import notes, settings
from hublib.errors import ClientGoneError, DeadlineError

# Counts for ever: only a budget ends it.
ENDLESS = ('WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) '
           'SELECT count(*) FROM n')
# ~100 ms of VM steps on this machine: short, yet past a 0.05 s deadline.
COUNT_TO = ('WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?) '
            'SELECT count(*) FROM n')


def test_a_read_past_its_deadline_is_ended_as_deadline_error(hub):
    started = time.monotonic()
    with hub.bounded(0.05), pytest.raises(DeadlineError) as error, hub.read():
        hub.db.execute_sql(ENDLESS).fetchall()
    assert time.monotonic() - started < 2
    assert type(error.value) is DeadlineError and error.value.retry_after
    assert 'дольше 0.05 с' in error.value.message


def test_a_statement_outside_a_read_transaction_is_ended_too(hub):
    with hub.bounded(0.05), pytest.raises(DeadlineError):
        hub.db.execute_sql(ENDLESS)


def test_a_fast_read_within_its_deadline_is_unaffected(hub):
    with hub.bounded(10), hub.read():
        assert hub.db.execute_sql(COUNT_TO, (100_000,)).fetchone() == (100_000,)
        assert settings.client_settings(hub)['settings_version'] == 1


def test_reads_after_the_block_are_unbounded_again(hub):
    with hub.bounded(0.05), pytest.raises(DeadlineError), hub.read():
        hub.db.execute_sql(ENDLESS).fetchall()
    assert hub.db.execute_sql(COUNT_TO, (300_000,)).fetchone() == (300_000,)


def test_without_a_budget_reads_are_unbounded(hub):
    # scripts and the CLI: a long read is theirs to wait for
    settings.update_settings(hub, {'read_deadline_seconds': 0.01})
    assert hub.db.execute_sql(COUNT_TO, (300_000,)).fetchone() == (300_000,)


def test_a_read_whose_client_has_gone_is_ended_as_client_gone(hub):
    gone = threading.Event()
    threading.Timer(0.05, gone.set).start()
    started = time.monotonic()
    with hub.bounded(60, gone.is_set), pytest.raises(ClientGoneError), hub.read():
        hub.db.execute_sql(ENDLESS).fetchall()
    assert time.monotonic() - started < 2


def test_a_write_is_never_cut_short(hub):
    # a write is one transaction that commits or leaves nothing: it runs to its end even past
    # the deadline, and even when the client has gone
    with hub.bounded(0.01, lambda: True):
        with hub.write():
            hub.db.execute_sql(COUNT_TO, (300_000,)).fetchall()
            hub.db.execute_sql("INSERT INTO setting (key, value) VALUES ('probe', '1')")
    assert settings.setting(hub, 'probe') == 1


def test_check_budget_ends_python_work_between_statements(hub):
    with hub.bounded(0.01):
        time.sleep(0.03)
        with pytest.raises(DeadlineError):
            hub.check_budget()
    hub.check_budget()  # unbounded again


def test_bounded_reads_takes_the_setting(hub):
    settings.update_settings(hub, {'read_deadline_seconds': 0.05})
    with settings.bounded_reads(hub), pytest.raises(DeadlineError) as error, hub.read():
        hub.db.execute_sql(ENDLESS).fetchall()
    assert 'дольше 0.05 с' in error.value.message


def test_the_connection_is_usable_after_an_ended_read(hub):
    with hub.bounded(0.05), pytest.raises(DeadlineError), hub.read():
        hub.db.execute_sql(ENDLESS).fetchall()
    assert not hub.db.connection().in_transaction
    notes.put_note(hub, 'AURORA-1', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    assert notes.note(hub, 'AURORA-1')['work_kind'] == 'Аналитика'


@pytest.mark.parametrize('value', [10, 0.05, 3600])
def test_read_deadline_seconds_accepts_seconds_in_range(hub, value):
    assert settings.update_settings(hub, {'read_deadline_seconds': value})[
        'read_deadline_seconds'] == value
    assert settings.read_deadline_seconds(hub) == value


def test_read_deadline_seconds_defaults_to_ten(hub):
    assert settings.client_settings(hub)['read_deadline_seconds'] == 10
    assert settings.read_deadline_seconds(hub) == 10
