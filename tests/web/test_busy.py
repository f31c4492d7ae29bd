"""A write that waits longer than the busy timeout for another process's lock is an expected
condition, not a bug: 503 «хаб занят» with ``Retry-After``, one WARNING line and no traceback,
nothing written; the same error is an ``isError`` result in MCP (``tests/lib/test_busy.py``)."""
from __future__ import annotations

import logging
import sqlite3
import time

import pytest
from falcon import testing

from hublib import open_hub, settings
from hubweb import create_app

from .test_errors import assert_error_shape


@pytest.fixture
def impatient_hub(data_dir, clock):
    """A hub whose writes give up after 100 ms (the default is 15 s)."""
    hub = open_hub(data_dir, clock=clock, busy_timeout_ms=100)
    yield hub
    hub.close()


@pytest.fixture
def locked(impatient_hub):
    """Another connection (as another process would) holding the write lock."""
    other = sqlite3.connect(impatient_hub.db_path, isolation_level=None)
    other.execute('BEGIN IMMEDIATE')
    yield
    other.execute('ROLLBACK')
    other.close()


def test_write_blocked_past_the_busy_timeout_is_503_with_retry_after_and_one_log_line(
        impatient_hub, locked, caplog):
    headers = {'Authorization': f'Bearer {settings.tokens(impatient_hub)["client"]}'}
    client = testing.TestClient(create_app(impatient_hub))
    caplog.set_level(logging.INFO)
    started = time.monotonic()
    response = client.simulate_put('/notes/AURORA-1', headers=headers,
                                   json={'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    assert time.monotonic() - started < 5
    body = assert_error_shape(response, 503)
    assert body['title'] == 'Хаб занят' and body['description'].startswith('хаб занят')
    assert response.headers['retry-after'] == '5'
    warnings = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert [(record.levelname, record.exc_info) for record in warnings] == [('WARNING', None)]
    assert 'PUT /notes/AURORA-1' in warnings[0].getMessage()
    assert 'Traceback' not in caplog.text and 'database is locked' not in response.text
    assert not impatient_hub.db.in_transaction()


def test_reads_still_answer_while_another_process_writes(impatient_hub, locked):
    headers = {'Authorization': f'Bearer {settings.tokens(impatient_hub)["client"]}'}
    client = testing.TestClient(create_app(impatient_hub))
    assert client.simulate_get('/batches', headers=headers).status_code == 200


def test_the_document_lists_503_on_every_operation_that_takes_a_token(client):
    # writes: the lock another process held; reads too: the read deadline and a full worker
    # pool (contract §20); open paths never
    paths = client.simulate_get('/openapi.json').json['paths']
    assert '503' in paths['/notes/{key}']['put']['responses']
    assert '503' in paths['/agent/state']['post']['responses']
    assert '503' in paths['/notes/{key}']['get']['responses']
    assert '503' not in paths['/health']['get']['responses']
