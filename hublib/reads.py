"""Interfaces' reads of the mirror (contract §10): issues, issue cards, the change feed, the sync
journal and project boards and sprints. Read-only: nothing here writes a table.

Collections use keyset pagination; a cursor is an opaque URL-safe token of the last row's sort key.
Query values may come straight from a URL (strings) or from Python (ints, bools); both are
validated here, so HTTP, CLI and scripts share one rule.
"""
from __future__ import annotations

import json
from typing import Any

from . import projects
from .db import Hub
from .errors import NotFoundError, ValidationError
from .paging import decode_cursor, page, page_limit
from .timeutil import to_utc

ISSUE_COLUMNS = ('key', 'id', 'issue_type', 'summary', 'description', 'status', 'priority',
                 'assignee', 'reporter', 'duedate', 'planned_start', 'planned_end', 'epic_key',
                 'labels', 'sprint', 'rank', 'story_points', 'jira_updated', 'fetched_at',
                 'neighbor', 'created')
NOTE_COLUMNS = ('work_kind', 'done_text', 'rest_text', 'owner_note', 'updated_at', 'updated_by')
CHANGE_COLUMNS = ('history_id', 'seq', 'key', 'at', 'created', 'author', 'field', 'field_id',
                  'field_name', 'from_value', 'from_string', 'to_value', 'to_string', 'fetched_at')
RUN_COLUMNS = ('id', 'started_at', 'finished_at', 'kind', 'query', 'issues_count', 'links_count',
               'jira_calls', 'rate_limited', 'command_id', 'history_at')
COMMENT_COLUMNS = ('comment_id', 'author', 'created', 'updated', 'body', 'created_at')
ATTACHMENT_COLUMNS = ('attachment_id', 'key', 'filename', 'size', 'mime_type', 'author', 'created',
                      'created_at')
SPRINT_COLUMNS = ('sprint_id', 'board_id', 'name', 'state', 'start_date', 'end_date',
                  'complete_date', 'goal')

ISSUES_LIMIT = (100, 1000)      # (default, maximum)
CHANGES_LIMIT = (500, 1000)
RUNS_LIMIT = (100, 1000)

_ISSUE_SELECT = ', '.join(f'i.{column}' for column in ISSUE_COLUMNS[:-2]) + \
    ', {neighbor}, i.created, ' + ', '.join(f'n.{column}' for column in NOTE_COLUMNS) + \
    ', n.key'
_TRUE = ('1', 'true', 'yes')
_FALSE = ('0', 'false', 'no')


# --- parameters --------------------------------------------------------------------------------

def _flag(value: object, name: str) -> bool | None:
    if value is None or value == '':
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in _TRUE + _FALSE:
        return value.lower() in _TRUE
    raise ValidationError({name: ['ожидается true или false']})


def _text(value: object, name: str) -> str | None:
    if value is None or value == '':
        return None
    if not isinstance(value, str):
        raise ValidationError({name: ['ожидается строка']})
    return value


def _time(value: object, name: str) -> str | None:
    if value is None or value == '':
        return None
    moment = to_utc(value)
    if moment is None:
        raise ValidationError({name: ['ожидается время ISO-8601, например 2026-10-22T09:00:00Z']})
    return moment


def _register_functions(hub: Hub) -> None:
    # Per connection and idempotent: Python's casefold and to_utc for Cyrillic-aware search and
    # Jira-time comparison, which SQLite's ASCII-only lower() and string order cannot do.
    connection = hub.db.connection()
    connection.create_function('hub_to_utc', 1, to_utc, deterministic=True)
    connection.create_function(
        'hub_contains', 2,
        lambda text, needle: 1 if text is not None and needle in text.casefold() else 0,
        deterministic=True)


def _require_project(hub: Hub, label: object) -> str:
    if not isinstance(label, str):
        raise ValidationError({'project': ['ожидается метка проекта']})
    if hub.db.execute_sql(
            'SELECT 1 FROM project WHERE label = ?', (label,)).fetchone() is None:
        raise NotFoundError(f'проекта {label!r} нет')
    return label


