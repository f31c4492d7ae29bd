"""The official MCP conformance scenarios that apply to a server (``@modelcontextprotocol/
conformance`` from the npm registry) against a real ``sdlc-hub mcp --http``.

The suite sends no token, so it talks to the server through ``tests.support.header_proxy``, which
adds the client token and forwards everything else unchanged; the server allows the proxy's origin
with ``--allow-origin`` (as it would a reverse proxy's), so its Host and Origin checks judge what
the suite sends. The suite needs Node ≥ 22: ``.ci/run`` installs it (npm package ``node@22``) and
the suite into ``$SDLC_HUB_MCP_CONFORMANCE`` (default ``~/.cache/sdlc-hub/mcp-conformance``).
Without them these tests are skipped, except on CI (``CI=true``, or
``SDLC_HUB_MCP_CONFORMANCE_REQUIRED=1`` as ``.ci/run`` sets for its conformance step), where that
fails the run.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hublib import open_hub, settings
from tests.support.header_proxy import HeaderProxy

ROOT = Path(__file__).resolve().parents[2]
TOOLS_DIR = Path(os.environ.get('SDLC_HUB_MCP_CONFORMANCE',
                                Path.home() / '.cache' / 'sdlc-hub' / 'mcp-conformance'))
NODE = TOOLS_DIR / 'node_modules' / '.bin' / 'node'
SUITE = TOOLS_DIR / 'node_modules' / '.bin' / 'conformance'
ON_CI = (os.environ.get('CI', '').lower() in ('1', 'true', 'yes')
         or os.environ.get('SDLC_HUB_MCP_CONFORMANCE_REQUIRED') == '1')
SCENARIOS = ('server-initialize', 'tools-list', 'ping', 'dns-rebinding-protection')
TIMEOUT = 120

pytestmark = pytest.mark.slow


@pytest.fixture(scope='module')
def suite() -> list[str]:
    missing = [str(path) for path in (NODE, SUITE) if not os.access(path, os.X_OK)]
    if missing:
        message = f'MCP conformance suite not installed ({", ".join(missing)}): run .ci/run'
        if ON_CI:
            pytest.fail(message)
        pytest.skip(message)
    return [str(NODE), str(SUITE)]


@pytest.fixture(scope='module')
def served(tmp_path_factory) -> str:
    """A throwaway hub served by ``sdlc-hub mcp --http``, behind the token-adding proxy."""
    data = tmp_path_factory.mktemp('conformance') / 'hub-data'
    hub = open_hub(data)
    token = settings.tokens(hub)['client']
    hub.close()
    with HeaderProxy({'Authorization': f'Bearer {token}'}) as proxy:
        process = subprocess.Popen(
            [sys.executable, '-m', 'hubweb.cli', 'mcp', '--data', str(data), '--http',
             '--port', '0', '--allow-origin', f'http://127.0.0.1:{proxy.port}'],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            line = process.stdout.readline()
            assert line.startswith('sdlc-hub mcp listening on http://127.0.0.1:'), line
            proxy.target_port = int(line.rsplit(':', 1)[1].split('/')[0])
            yield f'http://127.0.0.1:{proxy.port}/mcp'
        finally:
            process.terminate()
            process.wait(timeout=TIMEOUT)


@pytest.mark.parametrize('scenario', SCENARIOS)
def test_conformance_scenario(suite, served, scenario, tmp_path):
    result = subprocess.run([*suite, 'server', '--url', served, '--scenario', scenario,
                             '--output-dir', str(tmp_path)], capture_output=True, text=True,
                            timeout=TIMEOUT)
    checks = [check for path in tmp_path.rglob('checks.json')
              for check in json.loads(path.read_text(encoding='utf-8'))]
    report = result.stdout[-4000:] + result.stderr[-2000:]
    assert result.returncode == 0, report
    assert checks and all(check['status'] in ('SUCCESS', 'INFO') for check in checks), report
    assert any(check['status'] == 'SUCCESS' for check in checks), report
