"""``sdlc-hub tokens --rotate agent|client``: a new token for that role, printed with the other
(the ``tokens`` JSON); a running server takes the new one at once and refuses the old one within
a second (it re-reads the tokens when a token matches none, and at most once a second anyway)."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hublib import open_hub, settings
from hubweb.cli import main
from tests.support.server import ServerProcess

from .test_serve import http

ROOT = Path(__file__).resolve().parents[1]


def tokens_of(data_dir: Path) -> dict[str, str]:
    hub = open_hub(data_dir)
    try:
        return settings.tokens(hub)
    finally:
        hub.close()


@pytest.mark.parametrize('role, other', [('agent', 'client'), ('client', 'agent')])
def test_rotate_prints_a_new_token_for_the_role_and_keeps_the_other(data_dir, capsys, role, other):
    before = tokens_of(data_dir)
    capsys.readouterr()
    assert main(['tokens', '--data', str(data_dir), '--rotate', role]) == 0
    out, err = capsys.readouterr()
    printed = json.loads(out)
    assert printed == tokens_of(data_dir) and err == ''
    assert printed[role] != before[role] and len(printed[role]) >= 40
    assert printed[other] == before[other]


def test_rotate_without_a_hub_is_exit_1_and_creates_nothing(tmp_path, capsys):
    assert main(['tokens', '--data', str(tmp_path / 'none'), '--rotate', 'agent']) == 1
    assert not (tmp_path / 'none').exists()


@pytest.mark.slow
def test_a_running_server_takes_the_rotated_token_at_once_and_drops_the_old_one(tmp_path):
    server = ServerProcess(tmp_path / 'data')
    try:
        old = server.tokens()
        assert http('GET', f'{server.url}/settings', old['client'])[0] == 200
        rotated = json.loads(subprocess.run(
            [sys.executable, '-m', 'hubweb.cli', 'tokens', '--data', str(server.data_dir),
             '--rotate', 'client'], capture_output=True, text=True, check=True, cwd=ROOT).stdout)
        assert http('GET', f'{server.url}/settings', rotated['client'])[0] == 200  # at once
        time.sleep(1.2)
        assert http('GET', f'{server.url}/settings', old['client'])[0] == 401
        assert http('GET', f'{server.url}/agent/settings?agent=jira', old['agent'])[0] == 200
    finally:
        server.stop()
