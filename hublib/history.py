"""Change-history ingest (spec «Журнал изменений задач», contract §8.2): insert-or-ignore by
``(history_id, seq)``, so a stored row never changes however often the agent resends it.

Pages run to 1,000 items, so, as in ``hublib.mirror``, the published schema :class:`HistoryItem`
has a plain-Python twin :func:`item_ok` (proven equal by ``tests/lib/test_ingest_validation.py``),
and the rows go in through one statement built once and ``executemany``.
"""
from __future__ import annotations

import operator

from . import fields, modules, settings
from .db import Hub
from .fieldmap import logical_field
from .mirror import time_ok, utc
from .models import IssueChange, SqlNames
from .validation import (INT64_MAX, ISSUE_KEY, Int, JiraId, JiraTime, LenientSchema, check_page,
                         is_int64, issue_key_field, require_int, require_list)

ITEM_TEXT_FIELDS = ('author', 'field_id', 'field_name', 'from_value', 'from_string', 'to_value',
                    'to_string')


# One changed field of one history record of an issue.
HistoryItem = LenientSchema.from_dict({
    'history_id': JiraId(required=True), 'seq': Int(required=True, minimum=0),
    'key': issue_key_field(required=True), 'created': JiraTime(allow_none=True),
    **{name: fields.String(allow_none=True) for name in ITEM_TEXT_FIELDS}}, name='HistoryItem')


class HistoryBody(LenientSchema):
    """Body of ``POST /agent/history``."""

    agent = modules.agent_field()
    command_id = Int(allow_none=True)
    items = fields.List(fields.Nested(HistoryItem), required=True)


_TEXT = (str, type(None))
_KEYS = ('history_id', 'seq', 'key', 'created', *ITEM_TEXT_FIELDS)
_VALUES = operator.itemgetter(*_KEYS)


def _values(item: object) -> tuple | None:
    """The item's values in ``_KEYS`` order when they have ``HistoryItem``'s types, else None
    (whether ``created`` is a time the hub can read is seen where its hub time is computed).

    One C call gathers them when every key is present (the agent sends all of them), and the
    checks run on locals: a page of 1,000 items costs ~0.5 ms instead of ~1.3 ms with a ``get``
    per field in two passes (validate, then build the rows)."""
    if type(item) is not dict:
        return None
    try:
        values = _VALUES(item)
    except KeyError:  # an optional text left out
        values = tuple(map(item.get, _KEYS))
    history_id, seq, key, created, author, field_id, field_name, fv, fs, tv, ts = values
    if not ((type(history_id) is str and history_id) or is_int64(history_id)):
        return None
    if type(seq) is not int or not 0 <= seq <= INT64_MAX:
        return None
    if type(key) is not str or ISSUE_KEY.fullmatch(key) is None:
        return None
    text = _TEXT
    if (type(created) not in text or type(author) not in text or type(field_id) not in text
            or type(field_name) not in text or type(fv) not in text or type(fs) not in text
            or type(tv) not in text or type(ts) not in text):
        return None
    return values


def item_ok(item: object) -> bool:
    """Whether ``HistoryItem`` accepts ``item``: the same rule in plain type checks (hot path)."""
    values = _values(item)
    return values is not None and time_ok(values[3])


INSERT_CHANGE = SqlNames(IssueChange).insert(
    'history_id', 'seq', 'key', 'at', 'created', 'author', 'field', 'field_id', 'field_name',
    'from_value', 'from_string', 'to_value', 'to_string', 'fetched_at', conflict='IGNORE')


def ingest_history(hub: Hub, agent: str, command_id: int | None, items: list[dict]) -> dict:
    """Insert new change rows, ignore known ones; returns ``{"inserted": n, "ignored": m}``.

    Decision: ``command_id`` is optional and only type-checked — history rows belong to issues,
    not to a run, and a backfill may arrive outside any refresh.
    """
    modules.get_module(agent)
    require_int(command_id, 'command_id', required=False)
    page = [_values(item) for item in require_list(items, 'items')]
    if None in page:  # the schema names the fields of each refused item
        check_page(items, 'items', item_ok, HistoryItem)
        raise AssertionError('item_ok and HistoryItem disagree')  # their twin test fails too
    now = hub.now()
    field_ids = settings.setting(hub, 'field_ids') or {}
    fields_seen: dict[tuple, str | None] = {}
    rows: list[tuple] = []
    append = rows.append
    unreadable = False
    for history_id, seq, key, created, author, field_id, field_name, fv, fs, tv, ts in page:
        field = fields_seen.get((field_id, field_name), fields_seen)
        if field is fields_seen:
            field = fields_seen[(field_id, field_name)] = logical_field(field_id, field_name,
                                                                        field_ids)
        at = utc(created)
        if at is None and created is not None:
            unreadable = True  # a time to_utc cannot read: stored, its row would never show
        append((history_id if type(history_id) is str else str(history_id), seq, key,
                at, created, author, field, field_id, field_name, fv, fs, tv, ts, now))
    if unreadable:
        check_page(items, 'items', item_ok, HistoryItem)
        raise AssertionError('item_ok and HistoryItem disagree')
    with hub.write():
        cursor = hub.db.cursor()
        cursor.executemany(INSERT_CHANGE, rows)
        inserted = max(cursor.rowcount, 0) if rows else 0
    return {'inserted': inserted, 'ignored': len(items) - inserted}


__all__ = ['HistoryItem', 'HistoryBody', 'item_ok', 'ingest_history']
