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

import csv
import functools
import heapq
import io
import itertools
import json
import operator
from datetime import datetime
from typing import Any, Iterator, Mapping

from peewee import JOIN, SQL, Tuple, fn

from . import facet_choices, facet_counts, fields, files, jql, settings, slices, validators
from . import search as search_sql
from .db import Hub, Prepared, json_list
from .errors import HubError, NotFoundError, ValidationError
from .models import (Issue, IssueAttachment, IssueChange, IssueComment, IssueLink, IssueMember,
                     IssueNote, IssueSearch, IssueSprint, JiraBoard, JiraProject, JiraSprint,
                     SqlNames, SyncRun)
from .paging import cursor_field, decode_cursor, page
from .projects import require_project
from .slices import NATURAL_KEY_SQL, natural_key
from .timeutil import format_utc, to_utc
from .validation import LenientInt, Schema, UtcTime, load, lookup_key

ISSUE_COLUMNS = tuple(name for name in Issue._meta.sorted_field_names)
NOTE_COLUMNS = tuple(name for name in IssueNote._meta.sorted_field_names if name != 'key')
ORDERS = ('asc', 'desc')


MAX_JQL = 10_000
DEFAULT_CSV_FIELDS = ('key', 'issue_type', 'summary', 'status', 'priority', 'assignee', 'reporter',
                      'created', 'updated', 'duedate', 'labels', 'sprint', 'story_points',
                      'epic_key')


def _limit(default: int, maximum: int) -> LenientInt:
    return LenientInt(minimum=1, maximum=maximum, load_default=default,
                      metadata={'description': f'по умолчанию {default}'})


class _Query(Schema):
    cursor = cursor_field()


