"""The MCP page (docs/mcp.md, linked from the README): its client configurations are valid JSON
that start the real command, and its tool table is the server's tool list with the same
arguments."""
from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
from mcp import Client

from hublib import open_hub
from hubweb.mcp_server import create_mcp_server

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / 'README.md').read_text(encoding='utf-8')
SECTION = (ROOT / 'docs' / 'mcp.md').read_text(encoding='utf-8')


def test_the_readme_links_the_mcp_page():
    assert '(docs/mcp.md)' in README.split('## AI assistants (MCP)', 1)[1]


def test_client_configurations_are_json_that_start_sdlc_hub_mcp():
    blocks = [json.loads(block) for block in re.findall(r'```json\n(.*?)```', SECTION, re.S)]
    assert len(blocks) == 3
    linux, windows, remote = (block['mcpServers']['sdlc-hub'] for block in blocks)
    assert linux['command'].endswith('/.venv/bin/sdlc-hub')
    assert windows['command'].endswith('\\.venv\\Scripts\\sdlc-hub.exe')
    for stdio in (linux, windows):
        assert stdio['args'][:2] == ['mcp', '--data'] and len(stdio['args']) == 3
    assert remote['type'] == 'http'
    assert remote['url'] == 'http://127.0.0.1:8641/mcp'  # the default --host and --port
    assert remote['headers'] == {'Authorization': 'Bearer <client token>'}


def test_tool_table_is_the_servers_tool_list(tmp_path):
    rows = re.findall(r'^\| `(\w+)` \| (.*?) \|', SECTION, re.M)
    documented = {name: set(re.findall(r'`(\w+)\??`', arguments)) for name, arguments in rows}

    async def listed() -> dict[str, set[str]]:
        hub = open_hub(tmp_path / 'hub-data', guard_mirror=True)
        try:
            async with Client(create_mcp_server(hub)) as client:
                return {tool.name: set(tool.input_schema.get('properties', {}))
                        for tool in (await client.list_tools()).tools}
        finally:
            hub.close()

    assert documented == anyio.run(listed)
    for phrase in ('untrusted', 'dry_run: true', 'readOnlyHint: true', 'authorizer'):
        assert phrase in SECTION, phrase
