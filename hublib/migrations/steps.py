"""One function per schema step, v1 -> v2 ... v8 -> v9.

Each step runs inside the single ``BEGIN IMMEDIATE`` transaction that ``hublib.db`` opens for the
whole migration, so a failure anywhere leaves the file at its old version. Steps carry their own
frozen knowledge of the schema they start from and never import ``hublib.models``: the live models
describe only the newest schema, and a step written against them would silently change meaning
when the models move on.
"""
from __future__ import annotations

import json
import logging
import re
from typing import Callable

from peewee import Database
from playhouse.migrate import SqliteMigrator, migrate

from .. import jsontext
from ..timeutil import to_utc
from .legacy import DDL, V9_READ_INDEXES

log = logging.getLogger('hublib.migrations')

Step = Callable[[Database, str], None]


def _script(db: Database, script: str) -> None:
    # executescript() would COMMIT the surrounding transaction, so statements go one by one.
    for statement in script.split(';'):
        if statement.strip():
            db.execute_sql(statement)


def _setting(db: Database, key: str) -> object:
    row = db.execute_sql('SELECT value FROM setting WHERE key = ?', (key,)).fetchone()
    return jsontext.load(row[0]) if row is not None else None


def _put_setting(db: Database, key: str, value: object) -> None:
    db.execute_sql('INSERT OR REPLACE INTO setting (key, value) VALUES (?, ?)',
                   (key, json.dumps(value, ensure_ascii=False)))


def _columns(db: Database, table: str) -> set[str]:
    return {row[1] for row in db.execute_sql(f'PRAGMA table_info("{table}")')}


def step_1_to_2(db: Database, now: str) -> None:
    """Delivery counter; a command caught in `claimed` has been delivered once."""
    _script(db, DDL[2])
    db.execute_sql("UPDATE command SET deliveries = 1 WHERE status = 'claimed'")


def step_2_to_3(db: Database, now: str) -> None:
    """Empty comment mirror."""
    _script(db, DDL[3])


_LABELS_EQ = re.compile(r'\blabels\s*=\s*("[^"]*"|\'[^\']*\'|[^\s()"\',]+)', re.IGNORECASE)
_LABELS_IN = re.compile(r'\blabels\s+in\s*\(([^)]*)\)', re.IGNORECASE)
_PROJECT = re.compile(r'\bproject\s*=\s*("[^"]*"|[^\s()"]+)', re.IGNORECASE)


def parse_base_jql_labels(base_jql: object) -> list[str] | None:
    """Labels of a v3 ``base_jql`` (``labels = M`` or ``labels in (M1, …)``), ``None`` if neither."""
    if not isinstance(base_jql, str):
        return None
    match = _LABELS_IN.search(base_jql)
    if match:
        labels = [part.strip().strip('"\'') for part in match.group(1).split(',')]
    else:
        match = _LABELS_EQ.search(base_jql)
        labels = [match.group(1).strip('"\'')] if match else []
    # Jira compares labels ignoring case, and so does the hub's uniqueness rule: keep the first.
    unique: dict[str, str] = {}
    for label in labels:
        if label:
            unique.setdefault(label.casefold(), label)
    return list(unique.values()) or None