class IssuesQuery(_Query):
    """Filters of ``GET /issues``."""

    jql = fields.String(validate=validators.Length(max=MAX_JQL), metadata={
        'description': 'запрос JQL (подмножество, docs/jql.md): поля, операторы, ORDER BY'})
    tz = fields.String(metadata={'description': 'часовой пояс IANA для дат JQL, по умолчанию UTC'})
    project = fields.String(metadata={'description': 'разрез проекта: свои задачи и соседи'})
    status = fields.String()
    assignee = fields.String()
    neighbor = fields.Boolean(metadata={'description': 'с project= — относительно проекта'})
    q = fields.String(metadata={'description': 'подстрока ключа или названия без учёта регистра'})
    text = fields.String(validate=validators.Length(min=1, max=500), metadata={
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
    order = fields.String(validate=validators.OneOf(ORDERS), load_default='asc', metadata={
        'description': 'asc — старые первыми (по умолчанию), desc — новые первыми; курсор '
                       'продолжает выбранный порядок'})
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

_ISSUE, _NOTE, _MEMBER, _DOC = map(SqlNames, (Issue, IssueNote, IssueMember, IssueSearch))
_NATURAL = NATURAL_KEY_SQL.format(key=f'i.{_ISSUE.key}')
# The select list in the order of an item's fields (ISSUE_COLUMNS, the neighbour flag in its
# place), then the note (its key first): a row tuple becomes an item by position (:func:`_item`).
_ISSUE_SELECT = (', '.join('{neighbor} AS neighbor' if name == 'neighbor'
                           else f'i.{getattr(_ISSUE, name)}' for name in ISSUE_COLUMNS)
                 + f', n.{_NOTE.key} AS note_key, '
                 + ', '.join(f'n.{getattr(_NOTE, name)}' for name in NOTE_COLUMNS))
_ITEM_WIDTH = len(ISSUE_COLUMNS) + 1 + len(NOTE_COLUMNS)  # the columns of an item; extras follow
_SELECTED = (*ISSUE_COLUMNS, 'note_key', *NOTE_COLUMNS)
_SLICE_TABLES = f'{_MEMBER} m CROSS JOIN {_ISSUE} i ON i.{_ISSUE.key} = m.{_MEMBER.key}'
# A slice walked in an index order of the issue table: each issue's membership is read by the
# slice's primary key instead of the slice being sorted (an indexed order, a choice's values).
_WALK_TABLES = (f'{_ISSUE} i CROSS JOIN {_MEMBER} m ON m.{_MEMBER.label} = :label '
                f'AND m.{_MEMBER.key} = i.{_ISSUE.key}')


def _select_issues(hub: Hub, tables: str, neighbor: str, where: list[str], params: dict,
                   *, extra: str = '', order: str = '', with_: str = '') -> list[dict]:
    """Issue rows with their notes (``_ISSUE_SELECT``) as dicts; the one raw read of the issue
    table, because a slice or natural-order page must walk an index the ORM cannot name."""
    cursor = hub.db.execute_sql(_issues_sql(tables, neighbor, where, extra=extra, order=order,
                                            with_=with_, limit=bool(order)), params)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _select_rows(hub: Hub, tables: str, neighbor: str, where: list[str], params: dict,
                 *, extra: str, order: str, with_: str = '') -> list[tuple]:
    """The same read as :func:`_select_issues` as plain row tuples (a page's items are made by
    position, :func:`_item`; ``extra`` columns follow at ``_ITEM_WIDTH``)."""
    return hub.db.execute_sql(_issues_sql(tables, neighbor, where, extra=extra, order=order,
                                          with_=with_), params).fetchall()


_NOTE_NAMES = ('key', *NOTE_COLUMNS)
_LABELS_AT, _NEIGHBOR_AT = ISSUE_COLUMNS.index('labels'), ISSUE_COLUMNS.index('neighbor')
_NOTE_AT = len(ISSUE_COLUMNS)
_SELECTED_VALUES = operator.itemgetter(*_SELECTED)


def _issues_sql(tables: str, neighbor: str, where: list[str], *, extra: str = '',
                order: str = '', with_: str = '', limit: bool = True) -> str:
    return ((f'WITH {with_} ' if with_ else '')
            + f'SELECT {_ISSUE_SELECT.format(neighbor=neighbor)}{", " + extra if extra else ""} '
            f'FROM {tables} LEFT JOIN {_NOTE} n ON n.{_NOTE.key} = i.{_ISSUE.key}'
            + (' WHERE ' + ' AND '.join(where) if where else '')
            + (f' ORDER BY {order}' if order else '') + (' LIMIT :limit' if limit and order else ''))


def issue_out(row: dict) -> dict:
    """A selected issue row (``_ISSUE_SELECT``, a dict by column name) as the API shows it."""
    item = _item(_SELECTED_VALUES(row))
    if 'snippet' in row:
        item['snippet'] = row['snippet']
    return item


def _item(row: tuple) -> dict:
    """A selected issue row (``_ISSUE_SELECT`` as a tuple) as the API shows it: labels a list,
    the neighbour flag a boolean, the note nested (or null).

    A slice page is 500 of these, made straight from the cursor's tuples: the select list is in
    the item's field order, so ``zip`` makes the dict and three keys are set again in place (no
    row dict by column name first). The labels' JSON is parsed once per distinct text (a page
    repeats a few label sets). The 501 rows of a slice page at 200,000 issues, CPU on the shared
    machine (least of 40 calls): rows as dicts, then items, 2.6 ms; items from the tuples 1.0 ms."""
    item = dict(zip(ISSUE_COLUMNS, row))
    item['labels'] = _labels(row[_LABELS_AT])
    item['neighbor'] = bool(row[_NEIGHBOR_AT])
    item['note'] = (dict(zip(_NOTE_NAMES, row[_NOTE_AT:_ITEM_WIDTH]))
                    if row[_NOTE_AT] is not None else None)
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


def _search(hub: Hub, args: dict, *, rank: bool = True) -> jql.Search:
    """The JQL query and the other filters of ``GET /issues`` as one compiled search (contract
    §16: the old filters are clauses of the same tree); the caller holds the read."""
    query = jql.parse(args.get('jql'))
    extra = [jql.clause(spec, operator, args[name]) for name, spec, operator in (
        ('status', jql.STATUS, '='), ('assignee', jql.ASSIGNEE, '='), ('q', jql.Q_FIELD, '~'),
        ('text', jql.TEXT, '~'), ('updated_since', jql.UPDATED, '>=')) if name in args]
    if 'neighbor' in args:
        extra.append(jql.clause(jql.NEIGHBOR_FIELD, '=', 'true' if args['neighbor'] else 'false'))
    label = require_project(hub, args['project']) if 'project' in args else None
    jql.register_functions(hub.db)
    return jql.compile_search(hub, query, tz=args.get('tz'), extra=extra, label=label, rank=rank)


def issues(hub: Hub, *, jql: str | None = None, tz: str | None = None,
           project: str | None = None, status: str | None = None,
           assignee: str | None = None, neighbor: bool | None = None, q: str | None = None,
           text: str | None = None, updated_since: datetime | str | None = None,
           limit: int = 100, cursor: str | None = None) -> dict:
    """Mirror issues matching a JQL query and filters, in the query's order; keyset pages.

    Without ``ORDER BY``: natural key order, or relevance with a ``~`` (``text``). ``project`` = its
    slice, ``neighbor`` relative to it. Decisions: ``q`` is a case-insensitive substring of the
    key or the summary; ``updated_since`` compares Jira's ``updated`` in UTC (inclusive);
    ``status`` and ``assignee`` compare like JQL's ``=`` (casefolded).
    """
    args = _args(IssuesQuery, jql=jql, tz=tz, project=project, status=status, assignee=assignee,
                 neighbor=neighbor, q=q, text=text, updated_since=updated_since, limit=limit,
                 cursor=cursor)
    limit = args['limit']
    with hub.read():
        search = _search(hub, args)
        rows, cursor_of, ranked_within = _issue_rows(hub, search, limit, args.get('cursor'),
                                                     tuples=True)
    rows, next_cursor = page(rows, limit, cursor_of)
    out = issue_out if search.match is not None else _item
    found = {'items': [out(row) for row in rows], 'next_cursor': next_cursor}
    if ranked_within is not None:
        found['ranked_within'] = ranked_within
    return found


def _issue_rows(hub: Hub, search: jql.Search, limit: int, cursor: str | None, *,
                tuples: bool = False):
    """``limit + 1`` rows of the search after ``cursor``, the cursor of a row, and the size of
    the window relevance was ranked within when the matches did not fit in one (else None).

    Rows are dicts by column name, or with ``tuples`` row tuples (the extras at ``_ITEM_WIDTH``)
    for a page in key or JQL order, whose items :func:`_item` makes by position; relevance pages
    are always dicts (their rows gain the hit's rank)."""
    params = {**search.params, 'limit': limit + 1}
    if search.label is not None:
        params['label'] = search.label
    if search.match is not None:
        after = decode_cursor(cursor, (int, int, float, str))
        params['match'] = search.match
        rows, bounded = _by_relevance(hub, search, params, after, limit)
        return (rows, lambda row: [row['top'], int(bounded), row['relevance'], row['sort_key']],
                search_sql.RANK_WINDOW if bounded else None)
    select = _select_rows if tuples else _select_issues
    if not search.order:
        after = decode_cursor(cursor, (str,))
        rows = _in_key_order(hub, search, params, after, select)
        return rows, ((lambda row: [row[_ITEM_WIDTH]]) if tuples else
                      (lambda row: [row['sort_key']])), None
    count = len(search.order)
    after = decode_cursor(cursor, (_SORT_VALUE,) * count + (str,))
    rows_in_order = _by_choice if _walks_choice(hub, search) else _in_order
    rows = rows_in_order(hub, search, params, after, select)
    if tuples:
        return rows, lambda row: list(row[_ITEM_WIDTH:_ITEM_WIDTH + count + 1]), None
    return rows, lambda row: [row[f's{n}'] for n in range(count)] + [row['sort_key']], None


_SORT_VALUE = (str, int, float, type(None))


def _drive(search: jql.Search) -> tuple[str, str, str, list[str]]:
    """Tables, neighbour column, natural-order column and conditions of a walk: the slice's
    (label, sort_key) index with a project, the issue table's natural-key index without. The
    first table drives (CROSS JOIN keeps SQLite from reordering)."""
    if search.label is not None:
        return (_SLICE_TABLES, f'm.{_MEMBER.neighbor}', f'm.{_MEMBER.sort_key}',
                [f'm.{_MEMBER.label} = :label', *search.conditions])
    return f'{_ISSUE} i', f'i.{_ISSUE.neighbor}', _NATURAL, list(search.conditions)


def _in_key_order(hub: Hub, search: jql.Search, params: dict, after: list | None,
                  select=_select_issues) -> list:
    tables, neighbor, order, where = _drive(search)
    if after is not None:
        # first: SQLite bounds an index range by the first term it finds for each side, and a
        # project's range (project = X) is a lower bound too: after it, every page would walk
        # the pages before it again (CSV of 20,000 issues at 50,000: 1.5 -> 0.5 s CPU)
        where.insert(0, f'{order} > :after')
        params['after'] = after[0]
    return select(hub, tables, neighbor, where, params, extra=f'{order} AS sort_key', order=order)


def _in_order(hub: Hub, search: jql.Search, params: dict, after: list | None,
              select=_select_issues) -> list:
    """A page in a JQL order: each column with its empty values last, ties by natural key.

    ``DESC`` is written plainly (SQLite puts NULL last there, so an index on the expression still
    gives the order: ``ORDER BY updated DESC``); ``ASC`` needs ``NULLS LAST``. The cursor holds
    every column's value and the natural key: the next page starts after it, column by column.
    """
    tables, neighbor, natural, where = _drive(search)
    columns = search.order
    if search.label is not None and columns[0].indexed and _walk_index(hub, search.label):
        # a big slice in an indexed order: walk the issue table's index, each issue's membership
        # read by the slice's primary key, instead of sorting the whole slice
        tables = _WALK_TABLES
        where = list(search.conditions)
    if after is not None:
        where.append(_after(columns, natural, after, params))
    extra = ', '.join(f'{column.sql} AS s{n}' for n, column in enumerate(columns))
    order = ', '.join(f'{column.sql} DESC' if column.descending else f'{column.sql} NULLS LAST'
                      for column in columns) + f', {natural}'
    # The page is found first by the rows' ids and sort values only, then its own rows are read:
    # a sort that keeps whole rows (descriptions and all) for every candidate costs far more than
    # the page it yields (1,000,000 issues, `sprint in openSprints() AND resolution = Unresolved`,
    # 4,230 matches sorted for a page of 100: 47.5 -> 26.6 ms CPU).
    page = (f'page AS MATERIALIZED (SELECT i.rowid AS row_id, {neighbor} AS neighbor_of, '
            f'{extra}, {natural} AS sort_key FROM {tables}'
            + (' WHERE ' + ' AND '.join(where) if where else '') + f' ORDER BY {order} LIMIT :limit)')
    values = [f'page.s{n}' for n in range(len(columns))]
    ranked = ', '.join(f'{value} DESC' if column.descending else f'{value} NULLS LAST'
                       for value, column in zip(values, columns)) + ', page.sort_key'
    return select(hub, f'page CROSS JOIN {_ISSUE} i ON i.rowid = page.row_id', 'page.neighbor_of',
                  [], params, extra=', '.join(f'{value} AS s{n}' for n, value in enumerate(values))
                  + ', page.sort_key AS sort_key', order=ranked, with_=page)


def _walk_index(hub: Hub, label: str) -> bool:
    """Whether a page of ``label``'s slice in an indexed order should walk the issue table's index.

    Sorting the slice costs ~15 µs an issue (its row and sort values); walking the index costs
    ~1.5 µs an issue of the mirror and finds the slice's issues at the rate ``slice / mirror``,
    so a page of 100 walks ``100 · mirror / slice`` of them. The walk wins when ``slice² >
    10 · mirror`` (200,000 issues: a slice over ~1,400; 1,000,000: over ~3,200). The mirror's
    size is read as the issue table's highest rowid (one index step; deletions are rare)."""
    own = slices.counts(hub, label)
    size = own['own_count'] + own['neighbor_count']
    mirror = hub.db.execute_sql(f'SELECT max(rowid) FROM {_ISSUE}').fetchone()[0] or 0
    return size * size > 10 * mirror


def _walks_choice(hub: Hub, search: jql.Search) -> bool:
    """Whether a page in one choice's order walks the choice's values (:func:`_by_choice`): with
    no other filter (a filter may match few issues of a value: sorting those is cheaper than
    walking the value), over the mirror or a slice the walk suits (:func:`_walk_index`)."""
    return (search.choice is not None and not search.conditions
            and (search.label is None or _walk_index(hub, search.label)))


def _by_choice(hub: Hub, search: jql.Search, params: dict, after: list | None,
               select=_select_issues) -> list:
    """A page in one choice's order (``ORDER BY status DESC``), the rows and order of
    :func:`_in_order`, without sorting every issue.

    The column's stored spellings (a skip scan: a few statuses, people, types) and the empty
    value are each given their sort values by the order's own SQL (the first issue of the
    spelling, read with them: one index seek), then visited in that order: a spelling is one
    range of ``issue_choice_walk_<column>`` (on ``coalesce(column, '')``: NULL and '' are one
    range) in natural key order, read from the cursor on until the page is full; spellings with
    the same sort values (``Готово``, ``готово``) are merged by natural key. 50,000 issues,
    first page of 100 of ``ORDER BY status DESC``, CPU in process: 67-80 ms (a sort of every
    issue by the CASE of spellings and the natural key) -> 2-4 ms."""
    column, columns = search.choice, search.order
    sort_values = ', '.join(f'{sort.sql} AS s{n}' for n, sort in enumerate(columns))
    # dicts by name, or row tuples with the extras at _ITEM_WIDTH (see _issue_rows)
    at = ([*(f's{n}' for n in range(len(columns))), 'sort_key'] if select is _select_issues
          else list(range(_ITEM_WIDTH, _ITEM_WIDTH + len(columns) + 1)))
    values_of, sort_key_of = operator.itemgetter(*at), operator.itemgetter(at[-1])
    groups: dict[tuple, list] = {}
    for spelling in ['', *jql.stored_values(hub, column)]:
        first = select(hub, f'{_ISSUE} i', f'i.{_ISSUE.neighbor}',
                       [f"coalesce(i.{column}, '') = :spelling"],
                       {**params, 'spelling': spelling, 'limit': 1},
                       extra=f'{sort_values}, {_NATURAL} AS sort_key', order=_NATURAL)
        if first:  # no issue has it (the empty value, often): nothing to visit
            groups.setdefault(values_of(first[0])[:-1], []).append(spelling)
    ordered = sorted(groups.items(), key=functools.cmp_to_key(
        lambda one, other: _compare(one[0], list(other[0]), columns)))
    if search.label is not None:
        tables = _WALK_TABLES
        neighbor, sort_key = f'm.{_MEMBER.neighbor}', f'm.{_MEMBER.sort_key}'
    else:
        tables, neighbor, sort_key = f'{_ISSUE} i', f'i.{_ISSUE.neighbor}', _NATURAL
    extra = f'{sort_values}, {sort_key} AS sort_key'
    wanted, rows = params['limit'], []
    for values, group in ordered:
        if after is not None:
            place = _compare(values, after[:-1], columns)
            if place < 0:
                continue  # the cursor is past this value
        ranges = []
        for spelling in group:
            where = [f"coalesce(i.{column}, '') = :spelling"]
            if after is not None and place == 0:
                where.append(f'{_NATURAL} > :after_key')
            ranges.append(select(
                hub, tables, neighbor, where,
                {**params, 'spelling': spelling, 'after_key': after and after[-1],
                 'limit': wanted - len(rows)}, extra=extra, order=_NATURAL))
        merged = heapq.merge(*ranges, key=sort_key_of)
        rows.extend(itertools.islice(merged, wanted - len(rows)))
        if len(rows) >= wanted:
            break
    return rows


def _compare(values: tuple, cursor: list, columns: list[jql.SortColumn]) -> int:
    """Where sort values stand against a cursor's in the order of ``columns``: -1 before it,
    0 the same, 1 after (SQLite's order: NULL last both ways, numbers before text)."""
    for value, mark, column in zip(values, cursor, columns):
        if value == mark and isinstance(value, str) == isinstance(mark, str):
            continue
        if value is None or mark is None:
            return 1 if value is None else -1
        ours, theirs = (isinstance(value, str), value), (isinstance(mark, str), mark)
        before = ours > theirs if column.descending else ours < theirs
        return -1 if before else 1
    return 0


def _after(columns: list[jql.SortColumn], natural: str, after: list, params: dict) -> str:
    """The keyset condition "after this row" for ``columns`` then the natural key."""
    terms = []
    for index in range(len(columns) + 1):
        same = []
        for n, column in enumerate(columns[:index]):
            if after[n] is None:
                same.append(f'{column.sql} IS NULL')
            else:
                params[f'after{n}'] = after[n]
                same.append(f'{column.sql} = :after{n}')
        if index == len(columns):
            params['after_key'] = after[-1]
            step = f'{natural} > :after_key'
        elif after[index] is None:
            continue  # empty values come last: nothing of this column follows an empty one
        else:
            column = columns[index]
            params[f'after{index}'] = after[index]
            step = (f'({column.sql} IS NULL OR {column.sql} '
                    f'{"<" if column.descending else ">"} :after{index})')
        terms.append('(' + ' AND '.join([*same, step]) + ')')
    return '(' + ' OR '.join(terms) + ')'


def _by_relevance(hub: Hub, search: jql.Search, params: dict, after: list | None,
                  limit: int) -> tuple[list[dict], bool]:
    """A page of full-text matches, best first within each window of the newest matches
    (``search.ranked_hits``), and whether ranking was bounded.

    The window walk reads ``issue_search`` and the index alone (the issue and slice tables only
    when a filter needs them); the page's issues and snippets are read after it, for the page
    only. A snippet reads its document's text back through the content view: ~85 µs a match when
    one walk of the page's docid range positions the index on each (a page of 100 at 1,000,000
    issues: 8.6 ms), ~320 µs when each is looked up alone (32 ms), which is how it was read."""
    where = list(search.conditions)
    tables = f'{search_sql.FTS_TABLE} f CROSS JOIN {_DOC} d ON d.{_DOC.docid} = f.rowid'
    if where:
        tables += f' JOIN {_ISSUE} i ON i.{_ISSUE.key} = d.{_DOC.key}'
    order, neighbor = NATURAL_KEY_SQL.format(key=f'd.{_DOC.key}'), 'NULL'
    sliced = search.label is not None
    if sliced:
        tables += f' JOIN {_MEMBER} m ON m.{_MEMBER.key} = d.{_DOC.key}'
        where.append(f'm.{_MEMBER.label} = :label')
        order, neighbor = f'm.{_MEMBER.sort_key}', f'm.{_MEMBER.neighbor}'
    where += [f'{search_sql.FTS_TABLE} MATCH :match', 'f.rowid < :top']
    window = (f'SELECT f.rowid, {search_sql.RANK_SQL}, {order}, {neighbor} FROM {tables} '
              f'WHERE {" AND ".join(where)} ORDER BY f.rowid DESC LIMIT :window')
    hits, bounded = search_sql.ranked_hits(hub, window, params, after, limit)
    if not hits:
        return [], bounded
    docids = [hit.docid for hit in hits]
    fts = search_sql.FTS_TABLE
    snippets = (f'snippets AS MATERIALIZED (SELECT f.rowid AS docid, {search_sql.SNIPPET_SQL} '
                f'AS snippet FROM {fts} f WHERE {fts} MATCH :match '
                'AND f.rowid BETWEEN :low AND :high '
                'AND +f.rowid IN (SELECT value FROM json_each(:docids)))')
    rows = _select_issues(
        hub, f'json_each(:docids) j CROSS JOIN {_DOC} d ON d.{_DOC.docid} = j.value '
             f'CROSS JOIN {_ISSUE} i ON i.{_ISSUE.key} = d.{_DOC.key} '
             f'LEFT JOIN snippets s ON s.docid = d.{_DOC.docid}',
        f'i.{_ISSUE.neighbor}', [], {'match': search.match, 'docids': json.dumps(docids),
                                     'low': min(docids), 'high': max(docids)},
        extra=f'd.{_DOC.docid} AS docid, s.snippet AS snippet', with_=snippets)
    found = {row['docid']: row for row in rows}
    page_rows = []
    for hit in hits:
        row = found.get(hit.docid)
        if row is None:
            continue  # a document whose issue is gone: not shown
        row.update(relevance=hit.relevance, sort_key=hit.sort_key, top=hit.top)
        if sliced:
            row['neighbor'] = hit.neighbor
        page_rows.append(row)
    return page_rows, bounded


class IssueCountQuery(Schema):
    """Filters of ``GET /issues/count`` and ``GET /issues/facets``."""

    jql = IssuesQuery._declared_fields['jql']
    project = IssuesQuery._declared_fields['project']
    tz = IssuesQuery._declared_fields['tz']


class IssueFacetsQuery(IssueCountQuery):
    """Filters of ``GET /issues/facets``: the query and the values chosen in each list."""

    chosen = facet_choices.ChosenField(metadata={
        'description': 'значения, выбранные в списках (JSON-объект: список -> значения, null — '
                       'без значения): каждый список считает задачи запроса, подходящие под '
                       'выбор остальных списков, без своего'})


class IssuesCsvQuery(IssueCountQuery):
    """Filters of ``GET /issues.csv``."""

    fields = fields.String(metadata={
        'description': 'столбцы через запятую, по умолчанию ' + ','.join(DEFAULT_CSV_FIELDS)})


def issue_count(hub: Hub, *, jql: str | None = None, project: str | None = None,
                tz: str | None = None) -> dict:
    """``{count}`` of the issues a JQL query matches (within ``project``'s slice when given)."""
    args = _args(IssueCountQuery, jql=jql, project=project, tz=tz)
    with hub.read():
        search = _search(hub, args, rank=False)
        if search.label is not None and not search.conditions:
            # a whole slice: its kept counts (one row; counting 36,681 members of a project at
            # 50,000 issues took 32 ms CPU on the loaded machine)
            return {'count': sum(slices.counts(hub, search.label).values())}
        tables, _, _, where = _drive(search)
        sql = f'SELECT count(*) FROM {tables}' + (' WHERE ' + ' AND '.join(where) if where else '')
        (count,) = hub.db.execute_sql(sql, _params(search)).fetchone()
    return {'count': count}


FACETS = ('status', 'assignee', 'issue_type', 'priority')


def issue_facets(hub: Hub, *, jql: str | None = None, project: str | None = None,
                 tz: str | None = None,
                 chosen: Mapping[str, list[str | None]] | str | None = None) -> dict:
    """Values of status, assignee, issue type, priority and labels among the issues a query
    matches, each ``{value, count}``, by count then value.

    ``chosen``: the values ticked in each list (``{"status": ["В работе"], "assignee": [None]}``);
    each list then counts the issues of the query that match the other lists' choices, not its
    own (``hublib.facet_choices``), all from the same scan.

    Decisions: values as stored (``Готово`` and ``готово`` are two entries; JQL's ``=`` matches
    both); an issue without a value counts under ``null`` (labels: none); one scan of the
    matching issues serves the four fields (grouped by their combination), a second the labels.
    """
    args = _args(IssueFacetsQuery, jql=jql, project=project, tz=tz, chosen=chosen)
    choices = facet_choices.choices(args.pop('chosen', {}))
    counted: dict[str, dict] = {name: {} for name in (*FACETS, 'labels')}
    with hub.read():
        search = _search(hub, args, rank=False)
        if search.label is not None and not search.conditions:
            # a whole slice: its kept combination counts (hublib.facet_counts; 50,000 issues, a
            # slice of 36,681, CPU in process: 84-94 -> 6-7 ms)
            _count_facets(counted, facet_counts.slice_combinations(hub, search.label), choices)
            return _facet_lists(counted)
        tables, _, _, where = _drive(search)
        # a plain JOIN, not the walk's CROSS JOIN: SQLite may then drive from the issue_facet
        # index (jql.sql), whose order is the GROUP BY's, and skip the sorter of every row
        tables = _facet_tables(hub, search, tables.replace(' CROSS JOIN ', ' JOIN '))
        condition = ' WHERE ' + ' AND '.join(where) if where else ''
        # One grouped scan serves all five lists: the matching rows are read once and the few
        # distinct combinations are counted here (labels parsed once per distinct list). 50,000
        # issues, a project slice of 36,681, CPU ms on the loaded 2-core machine: 371 with a scan
        # for the four fields (NULLIF in GROUP BY) and a json_each scan for the labels -> 206.
        columns = ', '.join(f'i.{getattr(_ISSUE, name)}' for name in (*FACETS, 'labels'))
        _count_facets(counted, hub.db.execute_sql(
            f'SELECT {columns}, count(*) FROM {tables}{condition} GROUP BY {columns}',
            _params(search)), choices)
    return _facet_lists(counted)


def _facet_tables(hub: Hub, search: jql.Search, tables: str) -> str:
    """The tables of a facets scan: with a list of keys among the conditions (``text ~``, …),
    each issue's facet columns come from the key's covering index, not from its wide row
    (50,000 issues, facets of ``text ~ "отчёт"``, 9,954 matches: CPU 40 -> 30 ms).

    The team's own Jira project alone (``project = AURORA``: every issue but the neighbours of
    other projects) is read from the facet index whole, in its GROUP BY's order, the key tested
    on each entry; SQLite's own choice, the key's range and a sorter of every row, cost 98 ms
    CPU at 50,000 issues against 18 (the statement alone). Another project is a few neighbours:
    its key range stays SQLite's to find."""
    if jql.found_by_key(search):
        return tables.replace(f'{_ISSUE} i', f'{_ISSUE} i INDEXED BY {jql.KEY_FACET_INDEX}', 1)
    if (search.label is None and search.projects
            and jql.project_prefix(settings.setting(hub, 'project_key')) in search.projects):
        return tables.replace(f'{_ISSUE} i', f'{_ISSUE} i INDEXED BY {jql.FACET_INDEX}', 1)
    return tables


def _count_facets(counted: dict[str, dict], combinations,
                  chosen: facet_choices.Chosen) -> None:
    """Add rows of (status, assignee, issue type, priority, labels, count) to ``counted``: each
    to the lists whose other lists' choices it meets (all of them when nothing is chosen)."""
    for *values, labels, count in combinations:
        only = None  # the one list whose own choice the row fails: it counts there alone
        if chosen:
            failed = facet_choices.misses(chosen, values, _label_list(labels))
            if len(failed) > 1:
                continue
            only = failed[0] if failed else None
        for name, value in zip(FACETS, values):
            if only is None or only == name:
                value = value or None  # an empty text is no value, as NULL
                counted[name][value] = counted[name].get(value, 0) + count
        if only is None or only == 'labels':
            for label in _label_list(labels):
                counted['labels'][label] = counted['labels'].get(label, 0) + count


def _facet_lists(counted: dict[str, dict]) -> dict:
    return {name: [{'value': value, 'count': count} for value, count in sorted(
        values.items(), key=lambda item: (-item[1], item[0] is None, str(item[0])))]
        for name, values in counted.items()}


@functools.lru_cache(maxsize=4096)
def _label_list(text: str | None) -> tuple:
    """The distinct labels of a stored labels list (JSON); none when it is not a list."""
    try:
        labels = json.loads(text) if text else []
    except ValueError:
        return ()
    return tuple(dict.fromkeys(label for label in labels if isinstance(label, str))) \
        if isinstance(labels, list) else ()


def _params(search: jql.Search) -> dict:
    return {**search.params, **({'label': search.label} if search.label is not None else {})}


# --- CSV (contract §16) ----------------------------------------------------------------------------

CSV_FIELDS = ('key', 'id', 'issue_type', 'summary', 'description', 'status', 'priority', 'assignee',
              'reporter', 'duedate', 'planned_start', 'planned_end', 'epic_key', 'labels', 'sprint',
              'rank', 'story_points', 'created', 'updated', 'fetched_at', 'neighbor')
CSV_PAGE = 500
_ISSUE_SPRINT, _SPRINT = SqlNames(IssueSprint), SqlNames(JiraSprint)
_SPRINT_NAMES = (
    f'SELECT s.{_ISSUE_SPRINT.key}, coalesce(j.{_SPRINT.name}, s.{_ISSUE_SPRINT.sprint_id}) '
    f'FROM {_ISSUE_SPRINT} s LEFT JOIN {_SPRINT} j '
    f'ON j.{_SPRINT.sprint_id} = s.{_ISSUE_SPRINT.sprint_id} '
    f'WHERE s.{_ISSUE_SPRINT.key} IN (SELECT value FROM json_each(:keys)) '
    f'ORDER BY s.{_ISSUE_SPRINT.key}, s.{_ISSUE_SPRINT.sprint_id}')


def csv_fields(text: str | list[str] | None) -> list[str]:
    """The columns of a CSV export: ``fields`` as a comma-separated text or a list; refused
    (naming ``fields``) when one is unknown."""
    if text is None or text == '' or text == []:
        return list(DEFAULT_CSV_FIELDS)
    names = [name.strip() for name in (text.split(',') if isinstance(text, str) else text)]
    unknown = [name for name in names if name not in CSV_FIELDS]
    if unknown or not names:
        raise ValidationError({'fields': [
            f'неизвестный столбец "{unknown[0] if unknown else ""}": допустимы '
            + ', '.join(CSV_FIELDS)]})
    return names


def issues_csv(hub: Hub, *, jql: str | None = None, project: str | None = None,
               fields: str | list[str] | None = None, tz: str | None = None) -> Iterator[str]:
    """Every issue a query matches as CSV text chunks (contract §16), in the query's order.

    A bad query, time zone or column is refused here, before the first chunk. The chunks come
    from keyset pages of ``CSV_PAGE`` issues, each read in its own short transaction, so memory
    stays flat at any size and no read stays open while a slow client downloads. The first chunk
    starts with a UTF-8 BOM (Excel then reads Cyrillic); RFC 4180 quoting by the csv module.
    """
    args = _args(IssuesCsvQuery, jql=jql, project=project, fields=fields, tz=tz)
    names = csv_fields(args.get('fields'))
    with hub.read():
        search = _search(hub, args)
    return _csv_chunks(hub, search, names)


# The last line of an export that failed after its first chunk (contract §20).
CSV_FAILED = '# ошибка: {}; выгрузка прервана, файл неполный\r\n'
CSV_INTERNAL = 'внутренняя ошибка хаба, подробности в журнале сервера'


def _csv_chunks(hub: Hub, search: jql.Search, names: list[str]) -> Iterator[str]:
    """The export's chunks: the header line, then a chunk a page.

    A failure after the header (a read the database ends, a bug) must not look like the end of the
    file: the last chunk is then the line ``# ошибка: …`` (the hub's message, or a generic one for
    anything but a hub error: no SQL, no paths), and the error goes on up. An HTTP server that gets
    it from the response's iterator after the headers closes the connection without the chunked
    body's end (waitress does), so no client takes the file for complete."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator='\r\n')
    writer.writerow(names)
    yield '\ufeff' + buffer.getvalue()
    try:
        yield from _csv_pages(hub, search, names, buffer, writer)
    except Exception as error:  # re-raised: the line only says so inside the file
        reason = error.message if isinstance(error, HubError) else CSV_INTERNAL
        yield CSV_FAILED.format(' '.join(reason.split()))
        raise


def _csv_pages(hub: Hub, search: jql.Search, names: list[str], buffer: io.StringIO,
               writer) -> Iterator[str]:
    sprints: dict[str, list[str]] = {}
    cells = [_csv_cell(name, sprints) for name in names]
    cursor = None
    while True:
        with hub.read():
            jql.register_functions(hub.db)
            rows, cursor_of, _ = _issue_rows(hub, search, CSV_PAGE, cursor)
            rows, cursor = page(rows, CSV_PAGE, cursor_of)
            sprints.clear()
            if 'sprint' in names and rows:
                for key, name in hub.db.execute_sql(
                        _SPRINT_NAMES, {'keys': json.dumps([row['key'] for row in rows])}):
                    sprints.setdefault(key, []).append(str(name))
        buffer.seek(0)
        buffer.truncate()
        writer.writerows([cell(row) for cell in cells] for row in rows)
        yield buffer.getvalue()
        if cursor is None:
            return


def _csv_labels(row: dict) -> str:
    try:
        labels = json.loads(row['labels'] or '[]')
    except ValueError:
        return ''
    return ';'.join(str(label) for label in labels) if isinstance(labels, list) else ''


def _csv_points(row: dict) -> object:
    value = row['story_points']
    return int(value) if isinstance(value, float) and value.is_integer() else value


# The first characters that make a spreadsheet read a cell as a formula (OWASP «CSV Injection»,
# contract §20): = + - @, a tab, a carriage return, and the fullwidth ＝ ＋ － ＠ that Excel folds
# into them. Anyone who can write in Jira could otherwise plant a formula in a teammate's sheet.
FORMULA_START = frozenset('=+-@\t\r\uff1d\uff0b\uff0d\uff20')


def csv_text(value: str | None, start: frozenset = FORMULA_START) -> str | None:
    """A text cell as written to CSV: with a leading ``'`` when it begins like a formula (the
    sheet shows it as text), else as stored; null stays null (an empty cell)."""
    return "'" + value if value and value[0] in start else value


def _csv_cell(name: str, sprints: dict[str, list[str]]):
    """The function that gives column ``name`` of a row (chosen once per export, not per cell):
    null → empty, times in UTC, labels and sprint names joined by ``;``, story points a number.

    Every text cell goes through :func:`csv_text`, inlined where it is the column's only work (a
    page of 500 rows is thousands of cells): a first character tested against a frozenset. Story
    points are numbers (a negative one is no formula) and ``neighbor`` is ``true``/``false``."""
    if name == 'labels':
        return lambda row: csv_text(_csv_labels(row))
    if name == 'sprint':
        return lambda row: csv_text(';'.join(sprints.get(row['key'], ())))
    if name in ('created', 'updated'):
        column = 'created' if name == 'created' else 'jira_updated'
        return lambda row: to_utc(row[column]) or csv_text(row[column])
    if name == 'neighbor':
        return lambda row: 'true' if row['neighbor'] else 'false'
    if name == 'story_points':
        return _csv_points

    def text(row: dict, start: frozenset = FORMULA_START) -> str | None:
        value = row[name]
        return "'" + value if value and value[0] in start else value
    return text


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


_NOT_MIRRORED = {'summary': None, 'status': None}


def _linked_issues(hub: Hub, keys: set[str]) -> dict[str, dict]:
    """Summary and status of the linked issues the mirror holds (a link may leave the mirror)."""
    if not keys:
        return {}
    return {key: {'summary': summary, 'status': status} for key, summary, status in
            _LINKED.tuples(hub, keys=json.dumps(sorted(keys)))}


# The keys as one JSON list: one statement built once for any number of links (Peewee built an
# IN list for each card: most of a card's CPU was building its SQL).
_LINKED = Prepared(lambda p: Issue.select(Issue.key, Issue.summary, Issue.status).where(
    Issue.key.in_(json_list(p, 'keys'))))


def issue_card(hub: Hub, key: str) -> dict:
    """One issue with links both ways, comments, attachments (with state), sprints and note.

    ``key`` in any case (``aurora-1``): Jira keys are upper-case (``validation.lookup_key``)."""
    key = lookup_key(key)
    with hub.read():
        found = _select_issues(hub, f'{_ISSUE} i', f'i.{_ISSUE.neighbor}',
                               [f'i.{_ISSUE.key} = :key'], {'key': key})
        if not found:
            raise NotFoundError(f'задачи {key} нет в зеркале')
        card = issue_out(found[0])
        links = _CARD_LINKS.tuples(hub, key=key)
        linked = _linked_issues(hub, {source if target == key else target
                                      for source, target, _ in links})
        card['links'] = {
            'outward': [{'type': kind, 'key': target, **linked.get(target, _NOT_MIRRORED)}
                        for source, target, kind in
                        sorted(links, key=lambda link: (link[2], natural_key_or(link[1])))
                        if source == key],
            'inward': [{'type': kind, 'key': source, **linked.get(source, _NOT_MIRRORED)}
                       for source, target, kind in
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
    values: dict[str, object] = {'limit': limit + 1}
    if 'project' in args:
        values['label'] = require_project(hub, args['project'])
    if 'since' in args:
        values['since'] = format_utc(args['since'])
    if 'until' in args:
        values['until'] = format_utc(args['until'])
    if key is not None or 'key' in args:
        values['key'] = key if key is not None else args['key']
    if 'field' in args:
        values['field'] = args['field']
    if after is not None:
        values['after_at'], values['after_history'], values['after_seq'] = after
    statement = _change_statement(frozenset(values), args.get('order') == 'desc')
    # Rows straight from the cursor into dicts: Peewee's per-value conversion of these plain
    # TEXT/INTEGER columns (.dicts()) was about half of a page of 500 (docs/performance.md).
    rows = [dict(zip(_CHANGE_COLUMNS, row)) for row in statement.tuples(hub, **values)]
    rows, next_cursor = page(rows, limit, lambda row: [row['at'], row['history_id'], row['seq']])
    return {'items': rows, 'next_cursor': next_cursor}


@functools.lru_cache(maxsize=None)
def _change_statement(given: frozenset, newest_first: bool) -> Prepared:
    """The change-feed statement for this set of filters (``given``: the names of the values
    :func:`_changes` passes) and direction, built once: at most 2⁶ filter sets × 2 directions, and
    building it with Peewee cost more than reading a small page."""
    def build(p):
        conditions = [IssueChange.at.is_null(False)]
        if 'label' in given:
            conditions.append(fn.EXISTS(IssueMember.select(SQL('1')).where(
                (IssueMember.label == p('label')) & (IssueMember.key == IssueChange.key))))
        if 'since' in given:
            conditions.append(IssueChange.at >= p('since'))
        if 'until' in given:
            conditions.append(IssueChange.at < p('until'))
        if 'key' in given:
            conditions.append(IssueChange.key == p('key'))
        if 'field' in given:
            conditions.append(IssueChange.field == p('field'))
        sort = (IssueChange.at, IssueChange.history_id, IssueChange.seq)
        if 'after_at' in given:
            # Row-value comparison: SQLite walks the `at` index from the cursor, forwards or
            # backwards (50,000 issues, newest first: the same index range as oldest first, no
            # sort of the feed).
            after = Tuple(p('after_at'), p('after_history'), p('after_seq'))
            conditions.append(Tuple(*sort) < after if newest_first else Tuple(*sort) > after)
        return (IssueChange.select(*IssueChange._meta.sorted_fields).where(*conditions)
                .order_by(*(column.desc() if newest_first else column for column in sort))
                .limit(p('limit')))
    return Prepared(build)


_CHANGE_COLUMNS = tuple(IssueChange._meta.sorted_field_names)


def change_feed(hub: Hub, *, since: datetime | str | None = None,
                until: datetime | str | None = None, key: str | None = None,
                project: str | None = None, field: str | None = None, order: str = 'asc',
                limit: int = 500, cursor: str | None = None) -> dict:
    """Change rows with ``at`` set, by (at, history_id, seq), or newest first with
    ``order='desc'``; ``since`` inclusive, ``until`` not."""
    args = _args(ChangesQuery, since=since, until=until, key=lookup_key(key), project=project,
                 field=field, order=order, limit=limit, cursor=cursor)
    with hub.read():
        return _changes(hub, args)


def issue_changes(hub: Hub, key: str, *, since: datetime | str | None = None,
                  until: datetime | str | None = None, field: str | None = None,
                  limit: int = 500, cursor: str | None = None) -> dict:
    """The change feed of one issue (404 when the issue is neither mirrored nor has changes)."""
    key = lookup_key(key)
    args = _args(IssueChangesQuery, since=since, until=until, field=field, limit=limit,
                 cursor=cursor)
    with hub.read():
        known = (Issue.select().where(Issue.key == key).exists(hub.db)
                 or IssueChange.select().where(IssueChange.key == key).exists(hub.db))
        if not known:
            raise NotFoundError(f'задачи {key} нет в зеркале')
        return _changes(hub, args, key)


# --- sync journal ----------------------------------------------------------------------------------

# A list row shows the first characters of a run's query (a keys refresh lists every key): pages
# stay small; the single run (:func:`sync_run`) has it whole.
SYNC_QUERY_CUT = 200
_RUN_LIST_FIELDS = [field if field is not SyncRun.query
                    else fn.SUBSTR(SyncRun.query, 1, SYNC_QUERY_CUT).alias('query')
                    for field in SyncRun._meta.sorted_fields]
SYNC_RUN_NOT_FOUND = 'запуска синхронизации #{} нет'


def sync_runs(hub: Hub, *, limit: int = 100, cursor: str | None = None) -> dict:
    """The sync journal, newest first; ``query`` cut to 200 characters (``query_truncated``)."""
    args = _args(PageQuery, limit=limit, cursor=cursor)
    after = decode_cursor(args.get('cursor'), (int,))
    query = (SyncRun.select(*_RUN_LIST_FIELDS, (fn.LENGTH(SyncRun.query) > SYNC_QUERY_CUT)
                            .alias('query_truncated'))
             .order_by(SyncRun.id.desc()).limit(args['limit'] + 1))
    if after is not None:
        query = query.where(SyncRun.id < after[0])
    rows = [{**row, 'query_truncated': bool(row['query_truncated'])}
            for row in query.dicts().execute(hub.db)]
    rows, next_cursor = page(rows, args['limit'], lambda row: [row['id']])
    return {'items': rows, 'next_cursor': next_cursor}


def sync_run(hub: Hub, run_id: int) -> dict:
    """One run of the sync journal with its whole query; NotFoundError when there is none."""
    found = SyncRun.select().where(SyncRun.id == run_id).dicts().execute(hub.db)
    if not found:
        raise NotFoundError(SYNC_RUN_NOT_FOUND.format(run_id))
    return {**found[0], 'query_truncated': False}


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


def board_of(hub: Hub, label: str) -> dict:
    """The project's board row (``board_id``, ``type``, ``columns`` decoded, ``kanban_backlog``,
    ``fetched_at``; all null/empty without a board): what the reports read (``hublib.reports``)."""
    return _board(hub, label)


class BoardQuery(Schema):
    """Filter of ``GET /projects/{label}/board``."""

    sprint = LenientInt(minimum=1, metadata={
        'description': 'только задачи этого спринта (sprint_id) — доска спринта'})


CARD_FIELDS = ('key', 'summary', 'issue_type', 'priority', 'assignee', 'status')
# Cards per column: the first ones in board order. Every key stays in `issues`; a card is the wide
# row (summary), so a whole board of 17,272 own issues as cards was 3.4 MB and several times the
# keys-only read (50,000 issues, bench_ui); a person reads a column's first cards, and a sprint's
# board (`sprint=`) fits in them.
CARDS_PER_COLUMN = 200

# The board and sprint reads are hand-built (STYLE 12): a board lists every own issue, so the cost
# is per issue. What it was (50,000 issues, AWPCA: 17,272 own issues; in process, CPU ms): Python
# made a tuple per row (17,272 rows: as much as SQLite's whole read), peewee built the 500-key IN
# lists of the cards (~6 ms), and the sprints read probed every own issue once per sprint of the
# board. Now SQLite hands each read back as one row of parallel JSON arrays (``json_group_array``
# over an ordered subquery: SQLite feeds a non-grouped aggregate in the subquery's order), the
# joins go in the order written (CROSS JOIN) from the smallest side, and the cards are one
# statement over a JSON list of keys. Figures in docs/performance.md, "Web UI".
_BOARD_ORDER = f'(i.{_ISSUE.rank} IS NULL), i.{_ISSUE.rank}, m.{_MEMBER.sort_key}'


def _own_keys_and_statuses(source: str, where: str = '') -> str:
    """The statement of :func:`_own_issues` over ``source`` (aliases ``m``, and ``s`` if used)."""
    return ('SELECT json_group_array(key), json_group_array(status) FROM '
            f'(SELECT i.{_ISSUE.key} AS key, i.{_ISSUE.status} AS status FROM {source} '
            f'CROSS JOIN {_ISSUE} i ON i.{_ISSUE.key} = m.{_MEMBER.key} '
            f'WHERE m.{_MEMBER.label} = :label AND m.{_MEMBER.neighbor} = 0 {where}'
            f'ORDER BY {_BOARD_ORDER})')


# Whole board: the project's own issues in natural order, each one's status and rank from the
# covering index issue_key_status_rank.
_BOARD_ISSUES = _own_keys_and_statuses(f'{_MEMBER} m')
# A sprint's board: from the sprint's members (8,334 of the 50,000 here), then whether each is an
# own issue (a primary-key probe), then the status of the few that are (681): the other order
# probed all 17,272 own issues.
_SPRINT_BOARD_ISSUES = _own_keys_and_statuses(
    f'{_ISSUE_SPRINT} s CROSS JOIN {_MEMBER} m ON m.{_MEMBER.label} = :label '
    f'AND m.{_MEMBER.key} = s.{_ISSUE_SPRINT.key}',
    f'AND s.{_ISSUE_SPRINT.sprint_id} = :sprint ')
# Every sprint of the board at once: own issues in natural order, each one's sprints by one range
# of issue_sprint's primary key (`+`: not one probe per sprint of the board), the status only of
# those in one of them.
_SPRINT_MEMBERS = (
    'SELECT json_group_array(sprint_id), json_group_array(key), json_group_array(status) FROM '
    f'(SELECT s.{_ISSUE_SPRINT.sprint_id} AS sprint_id, m.{_MEMBER.key} AS key, '
    f'i.{_ISSUE.status} AS status FROM {_MEMBER} m '
    f'CROSS JOIN {_ISSUE_SPRINT} s ON s.{_ISSUE_SPRINT.key} = m.{_MEMBER.key} '
    f'CROSS JOIN {_ISSUE} i ON i.{_ISSUE.key} = m.{_MEMBER.key} '
    f'WHERE m.{_MEMBER.label} = :label AND m.{_MEMBER.neighbor} = 0 '
    f'AND +s.{_ISSUE_SPRINT.sprint_id} IN (SELECT value FROM json_each(:sprints)) '
    f'ORDER BY m.{_MEMBER.sort_key})')
_CARDS = ('SELECT json_group_array(json_array('
          f'{", ".join(getattr(_ISSUE, name) for name in CARD_FIELDS)})) FROM {_ISSUE} '
          f'WHERE {_ISSUE.key} IN (SELECT value FROM json_each(:keys))')


def _json_arrays(hub: Hub, statement: str, params: dict) -> list[list]:
    """The one row of JSON arrays a board statement answers, decoded."""
    return [json.loads(array) for array in hub.db.execute_sql(statement, params).fetchone()]


def _own_issues(hub: Hub, label: str, sprint: int | None) -> tuple[list[str], list[str | None]]:
    """Keys and statuses (parallel lists) of the project's own issues (of one sprint, if given)
    in board order: Jira rank, then natural key."""
    keys, statuses = _json_arrays(hub, _BOARD_ISSUES if sprint is None else _SPRINT_BOARD_ISSUES,
                                  {'label': label, 'sprint': sprint})
    return keys, statuses


def _cards(hub: Hub, keys: list[str]) -> dict[str, dict]:
    """The card fields of these issues by key."""
    cards, = _json_arrays(hub, _CARDS, {'keys': json.dumps(keys)})
    return {card[0]: dict(zip(CARD_FIELDS, card)) for card in cards}


def project_board(hub: Hub, label: str, *, sprint: int | None = None) -> dict:
    """The project's board: columns with the project's own issues (all keys, and the first
    ``CARDS_PER_COLUMN`` as cards with what a board card shows); done = the last column.
    ``sprint``: only the issues of that sprint.

    Decision: the board shows the project's own issues (its label), not its neighbours; an issue
    whose status is in no column is not shown, as on the Jira board.
    """
    args = _args(BoardQuery, sprint=sprint)
    with hub.read():
        require_project(hub, label)
        board = _board(hub, label)
        keys: list[list[str]] = [[] for _ in board['columns']]
        column_of: dict[str, list[str]] = {}
        for index, column in enumerate(board['columns']):
            for status in column.get('statuses') or ():
                column_of.setdefault(status, keys[index])
        own_keys, statuses = _own_issues(hub, label, args.get('sprint'))
        for key, status in zip(own_keys, statuses):
            column_keys = column_of.get(status)
            if column_keys is not None:
                column_keys.append(key)
        cards = _cards(hub, [key for column in keys for key in column[:CARDS_PER_COLUMN]])
    columns = [{'name': column.get('name'), 'statuses': list(column.get('statuses') or []),
                'issues': keys[index],
                'cards': [cards[key] for key in keys[index][:CARDS_PER_COLUMN]]}
               for index, column in enumerate(board['columns'])]
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
        members: dict[int, list[str]] = {sprint['sprint_id']: [] for sprint in sprints}
        sprint_ids, keys, statuses = _json_arrays(
            hub, _SPRINT_MEMBERS, {'label': label, 'sprints': json.dumps(list(members))})
    done_count = dict.fromkeys(members, 0)
    for sprint_id, key, status in zip(sprint_ids, keys, statuses):
        members[sprint_id].append(key)
        if status in done:
            done_count[sprint_id] += 1
    for sprint in sprints:
        sprint['issues'] = members[sprint['sprint_id']]
        sprint['issues_count'] = len(sprint['issues'])
        sprint['done_count'] = done_count[sprint['sprint_id']]
    return {'items': sprints}


__all__ = ['IssuesQuery', 'IssueCountQuery', 'IssuesCsvQuery', 'ChangesQuery', 'IssueChangesQuery',
           'BoardQuery', 'CARDS_PER_COLUMN',
           'PageQuery', 'IssueFacetsQuery', 'issues', 'issue_count', 'issue_facets', 'issues_csv', 'csv_fields',
           'CSV_FIELDS', 'DEFAULT_CSV_FIELDS', 'issue_card',
           'issue_out', 'change_feed', 'issue_changes', 'sync_runs', 'project_board',
           'project_sprints', 'board_of']
