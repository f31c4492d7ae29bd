"""The MCP HTTP server's own refusals come as the hub's JSON error body (contract §13, §20), over a
real ``sdlc-hub mcp --http``: the SDK's 413 «Request body too large» and 400 «Invalid Content-Type
header», Starlette's 404 off ``/mcp``, and uvicorn's 400 «Invalid HTTP request received.» for a
request it cannot parse. The protocol's own JSON-RPC errors stay as the protocol has them."""
from __future__ import annotations

import json
import re
import socket
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest

from hublib import queue
from tests.conftest import FakeClock

from .test_http import INITIALIZE, TIMEOUT, bearer, start_mcp_http


def claimed_through_the_queue(hub, params: dict) -> int:
    """A refresh claimed the agent's way (the module's server needs no per-test fixture)."""
    queue.create_batch(hub, title='Обновление', commands=[{'type': 'refresh', 'params': params}])
    return queue.claim_command(hub, agent='jira')['command']['id']


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp('mcp-http-errors') / 'data'
    with start_mcp_http(data_dir, FakeClock(), claimed_through_the_queue) as running:
        yield running


def request(server, path: str = '/mcp', *, data: bytes | None = None, method: str = 'POST',
            headers: dict | None = None) -> tuple[int, str, bytes]:
    base = server['url'].rsplit('/mcp', 1)[0]
    sent = urllib.request.Request(base + path, data=data, method=method, headers={
        'Accept': 'application/json, text/event-stream', **bearer(server['tokens']['client']),
        **(headers or {})})
    try:
        with urllib.request.urlopen(sent, timeout=TIMEOUT) as answer:
            return answer.status, answer.headers.get('content-type', ''), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get('content-type', ''), error.read()


def assert_hub_error(answer, status: int, title: str, description: str | None = None) -> dict:
    code, content_type, data = answer
    assert code == status, (code, data)
    assert content_type.startswith('application/json'), content_type
    body = json.loads(data)
    assert set(body) == {'title', 'description'} and body['title'] == title, body
    if description is not None:
        assert body['description'] == description
    return body


def raw(server, request_head: bytes) -> tuple[bytes, bytes]:
    """The head and body of the answer to a request sent as bytes (a body it announces is not
    sent: the server answers from the head)."""
    address = urlsplit(server['url'])
    with socket.create_connection((address.hostname, address.port), timeout=TIMEOUT) as connection:
        connection.sendall(request_head)
        received = b''
        while not _whole(received):
            chunk = connection.recv(65536)
            if not chunk:  # closed: all there is
                break
            received += chunk
    head, _, body = received.partition(b'\r\n\r\n')
    return head, body


def _whole(received: bytes) -> bool:
    """Whether an answer with a Content-Length has come whole (one without it: read to the end)."""
    head, found, body = received.partition(b'\r\n\r\n')
    length = re.search(rb'content-length: *(\d+)', head.lower())
    return bool(found) and length is not None and len(body) >= int(length.group(1))


def test_a_body_over_the_sdks_limit_is_413_in_the_hubs_words(server):
    address = urlsplit(server['url'])
    head, body = raw(server, (
        f'POST /mcp HTTP/1.1\r\nHost: {address.netloc}\r\n'
        f'Authorization: Bearer {server["tokens"]["client"]}\r\n'
        'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n'
        f'Content-Length: {4 * 2 ** 20 + 1}\r\n\r\n').encode())
    assert head.startswith(b'HTTP/1.1 413 ') and b'application/json' in head.lower()
    assert json.loads(body) == {'title': 'Слишком большой запрос',
                                'description': 'тело запроса больше 4 МиБ'}


def test_a_body_that_is_not_json_by_its_type_is_400_in_the_hubs_words(server):
    answer = request(server, data=json.dumps(INITIALIZE).encode(),
                     headers={'Content-Type': 'text/plain'})
    assert_hub_error(answer, 400, 'Неверный запрос',
                     'нужен заголовок Content-Type: application/json')


def test_an_address_off_mcp_is_404_in_the_hubs_words(server):
    assert_hub_error(request(server, '/nope', method='GET'), 404, 'Не найдено', 'такого адреса нет')


def test_a_request_uvicorn_cannot_parse_is_400_in_the_hubs_words(server):
    head, data = raw(server, b'NOT AN HTTP REQUEST\r\n\r\n')
    assert head.startswith(b'HTTP/1.1 400 ')
    assert b'content-type: application/json' in head.lower()
    body = json.loads(data)
    assert body['title'] == 'Неверный запрос' and 'не удалось разобрать' in body['description']


def test_the_protocols_own_json_errors_pass_as_they_are(server):
    code, content_type, data = request(server, data=b'{"jsonrpc": "2.0"',
                                       headers={'Content-Type': 'application/json'})
    assert code == 400 and content_type.startswith('application/json')
    assert json.loads(data)['jsonrpc'] == '2.0'               # a JSON-RPC error, for the client
