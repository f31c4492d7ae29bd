"""``sdlc-hub`` CLI (contract §12): init, tokens, migrate, exit codes and one-line failures."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from falcon import testing

from hublib import open_hub, settings
from tests.support.legacy import create_legacy_database
from hubweb import create_app
from hubweb.cli import main
from tests.support.hubs import fill_disk_for_copies, real_hub, snapshot

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / 'scripts' / 'config.example.json'
SECRETS = ('jira_password', 'jira_login', 'jira_url')


def run(*args: str) -> subprocess.CompletedProcess:
    """The real console entry in a subprocess: exit code, stdout, stderr."""
    return subprocess.run([sys.executable, '-m', 'hubweb.cli', *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """``main(args)`` in-process (fast) with its output."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def stored(data_dir: Path) -> dict:
    hub = open_hub(data_dir)
    try:
        values = settings.stored_settings(hub)
        values['_projects'] = [tuple(row) for row in hub.db.execute_sql(
            'SELECT p.label, p.name, j.board_id FROM project p JOIN jira_project j USING (label) '
            'ORDER BY p.created_at, p.label')]
        return values
    finally:
        hub.close()


def write_config(tmp_path: Path, **changes) -> Path:
    config = {**json.loads(EXAMPLE.read_text(encoding='utf-8')), **changes}
    path = tmp_path / 'config.json'
    path.write_text(json.dumps(config, ensure_ascii=False), encoding='utf-8')
    return path


def test_init_with_example_config_then_tokens(data_dir):
    result = run('init', '--data', str(data_dir), '--config', str(EXAMPLE))
    assert result.returncode == 0, result.stderr
    assert 'AWPCA' in result.stdout
    tokens = run('tokens', '--data', str(data_dir))
    assert tokens.returncode == 0
    parsed = json.loads(tokens.stdout)
    assert set(parsed) == {'agent', 'client'} and all(len(v) >= 40 for v in parsed.values())
    values = stored(data_dir)
    assert values['project_key'] == 'AURORA'
    assert values['issue_types'] == {'task': {'name': 'Задача', 'id': '10002'},
                                     'epic': {'name': 'Эпик', 'id': '10000'}}
    assert values['_projects'] == [('AWPCA', 'АРМ КА', 4216), ('STOCKS_DRRK', 'Склады ДРРК', None)]
    assert values['tokens'] == parsed
    assert not set(SECRETS) & set(values)


def test_init_twice_keeps_tokens_and_bumps_only_on_change(tmp_path, data_dir, capsys):
    config = write_config(tmp_path)
    assert cli(capsys, 'init', '--data', str(data_dir), '--config', str(config))[0] == 0
    first = stored(data_dir)
    assert first['settings_version'] == 2  # new database (1) + one bump for the import
    assert cli(capsys, 'init', '--data', str(data_dir), '--config', str(config))[0] == 0
    second = stored(data_dir)
    assert second['tokens'] == first['tokens']
    assert second['settings_version'] == 2
    assert second['_projects'] == first['_projects']
    config = write_config(tmp_path, backup_keep=30,
                          projects=[{'label': 'ORION', 'name': 'Орион'}])
    code, out, _ = cli(capsys, 'init', '--data', str(data_dir), '--config', str(config))
    assert code == 0 and 'ORION' in out
    third = stored(data_dir)
    assert third['settings_version'] == 3 and third['backup_keep'] == 30
    assert third['tokens'] == first['tokens']
    assert {p[0] for p in third['_projects']} == {'AWPCA', 'STOCKS_DRRK', 'ORION'}


