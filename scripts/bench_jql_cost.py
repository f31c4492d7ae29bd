"""Benchmark: the cost of JQL at scale (issue 31, contract §20) — what the cost estimate's units
are worth on this machine, and the hostile queries of issue 31, an older checkout beside this one.

    .venv/bin/python scripts/bench_jql_cost.py [--issues 100000] [--old DIR] [--timeout 60]
        [--keep DIR | --reuse DIR] [--only units|hostile]

1. Build: the mirror of ``tests.support.scale.ScaleJira`` (``--issues`` issues, 10 change rows
   each), or reuse one.
2. Units: the count of one clause of each kind the estimate weighs (``hublib.jql.sql.COSTS``),
   through this checkout, least CPU of 3: CPU µs per issue of the mirror beside the unit the
   estimate uses (which is about half of it: only a query sure to outrun the deadline is refused).
3. Hostile: each query of issue 31 (and the ones the limits refuse), the first page of 100 and
   the count, through each side's code in a process of its own (``tests.support.sides``): CPU and
   wall ms, or 422 (refused), or stopped after ``--timeout`` s. Each must be answered or refused
   within 5 s on a 100,000-issue mirror.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hublib.jql.sql import COSTS  # noqa: E402
from tests.support.scale import ScaleJira, build_hub  # noqa: E402
from tests.support.sides import measure, shown  # noqa: E402

LETTERS = 'абвгдежзиклмнопрстуфхцчшщэюя'

UNITS = [  # (kind of COSTS, a count that reads every issue or document for it)
    ('was', 'status WAS "Нет такого"'),
    ('was_window', 'status WAS "Нет такого" DURING ("2026-01-01", "2026-06-01")'),
    ('changed', 'status CHANGED BY nobody'),
    ('changed_window', 'status CHANGED AFTER "2026-01-01"'),
    ('prefix1', 'text ~ "а*"'),
    ('prefix2', 'text ~ "да*"'),
    ('prefix', 'text ~ "дан*"'),
    ('word', 'text ~ данных'),
]

HOSTILE = {
    '300 OR-ed status WAS': ' OR '.join(f'status WAS x{n}' for n in range(300)),
    '300 OR-ed summary ~ задача': ' OR '.join(['summary ~ задача'] * 300),
    '300 OR-ed summary ~ distinct words': ' OR '.join(f'summary ~ слово{n}' for n in range(300)),
    'text ~ 900 one-letter prefixes': 'text ~ "' + ' '.join(
        f'{LETTERS[n % len(LETTERS)]}*' for n in range(900)) + '"',
    'text ~ 900 two-letter prefixes': 'text ~ "' + ' '.join(
        f'{a}{b}*' for a in LETTERS for b in LETTERS)[:900 * 4].rsplit(' ', 1)[0] + '"',
    '300 OR-ed WAS, each its own BY': ' OR '.join(f'status WAS x{n} BY u{n}' for n in range(300)),
    '28 AND-ed one-letter text ~': ' AND '.join(f'text ~ "{letter}*"' for letter in LETTERS),
    '19 NOTs': 'NOT ' * 19 + 'labels = x',
    'now(-9999999d)': 'created > now(-9999999d)',
    'startOfDay(9999999d)': 'created > startOfDay(9999999d)',
    'startOfWeek(-300000w)': 'created > startOfWeek(-300000w)',
    'DURING out of range': 'status WAS a DURING (now(-9999999d), startOfWeek(-300000w))',
    'key of 5,000 digits': 'key < AURORA-' + '9' * 5000,
    'ORDER BY due x1,990': 'ORDER BY ' + ', '.join(['due'] * 1990),
    'ORDER BY assignee': 'ORDER BY assignee DESC',
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--issues', type=int, default=100_000)
    parser.add_argument('--old', help='a checkout of the code to compare with (e.g. main)')
    parser.add_argument('--timeout', type=float, default=60.0)
    parser.add_argument('--only', choices=('units', 'hostile'))
    where = parser.add_mutually_exclusive_group()
    where.add_argument('--keep', help='build the mirror in DIR and keep it')
    where.add_argument('--reuse', help='a mirror built with --keep')
    args = parser.parse_args()

    data_dir = Path(args.reuse or args.keep or tempfile.mkdtemp(prefix='bench-jql-')) / 'hub'
    if not args.reuse:
        started = time.perf_counter()
        build_hub(data_dir, ScaleJira(args.issues), workers=1)
        print(f'mirror of {args.issues:,} issues built in {time.perf_counter() - started:.0f} s')
    try:
        if args.only != 'hostile':
            print(f'\n{"unit":<15} | {"count of":<62} | CPU µs/issue | estimate µs/issue')
            for kind, query in UNITS:
                result = measure(ROOT, data_dir, 'issue_count', {'jql': query},
                                 timeout=args.timeout, rounds=3)
                per_issue = (f'{1000 * result["cpu_ms"] / args.issues:12.3f}'
                             if result['cpu_ms'] else shown(result))
                print(f'{kind:<15} | {query[:62]:<62} | {per_issue} | {COSTS[kind]:.3f}',
                      flush=True)
        if args.only != 'units':
            sides = ([('old', Path(args.old))] if args.old else []) + [('new', ROOT)]
            print(f'\n{"query":<36} | {"read":<5} | '
                  + ' | '.join(f'{name:<30}' for name, _ in sides))
            for name, query in HOSTILE.items():
                for read, function, arguments in (
                        ('page', 'issues', {'jql': query, 'limit': 100}),
                        ('count', 'issue_count', {'jql': query})):
                    results = [measure(code, data_dir, function, arguments,
                                       timeout=args.timeout) for _, code in sides]
                    cells = [shown(result) + (f' {result["message"][:40]}'
                                              if result['status'] == 422 else '')
                             for result in results]
                    print(f'{name:<36} | {read:<5} | ' + ' | '.join(f'{cell:<30}' for cell in cells),
                          flush=True)
    finally:
        if not (args.keep or args.reuse):
            shutil.rmtree(data_dir.parent, ignore_errors=True)


if __name__ == '__main__':
    main()
