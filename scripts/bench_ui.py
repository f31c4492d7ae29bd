"""Benchmark of the web UI: every API call each view makes (p50/p95) at 50,000 issues, and the
bytes the first load transfers.

    .venv/bin/python scripts/bench_ui.py [--issues 50000] [--samples 40] [--data DIR] [--only TEXT]

``--data DIR`` keeps the filled mirror in DIR (filled on the first run, reused by the next ones:
the fill of 50,000 issues takes a minute or two); ``--only TEXT`` measures only the calls whose
label contains TEXT (the first-load figures are then skipped).

1. A hub is filled through hublib exactly as ``bench_reads.py`` does (``--issues`` issues of
   ``hubweb.demo.FakeJira`` with links, comments, sprints, history and boards; projects AWPCA and
   ORION), plus a few batches and notes.
2. A real ``sdlc-hub serve`` (waitress, 127.0.0.1, 8 threads) serves it. One client on a
   keep-alive connection plays each view's calls (the same paths ``hubweb/ui/static/js/views``
   build), round-robin, ``--samples`` times; the baseline of the same run is ``GET /health``,
   which touches no table (routing, auth middleware, JSON, the access log).
   Then, the server stopped, each call's median CPU time in this process through the Falcon app
   (``--cpu-samples``): the hub's own cost, which other processes on a shared machine disturb
   less than the wall clock.
3. The first load: ``GET /ui/`` plus everything ``index.html`` links and every ES module
   ``js/main.js`` imports, and the overview it opens on (views load when they first open,
   ``js/routes.js``), fetched over HTTP as a browser with an empty cache would; the sum of the
   response sizes (headers included). Also the sum with every view opened once.

Targets (contract §15, issue 14): every view's API calls p95 < 100 ms; the first load < 300 KB.
Calls marked ``cached`` are made once per tab (lists that only fill selects) and are measured
under the view that shows them.
"""
from __future__ import annotations

import argparse
import http.client
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'scripts'))

from bench_reads import fill as fill_mirror  # noqa: E402
from hublib import notes, open_hub, queue  # noqa: E402
from tests.support.server import ServerProcess  # noqa: E402
from tests.support.timing import KeepAliveClient, percentile  # noqa: E402

TARGET_MS = 100.0
FIRST_LOAD_LIMIT = 300 * 1024
IMPORT = re.compile(r"^import\s[^;]*?from\s+'(\.[^']+)'", re.MULTILINE | re.DOTALL)
ASSET = re.compile(r'(?:href|src)="([^"#:]+)"')


