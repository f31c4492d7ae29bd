"""Benchmark of the facet lists with choices (``reads.issue_facets(chosen=…)``) at 50,000 issues.

    .venv/bin/python scripts/bench_facets.py [--issues 50000] [--samples 15] [--data DIR]

The issues view asks for its four filter lists once per query. Before the lists counted the other
lists' choices, the page asked for the facets of the query with every facet term removed (one
call; the baseline of each row). Each list must now count within the other lists' choices: that
is one call with ``chosen`` (what the page does), or else one call per list with the other
lists' ``IN`` terms in the query (the alternative, four calls). For each scenario the median CPU
time in this process (``time.process_time``, in-process hublib calls: steadier than the wall
clock on a shared machine) of the three, and the ratios against the baseline; the answers of
``chosen`` and of the four calls are compared (they must be equal).

``--data DIR`` keeps the filled mirror (the fill of ``bench_reads``, a minute or two) for the
next run; ``bench_ui --data DIR`` fills the same kind of mirror in ``DIR/hub``.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'scripts'))

from bench_reads import fill as fill_mirror  # noqa: E402
from hublib import open_hub, reads  # noqa: E402

JQL_FIELD = {'status': 'status', 'assignee': 'assignee', 'issue_type': 'issuetype',
             'priority': 'priority'}
# (label, project, the query without facet terms, the choices)
SCENARIOS = [
    ('whole mirror; 2 statuses', None, '', {'status': ['В работе', 'На проверке']}),
    ('whole mirror; 2 statuses, 2 assignees', None, '',
     {'status': ['В работе', 'На проверке'], 'assignee': ['ivanov', None]}),
    ('project=AWPCA (kept counts); 2 statuses, 2 assignees', 'AWPCA', '',
     {'status': ['В работе', 'На проверке'], 'assignee': ['ivanov', None]}),
    ('project=ORION; status', 'ORION', '', {'status': ['В работе']}),
    ('ORDER BY updated DESC; 3 lists', None, 'ORDER BY updated DESC',
     {'status': ['Открыта'], 'assignee': ['petrov'], 'priority': ['Высокий', 'Средний']}),
    ('text ~ "отчёт"; 2 statuses, assignee', None, 'text ~ "отчёт"',
     {'status': ['В работе', 'Готово'], 'assignee': ['sidorova']}),
]


def term(name: str, values: list) -> str:
    listed = ', '.join('EMPTY' if value is None else json.dumps(value, ensure_ascii=False)
                       for value in values)
    return f'{JQL_FIELD[name]} IN ({listed})'


def per_list(hub, project, base: str, chosen: dict) -> dict:
    """The four lists asked one by one, each with the other lists' choices as JQL terms."""
    where, _, order = base.partition('ORDER BY')
    answer = {}
    for name in JQL_FIELD:
        terms = [f'({where.strip()})'] if where.strip() else []
        terms += [term(other, values) for other, values in chosen.items() if other != name]
        jql = ' AND '.join(terms) + (f' ORDER BY {order.strip()}' if order.strip() else '')
        answer[name] = reads.issue_facets(hub, jql=jql or None, project=project)[name]
    return answer


def cpu_ms(call, samples: int) -> float:
    call()  # warm the statement and page caches
    spent = []
    for _ in range(samples):
        started = time.process_time()
        call()
        spent.append((time.process_time() - started) * 1000)
    return statistics.median(spent)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--issues', type=int, default=50_000)
    parser.add_argument('--samples', type=int, default=15)
    parser.add_argument('--data', type=Path, help='keep the filled mirror here and reuse it')
    args = parser.parse_args(argv)
    root = args.data or Path(tempfile.mkdtemp(prefix='bench-facets-'))
    try:
        if not (root / 'hub' / 'filled').exists():
            started = time.perf_counter()
            fill_mirror(root / 'hub', args.issues)
            (root / 'hub' / 'filled').write_text(str(args.issues))
            print(f'filled {args.issues:,} issues through hublib in {time.perf_counter() - started:.1f} s')
        hub = open_hub(root / 'hub', create=False)
        try:
            print(f'{"scenario at " + format(args.issues, ",") + " issues":<56} {"before":>8} '
                  f'{"chosen":>8} {"ratio":>6} {"4 calls":>8} {"ratio":>6}  (CPU ms, median)')
            same = True
            for label, project, base, chosen in SCENARIOS:
                scope = {'project': project, 'jql': base or None}
                before = cpu_ms(lambda: reads.issue_facets(hub, **scope), args.samples)
                after = cpu_ms(lambda: reads.issue_facets(hub, **scope, chosen=chosen), args.samples)
                four = cpu_ms(lambda: per_list(hub, project, base, chosen), args.samples)
                answer = reads.issue_facets(hub, **scope, chosen=chosen)
                agree = all(answer[name] == lists for name, lists in
                            per_list(hub, project, base, chosen).items())
                same &= agree
                print(f'{label:<56} {before:>8.1f} {after:>8.1f} {after / before:>5.2f}x '
                      f'{four:>8.1f} {four / before:>5.2f}x  {"same answers" if agree else "DIFFER"}')
        finally:
            hub.close()
    finally:
        if not args.data:
            shutil.rmtree(root, ignore_errors=True)
    return 0 if same else 1


if __name__ == '__main__':
    sys.exit(main())
