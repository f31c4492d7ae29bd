"""Interfaces' reads of the mirror (contract §10): issues, issue cards, the change feed, the sync
journal and project boards and sprints. Read-only: nothing here writes a table.

Each collection takes typed arguments and checks them with its query schema (``IssuesQuery``, …),
the same schema the HTTP adapter uses to turn a query string into those types, so a bad ``limit``
is one ValidationError naming ``limit`` on every road. Collections use keyset pagination; a cursor
is an opaque URL-safe token of the last row's sort key (``hublib.paging``).

Lists of issues come in natural key order (``AURORA-2`` before ``AURORA-10``): an index range of
the issue table's natural-key index, or of the project slice (``hublib.slices``) with ``project``,
so a page costs the same at any cursor position. With ``text`` they come by relevance instead.
"""
from __future__ import annotations

import functools
import json
import operator
from datetime import datetime
from typing import Any

from marshmallow import Schema, fields, validate
from peewee import JOIN, SQL, Tuple, fn

from . import files, search
from .db import Hub, Prepared
from .errors import NotFoundError
from .models import (Issue, IssueAttachment, IssueChange, IssueComment, IssueLink, IssueMember,
                     IssueSprint, JiraBoard, JiraProject, JiraSprint, SyncRun)
from .paging import decode_cursor, page
from .projects import require_project
from .slices import NATURAL_KEY_SQL, natural_key
from .timeutil import format_utc, to_utc
from .validation import LenientInt, UtcTime, load

ISSUE_COLUMNS = tuple(name for name in Issue._meta.sorted_field_names)
NOTE_COLUMNS = ('work_kind', 'done_text', 'rest_text', 'owner_note', 'updated_at', 'updated_by')
CHANGE_COLUMNS = tuple(IssueChange._meta.sorted_field_names)


def _limit(default: int, maximum: int) -> LenientInt:
    return LenientInt(minimum=1, maximum=maximum, load_default=default,
                      metadata={'description': f'по умолчанию {default}'})


class _Query(Schema):
    cursor = fields.String(metadata={'description': 'next_cursor предыдущей страницы'})


class IssuesQuery(_Query):
    """Filters of ``GET /issues``."""

    project = fields.String(metadata={'description': 'разрез проекта: свои задачи и соседи'})
    status = fields.String()
    assignee = fields.String()
    neighbor = fields.Boolean(metadata={'description': 'с project= — относительно проекта'})
    q = fields.String(metadata={'description': 'подстрока ключа или названия без учёта регистра'})
    text = fields.String(validate=validate.Length(min=1, max=500), metadata={
        'description': 'полнотекстовый поиск: слова и префиксы слово*; порядок по релевантности'})
    updated_since = UtcTime()
    limit = _limit(100, 1000)


class ChangesQuery(_Query):
    """Filters of ``GET /changes``."""

    since = UtcTime(metadata={'description': 'включительно'})
    until = UtcTime(metadata={'description': 'не включительно'})
    key = fields.String()
    project = fields.String()
    field = fields.String()
    limit = _limit(500, 1000)


class IssueChangesQuery(_Query):
    """Filters of ``GET /issues/{key}/changes``."""

    since = UtcTime()
    until = UtcTime()
    field = fields.String()
    limit = _limit(500, 1000)


class PageQuery(_Query):
    """``limit`` and ``cursor`` of a plain list (``GET /sync-runs``)."""

    limit = _limit(100, 1000)


def _args(schema: type[Schema], **values: Any) -> dict:
    return load(schema, {name: value for name, value in values.items() if value is not None})


# --- issues ----------------------------------------------------------------------------------------

_NATURAL = NATURAL_KEY_SQL.format(key='i.key')
_ISSUE_SELECT = (', '.join(f'i.{name}' for name in ISSUE_COLUMNS if name != 'neighbor')
                 + ', {neighbor} AS neighbor, '
                 + ', '.join(f'n.{name}' for name in NOTE_COLUMNS) + ', n.key AS note_key')


