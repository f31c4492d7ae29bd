"""Layering (contract §1, STYLE 2, 15): hublib loads no web code; hubweb holds no SQL and ships
no test or bench harness."""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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
    # The demo (fake Jira and its REST server) ships in hubweb.demo because ``serve --demo`` runs it;
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


# --- one rule, one place (issue 11) ----------------------------------------------------------------

def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def import_graph(packages: tuple[str, ...] = ('hublib', 'hubweb')) -> dict[str, set[str]]:
    """Module → the modules of ``packages`` it imports, at any depth of its code (an import inside
    a function counts: a deferred import that dodges a cycle is still a cycle)."""
    files = {module_name(path): path for package in packages
             for path in (ROOT / package).rglob('*.py')}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == '__init__.py' else name.rpartition('.')[0]
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ''
                if node.level:
                    anchor = package.split('.')[:len(package.split('.')) - node.level + 1]
                    base = '.'.join(anchor + ([base] if base else []))
                # ``from . import x``: x may be a module of the package or a name in it
                targets = [f'{base}.{alias.name}' if f'{base}.{alias.name}' in files else base
                           for alias in node.names]
            else:
                continue
            for target in targets:
                while target and target not in files:
                    target = target.rpartition('.')[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_among_hublib_and_hubweb_modules():
    graph = import_graph()
    assert len(graph) >= 40
    # a package's __init__ may gather its modules; none of them may import it back
    assert cycles(graph) == []


def test_the_status_names_are_a_leaf_module():
    # every module that speaks of a status imports it from here, and nothing heavier comes along
    graph = import_graph()
    assert graph['hublib.statuses'] == set()
    assert 'hublib.batches' not in graph['hublib.syncjournal'] | graph['hubweb.schemas.queue']


def test_cycle_check_finds_a_cycle():
    assert cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == [['a', 'b', 'c']]


# Raw SQL is allowed where a benchmark shows the need: the ingest hot path (these functions, which
# a page of 100 issues or 1,000 history rows runs through), and the frozen migration DDL.
INGEST_HOT_PATH = {
    'hublib/mirror.py': ('ingest_state',),
    'hublib/history.py': ('ingest_history',),
    'hublib/slices.py': ('related_keys', 'refresh_members'),
    'hublib/search.py': ('texts', 'reindex'),
    'hublib/facet_counts.py': ('counted', 'move'),
}
# Functions that pass SQL through without writing any: the database's own execute_sql, which
# turns a statement the read budget ended into the hub's DeadlineError.
PASS_THROUGH = {'hublib/db.py': ('execute_sql',)}
SQL_CALL = re.compile(r"execute_sql\(|\.executemany\(|\.executescript\(|\.cursor\(\)"
                      r"|\.execute\(f?['\"]")
SQL_CALL_SITES_MAX = 26  # 26th: a choice order's sort values of the stored spellings (reads._by_choice)


def sql_call_sites() -> list[str]:
    """``file:line`` of every raw SQL call in hublib outside the ingest hot path and migrations."""
    found = []
    for path in sorted((ROOT / 'hublib').rglob('*.py')):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith('hublib/migrations/'):
            continue
        hot = set()
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.FunctionDef) and node.name in (
                    INGEST_HOT_PATH.get(relative, ()) + PASS_THROUGH.get(relative, ())):
                hot.update(range(node.lineno, node.end_lineno + 1))
        for number, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
            if SQL_CALL.search(line) and number not in hot:
                found.append(f'{relative}:{number}')
    return found


def test_raw_sql_call_sites_outside_the_ingest_hot_path_are_few():
    sites = sql_call_sites()
    assert 0 < len(sites) <= SQL_CALL_SITES_MAX, sites
    # every hot-path function named above exists, so the exemption cannot outlive its code
    for relative, names in (*INGEST_HOT_PATH.items(), *PASS_THROUGH.items()):
        defined = {node.name for node in ast.walk(ast.parse((ROOT / relative).read_text('utf-8')))
                   if isinstance(node, ast.FunctionDef)}
        assert set(names) <= defined, relative


def test_no_module_level_getattr():
    offenders = [path.relative_to(ROOT).as_posix()
                 for package in ('hublib', 'hubweb') for path in (ROOT / package).rglob('*.py')
                 if any(isinstance(node, ast.FunctionDef) and node.name == '__getattr__'
                        for node in ast.parse(path.read_text(encoding='utf-8')).body)]
    assert offenders == []


