"""Shared fixtures: a migrated file database in tmp_path and a clock the test moves by hand."""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

from hublib import open_hub


class FakeClock:
    """A clock that stands still until the test moves it."""

    def __init__(self, start: str = '2026-11-30T10:00:00+00:00'):
        self.moment = datetime.fromisoformat(start)

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, **delta) -> None:
        self.moment += timedelta(**delta)

    def set(self, text: str) -> None:
        self.moment = datetime.fromisoformat(text).astimezone(timezone.utc)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def data_dir(tmp_path):
    return tmp_path / 'hub-data'


@pytest.fixture
def claimed_refresh():
    """Make a refresh command in ``claimed`` (first delivery) with its sync run, written
    directly: library tests of ingest and reads need a claimed refresh but not the queue."""
    from hublib import syncjournal

    def make(hub, params: dict | None = None) -> int:
        params = params or {'keys': ['AURORA-1']}
        with hub.write():
            batch = hub.db.execute_sql("INSERT INTO batch (title, created_at) VALUES ('x', ?)",
                                       (hub.now(),)).lastrowid
            command_id = hub.db.execute_sql(
                'INSERT INTO command (batch_id, seq, type, params, status, deliveries) '
                "VALUES (?, 1, 'refresh', ?, 'claimed', 1)",
                (batch, json.dumps(params, ensure_ascii=False))).lastrowid
            syncjournal.open_run(hub, command_id, params)
        return command_id
    return make


@pytest.fixture
def hub(data_dir, clock):
    hub = open_hub(data_dir, clock=clock)
    yield hub
    hub.close()


class LiveServer(dict):
    """A running ``sdlc-hub serve`` subprocess: url, tokens, data_dir, process."""

    def stop(self, timeout: float = 10) -> int:
        process = self['process']
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        return process.returncode


def start_server(data_dir, *extra_args: str, timeout: float = 30) -> LiveServer:
    """Start ``python -m hubweb.cli serve`` on a free loopback port and wait for its URL line."""
    command = [sys.executable, '-m', 'hubweb.cli', 'serve', '--data', str(data_dir),
               '--host', '127.0.0.1', '--port', '0', *extra_args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, 'PYTHONUNBUFFERED': '1'})
    # Both pipes are drained by threads from the start (a chatty server never blocks on a full
    # pipe, and a silent one never blocks the test on readline): stdout lines go to a queue.
    lines: queue.Queue[str] = queue.Queue()
    errors: list[str] = []
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout],
                     daemon=True).start()
    threading.Thread(target=lambda: [errors.append(line) for line in process.stderr],
                     daemon=True).start()
    deadline = time.monotonic() + timeout
    url = None
    while url is None and time.monotonic() < deadline and process.poll() is None:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            continue
        if line.startswith('sdlc-hub listening on '):
            url = line.split()[-1]
    if url is None:
        process.kill()
        process.wait()
        raise RuntimeError(f'server did not start: {"".join(errors)[-2000:]}')
    tokens = json.loads(subprocess.run(
        [sys.executable, '-m', 'hubweb.cli', 'tokens', '--data', str(data_dir)],
        capture_output=True, text=True, check=True).stdout)
    return LiveServer(url=url, agent_token=tokens['agent'], client_token=tokens['client'],
                      data_dir=data_dir, process=process)


@pytest.fixture
def live_server(tmp_path):
    """A real waitress server on 127.0.0.1 in a subprocess, stopped after the test."""
    server = start_server(tmp_path / 'live-data')
    yield server
    server.stop()


@pytest.fixture
def server_factory():
    """``start_server`` for tests that need their own server options; stops them all afterwards."""
    servers = []

    def start(data_dir, *extra_args: str) -> LiveServer:
        servers.append(start_server(data_dir, *extra_args))
        return servers[-1]
    yield start
    for server in servers:
        server.stop()
