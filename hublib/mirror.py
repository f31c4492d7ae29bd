"""State and boards ingest: the only writers of the mirror (spec «Зеркало задачи», «Доски,
спринты и членство задач», contract §8.1, §8.3).

The agent posts pages of ~100 issues, so state ingest is the hot path. Its published schema is
:class:`IssueIn`; a page is checked by :func:`issue_ok`, a plain-Python twin of that schema that
costs a few microseconds per issue (marshmallow: ~90 µs), and only an issue it refuses is run
through the schema for the messages. ``tests/lib/test_ingest_validation.py`` proves with
hypothesis that the two accept and refuse exactly the same issues.

A page is written in one ``BEGIN IMMEDIATE`` transaction with statements built once and run
through ``executemany`` (peewee's ``insert_many`` builds SQL per call: ~7x slower on this path,
``scripts/bench_ingest.py``), together with what is derived from it: project slices
(``hublib.slices``), the full-text index (``hublib.search``) and the keys this delivery of the
refresh wrote (exact neighbour marking, ``hublib.syncjournal``).
"""
from __future__ import annotations

import functools
import json
import math

from marshmallow import fields, validate

from . import modules, search, slices
from .db import Hub
from .errors import ConflictError, NotFoundError
from .models import Command, Issue, IssueAttachment, IssueComment, IssueLink, IssueSprint
from .timeutil import to_utc
from .validation import (ISSUE_KEY, AttachmentId, Bool, Int, JiraId, JiraTime, LenientSchema,
                         Number, Text, check_page, is_attachment_id, is_int64, issue_key_field,
                         load, require_int)

LINK_DIRECTIONS = ('outward', 'inward')
BOARD_TYPES = ('scrum', 'kanban')

# --- the published schemas -------------------------------------------------------------------------

def _texts(*names: str) -> dict[str, fields.Field]:
    return {name: fields.String(allow_none=True) for name in names}


def _times(*names: str) -> dict[str, fields.Field]:
    return {name: JiraTime(allow_none=True) for name in names}


ISSUE_TEXT_FIELDS = ('id', 'issue_type', 'summary', 'description', 'status', 'priority', 'assignee',
                     'reporter', 'duedate', 'planned_start', 'planned_end', 'epic_key', 'sprint',
                     'rank')
ISSUE_TIME_FIELDS = ('updated', 'created')
COMMENT_TEXT_FIELDS = ('author', 'body')
COMMENT_TIME_FIELDS = ('created', 'updated')
ATTACHMENT_TEXT_FIELDS = ('filename', 'mime_type', 'author')
ATTACHMENT_TIME_FIELDS = ('created',)
SPRINT_TIME_FIELDS = ('start_date', 'end_date', 'complete_date')


class LinkIn(LenientSchema):
    type = Text(required=True, min_length=1)
    direction = fields.String(required=True, validate=validate.OneOf(LINK_DIRECTIONS))
    key = Text(required=True, min_length=1)


CommentIn = LenientSchema.from_dict({'id': JiraId(required=True), **_texts(*COMMENT_TEXT_FIELDS),
                                    **_times(*COMMENT_TIME_FIELDS)}, name='CommentIn')
AttachmentIn = LenientSchema.from_dict(
    {'id': AttachmentId(required=True), 'size': Int(minimum=0, allow_none=True),
     **_texts(*ATTACHMENT_TEXT_FIELDS), **_times(*ATTACHMENT_TIME_FIELDS)}, name='AttachmentIn')

IssueIn = LenientSchema.from_dict({
    'key': issue_key_field(required=True),
    **_texts(*ISSUE_TEXT_FIELDS),
    **_times(*ISSUE_TIME_FIELDS),
    'labels': fields.List(fields.String(), allow_none=True),
    'story_points': Number(allow_none=True),
    'neighbor': Bool(allow_none=True),
    'links': fields.List(fields.Nested(LinkIn), allow_none=True),
    'comments': fields.List(fields.Nested(CommentIn), allow_none=True),
    'attachments': fields.List(fields.Nested(AttachmentIn), allow_none=True),
    'sprint_ids': fields.List(Int(), allow_none=True),
}, name='IssueIn')


class StateBody(LenientSchema):
    """Body of ``POST /agent/state``: a page of issues of a claimed refresh."""

    agent = modules.agent_field()
    command_id = Int(required=True)
    issues = fields.List(fields.Nested(IssueIn), required=True)


# --- the fast twin of IssueIn -----------------------------------------------------------------------

