"""State and boards ingest: the only writers of the mirror (spec «Зеркало задачи», «Доски,
спринты и членство задач», contract §8.1, §8.3).

The agent posts pages of 100 issues, so this is a hot path: the whole page is validated with
plain Python checks first (a malformed issue rejects the request before anything is written),
then written in one ``BEGIN IMMEDIATE`` transaction with one prepared statement per table,
each run once through ``executemany``.
"""
from __future__ import annotations

import functools
import json
import math
import re

from . import modules
from .db import Hub
from .errors import ConflictError, NotFoundError, ValidationError
from .timeutil import to_utc

KEY_RE = re.compile(r'^[A-Z][A-Z0-9_]*-[0-9]+$')
ISSUE_TEXT_FIELDS = ('id', 'issue_type', 'summary', 'description', 'status', 'priority', 'assignee',
                     'reporter', 'duedate', 'planned_start', 'planned_end', 'epic_key', 'sprint',
                     'rank', 'updated', 'created')
LINK_DIRECTIONS = ('outward', 'inward')
COMMENT_TEXT_FIELDS = ('author', 'created', 'updated', 'body')
ATTACHMENT_TEXT_FIELDS = ('filename', 'mime_type', 'author', 'created')
SPRINT_TEXT_FIELDS = ('name', 'state', 'start_date', 'end_date', 'complete_date', 'goal')
BOARD_TYPES = ('scrum', 'kanban')

# to_utc, remembered: a page repeats its times (every field of a history record shares one).
utc = functools.lru_cache(maxsize=65536)(to_utc)

_UPSERT_ISSUE = """
INSERT INTO issue (key, id, issue_type, summary, description, status, priority, assignee, reporter,
  duedate, planned_start, planned_end, epic_key, labels, sprint, rank, story_points, jira_updated,
  created, neighbor, fetched_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET id = excluded.id, issue_type = excluded.issue_type,
  summary = excluded.summary, description = excluded.description, status = excluded.status,
  priority = excluded.priority, assignee = excluded.assignee, reporter = excluded.reporter,
  duedate = excluded.duedate, planned_start = excluded.planned_start,
  planned_end = excluded.planned_end, epic_key = excluded.epic_key, labels = excluded.labels,
  sprint = excluded.sprint, rank = excluded.rank, story_points = excluded.story_points,
  jira_updated = excluded.jira_updated, created = excluded.created, neighbor = excluded.neighbor,
  fetched_at = excluded.fetched_at
"""
_INSERT_COMMENT = ('INSERT OR REPLACE INTO issue_comment '
                   '(key, comment_id, author, created, updated, body, created_at) '
                   'VALUES (?, ?, ?, ?, ?, ?, ?)')
_INSERT_ATTACHMENT = ('INSERT OR REPLACE INTO issue_attachment (attachment_id, key, filename, size, '
                      'mime_type, author, created, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')


# --- plain validation helpers: each appends "path: message" pairs to `errors` --------------------

INT_LIMIT = 2 ** 63  # SQLite INTEGER is 64-bit; a larger JSON number must be a 422, not a 500


def _is_int(value: object) -> bool:
    return type(value) is int and -INT_LIMIT <= value < INT_LIMIT


def _is_number(value: object) -> bool:
    """A finite JSON number that fits a REAL column."""
    if type(value) is float:
        return math.isfinite(value)
    return _is_int(value)


def _text_or_null(errors: dict, obj: dict, names: tuple, path: str) -> None:
    for name in names:
        value = obj.get(name)
        if value is not None and not isinstance(value, str):
            errors.setdefault(f'{path}.{name}', []).append('ожидается строка или null')


def _identifier(value: object) -> str | None:
    """A Jira id given as a string or an integer, as a string; ``None`` when neither."""
    if isinstance(value, str) and value:
        return value
    if _is_int(value):
        return str(value)
    return None


def _command_id(value: object, required: bool) -> int | None:
    if value is None and not required:
        return None
    if not _is_int(value):
        raise ValidationError({'command_id': ['ожидается целый номер команды']})
    return value


def _list_field(body_value: object, name: str) -> list:
    if not isinstance(body_value, list):
        raise ValidationError({name: ['ожидается список']})
    return body_value


