"""``sdlc-hub mcp --read-only`` and ``--tools a,b`` (contract §14a): the server lists and serves
only those tools, over stdio and over HTTP; an unknown name is a usage error naming it."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from hublib import open_hub
from hubweb.cli import main
from hubweb.mcp_server import ALL_TOOLS, TOOL_NAMES, chosen_tools, create_mcp_server

from .conftest import body, fill_hub
from .test_mirror_guard import snapshot

ROOT = Path(__file__).resolve().parents[2]
WRITERS = {'put_note', 'queue_batch', 'cancel_batch', 'fetch_attachment', 'retry_batch'}
pytestmark = pytest.mark.anyio


def queue_and_notes(hub) -> dict:
    return {table: hub.db.execute_sql(f'SELECT * FROM {table} ORDER BY 1').fetchall()
            for table in ('batch', 'command', 'issue_note')}


async def test_read_only_lists_no_write_tool_and_refuses_a_call_writing_nothing(mcp_hub, filled):
    async with Client(create_mcp_server(mcp_hub, tools=chosen_tools(read_only=True))) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed and not set(listed) & WRITERS
        assert all(tool.annotations.read_only_hint for tool in listed.values())
        assert set(listed) == {spec.name for spec in ALL_TOOLS if spec.read_only}
        before = (snapshot(filled), queue_and_notes(filled))
        for name, arguments in [
                ('put_note', {'key': 'AURORA-2', 'updated_by': 'ivanov', 'owner_note': 'x'}),
                ('queue_batch', {'title': 'т', 'author': 'ivanov', 'commands': [
                    {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'x'}}]}),
                ('cancel_batch', {'batch_id': 2}), ('fetch_attachment', {'attachment_id': '2'})]:
            result = await client.call_tool(name, arguments)
            assert result.is_error is True
            assert body(result) == {'title': 'Не найдено', 'description':
                                    f'инструмент {name} отключён в этом сервере (запущен с '
                                    f'--read-only или --tools)'}
        assert (snapshot(filled), queue_and_notes(filled)) == before
        assert not (await client.call_tool('get_issue', {'key': 'AURORA-1'})).is_error


async def test_tools_serves_only_the_named_ones(mcp_hub):
    tools = chosen_tools(names=['get_issue', 'search_issues'])
    async with Client(create_mcp_server(mcp_hub, tools=tools)) as client:
        assert [tool.name for tool in (await client.list_tools()).tools] == \
            ['search_issues', 'get_issue']  # in the server's own order
        assert (await client.call_tool('list_projects', {})).is_error


def test_chosen_tools_refuses_unknown_names_and_writers_beside_read_only():
    assert [spec.name for spec in chosen_tools()] == list(TOOL_NAMES)
    with pytest.raises(Exception) as refused:
        chosen_tools(names=['get_issue', 'drop_mirror'])
    assert refused.value.fields == {'tools': ['неизвестный инструмент: drop_mirror']}
    with pytest.raises(Exception) as refused:
        chosen_tools(read_only=True, names=['put_note'])
    assert 'put_note' in refused.value.fields['tools'][0]


@pytest.mark.parametrize('args, named', [
    (['--tools', 'get_issue,drop_mirror'], 'drop_mirror'),
    (['--tools', ' , '], 'ожидается список инструментов'),
    (['--read-only', '--tools', 'queue_batch'], 'queue_batch'),
])
def test_tools_with_an_unknown_name_exits_2_naming_it(hub, data_dir, capsys, args, named):
    with pytest.raises(SystemExit) as raised:
        main(['mcp', '--data', str(data_dir), *args])
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert named in err and 'sdlc-hub mcp' in err


def stdio_tools(data_dir: Path, *flags: str) -> list[str]:
    """The tool names a real ``sdlc-hub mcp --data D <flags>`` lists over stdio."""
    messages = [
        {'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {
            'protocolVersion': '2025-06-18', 'capabilities': {},
            'clientInfo': {'name': 'pytest', 'version': '1'}}},
        {'jsonrpc': '2.0', 'method': 'notifications/initialized'},
        {'jsonrpc': '2.0', 'id': 2, 'method': 'tools/list'},
        {'jsonrpc': '2.0', 'id': 3, 'method': 'tools/call', 'params': {
            'name': 'put_note', 'arguments': {'key': 'AURORA-2', 'updated_by': 'x'}}}]
    process = subprocess.Popen(
        [sys.executable, '-m', 'hubweb.cli', 'mcp', '--data', str(data_dir), *flags], cwd=ROOT,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, encoding='utf-8')
    answers = {}
    try:
        for message in messages:
            process.stdin.write(json.dumps(message) + '\n')
            process.stdin.flush()
            while 'id' in message and message['id'] not in answers:
                reply = json.loads(process.stdout.readline())
                answers[reply.get('id')] = reply
    finally:
        process.stdin.close()
        assert process.wait(timeout=30) == 0, process.stderr.read()
    assert answers[3]['result']['isError'] is True
    return [tool['name'] for tool in answers[2]['result']['tools']]


def test_read_only_over_stdio(data_dir, clock, claimed_refresh):
    writer = open_hub(data_dir, clock=clock)
    fill_hub(writer, claimed_refresh)
    writer.close()
    listed = stdio_tools(data_dir, '--read-only')
    assert listed == [spec.name for spec in ALL_TOOLS if spec.read_only]
    assert stdio_tools(data_dir, '--tools', 'get_issue,list_projects') == \
        ['get_issue', 'list_projects']