def _register_functions(hub: Hub) -> None:
    # Per connection and idempotent: Python's casefold and to_utc for Cyrillic-aware search and
    # Jira-time comparison, which SQLite's ASCII-only lower() and string order cannot do.
    connection = hub.db.connection()
    connection.create_function('hub_to_utc', 1, to_utc, deterministic=True)
    connection.create_function(
        'hub_contains', 2,
        lambda text, needle: 1 if text is not None and needle in text.casefold() else 0,
        deterministic=True)


def _select_issues(hub: Hub, tables: str, neighbor: str, where: list[str], params: dict,
                   *, extra: str = '', order: str = '', with_: str = '') -> list[dict]:
    """Issue rows with their notes (``_ISSUE_SELECT``) as dicts; the one raw read of the issue
    table, because a slice or natural-order page must walk an index the ORM cannot name."""
    sql = ((f'WITH {with_} ' if with_ else '')
           + f'SELECT {_ISSUE_SELECT.format(neighbor=neighbor)}{", " + extra if extra else ""} '
           f'FROM {tables} LEFT JOIN issue_note n ON n.key = i.key'
           + (' WHERE ' + ' AND '.join(where) if where else '')
           + (f' ORDER BY {order} LIMIT :limit' if order else ''))
    cursor = hub.db.execute_sql(sql, params)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


_ISSUE_VALUES = operator.itemgetter(*ISSUE_COLUMNS)
_NOTE_NAMES = ('key', *NOTE_COLUMNS)
_NOTE_VALUES = operator.itemgetter('note_key', *NOTE_COLUMNS)


def issue_out(row: dict) -> dict:
    """A selected issue row (``_ISSUE_SELECT``) as the API shows it: labels a list, note nested.

    A slice page is 500 of these: the dicts are zipped from ``itemgetter`` tuples and the labels'
    JSON is parsed once per distinct text (a page repeats a few label sets): a slice page of 500
    at 200,000 issues, 6.8 -> 5.2 ms CPU (median; the rest is allocating 500 dicts of 22 keys)."""
    item = dict(zip(ISSUE_COLUMNS, _ISSUE_VALUES(row)))
    item['labels'] = _labels(item['labels'])
    item['neighbor'] = bool(item['neighbor'])
    note = _NOTE_VALUES(row)
    item['note'] = dict(zip(_NOTE_NAMES, note)) if note[0] is not None else None
    if 'snippet' in row:
        item['snippet'] = row['snippet']
    return item


def _labels(text: str | None) -> list:
    """The issue's labels column (JSON) as a new list; unreadable: none."""
    parsed = _parsed_labels(text)
    return list(parsed) if type(parsed) is tuple else _parse_labels(text)


@functools.lru_cache(maxsize=4096)
def _parsed_labels(text: str | None) -> object:
    # a list of labels as a tuple (shared, immutable); anything else is parsed for each row
    labels = _parse_labels(text)
    return tuple(labels) if type(labels) is list and all(type(label) is str
                                                        for label in labels) else None


def _parse_labels(text: str | None) -> object:
    try:
        return json.loads(text or '[]')
    except ValueError:
        return []