def step_3_to_4(db: Database, now: str) -> None:
    """Projects from the labels of the old ``base_jql``; matching runs and queued refreshes follow.

    The spec leaves the project key to the caller: the setting ``project_key`` is used, and when
    a v3 file has none, the ``project = X`` of the old ``base_jql`` is taken and stored, because
    without it the hub could not compute the base JQL the rewritten rows now carry.
    """
    _script(db, DDL[4])
    old_jql = _setting(db, 'base_jql')
    if old_jql is None:
        return
    labels = parse_base_jql_labels(old_jql)
    if labels is None:
        log.warning('v3 -> v4: base_jql не разобрана, проекты не созданы: %r', old_jql)
        return
    project_key = _setting(db, 'project_key')
    if not project_key:
        match = _PROJECT.search(old_jql) if isinstance(old_jql, str) else None
        if match:
            project_key = match.group(1).strip('"')
            _put_setting(db, 'project_key', project_key)
    board_id = _setting(db, 'board_id')
    if isinstance(board_id, str) and board_id.strip().isdigit():  # written by hand as "4216"
        board_id = int(board_id)
    valid_board = isinstance(board_id, int) and not isinstance(board_id, bool) and board_id > 0
    if board_id is not None and len(labels) != 1:
        log.warning('v3 -> v4: board_id %s не отдан ни одному проекту: проектов %d',
                    board_id, len(labels))
    elif board_id is not None and not valid_board:
        log.warning('v3 -> v4: board_id %r не номер доски, проекту не отдан', board_id)
    for label in labels:
        db.execute_sql(
            'INSERT OR IGNORE INTO project (label, name, board_id, board_type, created_at) '
            'VALUES (?, ?, ?, NULL, ?)',
            (label, 'АРМ КА' if label == 'AWPCA' else label,
             board_id if len(labels) == 1 and valid_board else None, now))
    if not project_key:
        log.warning('v3 -> v4: нет project_key, базовая JQL не вычислена; прогоны не переписаны')
        return
    new_jql = 'project = {} AND labels in ({})'.format(
        project_key, ', '.join(f'"{label}"' for label in sorted(labels)))
    db.execute_sql('UPDATE sync_run SET query = ? WHERE query = ?', (new_jql, old_jql))
    rows = db.execute_sql(
        "SELECT id, params FROM command WHERE type = 'refresh' AND status IN ('queued', 'claimed')"
    ).fetchall()
    for command_id, params_text in rows:
        try:
            params = json.loads(params_text or '{}')
        except ValueError:
            continue
        if isinstance(params, dict) and params.get('jql') == old_jql:
            params['jql'] = new_jql
            db.execute_sql('UPDATE command SET params = ? WHERE id = ?',
                           (json.dumps(params, ensure_ascii=False), command_id))


def step_4_to_5(db: Database, now: str) -> None:
    """Change history table; comments get their UTC ``created_at``."""
    _script(db, DDL[5])
    rows = db.execute_sql('SELECT key, comment_id, created FROM issue_comment').fetchall()
    db.cursor().executemany(
        'UPDATE issue_comment SET created_at = ? WHERE key = ? AND comment_id = ?',
        [(to_utc(created), key, comment_id) for key, comment_id, created in rows])


def step_5_to_6(db: Database, now: str) -> None:
    """Empty attachment list and downloaded-files tables."""
    _script(db, DDL[6])


def step_6_to_7(db: Database, now: str) -> None:
    """Boards move from ``project`` to the jira module's ``jira_project``."""
    _script(db, DDL[7])
    db.execute_sql('INSERT INTO jira_project (label, board_id, board_type) '
                   'SELECT label, board_id, board_type FROM project')
    migrator = SqliteMigrator(db)
    migrate(migrator.drop_column('project', 'board_id'),
            migrator.drop_column('project', 'board_type'))


def step_7_to_8(db: Database, now: str) -> None:
    """The fact-status feature is gone: its column and its two settings keys."""
    if 'fact_status' in _columns(db, 'issue_note'):
        migrate(SqliteMigrator(db).drop_column('issue_note', 'fact_status'))
    deleted = db.execute_sql(
        "DELETE FROM setting WHERE key IN ('status_labels', 'transitions_map')").rowcount
    if deleted:
        version = _setting(db, 'settings_version')
        _put_setting(db, 'settings_version', (version if isinstance(version, int) else 0) + 1)


def step_8_to_9(db: Database, now: str) -> None:
    """Rank, story points, boards, sprints and sprint membership; the hub's read indexes."""
    _script(db, DDL[9])
    _script(db, V9_READ_INDEXES)


STEPS: dict[int, Step] = {
    1: step_1_to_2,
    2: step_2_to_3,
    3: step_3_to_4,
    4: step_4_to_5,
    5: step_5_to_6,
    6: step_6_to_7,
    7: step_7_to_8,
    8: step_8_to_9,
}