# --- project slices ------------------------------------------------------------------------------
# The slice of spec «Проекты» has two equivalent SQL forms (tests/lib/test_reads.py proves they give
# the same keys and flags). projects.SLICE_CTE builds the whole slice first: cheap for a small
# project, ~150 ms at 20,000 issues / ~400 ms at 50,000 for a project holding most of the mirror,
# because every link of every own issue is visited. The per-issue predicate below lets a keyset
# page walk issues (or changes) in order and stop after `limit` rows: a few ms for a project that
# holds much of the mirror, but a long walk for a small one. A sample of the mirror picks the form.

SLICE_SAMPLE = 2000      # issues looked at (by rowid) to estimate the project's share
DENSE_SHARE = 0.05       # at least this share of the sample own: walk with the predicate


def _dense(hub: Hub, label: str) -> bool:
    """Whether the project's own issues are a large share of the mirror (sampled)."""
    own, total = hub.db.execute_sql(
        f'SELECT coalesce(sum({_own("i")}), 0), count(*) FROM '
        '(SELECT labels FROM issue ORDER BY rowid LIMIT :sample) AS i',
        {'label': label, 'sample': SLICE_SAMPLE}).fetchone()
    return total > 0 and own >= DENSE_SHARE * total


def _own(alias: str) -> str:
    return f'EXISTS (SELECT 1 FROM json_each({alias}.labels) AS lb WHERE lb.value = :label)'


def _in_slice(alias: str) -> str:
    """SQL: issue row ``alias`` is in the slice of project ``:label``."""
    return (f'({_own(alias)}'
            f' OR EXISTS (SELECT 1 FROM issue_link lo JOIN issue o ON o.key = lo.target_key'
            f' WHERE lo.source_key = {alias}.key AND {_own("o")})'
            f' OR EXISTS (SELECT 1 FROM issue_link li JOIN issue o ON o.key = li.source_key'
            f' WHERE li.target_key = {alias}.key AND {_own("o")})'
            f' OR {alias}.key IN (SELECT o.epic_key FROM issue o WHERE {_own("o")}))')


# --- issues ------------------------------------------------------------------------------------

def _issue_out(row: tuple) -> dict:
    count = len(ISSUE_COLUMNS)
    item = dict(zip(ISSUE_COLUMNS, row[:count]))
    try:
        item['labels'] = json.loads(item['labels'] or '[]')
    except ValueError:
        item['labels'] = []
    item['neighbor'] = bool(item['neighbor'])
    note_values = row[count:count + len(NOTE_COLUMNS)]
    note_key = row[count + len(NOTE_COLUMNS)]
    item['note'] = ({'key': note_key, **dict(zip(NOTE_COLUMNS, note_values))}
                    if note_key is not None else None)
    return item