def issues(hub: Hub, *, project: str | None = None, status: str | None = None,
           assignee: str | None = None, neighbor: bool | None = None, q: str | None = None,
           text: str | None = None, updated_since: datetime | str | None = None,
           limit: int = 100, cursor: str | None = None) -> dict:
    """Mirror issues in natural key order (by relevance with ``text``), filtered; keyset pages.

    ``project`` = its slice, ``neighbor`` relative to it. Decisions: ``q`` is a case-insensitive
    substring of the key or the summary; ``updated_since`` compares Jira's ``updated`` normalized
    to UTC (inclusive).
    """
    args = _args(IssuesQuery, project=project, status=status, assignee=assignee,
                 neighbor=neighbor, q=q, text=text, updated_since=updated_since, limit=limit,
                 cursor=cursor)
    limit = args['limit']
    by_relevance = 'text' in args
    after = decode_cursor(args.get('cursor'), (float, str) if by_relevance else (str,))
    params: dict[str, Any] = {'limit': limit + 1}
    where: list[str] = []
    with hub.read():
        if 'project' in args:
            params['label'] = require_project(hub, args['project'])
        if by_relevance:
            params['match'] = search.match_expression(args['text'])
            if params['match'] is None:
                return {'items': [], 'next_cursor': None}
        for name in ('status', 'assignee'):
            if name in args:
                where.append(f'i.{name} = :{name}')
                params[name] = args[name]
        if 'q' in args or 'updated_since' in args:
            _register_functions(hub)
        if 'q' in args:
            where.append('(hub_contains(i.key, :q) OR hub_contains(i.summary, :q))')
            params['q'] = args['q'].casefold()
        if 'updated_since' in args:
            where.append('hub_to_utc(i.jira_updated) >= :since')
            params['since'] = format_utc(args['updated_since'])
        if by_relevance:
            rows = _by_relevance(hub, args, where, params, after)
        else:
            rows = _in_key_order(hub, args, where, params, after)
    rows, next_cursor = page(rows, limit, (lambda row: [row['relevance'], row['sort_key']])
                             if by_relevance else (lambda row: [row['sort_key']]))
    return {'items': [issue_out(row) for row in rows], 'next_cursor': next_cursor}


def _in_key_order(hub: Hub, args: dict, where: list[str], params: dict,
                  after: list | None) -> list[dict]:
    # The first table drives the walk (CROSS JOIN keeps SQLite from reordering): the slice's
    # (label, sort_key) index, or the natural-key index of the issue table.
    if 'project' in args:
        tables = 'issue_member m CROSS JOIN issue i ON i.key = m.key'
        neighbor, order = 'm.neighbor', 'm.sort_key'
        where.append('m.label = :label')
    else:
        tables, neighbor, order = 'issue i', 'i.neighbor', _NATURAL
    if 'neighbor' in args:
        where.append(f'{neighbor} = :neighbor')
        params['neighbor'] = int(args['neighbor'])
    if after is not None:
        where.append(f'{order} > :after')
        params['after'] = after[0]
    return _select_issues(hub, tables, neighbor, where, params, extra=f'{order} AS sort_key',
                          order=order)


def _by_relevance(hub: Hub, args: dict, where: list[str], params: dict,
                  after: list | None) -> list[dict]:
    """A page of full-text matches, best first, in two steps.

    A common word matches half the mirror; ranking every match is unavoidable (bm25), but
    joining every match to its issue row and cutting a snippet for it is not: the inner query
    ranks the documents over ``issue_search`` alone (the issue and slice tables only when a
    filter needs them) and keeps the page; the outer one reads the page's issues and snippets.
    200,000 issues, a word in half of them, first 100: 310 -> 180 ms (1,000,000: 1.4 s -> 0.45 s,
    measured by the scale bench's author); a rare word: the same 2.8 ms. A filter on the issue
    (status, neighbor) reads each match's issue row and costs what it did."""
    tables = 'issue_fts f CROSS JOIN issue_search d ON d.docid = f.rowid'
    if where or ('neighbor' in args and 'project' not in args):
        tables += ' JOIN issue i ON i.key = d.key'
    neighbor, order = 'i.neighbor', NATURAL_KEY_SQL.format(key='d.key')
    if 'project' in args:
        tables += ' JOIN issue_member m ON m.key = d.key'
        where.append('m.label = :label')
        neighbor, order = 'm.neighbor', 'm.sort_key'
    if 'neighbor' in args:
        where.append(f'{neighbor} = :neighbor')
        params['neighbor'] = int(args['neighbor'])
    where.append('issue_fts MATCH :match')
    if after is not None:
        where.append('(relevance > :after_rank OR (relevance = :after_rank AND sort_key > :after))')
        params.update(after_rank=after[0], after=after[1])
    best = (f'SELECT f.rowid AS docid, d.key AS key, {search.RANK_SQL} AS relevance, '
            f'{order} AS sort_key{", m.neighbor AS neighbor" if "project" in args else ""} '
            f'FROM {tables} WHERE {" AND ".join(where)} ORDER BY relevance, sort_key LIMIT :limit')
    page_tables = ('best CROSS JOIN issue_fts f ON f.rowid = best.docid '
                   'CROSS JOIN issue i ON i.key = best.key')
    return _select_issues(
        hub, page_tables, 'best.neighbor' if 'project' in args else 'i.neighbor',
        ['issue_fts MATCH :match'], params, with_=f'best AS MATERIALIZED ({best})',
        extra=f'best.relevance AS relevance, best.sort_key AS sort_key, '
              f'{search.SNIPPET_SQL} AS snippet',
        order='best.relevance, best.sort_key')