def test_jira_secrets_appear_nowhere_in_the_data_directory(tmp_path, data_dir, capsys):
    config = json.loads(EXAMPLE.read_text(encoding='utf-8'))
    assert cli(capsys, 'init', '--data', str(data_dir), '--config', str(EXAMPLE))[0] == 0
    assert cli(capsys, 'backup', '--data', str(data_dir))[0] == 0
    files = [p for p in data_dir.rglob('*') if p.is_file()]
    assert any(p.name == 'hub.sqlite' for p in files)
    for secret in (config['jira_password'], config['jira_login'], config['jira_url']):
        for path in files:
            assert secret.encode() not in path.read_bytes(), path


def test_scenario_config_without_bug_issue_type(tmp_path, data_dir, capsys):
    config = write_config(tmp_path)
    assert cli(capsys, 'init', '--data', str(data_dir), '--config', str(config))[0] == 0
    assert set(stored(data_dir)['issue_types']) == {'task', 'epic'}
    hub = open_hub(data_dir)
    try:
        client = testing.TestClient(create_app(hub))
        headers = {'Authorization': f'Bearer {settings.tokens(hub)["client"]}'}
        response = client.simulate_post('/batches', headers=headers, json={
            'title': 'Ошибка', 'author': 'ivanov', 'project': None,
            'commands': [{'type': 'ensure_issue',
                          'params': {'issue_type': 'bug', 'summary': 'Сбой', 'temp_key': 'new:1'}}]})
        assert response.status_code == 422
    finally:
        hub.close()


def test_config_with_bug_keys_has_bug_issue_type(tmp_path, data_dir, capsys):
    config = write_config(tmp_path, issue_type_bug='Ошибка', issue_type_bug_id=10004)
    assert cli(capsys, 'init', '--data', str(data_dir), '--config', str(config))[0] == 0
    assert stored(data_dir)['issue_types']['bug'] == {'name': 'Ошибка', 'id': '10004'}


def test_missing_config_is_exit_1_one_line(tmp_path, data_dir):
    result = run('init', '--data', str(data_dir), '--config', str(tmp_path / 'nope.json'))
    assert result.returncode == 1
    assert result.stdout == ''
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith('sdlc-hub init: ')
    assert 'nope.json' in lines[0] and 'Traceback' not in result.stderr


@pytest.mark.parametrize('text', ['{not json', '', '[1, 2]', '"config"', '\ufeff{oops',
                                  '{"project_key": "aurora"}',
                                  '{"projects": [{"label": "A B", "name": "x"}]}',
                                  '{"projects": "AWPCA"}', '{"backup_keep": 1e999}'])
def test_invalid_config_is_exit_1_one_line_nothing_written(tmp_path, data_dir, capsys, text):
    path = tmp_path / 'config.json'
    path.write_text(text, encoding='utf-8')
    code, out, err = cli(capsys, 'init', '--data', str(data_dir), '--config', str(path))
    assert code == 1
    assert len(err.splitlines()) == 1 and err.startswith('sdlc-hub init: ')
    if data_dir.exists():
        values = stored(data_dir)
        assert values['settings_version'] == 1 and values['_projects'] == []


def test_invalid_utf8_config_is_exit_1(tmp_path, data_dir):
    path = tmp_path / 'config.json'
    path.write_bytes(b'{"project_key": "\xff"}')
    result = run('init', '--data', str(data_dir), '--config', str(path))
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1
    assert 'Traceback' not in result.stderr


def test_migrate_fresh_database_says_it_created_schema_v9(data_dir, capsys):
    code, out, err = cli(capsys, 'migrate', '--data', str(data_dir))
    assert (code, out, err) == (0, 'schema v9 (created)\n', '')
    assert cli(capsys, 'migrate', '--data', str(data_dir))[1] == 'schema v9 (up to date)\n'


def test_migrate_v1_database(data_dir, capsys):
    data_dir.mkdir(parents=True)
    create_legacy_database(data_dir / 'hub.sqlite', 1,
                           settings={'base_jql': 'project = AURORA AND labels = AWPCA'})
    code, out, err = cli(capsys, 'migrate', '--data', str(data_dir))
    assert (code, out) == (0, 'schema v1 -> v9\n')
    assert [p.name for p in (data_dir / 'backups').iterdir()][0].endswith('-schema-v1.sqlite')
    assert cli(capsys, 'migrate', '--data', str(data_dir))[1] == 'schema v9 (up to date)\n'