_TEXT = (str, type(None))
# to_utc, remembered: a page repeats its times (every field of a history record shares one), and
# the rows are built from the same values the check has just read.
utc = functools.lru_cache(maxsize=65536)(to_utc)


def time_ok(value: object) -> bool:
    """Whether ``JiraTime(allow_none=True)`` accepts ``value`` (hot path)."""
    return value is None or (type(value) is str and utc(value) is not None)


def _is_id(value: object) -> bool:
    return (type(value) is str and value != '') or is_int64(value)


def _entries_ok(entries: object, is_id, texts: tuple[str, ...], times: tuple[str, ...],
                sized: bool) -> bool:
    if entries is None:
        return True
    if type(entries) is not list:
        return False
    for entry in entries:
        if type(entry) is not dict or not is_id(entry.get('id')):
            return False
        for name in texts:
            if type(entry.get(name)) not in _TEXT:
                return False
        for name in times:
            if not time_ok(entry.get(name)):
                return False
        size = entry.get('size') if sized else None
        if size is not None and not (is_int64(size) and size >= 0):
            return False
    return True


def issue_ok(issue: object) -> bool:
    """Whether ``IssueIn`` accepts ``issue``: the same rule in plain type checks (hot path)."""
    if type(issue) is not dict:
        return False
    get = issue.get
    key = get('key')
    if type(key) is not str or ISSUE_KEY.fullmatch(key) is None:
        return False
    for name in ISSUE_TEXT_FIELDS:
        if type(get(name)) not in _TEXT:
            return False
    for name in ISSUE_TIME_FIELDS:
        if not time_ok(get(name)):
            return False
    labels, points, neighbor = get('labels'), get('story_points'), get('neighbor')
    if labels is not None and (type(labels) is not list
                               or any(type(label) is not str for label in labels)):
        return False
    if points is not None and not (is_int64(points) or (type(points) is float
                                                        and math.isfinite(points))):
        return False
    if neighbor is not None and neighbor is not True and neighbor is not False:
        return False
    links = get('links')
    if links is not None:
        if type(links) is not list:
            return False
        for link in links:
            if (type(link) is not dict or link.get('direction') not in LINK_DIRECTIONS
                    or type(link.get('type')) is not str or not link['type']
                    or type(link.get('key')) is not str or not link['key']):
                return False
    if not (_entries_ok(get('comments'), _is_id, COMMENT_TEXT_FIELDS, COMMENT_TIME_FIELDS, False)
            and _entries_ok(get('attachments'), is_attachment_id, ATTACHMENT_TEXT_FIELDS,
                            ATTACHMENT_TIME_FIELDS, True)):
        return False
    sprint_ids = get('sprint_ids')
    return sprint_ids is None or (type(sprint_ids) is list
                                  and all(is_int64(sprint) for sprint in sprint_ids))


# --- state ingest -------------------------------------------------------------------------------------

_ISSUE_COLUMNS = ('key', 'id', 'issue_type', 'summary', 'description', 'status', 'priority',
                  'assignee', 'reporter', 'duedate', 'planned_start', 'planned_end', 'epic_key',
                  'labels', 'sprint', 'rank', 'story_points', 'jira_updated', 'created', 'neighbor',
                  'fetched_at')


def _insert(model, columns: tuple[str, ...], conflict: str = '') -> str:
    """``INSERT [OR …] INTO <table> (<columns>) VALUES (?, …)`` from the model's own names."""
    table = model._meta.table_name
    assert all(name in model._meta.fields for name in columns), columns  # names live in models
    return (f'INSERT {conflict} INTO {table} ({", ".join(columns)}) '
            f'VALUES ({", ".join("?" * len(columns))})')


UPSERT_ISSUE = (_insert(Issue, _ISSUE_COLUMNS) + ' ON CONFLICT (key) DO UPDATE SET '
                 + ', '.join(f'{name} = excluded.{name}' for name in _ISSUE_COLUMNS[1:]))
INSERT_LINK = _insert(IssueLink, ('source_key', 'target_key', 'link_type'), 'OR IGNORE')
INSERT_COMMENT = _insert(IssueComment, ('key', 'comment_id', 'author', 'created', 'updated',
                                         'body', 'created_at'), 'OR REPLACE')
INSERT_ATTACHMENT = _insert(IssueAttachment, ('attachment_id', 'key', 'filename', 'size',
                                               'mime_type', 'author', 'created', 'created_at'),
                             'OR REPLACE')