def issues(hub: Hub, *, project: Any = None, status: Any = None, assignee: Any = None,
           neighbor: Any = None, q: Any = None, updated_since: Any = None, limit: Any = None,
           cursor: Any = None) -> dict:
    """Mirror issues by key (keyset), with filters; ``project`` = its slice, neighbour relative to it.

    Decisions: ``q`` is a case-insensitive substring of the key or the summary; ``updated_since``
    compares Jira's ``updated`` normalized to UTC (inclusive).
    """
    limit = page_limit(limit, *ISSUES_LIMIT)
    status, assignee = _text(status, 'status'), _text(assignee, 'assignee')
    neighbor = _flag(neighbor, 'neighbor')
    q = _text(q, 'q')
    since = _time(updated_since, 'updated_since')
    after = decode_cursor(cursor, (str,))
    where, params = [], {}
    with hub.read():
        if project not in (None, '') and _dense(hub, _require_project(hub, project)):
            params['label'] = project
            neighbor_column = f'(NOT {_own("i")})'
            sql = f'SELECT {_ISSUE_SELECT.format(neighbor=neighbor_column)} FROM issue i'
            where.append(_in_slice('i'))
        elif project not in (None, ''):
            params['label'] = project
            sql = (f'WITH {projects.SLICE_CTE} SELECT {_ISSUE_SELECT.format(neighbor="s.neighbor")} '
                   'FROM slice s JOIN issue i ON i.key = s.key')
            neighbor_column = 's.neighbor'
        else:
            sql = f'SELECT {_ISSUE_SELECT.format(neighbor="i.neighbor")} FROM issue i'
            neighbor_column = 'i.neighbor'
        sql += ' LEFT JOIN issue_note n ON n.key = i.key'
        if status is not None:
            where.append('i.status = :status')
            params['status'] = status
        if assignee is not None:
            where.append('i.assignee = :assignee')
            params['assignee'] = assignee
        if neighbor is not None:
            where.append(f'{neighbor_column} = :neighbor')
            params['neighbor'] = int(neighbor)
        if q is not None or since is not None:
            _register_functions(hub)
        if q is not None:
            where.append('(hub_contains(i.key, :q) OR hub_contains(i.summary, :q))')
            params['q'] = q.casefold()
        if since is not None:
            where.append('hub_to_utc(i.jira_updated) >= :since')
            params['since'] = since
        if after is not None:
            where.append('i.key > :after')
            params['after'] = after[0]
        if where:
            sql += ' WHERE ' + ' AND '.join(where)
        sql += ' ORDER BY i.key LIMIT :limit'
        params['limit'] = limit + 1
        rows = hub.db.execute_sql(sql, params).fetchall()
    rows, next_cursor = page(rows, limit, lambda row: [row[0]])
    return {'items': [_issue_out(row) for row in rows], 'next_cursor': next_cursor}


def issue_card(hub: Hub, key: str) -> dict:
    """One issue with links both ways, comments, attachments (with state), sprints and note."""
    from . import files  # the attachments module computes download states

    with hub.read():
        row = hub.db.execute_sql(
            f'SELECT {_ISSUE_SELECT.format(neighbor="i.neighbor")} FROM issue i '
            'LEFT JOIN issue_note n ON n.key = i.key WHERE i.key = ?', (key,)).fetchone()
        if row is None:
            raise NotFoundError(f'задачи {key} нет в зеркале')
        card = _issue_out(row)
        db = hub.db
        card['links'] = {
            'outward': [{'type': t, 'key': k} for k, t in db.execute_sql(
                'SELECT target_key, link_type FROM issue_link WHERE source_key = ? '
                'ORDER BY link_type, target_key', (key,))],
            'inward': [{'type': t, 'key': k} for k, t in db.execute_sql(
                'SELECT source_key, link_type FROM issue_link WHERE target_key = ? '
                'ORDER BY link_type, source_key', (key,))],
        }
        card['comments'] = [dict(zip(COMMENT_COLUMNS, r)) for r in db.execute_sql(
            'SELECT comment_id, author, created, updated, body, created_at FROM issue_comment '
            'WHERE key = ? ORDER BY created_at, created, comment_id', (key,))]
        attachments = [dict(zip(ATTACHMENT_COLUMNS, r)) for r in db.execute_sql(
            'SELECT attachment_id, key, filename, size, mime_type, author, created, created_at '
            'FROM issue_attachment WHERE key = ? ORDER BY created_at, attachment_id', (key,))]
        states = files.attachment_states(hub, [a['attachment_id'] for a in attachments]) if attachments else {}
        for attachment in attachments:
            state = states.get(attachment['attachment_id']) or {'state': 'none', 'error': None}
            attachment['state'] = state.get('state')
            attachment['error'] = state.get('error')
        card['attachments'] = attachments
        card['sprints'] = [{'sprint_id': s, 'name': n, 'state': st} for s, n, st in db.execute_sql(
            'SELECT x.sprint_id, s.name, s.state FROM issue_sprint x '
            'LEFT JOIN jira_sprint s ON s.sprint_id = x.sprint_id WHERE x.key = ? '
            'ORDER BY x.sprint_id', (key,))]
    return card


