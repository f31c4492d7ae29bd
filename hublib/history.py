"""Change-history ingest (spec «Журнал изменений задач», contract §8.2): insert-or-ignore by
``(history_id, seq)``, so a stored row never changes however often the agent resends it.

Pages run to 1,000 items, so, as in ``hublib.mirror``, the published schema :class:`HistoryItem`
has a plain-Python twin :func:`item_ok` (proven equal by ``tests/lib/test_ingest_validation.py``),
and the rows go in through one statement built once and ``executemany``.
"""
from __future__ import annotations

from marshmallow import fields, validate

from . import modules, settings
from .db import Hub
from .fieldmap import logical_field
from .mirror import utc
from .validation import (INT64_MAX, ISSUE_KEY, Int, JiraId, LenientSchema, check_page, is_int64,
                         issue_key_field, require_int)

ITEM_TEXT_FIELDS = ('created', 'author', 'field_id', 'field_name', 'from_value', 'from_string',
                    'to_value', 'to_string')


# One changed field of one history record of an issue.
HistoryItem = LenientSchema.from_dict({
    'history_id': JiraId(required=True), 'seq': Int(required=True, minimum=0),
    'key': issue_key_field(required=True),
    **{name: fields.String(allow_none=True) for name in ITEM_TEXT_FIELDS}}, name='HistoryItem')


class HistoryBody(LenientSchema):
    """Body of ``POST /agent/history``."""

    agent = fields.String(required=True, validate=validate.OneOf(tuple(modules.MODULES)))
    command_id = Int(allow_none=True)
    items = fields.List(fields.Nested(HistoryItem), required=True)


_TEXT = (str, type(None))


def item_ok(item: object) -> bool:
    """Whether ``HistoryItem`` accepts ``item``: the same rule in plain type checks (hot path)."""
    if type(item) is not dict:
        return False
    get = item.get
    history_id, seq, key = get('history_id'), get('seq'), get('key')
    if not ((type(history_id) is str and history_id) or is_int64(history_id)):
        return False
    if type(seq) is not int or not 0 <= seq <= INT64_MAX:
        return False
    if type(key) is not str or ISSUE_KEY.fullmatch(key) is None:
        return False
    for name in ITEM_TEXT_FIELDS:
        if type(get(name)) not in _TEXT:
            return False
    return True


INSERT_CHANGE = """
INSERT OR IGNORE INTO issue_change (history_id, seq, key, at, created, author, field, field_id,
  field_name, from_value, from_string, to_value, to_string, fetched_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""


def ingest_history(hub: Hub, agent: str, command_id: int | None, items: list[dict]) -> dict:
    """Insert new change rows, ignore known ones; returns ``{"inserted": n, "ignored": m}``.

    Decision: ``command_id`` is optional and only type-checked — history rows belong to issues,
    not to a run, and a backfill may arrive outside any refresh.
    """
    modules.get_module(agent)
    require_int(command_id, 'command_id', required=False)
    items = check_page(items, 'items', item_ok, HistoryItem())
    now = hub.now()
    field_ids = settings.setting(hub, 'field_ids') or {}
    fields_seen: dict[tuple, str | None] = {}
    rows: list[tuple] = []
    append = rows.append
    for item in items:
        get = item.get
        field_id, field_name, created, history_id = (get('field_id'), get('field_name'),
                                                     get('created'), get('history_id'))
        field = fields_seen.get((field_id, field_name), fields_seen)
        if field is fields_seen:
            field = fields_seen[(field_id, field_name)] = logical_field(field_id, field_name,
                                                                        field_ids)
        append((history_id if type(history_id) is str else str(history_id), get('seq'),
                get('key'), utc(created), created, get('author'), field, field_id, field_name,
                get('from_value'), get('from_string'), get('to_value'), get('to_string'), now))
    with hub.write():
        cursor = hub.db.cursor()
        cursor.executemany(INSERT_CHANGE, rows)
        inserted = max(cursor.rowcount, 0) if rows else 0
    return {'inserted': inserted, 'ignored': len(items) - inserted}


__all__ = ['HistoryItem', 'HistoryBody', 'item_ok', 'ingest_history']