def _check_refresh(hub: Hub, command_id: int) -> None:
    row = hub.db.execute_sql('SELECT type, status FROM command WHERE id = ?',
                             (command_id,)).fetchone()
    if row is None:
        raise NotFoundError(f'команды #{command_id} нет')
    if row[0] != 'refresh' or row[1] != 'claimed':
        raise ConflictError(f'команда #{command_id} — не выданная агенту команда refresh')


def _validate_issue(issue: object, path: str, errors: dict) -> None:
    if not isinstance(issue, dict):
        errors.setdefault(path, []).append('ожидается объект задачи')
        return
    key = issue.get('key')
    if not isinstance(key, str) or not KEY_RE.match(key):
        errors.setdefault(f'{path}.key', []).append('ожидается ключ задачи Jira, например AURORA-1')
    _text_or_null(errors, issue, ISSUE_TEXT_FIELDS, path)
    labels = issue.get('labels')
    if labels is not None and not (isinstance(labels, list)
                                   and all(isinstance(label, str) for label in labels)):
        errors.setdefault(f'{path}.labels', []).append('ожидается список строк')
    points = issue.get('story_points')
    if points is not None and not _is_number(points):
        errors.setdefault(f'{path}.story_points', []).append('ожидается число или null')
    if issue.get('neighbor') is not None and not isinstance(issue.get('neighbor'), bool):
        errors.setdefault(f'{path}.neighbor', []).append('ожидается true или false')
    links = issue.get('links')
    if links is not None:
        if not isinstance(links, list):
            errors.setdefault(f'{path}.links', []).append('ожидается список связей')
        else:
            for n, link in enumerate(links):
                if not (isinstance(link, dict) and isinstance(link.get('type'), str) and link['type']
                        and link.get('direction') in LINK_DIRECTIONS
                        and isinstance(link.get('key'), str) and link['key']):
                    errors.setdefault(f'{path}.links[{n}]', []).append(
                        'ожидается {type, direction: outward|inward, key}')
    comments = issue.get('comments')
    if comments is not None:
        if not isinstance(comments, list):
            errors.setdefault(f'{path}.comments', []).append('ожидается список комментариев')
        else:
            for n, comment in enumerate(comments):
                where = f'{path}.comments[{n}]'
                if not isinstance(comment, dict) or _identifier(comment.get('id')) is None:
                    errors.setdefault(where, []).append('ожидается объект с id')
                else:
                    _text_or_null(errors, comment, COMMENT_TEXT_FIELDS, where)
    attachments = issue.get('attachments')
    if attachments is not None:
        if not isinstance(attachments, list):
            errors.setdefault(f'{path}.attachments', []).append('ожидается список вложений')
        else:
            for n, attachment in enumerate(attachments):
                where = f'{path}.attachments[{n}]'
                if not isinstance(attachment, dict) or _identifier(attachment.get('id')) is None:
                    errors.setdefault(where, []).append('ожидается объект с id')
                    continue
                _text_or_null(errors, attachment, ATTACHMENT_TEXT_FIELDS, where)
                size = attachment.get('size')
                if size is not None and not (_is_int(size) and size >= 0):
                    errors.setdefault(f'{where}.size', []).append('ожидается целое ≥ 0 или null')
    sprint_ids = issue.get('sprint_ids')
    if sprint_ids is not None and not (isinstance(sprint_ids, list)
                                       and all(_is_int(sprint) for sprint in sprint_ids)):
        errors.setdefault(f'{path}.sprint_ids', []).append('ожидается список целых')


_TEXT = (str, type(None))
_FLAG = (bool, type(None))


def _issue_ok(issue: object) -> bool:
    """The common path of ``_validate_issue``: plain type checks, no messages (never looser)."""
    if type(issue) is not dict:
        return False
    get = issue.get
    key = get('key')
    if type(key) is not str or not KEY_RE.match(key):
        return False
    for name in ISSUE_TEXT_FIELDS:
        if type(get(name)) not in _TEXT:
            return False
    labels, links, points = get('labels'), get('links'), get('story_points')
    if (points is not None and not _is_number(points)) or type(get('neighbor')) not in _FLAG:
        return False
    if labels is not None and (type(labels) is not list
                               or any(type(label) is not str for label in labels)):
        return False
    if links is not None:
        if type(links) is not list:
            return False
        for link in links:
            if (type(link) is not dict or link.get('direction') not in LINK_DIRECTIONS
                    or type(link.get('type')) is not str or not link['type']
                    or type(link.get('key')) is not str or not link['key']):
                return False
    for name, fields in (('comments', COMMENT_TEXT_FIELDS), ('attachments', ATTACHMENT_TEXT_FIELDS)):
        entries = get(name)
        if entries is None:
            continue
        if type(entries) is not list:
            return False
        for entry in entries:
            if type(entry) is not dict or type(entry.get('id')) is not str or not entry['id']:
                return False
            for field in fields:
                if type(entry.get(field)) not in _TEXT:
                    return False
            size = entry.get('size')
            if size is not None and not (_is_int(size) and size >= 0):
                return False
    sprint_ids = get('sprint_ids')
    if sprint_ids is not None and (type(sprint_ids) is not list
                                   or not all(_is_int(sprint) for sprint in sprint_ids)):
        return False
    return True


