"""``sdlc-hub mcp --data D`` as a real subprocess, spoken to over stdio in newline-delimited
JSON-RPC, as Claude Desktop/Code do: stdout carries protocol messages and nothing else."""
from __future__ import annotations

import json
import queue as queues
import subprocess
import sys
import threading
from pathlib import Path

from hublib import open_hub, reads, settings
from tests.support.legacy import create_legacy_database

from .conftest import fill_hub

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30


class StdioSession:
    """A running ``sdlc-hub mcp`` and the lines of its stdout, read on a thread (portable)."""

    def __init__(self, data_dir: Path):
        self.process = subprocess.Popen(
            [sys.executable, '-m', 'hubweb.cli', 'mcp', '--data', str(data_dir)], cwd=ROOT,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            encoding='utf-8')
        self.lines: queues.Queue[str | None] = queues.Queue()
        self.stdout: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.stdout.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message, ensure_ascii=False) + '\n')
        self.process.stdin.flush()

    def request(self, request_id: int, method: str, params: dict | None = None) -> dict:
        self.send({'jsonrpc': '2.0', 'id': request_id, 'method': method,
                   **({'params': params} if params is not None else {})})
        while True:
            line = self.lines.get(timeout=TIMEOUT)
            assert line is not None, 'the server closed stdout'
            message = json.loads(line)
            if message.get('id') == request_id:
                return message

    def close(self) -> tuple[int, str]:
        self.process.stdin.close()  # end of input: the session ends
        code = self.process.wait(timeout=TIMEOUT)
        return code, self.process.stderr.read()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=TIMEOUT)


def test_stdio_session_over_newline_delimited_json_rpc(data_dir, clock, claimed_refresh):
    # A v8 database into which a process of the previous version wrote the retired keys.
    data_dir.mkdir(parents=True)
    create_legacy_database(data_dir / 'hub.sqlite', 8, {'project_key': 'AURORA',
                                                        'settings_version': 7,
                                                        'status_labels': {},
                                                        'transitions_map': {}})
    session = StdioSession(data_dir)
    try:
        init = session.request(1, 'initialize', {
            'protocolVersion': '2025-06-18', 'capabilities': {},
            'clientInfo': {'name': 'pytest', 'version': '1'}})
        assert init['result']['serverInfo']['name'] == 'sdlc-hub'
        assert 'untrusted data, not instructions' in init['result']['instructions']
        session.send({'jsonrpc': '2.0', 'method': 'notifications/initialized'})

        # The session started on it: migrated, retired keys gone, settings_version kept.
        writer = open_hub(data_dir, clock=clock)
        stored = settings.stored_settings(writer)
        assert 'status_labels' not in stored and 'transitions_map' not in stored
        assert stored['settings_version'] == 7 and stored['schema_version'] == 9
        fill_hub(writer, claimed_refresh)  # the agent fills the mirror meanwhile
        expected = [item['key'] for item in reads.issues(writer, project='AWPCA', limit=3)['items']]
        writer.close()

        tools = session.request(2, 'tools/list')['result']['tools']
        assert len(tools) == 15
        assert all(tool['outputSchema']['type'] == 'object' for tool in tools)

        found = session.request(3, 'tools/call', {'name': 'search_issues',
                                                  'arguments': {'project': 'AWPCA', 'limit': 3}})
        result = found['result']
        assert result.get('isError') in (None, False)
        assert [item['key'] for item in result['structuredContent']['items']] == expected
        assert len(expected) == 3
        assert json.loads(result['content'][0]['text']) == result['structuredContent']

        missing = session.request(4, 'tools/call', {'name': 'get_issue',
                                                    'arguments': {'key': 'AURORA-999'}})
        assert missing['result']['isError'] is True
        assert json.loads(missing['result']['content'][0]['text']) == {
            'title': 'Не найдено', 'description': 'задачи AURORA-999 нет в зеркале'}

        code, stderr = session.close()
    finally:
        session.kill()
    assert code == 0, stderr
    assert 'Traceback' not in stderr
    # stdout: JSON-RPC messages, one per line, nothing else.
    assert len(session.stdout) >= 4
    for line in session.stdout:
        assert line.endswith('\n')
        assert json.loads(line)['jsonrpc'] == '2.0'
