"""Bulk generated data written straight with ``sqlite3``: legacy databases for the migration
benchmark and the kill-during-migration test, and baseline rows for the ingest benchmarks.

Rows are built from :class:`~hubweb.demo.fake_jira.FakeJira`'s shapes but without its per-issue
overhead, so 50,000 issues and 500,000 change rows take seconds.
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.support.legacy import create_legacy_database

LABELS = ('AWPCA', 'ORION', 'VEGA')
BASE_JQL_V3 = 'project = AURORA AND labels in (AWPCA, ORION, VEGA)'


def issue_row_v1(number: int) -> tuple:
    """An ``issue`` row of the v1 schema (19 columns)."""
    label = LABELS[number % len(LABELS)]
    return (f'AURORA-{number}', str(10000 + number), 'Задача', f'Задача {number}: доработать отчёт',
            f'h2. Описание\nЗадача {number}.' + ' текст' * 20, ('Открыта', 'В работе', 'Готово')[number % 3],
            'Средний', 'ivanov', 'petrov', '2026-12-01', None, None, f'AURORA-{1 + number // 50 * 50}',
            json.dumps([label]), 'Спринт 2', '2026-10-22T09:00:00.000+0300', '2026-11-30T10:00:00+00:00',
            0, '2026-10-01T10:00:00.000+0300')


def change_row(number: int, index: int) -> tuple:
    """An ``issue_change`` row (v5+) for issue ``number``."""
    return (str(number * 100 + index // 2), index % 2, f'AURORA-{number}',
            f'2026-10-{1 + index % 28:02d}T{index % 24:02d}:00:00+00:00',
            f'2026-10-{1 + index % 28:02d}T{(index % 24 + 3) % 24:02d}:00:00.000+0300', 'ivanov',
            'status', 'status', 'Status', '1', 'Открыта', '3', 'В работе', '2026-11-30T10:00:00+00:00')


def fill_legacy_database(path: str | Path, version: int, *, issues: int = 50_000,
                         changes_per_issue: int = 0, comments_per_issue: int = 0,
                         links_per_issue: int = 2, notes_every: int = 10,
                         commands: int = 1000) -> dict[str, int]:
    """Create a v``version`` database at ``path`` full of generated rows; return the row counts."""
    settings = {'settings_version': 3, 'project_key': 'AURORA'}
    if version >= 3:
        settings['base_jql'] = BASE_JQL_V3
    if version < 8:
        settings['status_labels'] = {'Готово': 'done'}
    create_legacy_database(path, version, settings)
    conn = sqlite3.connect(str(path))
    counts: dict[str, int] = {}
    try:
        conn.execute('PRAGMA journal_mode=wal')
        conn.execute('PRAGMA synchronous=off')
        with conn:
            conn.executemany('INSERT INTO issue VALUES (' + ', '.join('?' * 19) + ')',
                             (issue_row_v1(n) for n in range(1, issues + 1)))
            counts['issue'] = issues
            links = [(f'AURORA-{n}', f'AURORA-{(n + step * 7) % issues + 1}', 'Blocks')
                     for n in range(1, issues + 1) for step in range(1, links_per_issue + 1)]
            conn.executemany('INSERT OR IGNORE INTO issue_link VALUES (?, ?, ?)', links)
            counts['issue_link'] = conn.execute('SELECT count(*) FROM issue_link').fetchone()[0]
            conn.executemany(
                'INSERT INTO issue_note (key, work_kind, fact_status, done_text, rest_text, owner_note, '
                'updated_at, updated_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)' if version < 8 else
                'INSERT INTO issue_note (key, work_kind, done_text, rest_text, owner_note, updated_at, '
                'updated_by) VALUES (?, ?, ?, ?, ?, ?, ?)',
                ((f'AURORA-{n}', 'Аналитика') + (('done',) if version < 8 else ()) +
                 ('сделано', 'осталось', None, '2026-11-01T10:00:00+00:00', 'ivanov')
                 for n in range(1, issues + 1, notes_every)))
            counts['issue_note'] = len(range(1, issues + 1, notes_every))
            conn.execute("INSERT INTO batch (id, title, author, created_at) "
                         "VALUES (1, 'Старый пакет', 'ivanov', '2026-11-01T10:00:00+00:00')")
            conn.executemany(
                'INSERT INTO command (batch_id, seq, type, params, status, jira_calls) '
                'VALUES (1, ?, ?, ?, ?, 1)',
                ((seq, 'add_comment', json.dumps({'key': f'AURORA-{seq}', 'body': 'x'}), 'done')
                 for seq in range(1, commands + 1)))
            counts['command'] = commands
            conn.executemany(
                "INSERT INTO sync_run (started_at, finished_at, kind, query, issues_count) "
                "VALUES ('2026-11-01T10:00:00+00:00', '2026-11-01T10:05:00+00:00', 'jql', ?, ?)",
                ((BASE_JQL_V3 if version >= 3 else 'project = AURORA', issues) for _ in range(50)))
            if version >= 3 and comments_per_issue:
                created_column = ', created_at' if version >= 5 else ''
                conn.executemany(
                    'INSERT INTO issue_comment (key, comment_id, author, created, updated, body'
                    f'{created_column}) VALUES (?, ?, ?, ?, ?, ?' + (', ?' if version >= 5 else '') + ')',
                    ((f'AURORA-{n}', str(n * 10 + i), 'petrov', '2026-10-22T13:05:11.000+0300',
                      '2026-10-22T13:05:11.000+0300', f'Комментарий {i}')
                     + (('2026-10-22T10:05:11+00:00',) if version >= 5 else ())
                     for n in range(1, issues + 1) for i in range(comments_per_issue)))
                counts['issue_comment'] = issues * comments_per_issue
            if version >= 5 and changes_per_issue:
                conn.executemany('INSERT INTO issue_change VALUES (' + ', '.join('?' * 14) + ')',
                                 (change_row(n, i) for n in range(1, issues + 1)
                                  for i in range(changes_per_issue)))
                counts['issue_change'] = issues * changes_per_issue
        conn.execute('PRAGMA wal_checkpoint(TRUNCATE)')
    finally:
        conn.close()
    return counts


def row_counts(path: str | Path, tables: list[str]) -> dict[str, int]:
    """``count(*)`` of each table (read-only connection)."""
    conn = sqlite3.connect(f'file:{path}?mode=ro', uri=True)
    try:
        return {table: conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] for table in tables}
    finally:
        conn.close()


__all__ = ['fill_legacy_database', 'row_counts', 'issue_row_v1', 'change_row']
