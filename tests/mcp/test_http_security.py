"""Origin and Host checks of ``sdlc-hub mcp --http`` on every host (contract §14a; the MCP
specification's MUST against DNS rebinding): a foreign ``Origin`` → 403, a ``Host`` that is not the
listening address → 421, before the token is even looked at; ``--allow-origin`` adds an origin and
its host. Real processes on ``--host 0.0.0.0`` and on loopback."""
from __future__ import annotations

import pytest

from .test_http import bearer, post, start_mcp_http


@pytest.fixture
def wildcard(data_dir, clock, claimed_refresh):
    with start_mcp_http(data_dir, clock, claimed_refresh, '--host', '0.0.0.0',
                        '--allow-origin', 'https://hub.example.com') as server:
        assert server['url'].startswith('http://0.0.0.0:')
        port = server['url'].split(':')[2].split('/')[0]
        yield {**server, 'port': port, 'url': f'http://127.0.0.1:{port}/mcp'}


def test_foreign_origin_is_403_on_0_0_0_0(wildcard):
    url, token = wildcard['url'], wildcard['tokens']['client']
    status, _, body = post(url, {**bearer(token), 'Origin': 'http://evil.example'})
    assert (status, body['title']) == (403, 'Нет доступа')
    assert 'evil.example' in body['description'] and '--allow-origin' in body['description']
    assert post(url, {'Origin': 'http://evil.example'})[0] == 403  # before the token
    assert post(url, {**bearer(token), 'Origin': 'null'})[0] == 403


def test_foreign_host_is_421_on_0_0_0_0(wildcard):
    url, token = wildcard['url'], wildcard['tokens']['client']
    status, _, body = post(url, {**bearer(token), 'Host': 'evil.example'})
    assert (status, body['title']) == (421, 'Неверный адрес')
    assert post(url, {'Host': f'evil.example:{wildcard["port"]}'})[0] == 421
    assert post(url, {**bearer(token), 'Host': f'127.0.0.1:1'})[0] == 421  # another port


def test_own_and_allowed_origins_and_hosts_pass(wildcard):
    url, token, port = wildcard['url'], wildcard['tokens']['client'], wildcard['port']
    for headers in ({},  # no Origin: not a browser
                    {'Origin': f'http://127.0.0.1:{port}'},
                    {'Host': f'localhost:{port}', 'Origin': f'http://localhost:{port}'},
                    {'Host': 'hub.example.com', 'Origin': 'https://hub.example.com'},
                    {'Host': 'hub.example.com:443', 'Origin': 'https://HUB.example.com:443/'}):
        status, response_headers, body = post(url, {**bearer(token), **headers})
        assert status == 200, (headers, body)
    assert post(url, {'Origin': f'http://127.0.0.1:{port}'})[0] == 401  # then the token


def test_loopback_checks_too_and_takes_allowed_origins(data_dir, clock, claimed_refresh):
    with start_mcp_http(data_dir, clock, claimed_refresh,
                        '--allow-origin', 'http://tool.local:3000') as server:
        url, token = server['url'], server['tokens']['client']
        assert post(url, {**bearer(token), 'Origin': 'http://evil.example'})[0] == 403
        assert post(url, {**bearer(token), 'Host': 'evil.example'})[0] == 421
        assert post(url, {**bearer(token), 'Origin': 'http://tool.local:3000'})[0] == 200
