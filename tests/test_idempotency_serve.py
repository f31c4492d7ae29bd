"""Idempotency keys against real server processes (contract §9.4b): concurrent requests with one
key, and a server killed with SIGKILL between the commit and the answer while the client times out
and retries. Bounded in time: a few server starts and seconds of waiting."""
from __future__ import annotations

import http.client
import json
import socket
import sqlite3
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from hublib import open_hub, settings
from tests.support.server import ServerProcess
from tests.support.slow_commit import COMMITTED, PAUSE_ENV

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
BODY = {'title': 'Комментарий в Jira', 'author': 'ivanov', 'commands': [
    {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'ровно один раз'}}]}
CLIENT_TIMEOUT = 3.0
CONCURRENT = 8


def post_batch(url: str, token: str, key: str, timeout: float = 30.0) -> tuple[int, dict, dict]:
    """``POST /batches`` with an Idempotency-Key: (status, body, headers); socket.timeout when the
    answer does not come within ``timeout``."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        connection.request('POST', '/batches', body=json.dumps(BODY).encode(), headers={
            'Authorization': f'Bearer {token}', 'Content-Type': 'application/json',
            'Idempotency-Key': key})
        response = connection.getresponse()
        return response.status, json.loads(response.read()), dict(response.getheaders())
    finally:
        connection.close()


def stored(data_dir: Path, table: str) -> int:
    conn = sqlite3.connect(str(data_dir / 'hub.sqlite'))
    try:
        return conn.execute(f'SELECT count(*) FROM {table}').fetchone()[0]
    finally:
        conn.close()


@pytest.fixture
def data_dir(tmp_path):
    data_dir = tmp_path / 'hub-data'
    hub = open_hub(data_dir)
    settings.update_settings(hub, {'project_key': 'AURORA'})
    hub.close()
    return data_dir


def test_concurrent_requests_with_one_key_to_a_real_server_queue_exactly_one_batch(data_dir):
    with ServerProcess(data_dir, threads=CONCURRENT) as server:
        token = server.tokens()['client']
        barrier = threading.Barrier(CONCURRENT)
        answers, errors = [], []

        def send():
            barrier.wait()
            try:
                answers.append(post_batch(server.url, token, 'one-batch'))
            except Exception as error:  # noqa: BLE001 — reported below
                errors.append(error)

        threads = [threading.Thread(target=send) for _ in range(CONCURRENT)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    assert errors == []
    assert [status for status, _, _ in answers] == [201] * CONCURRENT
    assert all(body == answers[0][1] for _, body, _ in answers)
    replayed = [headers.get('Idempotent-Replayed') for _, _, headers in answers]
    assert (replayed.count(None), replayed.count('true')) == (1, CONCURRENT - 1)
    assert stored(data_dir, 'batch') == 1


def test_a_client_that_times_out_and_retries_while_the_server_is_killed_after_the_commit_gets_one_batch(
        data_dir):
    paused = ServerProcess(data_dir, module='tests.support.slow_commit', cwd=ROOT,
                           env={PAUSE_ENV: '60'})
    try:
        token = paused.tokens()['client']
        started = time.monotonic()
        with pytest.raises((socket.timeout, TimeoutError)):
            post_batch(paused.url, token, 'lost-answer', timeout=CLIENT_TIMEOUT)
        assert time.monotonic() - started < CLIENT_TIMEOUT + 5
        deadline = time.monotonic() + 10
        while COMMITTED not in paused.log_text():
            assert time.monotonic() < deadline, paused.log_text()[-2000:]
            time.sleep(0.05)
    finally:
        paused.kill()  # SIGKILL while the request sleeps between commit and answer
    assert paused.process.returncode == -9
    assert stored(data_dir, 'batch') == 1  # committed before the kill
    assert stored(data_dir, 'idempotent_request') == 1  # ... with the answer it was to give

    with ServerProcess(data_dir) as restarted:
        status, body, headers = post_batch(restarted.url, token, 'lost-answer')
        assert (status, headers.get('Idempotent-Replayed')) == (201, 'true')
        created_id = int(paused.log_text().split(COMMITTED)[1].split()[0])
        assert body['id'] == created_id
        assert body['commands'][0]['params'] == BODY['commands'][0]['params']
        again = post_batch(restarted.url, token, 'lost-answer')
        assert again[:2] == (201, body)
    assert stored(data_dir, 'batch') == 1