# The card's queries, built once (the card is the most frequent read: 1.3 -> 0.6 ms at 200,000)
_CARD_LINKS = Prepared(lambda p: IssueLink.select(
    IssueLink.source_key, IssueLink.target_key, IssueLink.link_type)
    .where((IssueLink.source_key == p('key')) | (IssueLink.target_key == p('key'))))
_CARD_COMMENTS = Prepared(lambda p: IssueComment.select(
    IssueComment.comment_id, IssueComment.author, IssueComment.created, IssueComment.updated,
    IssueComment.body, IssueComment.created_at)
    .where(IssueComment.key == p('key'))
    .order_by(IssueComment.created_at, IssueComment.created, IssueComment.comment_id))
_CARD_ATTACHMENTS = Prepared(lambda p: IssueAttachment.select()
                             .where(IssueAttachment.key == p('key'))
                             .order_by(IssueAttachment.created_at, IssueAttachment.attachment_id))
_CARD_SPRINTS = Prepared(lambda p: IssueSprint.select(
    IssueSprint.sprint_id, JiraSprint.name, JiraSprint.state)
    .join(JiraSprint, JOIN.LEFT_OUTER, on=(JiraSprint.sprint_id == IssueSprint.sprint_id))
    .where(IssueSprint.key == p('key')).order_by(IssueSprint.sprint_id))


def issue_card(hub: Hub, key: str) -> dict:
    """One issue with links both ways, comments, attachments (with state), sprints and note."""
    with hub.read():
        found = _select_issues(hub, 'issue i', 'i.neighbor', ['i.key = :key'], {'key': key})
        if not found:
            raise NotFoundError(f'задачи {key} нет в зеркале')
        card = issue_out(found[0])
        links = _CARD_LINKS.tuples(hub, key=key)
        card['links'] = {
            'outward': [{'type': kind, 'key': target} for source, target, kind in
                        sorted(links, key=lambda link: (link[2], natural_key_or(link[1])))
                        if source == key],
            'inward': [{'type': kind, 'key': source} for source, target, kind in
                       sorted(links, key=lambda link: (link[2], natural_key_or(link[0])))
                       if target == key and source != key]}
        card['comments'] = _CARD_COMMENTS.dicts(hub, key=key)
        attachments = _CARD_ATTACHMENTS.dicts(hub, key=key)
        if attachments:
            states = files.attachment_states(hub, [a['attachment_id'] for a in attachments])
            for attachment in attachments:
                state = states[attachment['attachment_id']]
                attachment['state'], attachment['error'] = state['state'], state['error']
        card['attachments'] = attachments
        card['sprints'] = _CARD_SPRINTS.dicts(hub, key=key)
    return card


def natural_key_or(key: str) -> str:
    """Natural sort key of ``key`` when it is an issue key, else the key itself (links may point
    outside the mirror's key shape)."""
    try:
        return natural_key(key)
    except ValueError:
        return key


