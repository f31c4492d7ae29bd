"""A write blocked past the busy timeout (another process holds the write lock): over MCP an
``isError`` result saying the hub is busy (the HTTP API's 503 body), nothing written."""
from __future__ import annotations

import sqlite3

import pytest
from mcp import Client

from hublib import notes, open_hub
from hublib.errors import NotFoundError
from hubweb.mcp_server import create_mcp_server

from .conftest import body

pytestmark = pytest.mark.anyio


async def test_a_busy_hub_is_an_error_result_saying_so_and_nothing_is_written(filled, data_dir,
                                                                             clock):
    guarded = open_hub(data_dir, clock=clock, guard_mirror=True, busy_timeout_ms=50)
    other = sqlite3.connect(filled.db_path, isolation_level=None)
    try:
        async with Client(create_mcp_server(guarded)) as client:
            other.execute('BEGIN IMMEDIATE')
            result = await client.call_tool('put_note', {
                'key': 'AURORA-3', 'updated_by': 'ivanov', 'owner_note': 'занято'})
            other.execute('ROLLBACK')
            assert result.is_error is True
            assert body(result)['title'] == 'Хаб занят'
            assert body(result)['description'].startswith('хаб занят')
            with pytest.raises(NotFoundError):
                notes.note(filled, 'AURORA-3')
            again = await client.call_tool('put_note', {
                'key': 'AURORA-3', 'updated_by': 'ivanov', 'owner_note': 'свободно'})
            assert not again.is_error, again.content
    finally:
        other.close()
        guarded.close()