INSERT_SPRINT = _insert(IssueSprint, ('key', 'sprint_id'), 'OR IGNORE')
INSERT_WRITTEN = 'INSERT OR IGNORE INTO refresh_written (command_id, key) VALUES (?, ?)'
DELETE_BY = {model: f'DELETE FROM {model._meta.table_name} WHERE {column} = ?' for model, column in
              ((IssueLink, 'source_key'), (IssueComment, 'key'), (IssueAttachment, 'key'),
               (IssueSprint, 'key'))}
_COUNT_RUN = ('UPDATE sync_run SET issues_count = issues_count + ?, links_count = links_count + ? '
              'WHERE command_id = ?')


def _check_refresh(hub: Hub, command_id: int) -> None:
    found = Command.select(Command.type, Command.status).where(Command.id == command_id) \
        .tuples().execute(hub.db)
    if not found:
        raise NotFoundError(f'команды #{command_id} нет')
    if found[0] != ('refresh', 'claimed'):
        raise ConflictError(f'команда #{command_id} — не выданная агенту команда refresh')


def validate_issues(issues: object) -> list[dict]:
    """A page of issues as ``IssueIn`` has it; ValidationError naming ``issues[n].field``."""
    return check_page(issues, 'issues', issue_ok, IssueIn)


def _rows(issues: list[dict], now: str) -> dict[str, list]:
    rows: dict[str, list] = {name: [] for name in (
        'issues', 'link_keys', 'links', 'inward', 'comment_keys', 'comments', 'attachment_keys',
        'attachments', 'sprint_keys', 'sprints')}
    for issue in issues:
        key = issue['key']
        get = issue.get
        points = get('story_points')
        rows['issues'].append((
            key, get('id'), get('issue_type'), get('summary'), get('description'), get('status'),
            get('priority'), get('assignee'), get('reporter'), get('duedate'), get('planned_start'),
            get('planned_end'), get('epic_key'), json.dumps(get('labels') or [], ensure_ascii=False),
            get('sprint'), get('rank'), float(points) if points is not None else None,
            get('updated'), get('created'), 1 if get('neighbor') else 0, now))
        links = get('links')
        if links is not None:
            rows['link_keys'].append((key,))
            for link in links:
                if link['direction'] == 'outward':
                    rows['links'].append((key, link['key'], link['type']))
                else:
                    rows['inward'].append((link['key'], key, link['type']))
        comments = get('comments')
        if comments is not None:
            rows['comment_keys'].append((key,))
            rows['comments'].extend(
                (key, str(c['id']), c.get('author'), c.get('created'), c.get('updated'),
                 c.get('body'), utc(c.get('created'))) for c in comments)
        attachments = get('attachments')
        if attachments is not None:
            rows['attachment_keys'].append((key,))
            rows['attachments'].extend(
                (str(a['id']), key, a.get('filename'), a.get('size'), a.get('mime_type'),
                 a.get('author'), a.get('created'), utc(a.get('created'))) for a in attachments)
        sprint_ids = get('sprint_ids')
        if sprint_ids is not None:
            rows['sprint_keys'].append((key,))
            rows['sprints'].extend((key, sprint_id) for sprint_id in sprint_ids)
    return rows


def ingest_state(hub: Hub, agent: str, command_id: int, issues: list[dict]) -> dict:
    """Upsert a page of issues from a claimed refresh; returns ``{"issues": n, "links": m}``.

    Decision: like ``comments`` and ``attachments``, an issue sent without ``links`` keeps its
    stored links (the contract only says what a present list does).
    """
    modules.get_module(agent)
    command_id = require_int(command_id, 'command_id')
    issues = validate_issues(issues)
    rows = _rows(issues, hub.now())
    keys = [row[0] for row in rows['issues']]
    with hub.write():
        _check_refresh(hub, command_id)
        related_before = slices.related_keys(hub, keys)
        indexed = search.texts(hub, keys)
        cursor = hub.db.cursor()
        cursor.executemany(UPSERT_ISSUE, rows['issues'])
        # Links belong to their source: every source row of a sent issue is replaced; an inward
        # link is the other issue's outward one and is only added when still missing, and never
        # when its source is in this page with its own links (the source's word is final).
        sources = {key for (key,) in rows['link_keys']}
        cursor.executemany(DELETE_BY[IssueLink], rows['link_keys'])
        cursor.executemany(INSERT_LINK, rows['links'] + [
            row for row in rows['inward'] if row[0] not in sources])
        # comments, attachments and sprints sent (even empty) replace; absent keep what is stored;
        # attachment_file is never touched: a downloaded file outlives list updates.
        for model, name, statement in ((IssueComment, 'comment', INSERT_COMMENT),
                                       (IssueAttachment, 'attachment', INSERT_ATTACHMENT),
                                       (IssueSprint, 'sprint', INSERT_SPRINT)):
            if rows[f'{name}_keys']:
                cursor.executemany(DELETE_BY[model], rows[f'{name}_keys'])
                cursor.executemany(statement, rows[f'{name}s'])
        slices.refresh_members(hub, [(issue['key'], issue.get('labels') or []) for issue in issues],
                               related_before)
        search.reindex(hub, keys, indexed)
        cursor.executemany(INSERT_WRITTEN, [(command_id, key) for key in keys])
        link_count = len(rows['links']) + len(rows['inward'])
        cursor.execute(_COUNT_RUN, (len(issues), link_count, command_id))
    return {'issues': len(issues), 'links': link_count}