def ingest_state(hub: Hub, agent: str, command_id: int, issues: list) -> dict:
    """Upsert a page of issues from a claimed refresh; returns ``{"issues": n, "links": m}``.

    Decision: like ``comments`` and ``attachments``, an issue sent without ``links`` keeps its
    stored links (the contract only says what a present list does).
    """
    modules.get_module(agent)
    command_id = _command_id(command_id, required=True)
    issues = _list_field(issues, 'issues')
    errors: dict[str, list[str]] = {}
    for n, issue in enumerate(issues):
        if not _issue_ok(issue):
            _validate_issue(issue, f'issues[{n}]', errors)
    if errors:
        raise ValidationError(errors)

    now = hub.now()
    issue_rows, keys, outward, inward = [], [], [], []
    comment_keys, comment_rows = [], []
    attachment_keys, attachment_rows = [], []
    sprint_keys, sprint_rows = [], []
    link_count = 0
    for issue in issues:
        key = issue['key']
        get = issue.get
        points = get('story_points')
        issue_rows.append((
            key, get('id'), get('issue_type'), get('summary'), get('description'), get('status'),
            get('priority'), get('assignee'), get('reporter'), get('duedate'), get('planned_start'),
            get('planned_end'), get('epic_key'), json.dumps(get('labels') or [], ensure_ascii=False),
            get('sprint'), get('rank'), float(points) if points is not None else None,
            get('updated'), get('created'), 1 if get('neighbor') else 0, now))
        links = get('links')
        if links is not None:
            keys.append((key,))
            link_count += len(links)
            for link in links:
                if link['direction'] == 'outward':
                    outward.append((key, link['key'], link['type']))
                else:
                    inward.append((link['key'], key, link['type']))
        comments = get('comments')
        if comments is not None:
            comment_keys.append((key,))
            comment_rows.extend(
                (key, _identifier(c['id']), c.get('author'), c.get('created'), c.get('updated'),
                 c.get('body'), utc(c.get('created'))) for c in comments)
        attachments = get('attachments')
        if attachments is not None:
            attachment_keys.append((key,))
            attachment_rows.extend(
                (_identifier(a['id']), key, a.get('filename'), a.get('size'), a.get('mime_type'),
                 a.get('author'), a.get('created'), utc(a.get('created'))) for a in attachments)
        sprint_ids = get('sprint_ids')
        if sprint_ids is not None:
            sprint_keys.append((key,))
            sprint_rows.extend((key, sprint_id) for sprint_id in sprint_ids)

    with hub.write():
        _check_refresh(hub, command_id)
        cursor = hub.db.cursor()
        cursor.executemany(_UPSERT_ISSUE, issue_rows)
        # Links belong to their source: every source row of a sent issue is replaced; an inward
        # link is the other issue's outward one and is only added when still missing, and never
        # when its source is in this page with its own links (the source's word is final).
        sources = {key for (key,) in keys}
        inward = [row for row in inward if row[0] not in sources]
        cursor.executemany('DELETE FROM issue_link WHERE source_key = ?', keys)
        cursor.executemany('INSERT OR IGNORE INTO issue_link (source_key, target_key, link_type) '
                           'VALUES (?, ?, ?)', outward + inward)
        if comment_keys:
            cursor.executemany('DELETE FROM issue_comment WHERE key = ?', comment_keys)
            cursor.executemany(_INSERT_COMMENT, comment_rows)
        if attachment_keys:
            # attachment_file is never touched: a downloaded file outlives list updates.
            cursor.executemany('DELETE FROM issue_attachment WHERE key = ?', attachment_keys)
            cursor.executemany(_INSERT_ATTACHMENT, attachment_rows)
        if sprint_keys:
            cursor.executemany('DELETE FROM issue_sprint WHERE key = ?', sprint_keys)
            cursor.executemany('INSERT OR IGNORE INTO issue_sprint (key, sprint_id) VALUES (?, ?)',
                               sprint_rows)
        hub.db.execute_sql(
            'UPDATE sync_run SET issues_count = issues_count + ?, links_count = links_count + ? '
            'WHERE command_id = ?', (len(issues), link_count, command_id))
    return {'issues': len(issues), 'links': link_count}


