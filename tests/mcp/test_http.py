"""``sdlc-hub mcp --http`` as a real subprocess on loopback: streamable HTTP at ``/mcp`` with
no token (401), a wrong one (401), the agent token (403), a token in the address (401) and the
client token (the SDK's own HTTP client works); SIGTERM stops it cleanly."""
from __future__ import annotations

import json
import queue as queues
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from hublib import open_hub, settings

from .conftest import fill_hub

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30
INITIALIZE = {'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {
    'protocolVersion': '2025-06-18', 'capabilities': {},
    'clientInfo': {'name': 'pytest', 'version': '1'}}}


@pytest.fixture
def mcp_http(data_dir, clock, claimed_refresh):
    writer = open_hub(data_dir, clock=clock)
    fill_hub(writer, claimed_refresh)
    tokens = settings.tokens(writer)
    writer.close()
    process = subprocess.Popen(
        [sys.executable, '-m', 'hubweb.cli', 'mcp', '--data', str(data_dir), '--http',
         '--port', '0'], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        encoding='utf-8')
    lines: queues.Queue[str] = queues.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout],
                     daemon=True).start()
    try:
        first = lines.get(timeout=TIMEOUT)
        assert first.startswith('sdlc-hub mcp listening on http://127.0.0.1:'), first
        yield {'url': first.split()[-1], 'tokens': tokens, 'process': process}
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=TIMEOUT)


def post(url: str, headers: dict | None = None) -> tuple[int, dict, dict]:
    request = urllib.request.Request(
        url, data=json.dumps(INITIALIZE).encode(), method='POST',
        headers={'Content-Type': 'application/json',
                 'Accept': 'application/json, text/event-stream', **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return response.status, dict(response.headers), {}
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def bearer(token: str) -> dict:
    return {'Authorization': f'Bearer {token}'}


def test_http_needs_the_client_token(mcp_http):
    url, tokens = mcp_http['url'], mcp_http['tokens']
    status, headers, body = post(url)
    assert (status, body['title']) == (401, 'Нужна авторизация')
    assert headers['www-authenticate'] == 'Bearer'
    status, _, body = post(url, bearer('wrong-token'))
    assert (status, body['description']) == (401, 'неверный токен')
    status, _, body = post(url, bearer(tokens['agent']))
    assert (status, body['title']) == (403, 'Нет доступа')
    status, _, body = post(f'{url}?token={tokens["client"]}', bearer(tokens['client']))
    assert status == 401 and 'не в адресе' in body['description']
    status, _, body = post(f'{url}?x={tokens["client"]}', bearer(tokens['client']))
    assert status == 401 and 'не в адресе' in body['description']
    status, headers, _ = post(url, bearer(tokens['client']))
    assert status == 200 and headers['mcp-session-id']


@pytest.mark.anyio
@pytest.mark.parametrize('anyio_backend', ['asyncio'])
async def test_http_session_with_the_client_token(mcp_http):
    token = mcp_http['tokens']['client']
    async with create_mcp_http_client(headers=bearer(token)) as http:
        async with Client(streamable_http_client(mcp_http['url'], http_client=http)) as client:
            tools = (await client.list_tools()).tools
            assert len(tools) == 15
            card = await client.call_tool('get_issue', {'key': 'AURORA-1', 'comment_limit': 1})
            assert not card.is_error
            assert card.structured_content['note']['work_kind'] == 'Аналитика'
            assert len(card.structured_content['comments']) == 1
            note = await client.call_tool('put_note', {'key': 'AURORA-5', 'updated_by': 'ivanov',
                                                       'rest_text': 'проверить'})
            assert note.structured_content['rest_text'] == 'проверить'
            missing = await client.call_tool('project_board', {'label': 'NOPE'})
            assert missing.is_error
            assert json.loads(missing.content[0].text)['description'] == "проекта 'NOPE' нет"


def test_sigterm_stops_the_http_server_cleanly(mcp_http):
    process = mcp_http['process']
    assert post(mcp_http['url'], bearer(mcp_http['tokens']['client']))[0] == 200
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=TIMEOUT) == 0
    stderr = process.stderr.read()
    assert 'Traceback' not in stderr, stderr
    assert stderr.rstrip().endswith('hubweb.cli: stopped'), stderr  # not a silent stop