# --- change feed -------------------------------------------------------------------------------

def change_feed(hub: Hub, *, since: Any = None, until: Any = None, key: Any = None,
                project: Any = None, field: Any = None, limit: Any = None,
                cursor: Any = None) -> dict:
    """Change rows with ``at`` set, by (at, history_id, seq); ``since`` inclusive, ``until`` exclusive."""
    limit = page_limit(limit, *CHANGES_LIMIT)
    since, until = _time(since, 'since'), _time(until, 'until')
    key, field = _text(key, 'key'), _text(field, 'field')
    after = decode_cursor(cursor, (str, str, int))
    where, params, prefix = ['c.at IS NOT NULL'], {}, ''
    with hub.read():
        if project not in (None, '') and _dense(hub, _require_project(hub, project)):
            params['label'] = project
            where.append(f'EXISTS (SELECT 1 FROM issue x WHERE x.key = c.key AND {_in_slice("x")})')
        elif project not in (None, ''):
            params['label'] = project
            prefix = f'WITH {projects.SLICE_CTE} '
            where.append('c.key IN (SELECT key FROM slice)')
        if since is not None:
            where.append('c.at >= :since')
            params['since'] = since
        if until is not None:
            where.append('c.at < :until')
            params['until'] = until
        if key is not None:
            where.append('c.key = :key')
            params['key'] = key
        if field is not None:
            where.append('c.field = :field')
            params['field'] = field
        if after is not None:
            # Row-value comparison: SQLite uses the `at` index for its leading column.
            where.append('(c.at, c.history_id, c.seq) > (:a_at, :a_history, :a_seq)')
            params.update(a_at=after[0], a_history=after[1], a_seq=after[2])
        sql = (prefix + 'SELECT ' + ', '.join(f'c.{column}' for column in CHANGE_COLUMNS)
               + ' FROM issue_change c WHERE ' + ' AND '.join(where)
               + ' ORDER BY c.at, c.history_id, c.seq LIMIT :limit')
        params['limit'] = limit + 1
        rows = hub.db.execute_sql(sql, params).fetchall()
    rows, next_cursor = page(rows, limit, lambda row: [row[3], row[0], row[1]])
    return {'items': [dict(zip(CHANGE_COLUMNS, row)) for row in rows], 'next_cursor': next_cursor}


def issue_changes(hub: Hub, key: str, *, since: Any = None, until: Any = None, field: Any = None,
                  limit: Any = None, cursor: Any = None) -> dict:
    """The change feed of one issue (404 when the issue is neither mirrored nor has changes)."""
    with hub.read():
        known = hub.db.execute_sql(
            'SELECT 1 FROM issue WHERE key = ? UNION ALL SELECT 1 FROM issue_change WHERE key = ? '
            'LIMIT 1', (key, key)).fetchone()
        if known is None:
            raise NotFoundError(f'задачи {key} нет в зеркале')
        return change_feed(hub, since=since, until=until, key=key, field=field, limit=limit,
                           cursor=cursor)


# --- sync journal ------------------------------------------------------------------------------

def sync_runs(hub: Hub, *, limit: Any = None, cursor: Any = None) -> dict:
    """The sync journal, newest first."""
    limit = page_limit(limit, *RUNS_LIMIT)
    after = decode_cursor(cursor, (int,))
    sql = 'SELECT ' + ', '.join(RUN_COLUMNS) + ' FROM sync_run'
    params: tuple = ()
    if after is not None:
        sql += ' WHERE id < ?'
        params = (after[0],)
    sql += ' ORDER BY id DESC LIMIT ?'
    rows = hub.db.execute_sql(sql, params + (limit + 1,)).fetchall()
    rows, next_cursor = page(rows, limit, lambda row: [row[0]])
    return {'items': [dict(zip(RUN_COLUMNS, row)) for row in rows], 'next_cursor': next_cursor}


