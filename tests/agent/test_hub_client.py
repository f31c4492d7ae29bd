"""The agent's side of the hub's errors (docs/agent-protocol.md «When the hub answers with an
error»): 503 «хаб занят» is waited out for its Retry-After and 507 «на диске нет места» for a
while, then the same request — a file's bytes included — is sent again; 401/403 are fatal."""
from __future__ import annotations

import io

import pytest

from hubweb.demo.jira_rest import Server
from hubweb.jira_agent import HubClient
from hubweb.jira_agent.hub import DISK_FULL_PAUSE, HubAuthError, HubHTTPError
from tests.agent.conftest import SteppingClock


class Flaky:
    """Answers the statuses of ``plan`` in turn (then 200), recording each request's body."""

    def __init__(self, *plan: tuple[int, dict]):
        self.plan = list(plan)
        self.bodies: list[bytes] = []

    def __call__(self, environ, start_response):
        length = int(environ.get('CONTENT_LENGTH') or 0)
        self.bodies.append(environ['wsgi.input'].read(length))
        status, headers = self.plan.pop(0) if self.plan else (200, {})
        raw = b'{"ok": true}' if status == 200 else b'{"title": "x", "description": "y"}'
        start_response(f'{status} X', [('Content-Type', 'application/json'),
                                       ('Content-Length', str(len(raw))), *headers.items()])
        return [raw]


@pytest.fixture
def flaky():
    servers = []

    def start(*plan):
        app = Flaky(*plan)
        servers.append(Server(app))
        return app, servers[-1].url
    yield start
    for server in servers:
        server.close()


def test_a_busy_hub_and_a_full_disk_are_waited_out_and_the_same_file_is_sent_again(flaky):
    app, url = flaky((503, {'Retry-After': '7'}), (507, {}), (200, {}))
    clock = SteppingClock()
    client = HubClient(url, 'token', clock=clock)
    content = b'\x00bytes of a file' * 1000
    assert client.call('PUT', '/agent/files/abc', raw=io.BytesIO(content),
                       length=len(content)) == {'ok': True}
    assert app.bodies == [content] * 3
    assert clock.slept == [7.0, DISK_FULL_PAUSE]


def test_a_refused_token_and_a_refused_page_are_raised_at_once(flaky):
    app, url = flaky((401, {}), (409, {}))
    client = HubClient(url, 'token', clock=SteppingClock())
    with pytest.raises(HubAuthError):
        client.call('POST', '/agent/claim', {'agent': 'jira'})
    with pytest.raises(HubHTTPError) as refused:
        client.call('POST', '/agent/state', {'agent': 'jira'})
    assert refused.value.status == 409 and 'x: y' in str(refused.value)
