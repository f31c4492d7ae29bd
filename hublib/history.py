"""Change-history ingest (spec «Журнал изменений задач», contract §8.2): insert-or-ignore by
``(history_id, seq)``, so a stored row never changes however often the agent resends it."""
from __future__ import annotations

from . import modules, settings
from .db import Hub
from .errors import ValidationError
from .fieldmap import logical_field
from .mirror import KEY_RE, _command_id, _identifier, _is_int, _list_field, _text_or_null, utc

ITEM_TEXT_FIELDS = ('created', 'author', 'field_id', 'field_name', 'from_value', 'from_string',
                    'to_value', 'to_string')

_INSERT_CHANGE = """
INSERT OR IGNORE INTO issue_change (history_id, seq, key, at, created, author, field, field_id,
  field_name, from_value, from_string, to_value, to_string, fetched_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""


def _validate_item(item: object, path: str, errors: dict) -> None:
    if not isinstance(item, dict):
        errors.setdefault(path, []).append('ожидается объект записи журнала')
        return
    if _identifier(item.get('history_id')) is None:
        errors.setdefault(f'{path}.history_id', []).append('ожидается id записи журнала')
    if not (_is_int(item.get('seq')) and item['seq'] >= 0):
        errors.setdefault(f'{path}.seq', []).append('ожидается целое ≥ 0')
    key = item.get('key')
    if not isinstance(key, str) or not KEY_RE.match(key):
        errors.setdefault(f'{path}.key', []).append('ожидается ключ задачи Jira, например AURORA-1')
    _text_or_null(errors, item, ITEM_TEXT_FIELDS, path)


def ingest_history(hub: Hub, agent: str, command_id: int | None, items: list) -> dict:
    """Insert new change rows, ignore known ones; returns ``{"inserted": n, "ignored": m}``.

    Decision: ``command_id`` is optional and only type-checked — history rows belong to issues,
    not to a run, and a backfill may arrive outside any refresh.
    """
    modules.get_module(agent)
    _command_id(command_id, required=False)
    items = _list_field(items, 'items')
    now = hub.now()
    field_ids = settings.setting(hub, 'field_ids', {}) or {}
    fields: dict[tuple, str | None] = {}
    rows: list[tuple] = []
    errors: dict[str, list[str]] = {}
    # One pass: cheap type checks on the common path, the detailed report only for a bad item.
    for n, item in enumerate(items):
        if type(item) is not dict:
            _validate_item(item, f'items[{n}]', errors)
            continue
        get = item.get
        history_id, seq, key = get('history_id'), get('seq'), get('key')
        texts = (get('created'), get('author'), get('field_id'), get('field_name'),
                 get('from_value'), get('from_string'), get('to_value'), get('to_string'))
        if not (type(history_id) is str and history_id and _is_int(seq) and seq >= 0
                and type(key) is str and KEY_RE.match(key)
                and all(text is None or type(text) is str for text in texts)):
            _validate_item(item, f'items[{n}]', errors)
            if not errors:  # an integer history_id is fine, only slower
                history_id = _identifier(history_id)
            else:
                continue
        created, author, field_id, field_name = texts[:4]
        field = fields.get((field_id, field_name), fields)
        if field is fields:
            field = fields[(field_id, field_name)] = logical_field(field_id, field_name,
                                                                   field_ids)
        rows.append((history_id, seq, key, utc(created), created, author, field, field_id,
                     field_name) + texts[4:] + (now,))
    if errors:
        raise ValidationError(errors)
    with hub.write():
        cursor = hub.db.cursor()
        cursor.executemany(_INSERT_CHANGE, rows)
        inserted = max(cursor.rowcount, 0) if rows else 0
    return {'inserted': inserted, 'ignored': len(items) - inserted}
