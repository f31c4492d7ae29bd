"""Benchmark: ORDER BY a choice field whatever the number of its distinct values (issue 31,
contract §20 «Cost of a sort»), an older checkout of the code beside this one in the same run.

    .venv/bin/python scripts/bench_choice_order.py [--issues 20000] [--people 250,1000,4000,16000]
        [--old DIR] [--timeout 120] [--keep DIR | --reuse DIR]

1. Build: the mirror of ``tests.support.scale.ScaleJira`` (``--issues`` issues), or reuse one.
2. For each number of people D: the issues get D distinct assignees (``user00000`` …, every
   seventh spelled in capitals: two spellings of one person, as JQL compares them), the kept
   facet counts rebuilt.
3. Through each side's code (``--old`` a checkout, e.g. ``git archive main | tar -x -C DIR``; this
   checkout always), each read in a process of its own (``tests.support.sides``), least CPU of
   ``--rounds``: the first page of 100 of ``ORDER BY assignee DESC``, a deep page (its cursor at
   the middle of the mirror, taken from this checkout's pages: both codes' cursors hold the
   casefolded name and the key), and ``status != Готово ORDER BY assignee`` (a filter: the
   sort of the matching issues). A read over ``--timeout`` seconds is stopped.

Prints one row per (D, read) with each side's CPU ms (wall ms) and the ratio old / new.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hublib import facet_counts, open_hub  # noqa: E402
from tests.support.scale import ScaleJira, build_hub  # noqa: E402
from tests.support.sides import measure, shown  # noqa: E402

READS = {
    'first page': {'jql': 'ORDER BY assignee DESC', 'limit': 100},
    'deep page': {'jql': 'ORDER BY assignee DESC', 'limit': 100},
    'filter, first page': {'jql': 'status != Готово ORDER BY assignee', 'limit': 100},
}


def spread(data_dir: Path, people: int) -> None:
    """Give the mirror's issues ``people`` distinct assignees (every seventh in capitals)."""
    hub = open_hub(data_dir, create=False)
    try:
        with hub.write():
            hub.db.execute_sql(
                "UPDATE issue SET assignee = CASE WHEN rowid % 7 = 0 "
                "THEN upper(printf('user%05d', rowid % :people)) "
                "ELSE printf('user%05d', rowid % :people) END", {'people': people})
            facet_counts.rebuild(hub)
    finally:
        hub.close()


def middle_cursor(data_dir: Path, query: str, issues: int, timeout: float) -> str | None:
    """The cursor after about half of the mirror in ``query``'s order (this checkout's pages)."""
    cursor, seen = None, 0
    while seen < issues // 2:
        page = measure(ROOT, data_dir, 'issues', {'jql': query, 'limit': 1000,
                                                  **({'cursor': cursor} if cursor else {})},
                       timeout=timeout)
        if page['status'] != 200 or page['cursor'] is None:
            return cursor
        cursor, seen = page['cursor'], seen + page['items']
    return cursor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--issues', type=int, default=20_000)
    parser.add_argument('--people', default='250,1000,4000,16000')
    parser.add_argument('--old', help='a checkout of the code to compare with (e.g. main)')
    parser.add_argument('--timeout', type=float, default=120.0)
    parser.add_argument('--rounds', type=int, default=3)
    where = parser.add_mutually_exclusive_group()
    where.add_argument('--keep', help='build the mirror in DIR and keep it')
    where.add_argument('--reuse', help='a mirror built with --keep')
    args = parser.parse_args()

    data_dir = Path(args.reuse or args.keep or tempfile.mkdtemp(prefix='bench-choice-')) / 'hub'
    if not args.reuse:
        started = time.perf_counter()
        build_hub(data_dir, ScaleJira(args.issues), workers=1)
        print(f'mirror of {args.issues:,} issues built in {time.perf_counter() - started:.0f} s')
    sides = ([('old', Path(args.old))] if args.old else []) + [('new', ROOT)]
    print(f'{"people":>7} | {"read":<20} | ' + ' | '.join(f'{name:<28}' for name, _ in sides)
          + (' | old / new' if args.old else ''))
    try:
        for people in [int(part) for part in args.people.split(',')]:
            spread(data_dir, people)
            deep = middle_cursor(data_dir, READS['deep page']['jql'], args.issues, args.timeout)
            for name, arguments in READS.items():
                arguments = {**arguments, **({'cursor': deep} if name == 'deep page' else {})}
                results = [measure(code, data_dir, 'issues', arguments, timeout=args.timeout,
                                   rounds=args.rounds) for _, code in sides]
                ratio = ''
                if args.old and results[0]['cpu_ms'] and results[-1]['cpu_ms']:
                    ratio = f' | {results[0]["cpu_ms"] / results[-1]["cpu_ms"]:.0f}x'
                elif args.old and results[0]['status'] == 'timeout':
                    ratio = ' | —'
                print(f'{people:>7} | {name:<20} | '
                      + ' | '.join(f'{shown(result):<28}' for result in results) + ratio,
                      flush=True)
                if len(results) == 2 and results[0]['status'] == results[1]['status'] == 200:
                    assert results[0]['items'] == results[1]['items'], (name, results)
    finally:
        if not (args.keep or args.reuse):
            shutil.rmtree(data_dir.parent, ignore_errors=True)


if __name__ == '__main__':
    main()
