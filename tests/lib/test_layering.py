"""Layering (contract §1, STYLE 2, 15): hublib loads no web code; hubweb holds no SQL and ships
no test or bench harness."""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# marshmallow is not here: hublib validates every input with it (issue 11, STYLE 11).
WEB_PACKAGES = ('falcon', 'waitress', 'apispec', 'mcp')
SQL = re.compile(r'SELECT |INSERT |UPDATE |DELETE FROM|execute_sql|executemany|\.cursor\(')
# What only a test or a benchmark needs: starting processes (a server harness, load workers),
# writing database files by hand (legacy builders), the test framework and the test tree itself.
HARNESS_MODULES = ('subprocess', 'sqlite3', 'pytest', 'tests', 'multiprocessing')


def test_hublib_and_every_submodule_load_no_web_package():
    code = (
        'import importlib, pkgutil, sys\n'
        'import hublib\n'
        'names = [m.name for m in pkgutil.walk_packages(hublib.__path__, "hublib.")]\n'
        'for name in names:\n'
        '    importlib.import_module(name)\n'
        f'loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set({WEB_PACKAGES!r}))\n'
        'print(len(names), ",".join(loaded))\n')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=ROOT,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    count, loaded = result.stdout.split(' ', 1)
    assert int(count) >= 10  # db, models, settings, projects, migrations, modules, ...
    assert loaded.strip() == ''


def test_no_sql_in_the_web_adapter():
    offenders = []
    files = sorted((ROOT / 'hubweb').rglob('*.py'))
    assert len(files) >= 10
    for path in files:
        relative = path.relative_to(ROOT / 'hubweb')
        for number, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
            if SQL.search(line):
                offenders.append(f'hubweb/{relative}:{number}: {line.strip()}')
    assert offenders == []


def harness_imports(package: Path) -> list[str]:
    """``file:line: module`` for every import of a harness-only module under ``package``."""
    found = []
    for path in sorted(package.rglob('*.py')):
        tree = ast.parse(path.read_text(encoding='utf-8'), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            where = f'{path.relative_to(package.parent).as_posix()}:{node.lineno}'
            found += [f'{where}: {name}' for name in names if name.split('.')[0] in HARNESS_MODULES]
    return found


def test_hubweb_ships_no_test_or_bench_harness():
    # The demo (fake Jira, simulated agent) ships in hubweb.demo because ``serve --demo`` runs it;
    # a server in a child process, load workers and legacy-file builders live in tests/support.
    assert harness_imports(ROOT / 'hubweb') == []
    assert harness_imports(ROOT / 'tests' / 'support')  # the check sees the harness where it is


def test_harness_check_finds_each_kind_of_harness_import(tmp_path):
    package = tmp_path / 'pkg'
    package.mkdir()
    (package / 'ok.py').write_text('import json\nfrom .sub import x\n', encoding='utf-8')
    (package / 'bad.py').write_text(
        'import subprocess\nfrom sqlite3 import connect\nimport tests.support.server\n'
        'def f():\n    import pytest\n', encoding='utf-8')
    assert harness_imports(package) == ['pkg/bad.py:1: subprocess', 'pkg/bad.py:2: sqlite3',
                                        'pkg/bad.py:3: tests.support.server', 'pkg/bad.py:5: pytest']


def test_hubweb_resources_never_open_transactions_or_catch_hub_errors():
    offenders = []
    for path in sorted((ROOT / 'hubweb' / 'resources').rglob('*.py')):
        text = path.read_text(encoding='utf-8')
        for pattern in (r'hub\.(write|read)\(\)', r'\batomic\(',
                        r'except \(?(HubError|ValidationError|NotFoundError|ConflictError)'):
            if re.search(pattern, text):
                offenders.append(f'{path.name}: {pattern}')
    assert offenders == []
