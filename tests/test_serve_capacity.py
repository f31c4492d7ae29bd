"""The real server under reads that take every interface worker (contract §20, issue 31):
``/health`` and the agent have threads of their own, an interface request that waits too long
is a 503 with ``Retry-After``, a read whose client has gone stops and frees its thread, a read
past the deadline is a 503, and the answers waitress gives by itself (431, 400) are the hub's
JSON error body."""
from __future__ import annotations

import http.client
import json
import socket
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest

from hublib import open_hub, settings
from tests.support.server import ServerProcess
from tests.support.slow_reads import build_slow_mirror, slow_jql

# ~30 s of work on the slow mirror: far longer than anything below waits for.
ENDLESS_JQL = slow_jql(150)  # within the 10,000 characters a query may have


@pytest.fixture(scope='module')
def slow_dir(tmp_path_factory):
    return build_slow_mirror(tmp_path_factory.mktemp('capacity') / 'hub')


@pytest.fixture
def server(slow_dir):
    """The slow mirror served with one interface worker; the clients a test left waiting go
    away before it stops (their reads stop with them)."""
    with ServerProcess(slow_dir, threads=1) as process:
        tokens = process.tokens()
        process.client = {'Authorization': f'Bearer {tokens["client"]}'}
        process.agent = {'Authorization': f'Bearer {tokens["agent"]}'}
        process.waiting = []
        yield process
        for sock in process.waiting:
            sock.close()
        if process.waiting:
            time.sleep(0.3)  # the server notices, and stops their reads, before it stops


def address(server) -> tuple[str, int]:
    host, port = server.url.removeprefix('http://').rsplit(':', 1)
    return host, int(port)


def request(server, method: str, path: str, headers: dict | None = None, body=None,
            timeout: float = 30) -> tuple[int, dict, bytes, float]:
    """(status, headers, body, seconds) of one request on a connection of its own."""
    connection = http.client.HTTPConnection(*address(server), timeout=timeout)
    started = time.monotonic()
    try:
        data = json.dumps(body).encode() if body is not None else None
        sent = {**(headers or {}), **({'Content-Type': 'application/json'} if data else {})}
        connection.request(method, path, body=data, headers=sent)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read(), \
            time.monotonic() - started
    finally:
        connection.close()


def occupy(server, path: str) -> socket.socket:
    """A client that has asked for ``path`` and waits for the answer until it closes the socket."""
    sock = socket.create_connection(address(server), timeout=10)
    sock.sendall(f'GET {path} HTTP/1.1\r\nHost: hub\r\n'
                 f'Authorization: {server.client["Authorization"]}\r\n\r\n'.encode())
    server.waiting.append(sock)
    return sock


def slow_path(kind: str = '/issues', jql: str = ENDLESS_JQL) -> str:
    return f'{kind}?{urlencode({"jql": jql}, quote_via=quote)}'


def assert_hub_error(status: int, headers: dict, body: bytes, expected: int) -> dict:
    assert status == expected, body[:300]
    assert headers['Content-Type'].startswith('application/json')
    parsed = json.loads(body)
    assert set(parsed) == {'title', 'description'}
    assert any('а' <= ch <= 'я' for ch in parsed['title'] + parsed['description'])
    return parsed


def test_health_and_the_agent_answer_at_once_while_interface_reads_take_every_worker(server):
    occupy(server, slow_path())
    occupy(server, slow_path())  # queued behind the first: the interface lane is full
    time.sleep(0.5)
    health = [request(server, 'GET', '/health') for _ in range(10)]
    assert all(status == 200 for status, *_ in health)
    assert max(seconds for *_, seconds in health) < 1.0, [seconds for *_, seconds in health]
    status, _, _, seconds = request(server, 'GET', '/agent/settings?agent=jira', server.agent)
    assert status == 200 and seconds < 2.0
    item = {'history_id': 'cap-1', 'seq': 0, 'key': 'AURORA-1', 'author': 'ivanov',
            'created': '2026-11-30T10:00:00.000+0300', 'field_id': 'status',
            'field_name': 'Status', 'from_string': 'Открыта', 'to_string': 'В работе'}
    status, _, body, seconds = request(server, 'POST', '/agent/history', server.agent,
                                       {'agent': 'jira', 'items': [item]})
    assert status == 200 and json.loads(body)['inserted'] == 1 and seconds < 2.0


def test_an_interface_request_that_waits_too_long_is_503_with_retry_after(server):
    occupy(server, slow_path())
    time.sleep(0.5)
    status, headers, body, seconds = request(server, 'GET', '/projects', server.client)
    parsed = assert_hub_error(status, headers, body, 503)
    assert parsed['title'] == 'Хаб перегружен'
    assert int(headers['Retry-After']) > 0
    assert 2.5 < seconds < 6, seconds  # waited briefly, not until the slow read ended