@pytest.mark.parametrize('command', ['migrate', 'serve', 'tokens'])
def test_newer_schema_is_refused_exit_1_naming_v10(data_dir, command):
    data_dir.mkdir(parents=True)
    path = data_dir / 'hub.sqlite'
    create_legacy_database(path, 9)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE setting SET value = '10' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    result = run(command, '--data', str(data_dir), *(['--port', '0'] if command == 'serve' else []))
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.startswith('sdlc-hub ')]
    assert len(lines) == 1 and 'v10' in lines[0]
    assert 'Traceback' not in result.stderr and result.stdout == ''
    assert path.read_bytes() == before


@pytest.mark.parametrize('args', [[], ['nope'], ['init'], ['serve', '--threads', '0'],
                                  ['serve', '--port', '70000'], ['serve', '--port', 'x']])
def test_usage_errors_exit_2(args):
    result = run(*args)
    assert result.returncode == 2
    assert 'использование: sdlc-hub' in result.stderr and 'Traceback' not in result.stderr


def test_data_defaults_to_env(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv('SDLC_HUB_DATA', str(tmp_path / 'from-env'))
    assert cli(capsys, 'migrate')[0] == 0
    assert (tmp_path / 'from-env' / 'hub.sqlite').exists()


def test_config_saved_with_a_bom_is_read(tmp_path, data_dir, capsys):
    path = tmp_path / 'config.json'
    path.write_bytes('\ufeff'.encode() + EXAMPLE.read_bytes())
    assert cli(capsys, 'init', '--data', str(data_dir), '--config', str(path))[0] == 0
    assert stored(data_dir)['project_key'] == 'AURORA'


# --- edges a first real use met (issue 10, point 7) ------------------------------------------------

def one_line(result: subprocess.CompletedProcess, command: str) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stdout == '' and 'Traceback' not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f'sdlc-hub {command}: '), result.stderr
    return lines[0]


@pytest.mark.parametrize('command', ['tokens', 'backup', 'cleanup'])
@pytest.mark.parametrize('exists', [False, True], ids=['mistyped', 'empty'])
def test_tokens_backup_cleanup_without_a_hub_are_exit_1_and_create_nothing(tmp_path, command, exists):
    data_dir = tmp_path / 'hub-dta'  # a typo of hub-data
    if exists:
        data_dir.mkdir()
    before = snapshot(tmp_path)
    line = one_line(run(command, '--data', str(data_dir)), command)
    assert f'нет базы хаба в {data_dir.resolve()}' in line
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize('command', ['tokens', 'backup', 'cleanup'])
def test_tokens_backup_cleanup_work_on_an_existing_hub(data_dir, capsys, command):
    assert cli(capsys, 'migrate', '--data', str(data_dir))[0] == 0
    code, out, err = cli(capsys, command, '--data', str(data_dir))
    assert (code, err) == (0, '') and out


@pytest.mark.parametrize('command', ['init', 'migrate', 'serve', 'tokens', 'backup', 'cleanup'])
@pytest.mark.parametrize('under', [False, True], ids=['file', 'under-a-file'])
def test_data_naming_a_file_is_not_a_directory(tmp_path, capsys, command, under):
    file = tmp_path / 'hub.sqlite'
    file.write_bytes(b'not a directory')
    data = file / 'sub' if under else file
    args = ['--config', str(EXAMPLE)] if command == 'init' else []
    code, out, err = cli(capsys, command, '--data', str(data), *args)
    assert code == 1 and out == ''
    assert err.splitlines() == [f'sdlc-hub {command}: {file} — не каталог']
    assert file.read_bytes() == b'not a directory' and sorted(tmp_path.iterdir()) == [file]


