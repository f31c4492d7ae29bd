"""docs/mcp.md: its client configurations are valid JSON that start the real command read-only,
and its tool and prompt tables are the server's lists with the same arguments."""
from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
from mcp import Client

from hublib import open_hub
from hubweb.mcp_server import create_mcp_server

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / 'docs' / 'mcp.md').read_text(encoding='utf-8')
README = (ROOT / 'README.md').read_text(encoding='utf-8')


def section(title: str) -> str:
    return DOC.split(f'## {title}\n', 1)[1].split('\n## ', 1)[0]


def test_readme_links_the_page():
    assert '(docs/mcp.md)' in README


def test_client_configurations_are_json_that_start_sdlc_hub_mcp_read_only():
    blocks = [json.loads(block) for block in re.findall(r'```json\n(.*?)```', DOC, re.S)]
    stdio = [server for block in blocks
             for server in (block.get('mcpServers') or block.get('servers')).values()
             if 'command' in server]
    remote = [server for block in blocks
              for server in (block.get('mcpServers') or block.get('servers')).values()
              if 'url' in server]
    assert len(stdio) == 4 and len(remote) == 2  # Desktop (Linux, Windows), Cursor, VS Code
    for server in stdio:
        assert server['command'].endswith(('/.venv/bin/sdlc-hub', '\\.venv\\Scripts\\sdlc-hub.exe'))
        assert server['args'][:2] == ['mcp', '--data'] and server['args'][3:] == ['--read-only']
    assert [server.get('type') for server in stdio].count('stdio') == 1  # VS Code names it
    for server in remote:
        assert server['type'] == 'http'
        assert server['url'] == 'http://127.0.0.1:8641/mcp'  # the default --host and --port
        assert server['headers']['Authorization'].startswith('Bearer ')


def listed(tmp_path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    async def read() -> tuple[dict, dict]:
        hub = open_hub(tmp_path / 'hub-data', guard_mirror=True)
        try:
            async with Client(create_mcp_server(hub)) as client:
                tools = {tool.name: set(tool.input_schema.get('properties', {}))
                         for tool in (await client.list_tools()).tools}
                prompts = {prompt.name: {argument.name for argument in prompt.arguments}
                           for prompt in (await client.list_prompts()).prompts}
                return tools, prompts
        finally:
            hub.close()
    return anyio.run(read)


def table(text: str) -> dict[str, set[str]]:
    rows = re.findall(r'^\| `(\w+)` \| (.*?) \|', text, re.M)
    return {name: set(re.findall(r'`(\w+)\??`', arguments)) for name, arguments in rows}


def test_tool_and_prompt_tables_are_the_servers_lists(tmp_path):
    tools, prompts = listed(tmp_path)
    assert table(section('Tools')) == tools
    assert table(section('Prompts')) == prompts
    for phrase in ('untrusted', 'dry_run: true', 'readOnlyHint: true', 'authorizer', '--read-only',
                   '--allow-origin', '421', '403', 'as_of', 'fetch_attachment', '−32602'):
        assert phrase in DOC, phrase
