"""Benchmark: schema migration to v9 of big legacy databases, through ``hublib.open_hub``.

    .venv/bin/python scripts/bench_migration.py [--issues 50000] [--changes 500000]

``issue_change`` exists only from schema v5, so one database cannot hold both the v1 schema and
500,000 change rows. Two databases are migrated:

- v1 → v9: 50,000 issues (+ links, notes, 1,000 commands, sync runs) — every step runs;
- v3 → v9: 50,000 issues and 100,000 comments — the v4 → v5 step rewrites every comment's time;
- v5 → v9: the same 50,000 issues plus 500,000 ``issue_change`` rows and 100,000 comments —
  the heaviest file a field hub can bring to the v5+ steps.

Baseline of each (same run, same file): a consistent copy with the SQLite backup API, which the
migration must make anyway (contract §5). Target: v1 → v9 of the 50,000-issue database < 60 s.
"""
from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hublib import open_hub  # noqa: E402
from tests.support.bulk import fill_legacy_database, row_counts  # noqa: E402

TARGET_SECONDS = 60.0


def backup_copy_seconds(path: Path) -> float:
    """Best of two copies, so both sides run with a warm page cache."""
    return min(_copy_once(path) for _ in range(2))


def _copy_once(path: Path) -> float:
    started = time.perf_counter()
    source = sqlite3.connect(str(path))
    target = sqlite3.connect(str(path.with_name('baseline-copy.sqlite')))
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()
    path.with_name('baseline-copy.sqlite').unlink()
    return time.perf_counter() - started


def migrate_seconds(data_dir: Path) -> float:
    started = time.perf_counter()
    hub = open_hub(data_dir)
    elapsed = time.perf_counter() - started
    version = hub.db.execute_sql("SELECT value FROM setting WHERE key = 'schema_version'").fetchone()[0]
    hub.close()
    assert version == '9', version
    return elapsed


def run_case(root: Path, version: int, issues: int, changes_per_issue: int,
             comments_per_issue: int) -> dict:
    data_dir = root / f'v{version}'
    data_dir.mkdir()
    path = data_dir / 'hub.sqlite'
    started = time.perf_counter()
    counts = fill_legacy_database(path, version, issues=issues, changes_per_issue=changes_per_issue,
                                  comments_per_issue=comments_per_issue)
    build = time.perf_counter() - started
    size_mb = path.stat().st_size / 2**20
    baseline = backup_copy_seconds(path)
    seconds = migrate_seconds(data_dir)
    after = row_counts(path, list(counts))
    assert after == counts, (counts, after)
    return {'version': version, 'counts': counts, 'size_mb': size_mb, 'build': build,
            'baseline': baseline, 'seconds': seconds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--issues', type=int, default=50_000)
    parser.add_argument('--changes', type=int, default=500_000, help='issue_change rows (v5 case)')
    parser.add_argument('--comments-per-issue', type=int, default=2)
    parser.add_argument('--keep', action='store_true', help='keep the temporary directory')
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix='bench-migration-'))
    try:
        cases = [run_case(root, 1, args.issues, 0, 0),
                 run_case(root, 3, args.issues, 0, args.comments_per_issue),
                 run_case(root, 5, args.issues, max(1, args.changes // args.issues),
                          args.comments_per_issue)]
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f'{"migration":<10} {"rows":<80} {"MiB":>6} {"seconds":>8} {"backup copy":>11} '
          f'{"ratio":>6} {"target":>7}')
    ok = True
    for case in cases:
        rows = ', '.join(f'{table} {count:,}' for table, count in case['counts'].items()
                         if table in ('issue', 'issue_change', 'issue_comment', 'issue_link'))
        ratio = case['seconds'] / case['baseline'] if case['baseline'] else float('inf')
        within = case['seconds'] < TARGET_SECONDS
        ok &= within
        print(f'v{case["version"]} -> v9   {rows:<80} {case["size_mb"]:>6.0f} {case["seconds"]:>8.2f} '
              f'{case["baseline"]:>10.2f}s {ratio:>5.1f}x {"< 60 s" if within else "MISSED":>7}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
