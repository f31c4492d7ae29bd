"""Spec 001 scenarios that name MCP, held through MCP: agent status («через API и MCP») and the
settings cleanup a new MCP session does («Ключи вернул процесс прежней версии»)."""
from __future__ import annotations

import json
import sqlite3

import pytest
from mcp import Client

from hublib import open_hub, queue, settings
from tests.support.legacy import create_legacy_database
from hubweb.mcp_server import create_mcp_server

pytestmark = pytest.mark.anyio


def claim(hub) -> dict:
    return queue.claim_command(hub, agent='jira', agent_version='15', settings_version=1,
                               last_jira_call_at=None)


async def new_session_call(data_dir, clock, tool: str, arguments: dict | None = None):
    """One tool call in a new MCP session: its own guarded hub, opened as the process opens it."""
    hub = open_hub(data_dir, clock=clock, guard_mirror=True)
    try:
        async with Client(create_mcp_server(hub)) as client:
            result = await client.call_tool(tool, arguments or {})
    finally:
        hub.close()
    assert not result.is_error, result.content
    return result


async def agents_over_mcp(data_dir, clock) -> dict[str, dict]:
    result = await new_session_call(data_dir, clock, 'agent_status')
    return {item['agent']: item for item in result.structured_content['items']}


async def test_scenario_agent_silent_for_long_is_offline_over_mcp(hub, data_dir, clock):
    """«Агент давно не выходил на связь»: jira's last_seen_at older than 5 minutes → offline."""
    claim(hub)
    clock.advance(minutes=4, seconds=59)
    assert (await agents_over_mcp(data_dir, clock))['jira']['online'] is True
    clock.advance(seconds=2)
    jira = (await agents_over_mcp(data_dir, clock))['jira']
    assert jira['online'] is False
    assert jira['last_seen_at'] == '2026-11-30T10:00:00+00:00'


async def test_scenario_agents_status_separately_over_mcp(hub, data_dir, clock):
    """«Статусы агентов раздельно»: jira a minute ago → online; wiki never → offline, null."""
    claim(hub)
    clock.advance(minutes=1)
    items = await agents_over_mcp(data_dir, clock)
    assert list(items) == ['jira', 'wiki']
    assert items['jira']['online'] is True
    assert items['wiki'] == {'agent': 'wiki', 'online': False, 'last_seen_at': None,
                             'agent_version': None, 'settings_version': None,
                             'current_command_id': None, 'last_call_at': None, 'redelivered': []}


async def test_redelivered_commands_are_listed_over_mcp(hub, data_dir, clock):
    made = queue.create_batch(hub, title='Комментарий', author='ivanov', commands=[
        {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'текст'}}])
    claim(hub)
    assert (await agents_over_mcp(data_dir, clock))['jira']['redelivered'] == []
    clock.advance(minutes=2)
    claim(hub)  # the first delivery was lost: the same command again
    assert (await agents_over_mcp(data_dir, clock))['jira']['redelivered'] == [
        {'id': made['commands'][0]['id'], 'type': 'add_comment',
         'claimed_at': '2026-11-30T10:02:00+00:00', 'deliveries': 2}]


def stored(data_dir) -> dict:
    connection = sqlite3.connect(data_dir / 'hub.sqlite')
    try:
        return {key: json.loads(value) for key, value in connection.execute(
            'SELECT key, value FROM setting')}
    finally:
        connection.close()


def write_retired_keys(data_dir) -> None:
    """What a process of the previous version (an MCP session before reconnect) does."""
    connection = sqlite3.connect(data_dir / 'hub.sqlite')
    connection.executemany('INSERT OR REPLACE INTO setting (key, value) VALUES (?, ?)',
                           [('status_labels', '{}'), ('transitions_map', '{"В работе": "11"}')])
    connection.commit()
    connection.close()


async def test_scenario_new_mcp_session_on_v8_drops_retired_keys_keeping_version(data_dir, clock):
    """«Ключи вернул процесс прежней версии»: база v8, старый процесс вставил status_labels и
    transitions_map; новая MCP-сессия (ensure_defaults) — ключей нет, settings_version прежний."""
    data_dir.mkdir(parents=True)
    create_legacy_database(data_dir / 'hub.sqlite', 8, {'project_key': 'AURORA',
                                                        'settings_version': 7})
    write_retired_keys(data_dir)
    assert {'status_labels', 'transitions_map'} <= set(stored(data_dir))
    for _ in range(2):  # the first session also migrates v8 → v9; the old process comes back
        view = (await new_session_call(data_dir, clock, 'get_settings')).structured_content
        values = stored(data_dir)
        for key in ('status_labels', 'transitions_map'):
            assert key not in values and key not in view
        assert values['settings_version'] == view['settings_version'] == 7
        assert values['schema_version'] == 9
        assert 'tokens' not in view and 'schema_version' not in view
        write_retired_keys(data_dir)


async def test_get_settings_never_shows_the_tokens(hub, data_dir, clock):
    tokens = settings.tokens(hub)
    result = await new_session_call(data_dir, clock, 'get_settings')
    text = result.content[0].text
    assert tokens['agent'] not in text and tokens['client'] not in text
    assert 'tokens' not in result.structured_content
