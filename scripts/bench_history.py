"""Benchmark: change-history ingest, ``POST /agent/history`` against raw ``sqlite3.executemany``.

    .venv/bin/python scripts/bench_history.py [--issues 10000] [--changes-per-issue 10]

The rows come from ``hubweb.demo.fake_jira.FakeJira`` (times with offsets like ``+0300``, standard and custom
fields), in pages of the history of 100 issues, as the agent sends them. Three measurements in
the same run:

1. HTTP, first delivery: every row new (``inserted``), through a real ``sdlc-hub serve`` on
   127.0.0.1, one keep-alive connection, bodies encoded before the clock starts;
2. HTTP, the same pages again (a redelivered refresh): every row ``ignored``;
3. baseline: ``INSERT OR IGNORE`` of the same rows with ``sqlite3.executemany`` into a fresh hub
   database of the same schema, one transaction per page, the UTC time and logical field computed
   before the clock starts (the physical limit; the hub computes them inside its time).

Target (issue 7): HTTP history ingest within 3× of the baseline.
"""
from __future__ import annotations

import argparse
import http.client
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hublib import open_hub, projects, settings  # noqa: E402
from hublib.fieldmap import logical_field  # noqa: E402
from hublib.timeutil import to_utc  # noqa: E402
from hubweb.demo.fake_jira import FakeJira  # noqa: E402
from tests.support.server import ServerProcess  # noqa: E402

ISSUES_PER_PAGE = 100
FIELD_IDS = {'planned_start': 'customfield_10015', 'planned_end': 'customfield_10016'}
INSERT = ('INSERT OR IGNORE INTO issue_change (history_id, seq, key, at, created, author, field, '
          'field_id, field_name, from_value, from_string, to_value, to_string, fetched_at) '
          'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
TARGET = 3.0


def generate(issues: int, changes_per_issue: int, seed: int) -> list[list[dict]]:
    jira = FakeJira(issues, seed=seed, changes_per_issue=changes_per_issue)
    keys = jira.all_keys()
    return [[item for key in keys[start:start + ISSUES_PER_PAGE] for item in jira.history(key)]
            for start in range(0, len(keys), ISSUES_PER_PAGE)]


def prepare(data_dir: Path) -> dict:
    hub = open_hub(data_dir)
    try:
        settings.update_settings(hub, {'project_key': 'AURORA', 'field_ids': FIELD_IDS})
        projects.create_project(hub, 'AWPCA', 'Аврора')
        return settings.tokens(hub)
    finally:
        hub.close()


def post_all(url: str, token: str, bodies: list[bytes]) -> tuple[float, int, int]:
    host, port = url.rsplit('/', 1)[-1].split(':')
    connection = http.client.HTTPConnection(host, int(port), timeout=120)
    headers = {'Authorization': f'Bearer {token}', 'Content-Type': 'application/json'}
    inserted = ignored = 0
    started = time.perf_counter()
    for body in bodies:
        connection.request('POST', '/agent/history', body, headers)
        response = connection.getresponse()
        data = response.read()
        if response.status != 200:
            raise SystemExit(f'/agent/history: HTTP {response.status} {data[:300]!r}')
        answer = json.loads(data)
        inserted += answer['inserted']
        ignored += answer['ignored']
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed, inserted, ignored


def raw_ingest(db_path: Path, pages: list[list[dict]]) -> float:
    fetched_at = '2026-11-30T10:00:00+00:00'
    prepared = [[(c['history_id'], c['seq'], c['key'], to_utc(c['created']), c['created'],
                  c['author'], logical_field(c['field_id'], c['field_name'], FIELD_IDS),
                  c['field_id'], c['field_name'], c['from_value'], c['from_string'],
                  c['to_value'], c['to_string'], fetched_at) for c in page] for page in pages]
    connection = sqlite3.connect(str(db_path), isolation_level=None)
    connection.execute('PRAGMA synchronous=normal')
    started = time.perf_counter()
    for rows in prepared:
        connection.execute('BEGIN IMMEDIATE')
        connection.executemany(INSERT, rows)
        connection.execute('COMMIT')
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--issues', type=int, default=10_000)
    parser.add_argument('--changes-per-issue', type=int, default=10)
    parser.add_argument('--seed', type=int, default=5)
    args = parser.parse_args(argv)
    pages = generate(args.issues, args.changes_per_issue, args.seed)
    rows = sum(len(page) for page in pages)
    bodies = [json.dumps({'agent': 'jira', 'items': page}, ensure_ascii=False).encode() for page in pages]
    root = Path(tempfile.mkdtemp(prefix='bench-history-'))
    try:
        tokens = prepare(root / 'http')
        with ServerProcess(root / 'http', threads=4) as server:
            first, inserted, _ = post_all(server.url, tokens['agent'], bodies)
            again, _, ignored = post_all(server.url, tokens['agent'], bodies)
        assert inserted == rows and ignored == rows, (rows, inserted, ignored)
        prepare(root / 'raw')
        raw = raw_ingest(root / 'raw' / 'hub.sqlite', pages)
        conn = sqlite3.connect(str(root / 'raw' / 'hub.sqlite'))
        assert conn.execute('SELECT count(*) FROM issue_change').fetchone()[0] == rows
        conn.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f'history: {rows:,} rows of {args.issues:,} issues, {len(pages)} pages of '
          f'{ISSUES_PER_PAGE} issues\' history')
    print(f'{"way":<44} {"seconds":>8} {"rows/s":>9} {"ratio":>6}')
    for name, seconds in (('raw sqlite3 executemany (baseline)', raw),
                          ('HTTP POST /agent/history, new rows', first),
                          ('HTTP POST /agent/history, all repeated', again)):
        print(f'{name:<44} {seconds:>8.2f} {rows / seconds:>9.0f} {seconds / raw:>5.2f}x')
    ratio = first / raw
    print(f'target: new rows within {TARGET:.0f}x of raw -> {"met" if ratio <= TARGET else "MISSED"} '
          f'({ratio:.2f}x)')
    return 0 if ratio <= TARGET else 1


if __name__ == '__main__':
    sys.exit(main())
