"""The read deadline over MCP (contract §20): a tool whose reads run past
``read_deadline_seconds`` answers an ``isError`` result with the HTTP API's 503 body (Russian);
a fast tool call is untouched."""
from __future__ import annotations

import time

import pytest
from mcp import Client

from hublib import open_hub, settings
from hubweb.mcp_server import create_mcp_server
from tests.support.slow_reads import build_slow_mirror, slow_jql

from .conftest import body

pytestmark = pytest.mark.anyio


@pytest.fixture(scope='module')
def slow_dir(tmp_path_factory):
    return build_slow_mirror(tmp_path_factory.mktemp('slow') / 'hub')


async def test_a_tool_past_the_deadline_is_an_error_result_saying_so(slow_dir):
    hub = open_hub(slow_dir, guard_mirror=True)
    try:
        settings.update_settings(hub, {'read_deadline_seconds': 0.05})
        async with Client(create_mcp_server(hub)) as client:
            started = time.monotonic()
            result = await client.call_tool('search_issues', {'jql': slow_jql()})
            assert time.monotonic() - started < 2
            assert result.is_error is True
            assert body(result)['title'] == 'Запрос слишком долгий'
            assert body(result)['description'].startswith(
                'запрос выполнялся дольше 0.05 с и остановлен')
            fast = await client.call_tool('search_issues', {'jql': 'key = AURORA-7'})
            assert not fast.is_error, fast.content
    finally:
        settings.update_settings(hub, {'read_deadline_seconds': 10})
        hub.close()
