"""The real server: ``sdlc-hub serve`` as a process on a free port, spoken to with urllib."""
from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _venv_script() -> str:
    """How the banner names the console script beside this interpreter, seen from ROOT."""
    script = Path(sys.executable).with_name('sdlc-hub')
    try:
        return str(Path(os.path.abspath(script)).relative_to(ROOT))
    except ValueError:
        return str(script)


def http(method: str, url: str, token: str | None = None, body: object = None,
         headers: dict | None = None) -> tuple[int, object]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if token:
        request.add_header('Authorization', f'Bearer {token}')
    if data is not None:
        request.add_header('Content-Type', 'application/json')
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b'null')
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b'null')


def test_health_settings_round_trip_401_and_sigterm(live_server):
    url, client = live_server['url'], live_server['client_token']
    assert http('GET', f'{url}/health') == (200, {'status': 'ok', 'schema_version': 9})
    status, before = http('GET', f'{url}/settings', client)
    assert status == 200
    status, after = http('PUT', f'{url}/settings', client, {'backup_keep': 5, 'relay_dir': '/srv/r'})
    assert status == 200 and after['settings_version'] == before['settings_version'] + 1
    assert http('GET', f'{url}/settings', client)[1] == after
    status, error = http('GET', f'{url}/settings')
    assert status == 401 and set(error) == {'title', 'description'}
    assert http('GET', f'{url}/settings', live_server['agent_token'])[0] == 403
    status, error = http('PUT', f'{url}/settings', client, {'relay_dir': 'relative'})
    assert status == 422 and 'relay_dir' in error['fields']
    started = time.monotonic()
    assert live_server.stop(timeout=10) == 0
    assert time.monotonic() - started < 10


def test_ctrl_c_stops_gracefully(tmp_path, server_factory):
    server = server_factory(tmp_path / 'data')
    assert http('GET', f'{server["url"]}/health')[0] == 200
    server['process'].send_signal(signal.SIGINT)
    assert server['process'].wait(10) == 0


def test_body_over_limit_is_413_over_the_wire(live_server):
    # waitress buffers a whole body before the app runs, so over the wire the body is really sent
    request = urllib.request.Request(
        f'{live_server["url"]}/settings', method='PUT', data=b' ' * (32 * 2**20 + 1),
        headers={'Authorization': f'Bearer {live_server["client_token"]}',
                 'Content-Type': 'application/json'})
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(request, timeout=30)
    assert error.value.code == 413
    assert set(json.loads(error.value.read())) == {'title', 'description'}
    assert http('GET', f'{live_server["url"]}/health')[0] == 200


def test_threads_option_and_startup_output_without_tokens(tmp_path):
    data_dir = tmp_path / 'data'
    process = subprocess.Popen(
        [sys.executable, '-m', 'hubweb.cli', 'serve', '--data', str(data_dir), '--host', '127.0.0.1',
         '--port', '0', '--threads', '3'],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, 'PYTHONUNBUFFERED': '1'})
    try:
        lines = [process.stdout.readline() for _ in range(4)]
        if not lines[0]:
            pytest.fail(f'server did not start: {process.communicate(timeout=10)[1][-3000:]}')
        assert lines[0].startswith('sdlc-hub listening on http://127.0.0.1:')
        url = lines[0].split()[-1]
        tokens = json.loads(subprocess.run(
            [sys.executable, '-m', 'hubweb.cli', 'tokens', '--data', str(data_dir)],
            capture_output=True, text=True, check=True, cwd=ROOT).stdout)
        assert lines[1] == f'data: {data_dir.resolve()}\n'
        assert str(data_dir.resolve() / 'hub.sqlite') in lines[2]
        # The banner's command prints the tokens from where the server was started, with the
        # venv not activated (``sdlc-hub`` alone is not on PATH then).
        command = re.search('`([^`]+)`', lines[2]).group(1)
        assert command.split()[0] in (_venv_script(), sys.executable)
        shown = subprocess.run(shlex.split(command), capture_output=True, text=True, cwd=ROOT,
                               env={'PATH': '/nonexistent'})
        assert json.loads(shown.stdout) == tokens, shown.stderr
        assert lines[3] == 'threads: 3 interface, 2 agent, 2 quick (/health, /openapi.json, the web page)\n'
        # Several requests at once on three workers: all answered.
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda _: http('GET', f'{url}/settings', tokens['client']),
                                    range(24)))
        assert all(status == 200 for status, _ in results)
        http('GET', f'{url}/settings', tokens['agent'])
        http('GET', f'{url}/settings')  # a 401 in the log
        http('GET', f'{url}/settings?token={tokens["client"]}')
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0
    output = ''.join(lines) + out + err
    assert 'GET /settings 200' in err and 'GET /settings 401' in err
    for token in tokens.values():
        assert token not in output
    assert 'Traceback' not in output