INT64_BOUND = re.compile(r'2\s*\*\*\s*63|9223372036854775807|0x7fffffffffffffff', re.IGNORECASE)


def test_the_int64_bound_is_defined_once():
    places = [f'{path.relative_to(ROOT).as_posix()}:{number}'
              for package in ('hublib', 'hubweb') for path in sorted((ROOT / package).rglob('*.py'))
              for number, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1)
              if INT64_BOUND.search(line)]
    assert len(places) == 1 and places[0].startswith('hublib/validation.py:'), places


def test_no_private_name_is_imported_from_another_module():
    offenders = []
    for package in ('hublib', 'hubweb'):
        for path in sorted((ROOT / package).rglob('*.py')):
            for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
                if isinstance(node, ast.ImportFrom):
                    offenders += [f'{path.relative_to(ROOT).as_posix()}:{node.lineno}: {alias.name}'
                                  for alias in node.names
                                  if alias.name.startswith('_') and alias.name != '__version__']
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.attr.startswith('_') and not node.attr.startswith('__') \
                        and node.value.id not in ('self', 'cls') and node.value.id.islower() \
                        and node.value.id in MODULE_ALIASES:
                    offenders.append(f'{path.relative_to(ROOT).as_posix()}:{node.lineno}: '
                                     f'{node.value.id}.{node.attr}')
    assert offenders == []


# names under which hublib and hubweb modules are imported elsewhere (``from hublib import x``)
MODULE_ALIASES = {'db', 'models', 'settings', 'projects', 'mirror', 'history', 'queue', 'claims',
                  'batches', 'notes', 'files', 'reads', 'slices', 'search', 'syncjournal',
                  'backups', 'validation', 'paging', 'timeutil', 'fieldmap', 'modules', 'jira',
                  'startup', 'config', 'errors', 'schemas', 'openapi', 'auth', 'serve', 'app',
                  'statuses', 'jsontext', 'fields', 'validators'}


def test_the_mcp_process_imports_no_falcon(tmp_path):
    """``sdlc-hub mcp`` (stdio, until its client closes stdin), every module of the MCP server and
    every response schema load no Falcon adapter code: what both adapters share lives in
    framework-free modules (STYLE 18)."""
    data = tmp_path / 'hub-data'
    code = (
        'import importlib, pkgutil, sys\n'
        'from hublib import open_hub\n'
        f'open_hub({str(data)!r}).close()\n'
        'from hubweb.cli import main\n'
        f'status = main(["mcp", "--data", {str(data)!r}])\n'
        'import hubweb.mcp_server as package, hubweb.schemas as schemas\n'
        'names = [m.name for p in (package, schemas)\n'
        '         for m in pkgutil.walk_packages(p.__path__, p.__name__ + ".")]\n'
        'for name in names:\n'
        '    importlib.import_module(name)\n'
        'web = sorted({m.split(".")[0] for m in sys.modules} & {"falcon", "waitress", "apispec"})\n'
        'falcon_modules = sorted(m for m in sys.modules if m.startswith("hubweb.") and\n'
        '                        m.split(".")[1] in {"app", "auth", "errors", "media", "middleware",\n'
        '                                            "openapi", "resources", "serve"})\n'
        'print(status, len(names), ",".join(web + falcon_modules), file=sys.stderr)\n')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=ROOT,
                            timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ''  # stdio: nothing but protocol messages (there were none)
    status, count, loaded = (result.stderr.strip().splitlines()[-1] + ' ').split(' ', 2)
    assert status == '0' and int(count) >= 3
    assert loaded.strip() == ''


def test_the_agent_imports_nothing_of_hublib():
    """``hubweb.jira_agent`` is an adapter between two HTTP APIs: a hub is an URL to it (issue 32)."""
    graph = import_graph()
    agent_modules = sorted(name for name in graph if name.startswith('hubweb.jira_agent'))
    assert len(agent_modules) >= 7
    assert {target for name in agent_modules for target in graph[name]
            if not target.startswith('hubweb.jira_agent')} == set()
    code = ('import sys, hubweb.jira_agent\n'
            'print(",".join(sorted({m.split(".")[0] for m in sys.modules} & '
            '{"hublib", "falcon", "waitress", "peewee", "marshmallow", "mcp"})))\n')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=ROOT,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ''