# --- boards and sprints ------------------------------------------------------------------------

def _board(hub: Hub, label: str) -> dict:
    row = hub.db.execute_sql(
        'SELECT jp.board_id, coalesce(b.type, jp.board_type), b.columns, b.kanban_backlog, '
        'b.fetched_at FROM jira_project jp LEFT JOIN jira_board b ON b.board_id = jp.board_id '
        'WHERE jp.label = ?', (label,)).fetchone()
    board_id, board_type, columns, backlog, fetched_at = row or (None, None, None, None, None)
    try:
        columns = json.loads(columns) if columns else []
    except ValueError:
        columns = []
    return {'board_id': board_id, 'type': board_type, 'columns': columns or [],
            'kanban_backlog': None if backlog is None else bool(backlog), 'fetched_at': fetched_at}


def _own_issues(hub: Hub, label: str) -> list[tuple[str, str | None]]:
    return hub.db.execute_sql(
        'SELECT i.key, i.status FROM issue i WHERE EXISTS '
        '(SELECT 1 FROM json_each(i.labels) AS l WHERE l.value = ?) '
        'ORDER BY i.rank IS NULL, i.rank, i.key', (label,)).fetchall()


def project_board(hub: Hub, label: str) -> dict:
    """The project's board: columns with the project's own issues; done = the last column.

    Decision: the board shows the project's own issues (its label), not its neighbours; an issue
    whose status is in no column is not shown, as on the Jira board.
    """
    with hub.read():
        _require_project(hub, label)
        board = _board(hub, label)
        column_of = {}
        for index, column in enumerate(board['columns']):
            for status in column.get('statuses') or ():
                column_of.setdefault(status, index)
        keys: list[list[str]] = [[] for _ in board['columns']]
        for key, status in _own_issues(hub, label):
            if status in column_of:
                keys[column_of[status]].append(key)
    columns = [{'name': column.get('name'), 'statuses': list(column.get('statuses') or []),
                'issues': keys[index]} for index, column in enumerate(board['columns'])]
    done = columns[-1]['statuses'] if columns else []
    return {'label': label, 'board_id': board['board_id'], 'type': board['type'],
            'kanban_backlog': board['kanban_backlog'], 'fetched_at': board['fetched_at'],
            'columns': columns, 'done_statuses': done}


def project_sprints(hub: Hub, label: str) -> dict:
    """Sprints of the project's board with the project's own issues and how many are done."""
    with hub.read():
        _require_project(hub, label)
        board = _board(hub, label)
        done = set(board['columns'][-1].get('statuses') or []) if board['columns'] else set()
        own = dict(_own_issues(hub, label))
        sprints = [dict(zip(SPRINT_COLUMNS, row)) for row in hub.db.execute_sql(
            'SELECT ' + ', '.join(SPRINT_COLUMNS) + ' FROM jira_sprint WHERE board_id = ? '
            'ORDER BY start_date IS NULL, start_date, sprint_id', (board['board_id'],))]
        members: dict[int, list[str]] = {}
        if sprints:
            marks = ','.join('?' * len(sprints))
            for key, sprint_id in hub.db.execute_sql(
                    f'SELECT key, sprint_id FROM issue_sprint WHERE sprint_id IN ({marks}) '
                    'ORDER BY key', [s['sprint_id'] for s in sprints]):
                if key in own:
                    members.setdefault(sprint_id, []).append(key)
    for sprint in sprints:
        keys = members.get(sprint['sprint_id'], [])
        sprint['issues'] = keys
        sprint['issues_count'] = len(keys)
        sprint['done_count'] = sum(1 for key in keys if own[key] in done)
    return {'items': sprints}