def test_open_hub_create_false_raises_not_found_and_creates_nothing(tmp_path):
    from hublib import NotFoundError
    with pytest.raises(NotFoundError, match='нет базы хаба'):
        open_hub(tmp_path / 'missing', create=False)
    assert not (tmp_path / 'missing').exists()
    (tmp_path / 'empty').mkdir()
    (tmp_path / 'empty' / 'hub.sqlite').write_bytes(b'')  # an interrupted first start
    with pytest.raises(NotFoundError):
        open_hub(tmp_path / 'empty', create=False)
    assert (tmp_path / 'empty' / 'hub.sqlite').read_bytes() == b''
    open_hub(tmp_path / 'real').close()
    hub = open_hub(tmp_path / 'real', create=False)
    assert hub.opened_at_version == 9
    hub.close()


@pytest.mark.parametrize('host', ['256.1.1.1', 'no-such-host.invalid'])
def test_serve_on_a_host_that_is_no_address_is_one_line_and_creates_nothing(tmp_path, host):
    data_dir = tmp_path / 'data'
    line = one_line(run('serve', '--data', str(data_dir), '--host', host, '--port', '0'), 'serve')
    assert host in line and 'неверный адрес' in line
    assert not data_dir.exists()


def test_version_names_the_package_and_schema_version():
    from hublib import __version__
    result = run('--version')
    assert result.returncode == 0 and result.stderr == ''
    assert result.stdout == f'sdlc-hub {__version__} (схема базы v9)\n'


def test_backup_on_a_full_disk_is_exit_1_one_line_and_leaves_no_partial_copy(data_dir, capsys,
                                                                              monkeypatch):
    assert cli(capsys, 'migrate', '--data', str(data_dir))[0] == 0
    fill_disk_for_copies(monkeypatch)  # the copy being written has no room (issue 10, point 8)
    code, out, err = cli(capsys, 'backup', '--data', str(data_dir))
    assert (code, out) == (1, '')
    assert err.splitlines() == ['sdlc-hub backup: на диске нет места: резервная копия не сделана']
    assert list((data_dir / 'backups').iterdir()) == []


# --- the demo never touches a hub it did not create (issue 10, point 1) ---------------------------

def test_serve_demo_on_a_real_hub_is_exit_1_and_leaves_it_byte_for_byte(data_dir, capsys):
    real_hub(data_dir)
    capsys.readouterr()
    before = snapshot(data_dir)
    assert 'hub.sqlite' in before
    line = one_line(run('serve', '--demo', '--data', str(data_dir), '--port', '0'), 'serve')
    assert str(data_dir.resolve()) in line and 'DEMO.txt' in line
    assert snapshot(data_dir) == before


def test_serve_demo_refuses_any_non_empty_directory_it_did_not_mark(tmp_path, capsys):
    (tmp_path / 'notes.txt').write_text('мои заметки', encoding='utf-8')
    code, out, err = cli(capsys, 'serve', '--demo', '--data', str(tmp_path), '--port', '0')
    assert code == 1 and len(err.splitlines()) == 1 and 'не создан демо' in err
    assert [path.name for path in tmp_path.iterdir()] == ['notes.txt']


def test_demo_directory_is_created_and_marked_once_then_its_own(tmp_path):
    from hubweb.demo import DEMO_MARKER, claim_demo_directory, is_demo_directory
    fresh, empty = tmp_path / 'new' / 'hub-demo', tmp_path / 'empty'
    empty.mkdir()
    for directory in (fresh, empty):
        assert not is_demo_directory(directory)
        claim_demo_directory(directory)
        assert [path.name for path in directory.iterdir()] == [DEMO_MARKER]
        open_hub(directory).close()  # the demo's hub fills the directory ...
        claim_demo_directory(directory)  # ... which stays the demo's own
        assert is_demo_directory(directory)