def test_serve_on_busy_port_is_exit_1_one_line(live_server, tmp_path):
    port = live_server['url'].rsplit(':', 1)[1]
    result = subprocess.run(
        [sys.executable, '-m', 'hubweb.cli', 'serve', '--data', str(tmp_path / 'other'),
         '--port', port], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 1
    assert 'Traceback' not in result.stderr
    assert [line for line in result.stderr.splitlines() if line.startswith('sdlc-hub serve: ')]


def test_startup_lines_name_url_data_and_token_location_never_a_token(hub, caplog):
    from hublib import settings
    from hubweb.serve import startup_lines
    lanes = {'interface': 8, 'agent': 2, 'quick': 2}
    lines = startup_lines('http://127.0.0.1:8640', hub, lanes)
    assert len(lines) == 4 and 'demo' not in '\n'.join(lines)
    assert len(startup_lines('http://127.0.0.1:8640', hub, lanes, demo=True)) == 5
    assert lines[0] == 'sdlc-hub listening on http://127.0.0.1:8640'
    assert lines[1] == f'data: {hub.data_dir.resolve()}'
    assert 'tokens' in lines[2] and str(hub.data_dir.resolve()) in lines[2]
    text = '\n'.join(lines)
    for token in settings.tokens(hub).values():
        assert token not in text


@pytest.fixture
def settled_heap():
    """The collector as ``serve`` sets it for its process, given back afterwards."""
    import gc

    from hubweb.serve import settle_heap
    threshold = gc.get_threshold()
    settle_heap()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def test_a_history_page_of_1000_items_runs_no_garbage_collection_once_served(
        hub, settled_heap):
    # serve settles the heap before it answers: a request's containers die by reference
    # counting before the collector would walk them (with Python's defaults: ~3 collections)
    import gc

    from falcon import testing

    from hublib import settings
    from hubweb.app import create_app
    client = testing.TestClient(create_app(hub), headers={
        'Authorization': f'Bearer {settings.tokens(hub)["agent"]}'})
    items = [{'history_id': str(10_000 + n // 2), 'seq': n % 2, 'key': f'AURORA-{n // 10 + 1}',
              'created': f'2026-10-{n % 28 + 1:02d}T09:{n % 60:02d}:00.000+0300',
              'author': 'ivanov', 'field_id': 'status', 'field_name': 'Status',
              'from_value': '1', 'from_string': 'Открыта', 'to_value': '3',
              'to_string': 'В работе'} for n in range(1000)]
    body = json.dumps({'agent': 'jira', 'items': items}, ensure_ascii=False)
    collections = []
    gc.callbacks.append(lambda phase, info: collections.append(info['generation']))
    try:
        for _ in range(3):
            answer = client.simulate_post('/agent/history', body=body,
                                          content_type='application/json')
            assert answer.status_code == 200
    finally:
        gc.callbacks.pop()
    assert answer.json == {'inserted': 0, 'ignored': 1000, 'unparsed_times': 0}
    assert collections == []


def test_concurrent_writes_over_the_thread_pool_bump_version_exactly_once_each(live_server):
    url, client = live_server['url'], live_server['client_token']
    start = http('GET', f'{url}/settings', client)[1]['settings_version']
    values = list(range(100, 130))  # all distinct, none equal to the default 14
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(
            lambda v: http('PUT', f'{url}/settings', client, {'backup_keep': v})[0], values))
        reads = list(pool.map(lambda _: http('GET', f'{url}/projects', client)[0], range(30)))
    assert set(results) == {200} and set(reads) == {200}
    final = http('GET', f'{url}/settings', client)[1]
    assert final['settings_version'] == start + len(values)
    assert final['backup_keep'] in values


def test_cli_command_names_the_console_script_relative_to_here_and_quotes_paths(tmp_path, monkeypatch):
    from hubweb.serve import cli_command
    venv_bin = tmp_path / 'repo' / '.venv' / 'bin'
    venv_bin.mkdir(parents=True)
    (venv_bin / 'sdlc-hub').write_text('#!/bin/sh\n')
    monkeypatch.setattr(sys, 'executable', str(venv_bin / 'python'))
    monkeypatch.chdir(tmp_path / 'repo')
    assert cli_command('tokens', '--data', '/srv/hub data') == ".venv/bin/sdlc-hub tokens --data '/srv/hub data'"
    (tmp_path / 'elsewhere').mkdir()
    monkeypatch.chdir(tmp_path / 'elsewhere')
    assert cli_command('tokens').startswith(str(tmp_path / 'repo' / '.venv' / 'bin' / 'sdlc-hub'))
    (venv_bin / 'sdlc-hub').unlink()  # installed without the console script
    assert cli_command('tokens') == f'{venv_bin / "python"} -m hubweb.cli tokens'


# --- the demo, as a newcomer starts it (issue 10, point 1; README «within a minute») ---------------

def test_demo_on_a_fresh_directory_fills_within_a_minute_and_leaves_the_real_hub_alone(tmp_path):
    from tests.support.hubs import real_hub, snapshot
    from tests.support.server import ServerProcess
    real, work = tmp_path / 'hub-data', tmp_path / 'checkout'
    real_hub(real)
    work.mkdir()
    before = snapshot(real)
    started = time.monotonic()
    # $SDLC_HUB_DATA names the real hub: the demo still takes its own ./hub-demo.
    with ServerProcess(None, extra_args=('--demo',), cwd=work,
                       env={'SDLC_HUB_DATA': str(real)}) as server:
        assert server.data_dir == (work / 'hub-demo').resolve()
        assert (server.data_dir / 'DEMO.txt').is_file()
        client = server.tokens()['client']
        seen = {}
        while time.monotonic() - started < 60 and len(seen) < 3:
            if http('GET', f'{server.url}/issues?limit=1', client)[1]['items']:
                seen['mirror filled'] = time.monotonic() - started
            statuses = [batch['status'] for batch in http('GET', f'{server.url}/batches', client)[1]['items']]
            if {'running', 'done'} & set(statuses[1:]):  # the demo's second batch: its work
                seen['batch runs'] = time.monotonic() - started
            if any(agent['online'] for agent in http('GET', f'{server.url}/agents', client)[1]['items']):
                seen['agent online'] = time.monotonic() - started
            time.sleep(0.5)
        assert set(seen) == {'mirror filled', 'batch runs', 'agent online'}, (seen, server.log_text()[-2000:])
        assert 'Traceback' not in server.log_text()
    assert snapshot(real) == before