# --- change feed -----------------------------------------------------------------------------------

def _changes(hub: Hub, args: dict, key: str | None = None) -> dict:
    limit = args['limit']
    after = decode_cursor(args.get('cursor'), (str, str, int))
    conditions = [IssueChange.at.is_null(False)]
    if 'project' in args:
        label = require_project(hub, args['project'])
        conditions.append(fn.EXISTS(IssueMember.select(SQL('1')).where(
            (IssueMember.label == label) & (IssueMember.key == IssueChange.key))))
    if 'since' in args:
        conditions.append(IssueChange.at >= format_utc(args['since']))
    if 'until' in args:
        conditions.append(IssueChange.at < format_utc(args['until']))
    if key is not None or 'key' in args:
        conditions.append(IssueChange.key == (key if key is not None else args['key']))
    if 'field' in args:
        conditions.append(IssueChange.field == args['field'])
    if after is not None:
        # Row-value comparison: SQLite uses the `at` index for its leading column.
        conditions.append(Tuple(IssueChange.at, IssueChange.history_id, IssueChange.seq)
                          > Tuple(*after))
    rows = list(IssueChange.select().where(*conditions)
                .order_by(IssueChange.at, IssueChange.history_id, IssueChange.seq)
                .limit(limit + 1).dicts().execute(hub.db))
    rows, next_cursor = page(rows, limit, lambda row: [row['at'], row['history_id'], row['seq']])
    return {'items': rows, 'next_cursor': next_cursor}


def change_feed(hub: Hub, *, since: datetime | str | None = None,
                until: datetime | str | None = None, key: str | None = None,
                project: str | None = None, field: str | None = None, limit: int = 500,
                cursor: str | None = None) -> dict:
    """Change rows with ``at`` set, by (at, history_id, seq); ``since`` inclusive, ``until`` not."""
    args = _args(ChangesQuery, since=since, until=until, key=key, project=project, field=field,
                 limit=limit, cursor=cursor)
    with hub.read():
        return _changes(hub, args)


def issue_changes(hub: Hub, key: str, *, since: datetime | str | None = None,
                  until: datetime | str | None = None, field: str | None = None,
                  limit: int = 500, cursor: str | None = None) -> dict:
    """The change feed of one issue (404 when the issue is neither mirrored nor has changes)."""
    args = _args(IssueChangesQuery, since=since, until=until, field=field, limit=limit,
                 cursor=cursor)
    with hub.read():
        known = (Issue.select().where(Issue.key == key).exists(hub.db)
                 or IssueChange.select().where(IssueChange.key == key).exists(hub.db))
        if not known:
            raise NotFoundError(f'задачи {key} нет в зеркале')
        return _changes(hub, args, key)


# --- sync journal ----------------------------------------------------------------------------------

def sync_runs(hub: Hub, *, limit: int = 100, cursor: str | None = None) -> dict:
    """The sync journal, newest first."""
    args = _args(PageQuery, limit=limit, cursor=cursor)
    after = decode_cursor(args.get('cursor'), (int,))
    query = SyncRun.select().order_by(SyncRun.id.desc()).limit(args['limit'] + 1)
    if after is not None:
        query = query.where(SyncRun.id < after[0])
    rows, next_cursor = page(list(query.dicts().execute(hub.db)), args['limit'],
                             lambda row: [row['id']])
    return {'items': rows, 'next_cursor': next_cursor}


# --- boards and sprints ----------------------------------------------------------------------------