def _validate_board(board: object, path: str, errors: dict) -> None:
    if not isinstance(board, dict):
        errors.setdefault(path, []).append('ожидается объект доски')
        return
    board_id = board.get('board_id')
    if not (_is_int(board_id) and board_id > 0):
        errors.setdefault(f'{path}.board_id', []).append('ожидается целое больше нуля')
    if board.get('type') is not None and board.get('type') not in BOARD_TYPES:
        errors.setdefault(f'{path}.type', []).append('ожидается scrum, kanban или null')
    columns = board.get('columns')
    if columns is not None and not (isinstance(columns, list) and all(
            isinstance(column, dict) and isinstance(column.get('name'), str)
            and isinstance(column.get('statuses'), list)
            and all(isinstance(status, str) for status in column['statuses'])
            for column in columns)):
        errors.setdefault(f'{path}.columns', []).append('ожидается список {name, statuses: [строка]}')
    backlog = board.get('kanban_backlog')
    if backlog is not None and not (isinstance(backlog, bool) or backlog in (0, 1)):
        errors.setdefault(f'{path}.kanban_backlog', []).append('ожидается true, false или null')
    sprints = board.get('sprints')
    if sprints is None:
        return
    if not isinstance(sprints, list):
        errors.setdefault(f'{path}.sprints', []).append('ожидается список спринтов')
        return
    for n, sprint in enumerate(sprints):
        where = f'{path}.sprints[{n}]'
        if not isinstance(sprint, dict) or not _is_int(sprint.get('id')):
            errors.setdefault(where, []).append('ожидается объект с целым id')
        else:
            _text_or_null(errors, sprint, SPRINT_TEXT_FIELDS, where)


def ingest_boards(hub: Hub, agent: str, command_id: int | None, boards: list) -> dict:
    """Upsert boards and their sprints, set ``board_type`` of projects on those boards.

    Decision: ``command_id`` is only type-checked (boards carry no per-run counters), and a
    board sent without ``sprints`` keeps its stored sprints.
    """
    modules.get_module(agent)
    _command_id(command_id, required=False)
    boards = _list_field(boards, 'boards')
    errors: dict[str, list[str]] = {}
    for n, board in enumerate(boards):
        _validate_board(board, f'boards[{n}]', errors)
    if errors:
        raise ValidationError(errors)
    now = hub.now()
    board_rows, sprint_rows, type_rows = [], [], []
    for board in boards:
        columns = board.get('columns')
        backlog = board.get('kanban_backlog')
        board_rows.append((board['board_id'], board.get('type'),
                           json.dumps(columns, ensure_ascii=False) if columns is not None else None,
                           int(backlog) if backlog is not None else None, now))
        type_rows.append((board.get('type'), board['board_id']))
        for sprint in board.get('sprints') or ():
            sprint_rows.append((sprint['id'], board['board_id'], sprint.get('name'),
                                sprint.get('state'), sprint.get('start_date'),
                                sprint.get('end_date'), sprint.get('complete_date'),
                                sprint.get('goal')))
    with hub.write():
        cursor = hub.db.cursor()
        cursor.executemany('INSERT OR REPLACE INTO jira_board (board_id, type, columns, '
                           'kanban_backlog, fetched_at) VALUES (?, ?, ?, ?, ?)', board_rows)
        cursor.executemany('INSERT OR REPLACE INTO jira_sprint (sprint_id, board_id, name, state, '
                           'start_date, end_date, complete_date, goal) '
                           'VALUES (?, ?, ?, ?, ?, ?, ?, ?)', sprint_rows)
        cursor.executemany('UPDATE jira_project SET board_type = ? WHERE board_id = ?', type_rows)
    return {'boards': len(board_rows), 'sprints': len(sprint_rows)}
