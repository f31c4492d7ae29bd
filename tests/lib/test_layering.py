"""Layering (contract §1, STYLE 2): hublib loads no web code; hubweb holds no SQL."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# marshmallow is not here: hublib validates every input with it (issue 11, STYLE 11).
WEB_PACKAGES = ('falcon', 'waitress', 'apispec', 'mcp')
SQL = re.compile(r'SELECT |INSERT |UPDATE |DELETE FROM|execute_sql|executemany|\.cursor\(')
# hubweb/sim is the simulator and benchmark harness (a fake Jira, an agent over HTTP, and a bulk
# builder of legacy database files for benchmarks), not part of the adapter that serves requests.
NOT_ADAPTER = ('sim',)


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
        if relative.parts[0] in NOT_ADAPTER:
            continue
        for number, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
            if SQL.search(line):
                offenders.append(f'hubweb/{relative}:{number}: {line.strip()}')
    assert offenders == []


def test_hubweb_resources_never_open_transactions_or_catch_hub_errors():
    offenders = []
    for path in sorted((ROOT / 'hubweb' / 'resources').rglob('*.py')):
        text = path.read_text(encoding='utf-8')
        for pattern in (r'hub\.(write|read)\(\)', r'\batomic\(',
                        r'except \(?(HubError|ValidationError|NotFoundError|ConflictError)'):
            if re.search(pattern, text):
                offenders.append(f'{path.name}: {pattern}')
    assert offenders == []
