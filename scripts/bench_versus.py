"""Benchmark: the same reads through two (or more) versions of the code, side by side in one run.

    .venv/bin/python scripts/bench_versus.py --side old=/tmp/old@/tmp/old-200k \\
        --side new=.@/tmp/hub-200k [--rounds 30]

A side is ``NAME=CODE@HUB``: a checkout of the code (e.g. ``git worktree add /tmp/old a8567c7``)
and a mirror that checkout built with its own ``scripts/bench_scale.py --keep`` (an older code
cannot open a newer schema; the generator and its seed are the same, so the mirrors hold the same
issues). Each side runs in its own long-lived process (this script with ``--worker``, that
checkout first on ``sys.path``), opens its mirror and answers, for each read name it is sent, the
CPU time (``time.process_time``) of one call through its Falcon app in process: no socket and no
server, the code's own cost. The sides take turns call by call (the order flips every round), so
whatever else the machine is doing weighs on both alike; the first side is the baseline of the
ratios. This is how "no worse than the figures of an earlier day" is checked on a machine whose
speed changes from day to day: the earlier code is measured again, beside the new one.

Reads (those of ``bench_scale``): the AWPCA slice's first and middle page of 500, the TINY
slice's first page, an issue card (a random key), the changes feed's first and middle page of
500, the first page of 500 of all issues, and ``GET /health`` (no table: the floor).
"""
from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

READS = ('slice_first', 'slice_middle', 'tiny_first', 'card', 'changes_first', 'changes_middle',
         'all_first', 'health')


def worker(code: str, data_dir: str) -> None:
    """Serve read names from stdin with their CPU ms on stdout, through ``code``'s own app."""
    sys.path.insert(0, code)
    from falcon import testing

    from hublib import open_hub, settings
    from hubweb.app import create_app

    hub = open_hub(data_dir, create=False)
    client = testing.TestClient(create_app(hub), headers={
        'Authorization': f'Bearer {settings.tokens(hub)["client"]}'})

    def get(path: str):
        result = client.simulate_get(path)
        if result.status_code != 200:
            raise SystemExit(f'{path}: HTTP {result.status_code} {result.text[:200]}')
        return result

    raw = sqlite3.connect(f'file:{data_dir}/hub.sqlite?mode=ro', uri=True)
    total, = raw.execute('SELECT count(*) FROM issue_change WHERE at IS NOT NULL').fetchone()
    middle_at, = raw.execute('SELECT at FROM issue_change WHERE at IS NOT NULL ORDER BY at '
                             'LIMIT 1 OFFSET ?', (total // 2,)).fetchone()
    top, = raw.execute('SELECT max(rowid) FROM issue').fetchone()
    rng = random.Random(7)
    keys: list[str] = []
    while len(keys) < 500:
        row = raw.execute('SELECT key FROM issue WHERE rowid = ?', (rng.randint(1, top),)).fetchone()
        if row:
            keys.append(row[0])
    raw.close()
    changes_cursor = get(f'/changes?since={quote(middle_at)}&limit=500').json['next_cursor']
    cursors, cursor = [], None
    while True:
        cursor = get('/issues?project=AWPCA&limit=500' + (f'&cursor={cursor}' if cursor else '')
                     ).json['next_cursor']
        if not cursor:
            break
        cursors.append(cursor)
    slice_cursor = cursors[len(cursors) // 2]
    cards = iter(range(10**9))
    paths = {
        'slice_first': lambda: '/issues?project=AWPCA&limit=500',
        'slice_middle': lambda: f'/issues?project=AWPCA&limit=500&cursor={slice_cursor}',
        'tiny_first': lambda: '/issues?project=TINY&limit=500',
        'card': lambda: f'/issues/{keys[next(cards) % len(keys)]}',
        'changes_first': lambda: '/changes?limit=500',
        'changes_middle': lambda: f'/changes?limit=500&cursor={changes_cursor}',
        'all_first': lambda: '/issues?limit=500',
        'health': lambda: '/health',
    }
    print('ready', flush=True)
    for line in sys.stdin:
        path = paths[line.strip()]()
        started = time.process_time()
        get(path)
        print(f'{(time.process_time() - started) * 1000:.4f}', flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--side', action='append', required=True, metavar='NAME=CODE@HUB')
    parser.add_argument('--rounds', type=int, default=30)
    parser.add_argument('--worker', nargs=2, metavar=('CODE', 'HUB'), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(*args.worker)
        return 0
    sides = []
    for spec in args.side:
        name, _, rest = spec.partition('=')
        code, _, data_dir = rest.partition('@')
        if not (name and code and data_dir):
            parser.error(f'--side {spec!r}: expected NAME=CODE@HUB')
        code = str(Path(code).resolve())
        process = subprocess.Popen(
            [sys.executable, __file__, '--side', spec, '--worker', code, data_dir],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env=dict(os.environ, PYTHONPATH=code))
        sides.append((name, process))
    try:
        for name, process in sides:
            if process.stdout.readline().strip() != 'ready':
                raise SystemExit(f'side {name} did not start')

        def call(process, read: str) -> float:
            process.stdin.write(read + '\n')
            process.stdin.flush()
            return float(process.stdout.readline())

        spent = {(name, read): [] for name, _ in sides for read in READS}
        for read in READS:
            for _ in range(3):  # warm-up: page cache, statement caches
                for _, process in sides:
                    call(process, read)
            for round_ in range(args.rounds):
                for name, process in sides if round_ % 2 == 0 else sides[::-1]:
                    spent[(name, read)].append(call(process, read))
    finally:
        for _, process in sides:
            process.stdin.close()
            process.wait()
    base = sides[0][0]
    print(f'CPU ms a call, median / min of {args.rounds}; ratio of medians against {base}')
    print(f'{"read":<16}' + ''.join(f'{name:>24}' for name, _ in sides))
    for read in READS:
        cells = []
        for name, _ in sides:
            values = spent[(name, read)]
            ratio = statistics.median(values) / statistics.median(spent[(base, read)])
            cells.append(f'{statistics.median(values):8.2f} /{min(values):6.2f} {ratio:5.2f}x')
        print(f'{read:<16}' + ''.join(f'{cell:>24}' for cell in cells))
    return 0


if __name__ == '__main__':
    sys.exit(main())