@pytest.mark.parametrize('kind', ['/issues', '/issues.csv'])
def test_a_read_whose_client_has_gone_stops_and_frees_its_thread(server, kind):
    sock = occupy(server, slow_path(kind))
    time.sleep(0.5)  # the one interface worker is reading
    sock.close()
    time.sleep(0.3)
    status, _, _, seconds = request(server, 'GET', '/projects', server.client)
    assert status == 200 and seconds < 2.0, (status, seconds)
    # the hub's line, or waitress's when the stream's last words found the socket closed
    log = server.log_text()
    assert 'клиент отключился' in log or 'Client disconnected while serving /issues.csv' in log


def test_a_read_past_the_deadline_is_503_with_retry_after(server, slow_dir):
    hub = open_hub(slow_dir)
    try:
        settings.update_settings(hub, {'read_deadline_seconds': 0.05})
        status, headers, body, seconds = request(server, 'GET', slow_path(jql=slow_jql()),
                                                 server.client)
    finally:
        settings.update_settings(hub, {'read_deadline_seconds': 10})
        hub.close()
    parsed = assert_hub_error(status, headers, body, 503)
    assert parsed['title'] == 'Запрос слишком долгий' and int(headers['Retry-After']) > 0
    assert seconds < 2.0


def raw_answer(server, data: bytes) -> tuple[int, dict, bytes]:
    """What the server answers to the raw bytes ``data``."""
    with socket.create_connection(address(server), timeout=10) as sock:
        sock.sendall(data)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, dict(response.getheaders()), response.read()


UNPARSEABLE = [
    b'GET /health HTTP/1.1\r\nHost: hub\r\nBad Header: x\r\n\r\n',
    b'GET /health HTTP/1.1\r\nHost: hub\r\nX-Bad: a\x01b\r\n\r\n',
    b'GET /health HTTP/1.1\r\nHost: hub\r\nContent-Length: abc\r\n\r\n',
    b'G\x00T /health HTTP/1.1\r\nHost: hub\r\n\r\n',
]


def test_answers_waitress_gives_by_itself_are_the_hubs_json_error_body(server):
    data = b'GET /health HTTP/1.1\r\nHost: hub\r\nX-Big: ' + b'a' * 300_000 + b'\r\n\r\n'
    parsed = assert_hub_error(*raw_answer(server, data), 431)
    assert parsed['title'] == 'Слишком большие заголовки'
    for data in UNPARSEABLE:
        parsed = assert_hub_error(*raw_answer(server, data), 400)
        assert parsed == {'title': 'Неверный запрос', 'description': 'запрос не удалось '
                          'разобрать: неверная строка запроса или заголовок'}, data
    assert request(server, 'GET', '/health')[0] == 200  # the server goes on


@pytest.mark.parametrize('path, lane', [
    ('/health', 'quick'), ('/openapi.json', 'quick'), ('/', 'quick'), ('/ui/js/main.js', 'quick'),
    ('', 'quick'), ('/agent/state', 'agent'), ('//agent/claim', 'agent'), ('/issues', 'interface'),
    ('/projects/AWPCA/cycle-time', 'interface'), ('/agents', 'interface'),
])
def test_each_request_goes_to_the_pool_of_its_kind(path, lane):
    from hubweb.lanes import lane_of
    assert lane_of(path) == lane


def test_health_after_an_interface_request_on_the_same_connection_is_not_overdue(server):
    # the connection's last request waited in the interface lane; /health, answered on the
    # main thread, never counts that wait as its own
    client = http.client.HTTPConnection(*address(server), timeout=10)
    try:
        client.request('GET', '/projects', headers=server.client)
        assert client.getresponse().read() and True
        time.sleep(3.5)
        for method in ('GET', 'GET'):
            client.request(method, '/health')
            response = client.getresponse()
            response.read()
            assert response.status == 200, method
    finally:
        client.close()


def read_answer(stream) -> tuple[int, bytes]:
    """(status, body) of the next answer on a buffered socket reader (Content-Length bodies)."""
    status = int(stream.readline().split()[1])
    length = 0
    while (line := stream.readline()) not in (b'\r\n', b''):
        name, _, value = line.decode('latin-1').partition(':')
        if name.strip().lower() == 'content-length':
            length = int(value)
    return status, stream.read(length)


def test_pipelined_health_requests_are_each_answered_in_order(server):
    with socket.create_connection(address(server), timeout=10) as sock:
        sock.sendall(b'GET /health HTTP/1.1\r\nHost: hub\r\n\r\n' * 3
                     + b'GET /openapi.json HTTP/1.1\r\nHost: hub\r\n\r\n')
        stream = sock.makefile('rb')
        answers = [read_answer(stream) for _ in range(4)]
    assert [status for status, _ in answers] == [200] * 4
    assert all(json.loads(body)['status'] == 'ok' for _, body in answers[:3])
    assert 'paths' in json.loads(answers[3][1])


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='nice per thread: Linux')
def test_interface_workers_run_below_the_other_threads_priority(server):
    # field 19 of /proc/<pid>/task/<tid>/stat is the thread's nice value
    nice = Counter(int(stat.read_text().rsplit(')', 1)[1].split()[16])
                   for stat in Path(f'/proc/{server.process.pid}/task').glob('*/stat'))
    assert nice[10] == 1  # the one interface worker of this server
    assert nice[0] >= 5  # the main thread, 2 agent and 2 quick workers, the overdue watcher
