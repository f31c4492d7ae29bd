"""The real server under many idle and half-open connections, and a busy port (issue 18).

waitress accepts no new connection once ``connection_limit`` are open (its default, 100, let ~100
idle sockets make ``/health`` time out) and closes idle ones after ``channel_timeout``. ``serve``
sets both (``--connection-limit``, ``--channel-timeout``) and lets waitress poll() instead of
select() where it can, so hundreds of sockets are fine."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from hubweb.cli import _parser

ROOT = Path(__file__).resolve().parents[1]
IDLE = 400


@pytest.mark.slow
def test_health_answers_within_seconds_while_400_idle_and_half_open_connections_are_open(
        tmp_path, server_factory):
    server = server_factory(tmp_path / 'data')
    host, port = server['url'].removeprefix('http://').rsplit(':', 1)
    held: list[socket.socket] = []
    try:
        for number in range(IDLE):
            sock = socket.create_connection((host, int(port)), timeout=5)
            if number % 2:  # half-open: a request whose headers never end
                sock.sendall(b'GET /health HTTP/1.1\r\nHost: x\r\n')
            held.append(sock)
        started = time.monotonic()
        with urllib.request.urlopen(f'{server["url"]}/health', timeout=10) as response:
            assert response.status == 200
            assert json.loads(response.read())['status'] == 'ok'
        assert time.monotonic() - started < 5
    finally:
        for sock in held:
            sock.close()


def test_limits_are_serve_options_with_defaults():
    args = _parser().parse_args(['serve'])
    assert (args.connection_limit, args.channel_timeout) == (1000, 60) or \
        (args.connection_limit, args.channel_timeout) == (500, 60)  # 500 where select() rules
    args = _parser().parse_args(['serve', '--connection-limit', '2000', '--channel-timeout', '30'])
    assert (args.connection_limit, args.channel_timeout) == (2000, 30)


@pytest.mark.parametrize('option', ['--connection-limit', '--channel-timeout'])
def test_limits_out_of_range_are_usage_errors(option):
    result = subprocess.run([sys.executable, '-m', 'hubweb.cli', 'serve', option, '0'],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 2 and option in result.stderr


def test_serve_on_a_busy_port_creates_no_hub_and_no_tokens(tmp_path):
    data_dir = tmp_path / 'new-hub'
    with socket.create_server(('127.0.0.1', 0)) as taken:
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, '-m', 'hubweb.cli', 'serve', '--data', str(data_dir), '--port',
             str(port)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith('sdlc-hub serve: ')]
    assert len(lines) == 1 and str(port) in lines[0] and 'Traceback' not in result.stderr
    assert not data_dir.exists()