# --- boards --------------------------------------------------------------------------------------

class _Backlog(fields.Field):
    """Kanban backlog flag: ``true``/``false`` or ``1``/``0`` (stored as 1/0)."""

    OPENAPI = {'oneOf': [{'type': 'boolean'}, {'type': 'integer', 'enum': [0, 1]}]}
    default_error_messages = {'invalid': 'ожидается true, false или null'}

    def _deserialize(self, value, attr, data, **kwargs):
        if value is True or value is False or (type(value) is int and value in (0, 1)):
            return int(value)
        raise self.make_error('invalid')


class ColumnIn(LenientSchema):
    name = fields.String(required=True)
    statuses = fields.List(fields.String(), required=True)


SprintIn = LenientSchema.from_dict({'id': Int(required=True), **_texts('name', 'state', 'goal'),
                                   **_times(*SPRINT_TIME_FIELDS)}, name='SprintIn')


class BoardIn(LenientSchema):
    board_id = Int(required=True, minimum=1)
    type = fields.String(allow_none=True, validate=validate.OneOf(BOARD_TYPES))
    columns = fields.List(fields.Nested(ColumnIn), allow_none=True)
    kanban_backlog = _Backlog(allow_none=True)
    sprints = fields.List(fields.Nested(SprintIn), allow_none=True)


class BoardsBody(LenientSchema):
    """Body of ``POST /agent/boards``."""

    agent = modules.agent_field()
    command_id = Int(allow_none=True)
    boards = fields.List(fields.Nested(BoardIn), required=True)


_UPSERT_BOARD = ('INSERT OR REPLACE INTO jira_board (board_id, type, columns, kanban_backlog, '
                 'fetched_at) VALUES (?, ?, ?, ?, ?)')
_UPSERT_SPRINT = ('INSERT OR REPLACE INTO jira_sprint (sprint_id, board_id, name, state, '
                  'start_date, end_date, complete_date, goal) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')


def ingest_boards(hub: Hub, agent: str, command_id: int | None, boards: list[dict]) -> dict:
    """Upsert boards and their sprints, set ``board_type`` of projects on those boards.

    Decision: ``command_id`` is only type-checked (boards carry no per-run counters), and a
    board sent without ``sprints`` keeps its stored sprints.
    """
    body = load(BoardsBody, {'agent': agent, 'command_id': command_id, 'boards': boards})
    now = hub.now()
    board_rows, sprint_rows, type_rows = [], [], []
    for board in body['boards']:
        columns = board.get('columns')
        board_rows.append((board['board_id'], board.get('type'),
                           json.dumps(columns, ensure_ascii=False) if columns is not None else None,
                           board.get('kanban_backlog'), now))
        type_rows.append((board.get('type'), board['board_id']))
        sprint_rows.extend((sprint['id'], board['board_id'], sprint.get('name'),
                            sprint.get('state'), sprint.get('start_date'), sprint.get('end_date'),
                            sprint.get('complete_date'), sprint.get('goal'))
                           for sprint in board.get('sprints') or ())
    with hub.write():
        cursor = hub.db.cursor()
        cursor.executemany(_UPSERT_BOARD, board_rows)
        cursor.executemany(_UPSERT_SPRINT, sprint_rows)
        cursor.executemany('UPDATE jira_project SET board_type = ? WHERE board_id = ?', type_rows)
    return {'boards': len(board_rows), 'sprints': len(sprint_rows)}


__all__ = ['IssueIn', 'StateBody', 'BoardsBody', 'issue_ok', 'validate_issues', 'ingest_state',
           'ingest_boards', 'utc', 'time_ok']