def _board(hub: Hub, label: str) -> dict:
    found = (JiraProject.select(JiraProject.board_id,
                                fn.COALESCE(JiraBoard.type, JiraProject.board_type).alias('type'),
                                JiraBoard.columns, JiraBoard.kanban_backlog, JiraBoard.fetched_at)
             .join(JiraBoard, JOIN.LEFT_OUTER, on=(JiraBoard.board_id == JiraProject.board_id))
             .where(JiraProject.label == label).dicts().execute(hub.db))
    board = found[0] if found else dict.fromkeys(
        ('board_id', 'type', 'columns', 'kanban_backlog', 'fetched_at'))
    try:
        board['columns'] = json.loads(board['columns']) if board['columns'] else []
    except ValueError:
        board['columns'] = []
    if board['kanban_backlog'] is not None:
        board['kanban_backlog'] = bool(board['kanban_backlog'])
    return board


def _own_issues(hub: Hub, label: str) -> list[tuple[str, str | None]]:
    """(key, status) of the project's own issues, in board order: Jira rank, then natural key."""
    return list(Issue.select(Issue.key, Issue.status)
                .join(IssueMember, on=(IssueMember.key == Issue.key))
                .where((IssueMember.label == label) & (IssueMember.neighbor == 0))
                .order_by(Issue.rank.is_null(), Issue.rank, IssueMember.sort_key)
                .tuples().execute(hub.db))


def project_board(hub: Hub, label: str) -> dict:
    """The project's board: columns with the project's own issues; done = the last column.

    Decision: the board shows the project's own issues (its label), not its neighbours; an issue
    whose status is in no column is not shown, as on the Jira board.
    """
    with hub.read():
        require_project(hub, label)
        board = _board(hub, label)
        column_of: dict[str, int] = {}
        for index, column in enumerate(board['columns']):
            for status in column.get('statuses') or ():
                column_of.setdefault(status, index)
        keys: list[list[str]] = [[] for _ in board['columns']]
        for key, status in _own_issues(hub, label):
            if status in column_of:
                keys[column_of[status]].append(key)
    columns = [{'name': column.get('name'), 'statuses': list(column.get('statuses') or []),
                'issues': keys[index]} for index, column in enumerate(board['columns'])]
    return {'label': label, 'board_id': board['board_id'], 'type': board['type'],
            'kanban_backlog': board['kanban_backlog'], 'fetched_at': board['fetched_at'],
            'columns': columns, 'done_statuses': columns[-1]['statuses'] if columns else []}


def project_sprints(hub: Hub, label: str) -> dict:
    """Sprints of the project's board with the project's own issues and how many are done."""
    with hub.read():
        require_project(hub, label)
        board = _board(hub, label)
        done = set(board['columns'][-1].get('statuses') or []) if board['columns'] else set()
        sprints = list(JiraSprint.select().where(JiraSprint.board_id == board['board_id'])
                       .order_by(JiraSprint.start_date.is_null(), JiraSprint.start_date,
                                 JiraSprint.sprint_id).dicts().execute(hub.db))
        members: dict[int, list[tuple[str, str | None]]] = {}
        for sprint_id, key, status in (
                IssueSprint.select(IssueSprint.sprint_id, Issue.key, Issue.status)
                .join(Issue, on=(Issue.key == IssueSprint.key))
                .join(IssueMember, on=(IssueMember.key == Issue.key))
                .where((IssueMember.label == label) & (IssueMember.neighbor == 0)
                       & IssueSprint.sprint_id.in_([s['sprint_id'] for s in sprints]))
                .order_by(IssueMember.sort_key).tuples().execute(hub.db)):
            members.setdefault(sprint_id, []).append((key, status))
    for sprint in sprints:
        own = members.get(sprint['sprint_id'], [])
        sprint['issues'] = [key for key, _ in own]
        sprint['issues_count'] = len(own)
        sprint['done_count'] = sum(1 for _, status in own if status in done)
    return {'items': sprints}


__all__ = ['IssuesQuery', 'ChangesQuery', 'IssueChangesQuery', 'PageQuery', 'issues', 'issue_card',
           'issue_out', 'change_feed', 'issue_changes', 'sync_runs', 'project_board',
           'project_sprints']
