"""``sdlc-hub mcp`` on a bad ``--data``: exit 1 with one line on stderr, nothing on stdout (the
stdio protocol channel), nothing in the directory touched — as every other CLI command."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.legacy import create_legacy_database
from hubweb.cli import main

ROOT = Path(__file__).resolve().parents[2]


def garbage_file(data_dir: Path) -> Path:
    data_dir.mkdir(parents=True)
    (data_dir / 'hub.sqlite').write_bytes(b'not a database at all\n' * 100)
    return data_dir


def foreign_database(data_dir: Path) -> Path:
    data_dir.mkdir(parents=True)
    connection = sqlite3.connect(data_dir / 'hub.sqlite')
    connection.execute('CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)')
    connection.execute('INSERT INTO invoices (total) VALUES (12.5)')
    connection.commit()
    connection.close()
    return data_dir


def file_instead_of_directory(data_dir: Path) -> Path:
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    data_dir.write_text('я файл, а не каталог', encoding='utf-8')
    return data_dir


def newer_schema(data_dir: Path) -> Path:
    data_dir.mkdir(parents=True)
    create_legacy_database(data_dir / 'hub.sqlite', 9)
    connection = sqlite3.connect(data_dir / 'hub.sqlite')
    connection.execute("UPDATE setting SET value = '10' WHERE key = 'schema_version'")
    connection.commit()
    connection.close()
    return data_dir


def tree(path: Path) -> dict[str, bytes]:
    if path.is_file():
        return {path.name: path.read_bytes()}
    return {str(item.relative_to(path)): item.read_bytes() if item.is_file() else b'<dir>'
            for item in sorted(path.rglob('*'))}


@pytest.mark.parametrize('make', [garbage_file, foreign_database, file_instead_of_directory,
                                  newer_schema])
@pytest.mark.parametrize('transport', [[], ['--http', '--port', '0']])
def test_bad_data_is_exit_1_one_line_nothing_touched(data_dir, capsys, make, transport):
    path = make(data_dir)
    before = tree(path)
    assert main(['mcp', '--data', str(path), *transport]) == 1
    out, err = capsys.readouterr()
    assert out == ''
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith('sdlc-hub mcp: '), err
    assert tree(path) == before


def test_bad_data_in_a_real_process_keeps_stdout_clean(data_dir):
    path = foreign_database(data_dir)
    before = tree(path)
    result = subprocess.run([sys.executable, '-m', 'hubweb.cli', 'mcp', '--data', str(path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=60,
                            stdin=subprocess.DEVNULL)
    assert (result.returncode, result.stdout) == (1, '')
    assert result.stderr == 'sdlc-hub mcp: в базе есть таблицы, но нет таблицы setting: ' \
                            'это не база хаба\n'
    assert tree(path) == before


@pytest.mark.parametrize('args', [['mcp', '--port', '70000'], ['mcp', '--port', 'x'],
                                  ['mcp', '--stdio']])
def test_mcp_usage_errors_exit_2(capsys, args):
    with pytest.raises(SystemExit) as raised:
        main(args)
    assert raised.value.code == 2
    assert 'использование: sdlc-hub' in capsys.readouterr().err


def test_busy_port_is_exit_1_one_line(hub, data_dir, capsys):
    import socket
    with socket.create_server(('127.0.0.1', 0)) as taken:
        port = taken.getsockname()[1]
        assert main(['mcp', '--data', str(data_dir), '--http', '--port', str(port)]) == 1
    out, err = capsys.readouterr()
    assert out == ''
    assert len(err.splitlines()) == 1 and err.startswith('sdlc-hub mcp: '), err
    assert 'нет базы' not in err  # the hub was there: it is the port that failed


@pytest.mark.parametrize('exists', [False, True])
def test_no_hub_is_exit_1_and_creates_nothing(tmp_path, capsys, exists):
    """A mistyped --data must not become a new hub with new tokens (as tokens/backup/cleanup)."""
    data_dir = tmp_path / 'typo'
    if exists:
        data_dir.mkdir()
    assert main(['mcp', '--data', str(data_dir)]) == 1
    out, err = capsys.readouterr()
    assert out == '' and err.startswith('sdlc-hub mcp: нет базы хаба')
    assert (list(data_dir.iterdir()) if exists else data_dir.exists()) in ([], False)