def add_batches_and_notes(data_dir: Path, issues: int) -> dict:
    """A few client batches (one with 20 commands) and 1,000 notes, as a team would have."""
    hub = open_hub(data_dir)
    try:
        big = queue.create_batch(hub, title='Комментарии по итогам спринта', author='bench',
                                 project='AWPCA', commands=[
            {'type': 'add_comment', 'params': {'key': f'AURORA-{n}', 'body': f'Итог {n}'}}
            for n in range(1, 21)])
        for n in range(5):
            queue.create_batch(hub, title=f'Переходы {n}', author='bench', commands=[
                {'type': 'transition', 'params': {'key': f'AURORA-{n + 1}', 'status': 'Готово'}}])
        for number in range(1, issues + 1, max(1, issues // 1000)):
            notes.put_note(hub, f'AURORA-{number}', {'work_kind': 'Аналитика',
                                                     'done_text': 'сделано', 'updated_by': 'bench'})
        return {'batch': big['id']}
    finally:
        hub.close()


def reuse(data_dir: Path) -> tuple[dict, list[str], dict]:
    """Tokens, change moments and the big batch of a mirror an earlier run filled and kept."""
    from hublib import settings

    hub = open_hub(data_dir)
    try:
        moments = [row[0] for row in hub.db.execute_sql(
            'SELECT at FROM issue_change WHERE at IS NOT NULL ORDER BY at')]
        (batch_id,), = hub.db.execute_sql('SELECT id FROM batch WHERE title = ?',
                                          ('Комментарии по итогам спринта',))
        return settings.tokens(hub), moments[::max(1, len(moments) // 1000)], {'batch': batch_id}
    finally:
        hub.close()


def view_calls(rng: random.Random, issues: int, moments: list[str], batch_id: int,
               only: str = '') -> list[tuple]:
    """(view, call label, method, path, body, cached) for one round, as the views make them;
    with ``only``, those whose label contains it."""
    key = f'AURORA-{rng.randint(1, issues)}'
    epic = f'AURORA-{1 + rng.randrange(max(1, issues // 50)) * 50}'  # FakeJira: every 50th heads an epic
    since = quote(rng.choice(moments))
    q = lambda **values: urlencode(values)  # noqa: E731
    calls = [
        ('overview', 'GET /agents', 'GET', '/agents', None, False),
        ('overview', 'GET /batches?status=running', 'GET', '/batches?' + q(status='running', limit=20), None, False),
        ('overview', 'GET /batches?status=queued', 'GET', '/batches?' + q(status='queued', limit=20), None, False),
        ('overview', 'GET /sync-runs?limit=10', 'GET', '/sync-runs?limit=10', None, False),
        ('projects', 'GET /projects', 'GET', '/projects', None, True),
        # the issues list: a page, the total and the facets of the same query (contract §15a);
        # the facets go without the query's facet terms, its choices beside it (js/jql-text.js
        # facetChoices)
        *[(('issues', f'{call} {label}', 'GET', f'{path}?' + q(**(
            facet_params if call == 'GET /issues/facets' and facet_params else params),
            **({'limit': 100} if call == 'GET /issues' else {})), None, False))
          for label, params, facet_params in (
              ('(all)', {'tz': 'Europe/Moscow'}, None),
              ('project=AWPCA', {'project': 'AWPCA', 'tz': 'Europe/Moscow'}, None),
              ('ORDER BY status DESC', {'jql': 'ORDER BY status DESC', 'tz': 'Europe/Moscow'}, None),
              ('facet status IN (…)', {'project': 'ORION', 'jql': 'status IN ("В работе")', 'tz': 'Europe/Moscow'},
               {'project': 'ORION', 'chosen': '{"status": ["В работе"]}', 'tz': 'Europe/Moscow'}),
              ('text ~ отчёт', {'jql': 'text ~ "отчёт"', 'tz': 'Europe/Moscow'}, None))
          for call, path in (('GET /issues', '/issues'), ('GET /issues/count', '/issues/count'),
                             ('GET /issues/facets', '/issues/facets'))],
        ('goto', 'GET /issues/count?jql=status = Готово (search box)', 'GET',
         '/issues/count?' + q(jql='status = Готово'), None, False),
        ('issue card', 'GET /issues/{key}', 'GET', f'/issues/{key}', None, False),
        ('issue card', 'GET /issues/{key}/changes', 'GET', f'/issues/{key}/changes?limit=100', None, False),
        ('issue card', 'GET /issues?jql="Epic Link" = {epic}', 'GET',
         '/issues?' + q(jql=f'"Epic Link" = {epic} ORDER BY key', limit=50), None, False),
        ('issue card', 'GET /issues/count?jql="Epic Link" = {epic}', 'GET',
         '/issues/count?' + q(jql=f'"Epic Link" = {epic} ORDER BY key'), None, False),
        ('issue card', 'POST /batches dry_run (preview)', 'POST', '/batches',
         {'title': f'Комментарий к {key}', 'author': 'bench', 'project': 'AWPCA', 'dry_run': True,
          'commands': [{'type': 'add_comment', 'params': {'key': key, 'body': 'Проверено'}}]}, False),
        ('issue card', 'PUT /notes/{key} (save)', 'PUT', f'/notes/{key}',
         {'work_kind': 'Разработка', 'done_text': 'сделано', 'rest_text': None, 'owner_note': None,
          'updated_by': 'bench'}, False),
        ('board', 'GET /projects/AWPCA/sprints', 'GET', '/projects/AWPCA/sprints', None, False),
        ('board', 'GET /projects/AWPCA/board?sprint=103 (active)', 'GET', '/projects/AWPCA/board?sprint=103',
         None, False),
        ('board', 'GET /projects/AWPCA/board (whole; card statuses)', 'GET', '/projects/AWPCA/board', None, False),
        ('batches', 'GET /batches?limit=50', 'GET', '/batches?limit=50', None, False),
        ('batch', 'GET /batches/{id}', 'GET', f'/batches/{batch_id}', None, False),
        ('new batch', 'GET /settings', 'GET', '/settings', None, True),
        ('changes', 'GET /changes?order=desc', 'GET', '/changes?' + q(order='desc', limit=100), None, False),
        ('changes', 'GET /changes?project=AWPCA&order=desc', 'GET',
         '/changes?' + q(project='AWPCA', order='desc', limit=100), None, False),
        ('changes', 'GET /changes?since=… (oldest first)', 'GET', f'/changes?since={since}&limit=100',
         None, False),
        ('changes', 'GET /changes?until=…&order=desc', 'GET',
         f'/changes?until={since}&order=desc&limit=100', None, False),
    ]
    return [call for call in calls if only in call[1]]


def cpu_per_call(data_dir: Path, token: str, issues: int, moments: list[str], batch_id: int,
                 samples: int, only: str = '') -> dict[tuple[str, str], float]:
    """Median CPU time (``time.process_time``) of each call through the Falcon app in this
    process, no socket: what a call costs the hub itself, less sensitive than the wall clock to
    other processes on a shared machine (they still slow the CPU's caches and turbo down)."""
    from falcon import testing

    from hubweb import create_app

    hub = open_hub(data_dir)
    try:
        client = testing.TestClient(create_app(hub))
        headers = {'Authorization': f'Bearer {token}'}
        rng = random.Random(15)
        spent: dict[tuple[str, str], list[float]] = {}
        for round_ in range(samples + 1):
            for view, label, method, path, body, _ in view_calls(rng, issues, moments, batch_id, only):
                started = time.process_time()
                result = client.simulate_request(method, path, headers=headers, json=body)
                elapsed = (time.process_time() - started) * 1000
                if result.status_code >= 300:
                    raise SystemExit(f'{method} {path}: HTTP {result.status_code} {result.text}')
                if round_:  # the first round warms the statement caches
                    spent.setdefault((view, label), []).append(elapsed)
        return {call: statistics.median(values) for call, values in spent.items()}
    finally:
        hub.close()


def first_load(url: str, views: tuple[str, ...] = ('overview',)) -> list[tuple[str, int]]:
    """(path, bytes with headers) of every file an empty-cache browser loads for ``/ui/`` and
    the ``views`` it opens."""
    host, port = url.rsplit('/', 1)[-1].split(':')
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    loaded: list[tuple[str, int]] = []
    todo, seen = ['/ui/', *(f'/ui/js/views/{view}.js' for view in views)], set()
    while todo:
        path = todo.pop(0)
        if path in seen:
            continue
        seen.add(path)
        connection.request('GET', path)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            raise SystemExit(f'GET {path}: HTTP {response.status}')
        head = sum(len(f'{name}: {value}\r\n') for name, value in response.getheaders()) + 17
        loaded.append((path, len(body) + head))
        text = body.decode('utf-8', 'replace')
        base = path if path.endswith('/') else path.rsplit('/', 1)[0] + '/'
        links = ASSET.findall(text) if path.endswith('/') or path.endswith('.html') else \
            IMPORT.findall(text) if path.endswith('.js') else []
        for link in links:
            parts = []
            for part in (base + link).split('/'):
                if part == '..':
                    parts.pop()
                elif part != '.':
                    parts.append(part)
            todo.append('/'.join(parts))
    return loaded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--issues', type=int, default=50_000)
    parser.add_argument('--samples', type=int, default=40)
    parser.add_argument('--cpu-samples', type=int, default=10)
    parser.add_argument('--data', type=Path, help='keep the filled mirror here and reuse it')
    parser.add_argument('--only', default='', help='measure only calls whose label contains this')
    args = parser.parse_args(argv)
    overall = time.perf_counter()
    root = args.data or Path(tempfile.mkdtemp(prefix='bench-ui-'))
    try:
        started = time.perf_counter()
        if (root / 'hub' / 'filled').exists():
            tokens, moments, extra = reuse(root / 'hub')
            print(f'reused the mirror in {root / "hub"}')
        else:
            tokens, moments = fill_mirror(root / 'hub', args.issues)
            extra = add_batches_and_notes(root / 'hub', args.issues)
            (root / 'hub' / 'filled').write_text(str(args.issues))
            print(f'filled {args.issues:,} issues through hublib in {time.perf_counter() - started:.1f} s')
        with ServerProcess(root / 'hub', threads=8) as server:
            loaded = [] if args.only else first_load(server.url)
            every_view = [] if args.only else first_load(server.url, tuple(sorted(
                path.stem for path in (ROOT / 'hubweb/ui/static/js/views').glob('*.js'))))
            client = KeepAliveClient(server.url, tokens['client'], timeout=60)
            rng = random.Random(14)
            for _ in range(3):  # warm-up: page cache, statement caches
                for _, _, method, path, body, _ in view_calls(rng, args.issues, moments, extra['batch'], args.only):
                    client.checked(method, path, body)
                client.checked('GET', '/health')
            timings: dict[tuple[str, str], list[float]] = {}
            sizes: dict[tuple[str, str], int] = {}
            cached: set[tuple[str, str]] = set()
            baseline: list[float] = []
            for _ in range(args.samples):
                baseline.append(client.checked('GET', '/health')[0])
                for view, label, method, path, body, once in view_calls(rng, args.issues, moments,
                                                                        extra['batch'], args.only):
                    elapsed, data = client.checked(method, path, body)
                    timings.setdefault((view, label), []).append(elapsed)
                    sizes[(view, label)] = len(data)
                    if once:
                        cached.add((view, label))
        cpu = cpu_per_call(root / 'hub', tokens['client'], args.issues, moments, extra['batch'],
                           args.cpu_samples, args.only)
    finally:
        if not args.data:
            shutil.rmtree(root, ignore_errors=True)

    base95 = percentile(baseline, 0.95)
    print(f'baseline GET /health: p50 {statistics.median(baseline):.1f} ms, p95 {base95:.1f} ms')
    print(f'{"view":<11} {"API call at " + format(args.issues, ",") + " issues":<44} {"p50 ms":>7} '
          f'{"p95 ms":>7} {"vs base":>8} {"CPU ms":>7} {"KB":>6}  verdict')
    ok = True
    worst: dict[str, float] = {}
    for (view, label), values in timings.items():
        p50, p95 = statistics.median(values), percentile(values, 0.95)
        worst[view] = max(worst.get(view, 0.0), p95)
        passed = p95 < TARGET_MS
        ok &= passed
        note = ' (cached per tab)' if (view, label) in cached else ''
        print(f'{view:<11} {label + note:<44} {p50:>7.1f} {p95:>7.1f} {p95 / base95:>7.1f}x '
              f'{cpu[(view, label)]:>7.1f} {sizes[(view, label)] / 1024:>6.1f}  '
              f'{"ok" if passed else "MISSED"}')
    print('slowest call per view (p95 ms): ' + ', '.join(f'{view} {value:.1f}'
                                                        for view, value in worst.items()))
    total = sum(size for _, size in loaded)
    if args.only:
        print('first load: not measured (--only)')
    else:
        print(f'first load: {len(loaded)} files, {total / 1024:.1f} KB with headers '
              f'(target < {FIRST_LOAD_LIMIT // 1024} KB: {"ok" if total < FIRST_LOAD_LIMIT else "MISSED"})')
        print(f'every view opened once: {len(every_view)} files, '
              f'{sum(size for _, size in every_view) / 1024:.1f} KB')
        for path, size in sorted(loaded, key=lambda item: -item[1])[:5]:
            print(f'  {path:<32} {size / 1024:6.1f} KB')
    print(f'total benchmark time {time.perf_counter() - overall:.0f} s')
    return 0 if ok and total < FIRST_LOAD_LIMIT else 1


if __name__ == '__main__':
    sys.exit(main())
