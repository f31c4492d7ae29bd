"""MCP never writes the mirror (spec «Зеркало задачи», «Журнал изменений задач», contract §14):
every tool, reads and writes, successes and failures, leaves the mirror tables identical, and the
authorizer on the MCP process's connections refuses a direct mirror write even from tool code."""
from __future__ import annotations

import pytest
from mcp import Client
from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations

from hublib.db import MIRROR_GUARD_TABLES
from hublib.models import MIRROR_TABLES
from hubweb.mcp_server import ALL_TOOLS, create_mcp_server
from hubweb.mcp_server.tooling import Toolbox, hub_of

from .conftest import body
from .test_tools import EVERY_TOOL, FAILURES

pytestmark = pytest.mark.anyio


def snapshot(hub) -> dict[str, list[str]]:
    # repr keeps the types (1 and 1.0 differ), so the comparison is value- and type-exact; sorted
    # because derived tables may have no rowid to order by.
    return {table: sorted(map(repr, hub.db.execute_sql(f'SELECT * FROM {table}').fetchall()))
            for table in sorted(MIRROR_GUARD_TABLES)}


async def test_every_tool_leaves_the_mirror_tables_identical(client, filled):
    before = snapshot(filled)
    # every mirror table holds rows (a derived one may be empty: refresh_written between runs)
    assert all(before[table] for table in MIRROR_TABLES), before
    called = set()
    for name, arguments in EVERY_TOOL + [(tool, arguments) for tool, arguments, _ in FAILURES]:
        await client.call_tool(name, arguments)
        called.add(name)
        assert snapshot(filled) == before, f'{name} {arguments} changed the mirror'
    # every tool that answers JSON (read_attachment answers content: its own test file)
    assert called == {spec.name for spec in ALL_TOOLS} - {'read_attachment'}
    # ...while the writes did land where they may: notes and the queue.
    note = filled.db.execute_sql("SELECT owner_note FROM issue_note WHERE key = 'AURORA-2'")
    assert note.fetchone() == ('спросить ИБ',)


# Tools with bugs, added to the server beside the real ones.
EXTRA = Toolbox()


@EXTRA.tool('Ошибочный инструмент', ToolAnnotations(), None)
def buggy_tool(ctx: Context, key: str) -> dict:
    """Пишет в зеркало напрямую."""
    hub = hub_of(ctx)
    with hub.write():
        hub.db.execute_sql("UPDATE issue SET summary = 'испорчено' WHERE key = ?", (key,))
    return {}


@EXTRA.tool('Запись очереди', ToolAnnotations(), None)
def queue_writer(ctx: Context, title: str) -> dict:
    """Пишет в очередь напрямую: разрешено."""
    hub = hub_of(ctx)
    with hub.write():
        hub.db.execute_sql("INSERT INTO batch (title, created_at) VALUES (?, 'x')", (title,))
    return {}


@EXTRA.tool('Поток', ToolAnnotations(read_only_hint=True), None)
def which_connection(ctx: Context, pause: float) -> dict:
    """Какое соединение у потока."""
    import sqlite3
    import threading
    import time

    connection = hub_of(ctx).db.connection()
    time.sleep(pause)  # overlap the calls so they need several threads
    SEEN.append((threading.get_ident(), id(connection)))
    assert connection.execute('SELECT count(*) FROM issue').fetchone()[0] == 13
    try:  # matches no row; the authorizer refuses it at preparation all the same
        connection.execute('UPDATE issue SET summary = summary WHERE 0')
        REFUSED.append(False)
    except sqlite3.DatabaseError as error:
        REFUSED.append(str(error) == 'not authorized')
    return {}


SEEN: list[tuple[int, int]] = []
REFUSED: list[bool] = []


@pytest.fixture
async def buggy_client(mcp_hub):
    async with Client(create_mcp_server(mcp_hub, tools=[*ALL_TOOLS, *EXTRA])) as connected:
        yield connected


async def test_authorizer_refuses_a_mirror_write_through_the_mcp_connection(buggy_client, filled,
                                                                            caplog):
    """A tool with a bug (here: one that writes the mirror) cannot break the rule."""
    client = buggy_client
    before = snapshot(filled)
    result = await client.call_tool('buggy_tool', {'key': 'AURORA-1'})
    assert result.is_error is True
    assert body(result)['title'] == 'Внутренняя ошибка'
    assert 'not authorized' in caplog.text
    assert snapshot(filled) == before
    assert filled.db.execute_sql("SELECT summary FROM issue WHERE key = 'AURORA-1'").fetchone() \
        == ('Задача 1',)
    # The refused statement rolled its transaction back; the thread's connection works on.
    allowed = await client.call_tool('queue_writer', {'title': 'разрешено'})
    assert not allowed.is_error, allowed.content
    assert filled.db.execute_sql("SELECT count(*) FROM batch WHERE title = 'разрешено'"
                                 ).fetchone() == (1,)


async def test_concurrent_tool_calls_use_one_guarded_connection_per_thread(buggy_client):
    """Tools run on the SDK's worker threads; each thread has its own connection, none shared."""
    import anyio

    SEEN.clear()
    REFUSED.clear()
    async with anyio.create_task_group() as group:
        for _ in range(4):
            group.start_soon(buggy_client.call_tool, 'which_connection', {'pause': 0.2})
    seen, refused = SEEN, REFUSED
    threads = {thread for thread, _ in seen}
    assert len(seen) == 4 and len(threads) >= 2
    assert refused == [True] * 4  # every worker thread's connection carries the guard
    connection_of: dict[int, int] = {}
    for thread, connection in seen:
        assert connection_of.setdefault(thread, connection) == connection  # kept per thread
    assert len(set(connection_of.values())) == len(threads)  # never shared between threads
