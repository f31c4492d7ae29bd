"""Service notes: fields Jira does not have, kept per issue key (spec «Служебные заметки»).

Only interfaces (``put_note``) and the queue (``merge_note`` when an ``ensure_issue`` with a temp
key finishes) write ``issue_note``; mirror writes never touch it.
"""
from __future__ import annotations

import re
from typing import Any

from .db import Hub
from .errors import NotFoundError, ValidationError

NOTE_KEY = re.compile(r'^(?:[A-Z][A-Z0-9_]*-[0-9]+|new:[0-9]+)$')
TEXT_FIELDS = ('work_kind', 'done_text', 'rest_text', 'owner_note')
COLUMNS = ('key',) + TEXT_FIELDS + ('updated_at', 'updated_by')
TEXT_MAX = 20000
KEY_MESSAGE = 'ожидается ключ задачи (AURORA-1) или временный ключ (new:1)'
AUTHOR_MAX = 200

_SELECT = f'SELECT {", ".join(COLUMNS)} FROM issue_note WHERE key = ?'


def _row(hub: Hub, key: str) -> dict | None:
    row = hub.db.execute_sql(_SELECT, (key,)).fetchone()
    return dict(zip(COLUMNS, row)) if row else None


def _check_key(key: object) -> str:
    if not isinstance(key, str) or NOTE_KEY.match(key) is None:
        raise ValidationError({'key': [KEY_MESSAGE]})
    return key


def note(hub: Hub, key: str) -> dict:
    """The note of ``key``; NotFoundError when the key has none."""
    _check_key(key)
    found = _row(hub, key)
    if found is None:
        raise NotFoundError(f'у {key} нет заметки')
    return found


def validate_changes(changes: object) -> dict[str, Any]:
    """Check a partial note change: known fields, texts ≤ 20,000 chars, ``updated_by`` required."""
    if not isinstance(changes, dict):
        raise ValidationError({'_body': ['ожидается объект заметки']})
    errors: dict[str, list[str]] = {}
    for name, value in changes.items():
        if name in TEXT_FIELDS:
            if value is not None and not isinstance(value, str):
                errors[name] = ['ожидается строка или null']
            elif value is not None and len(value) > TEXT_MAX:
                errors[name] = [f'длиннее {TEXT_MAX} символов']
        elif name != 'updated_by':
            errors[str(name)] = ['неизвестное поле заметки']
    author = changes.get('updated_by')
    if not isinstance(author, str) or not author.strip():
        errors['updated_by'] = ['обязательное поле: кто правит заметку']
    elif len(author) > AUTHOR_MAX:
        errors['updated_by'] = [f'длиннее {AUTHOR_MAX} символов']
    if errors:
        raise ValidationError(errors)
    return dict(changes)


def put_note(hub: Hub, key: str, changes: dict) -> dict:
    """Create or partially update the note of ``key``; ``updated_at`` = now."""
    _check_key(key)
    values = validate_changes(changes)
    values['updated_at'] = hub.now()
    names = list(values)
    with hub.write():
        hub.db.execute_sql(
            f'INSERT INTO issue_note (key, {", ".join(names)}) '
            f'VALUES (?, {", ".join("?" * len(names))}) '
            f'ON CONFLICT (key) DO UPDATE SET {", ".join(f"{n} = excluded.{n}" for n in names)}',
            [key] + [values[name] for name in names])
        return _row(hub, key)


def merge_note(hub: Hub, temp_key: str, real_key: str) -> None:
    """Move the note of ``temp_key`` to ``real_key``, merging with a note already there.

    Spec rule: each field comes from the temp note when it is non-empty there, else the real
    key's value stays; ``updated_at``/``updated_by`` come from the later note. Equal times are
    a tie the spec does not settle: the temp note wins, it is the one the user just worked on.
    """
    with hub.write():
        temp = _row(hub, temp_key)
        if temp is None or temp_key == real_key:
            return
        real = _row(hub, real_key)
        if real is None:
            hub.db.execute_sql('UPDATE issue_note SET key = ? WHERE key = ?', (real_key, temp_key))
            return
        merged = {name: temp[name] if temp[name] not in (None, '') else real[name]
                  for name in TEXT_FIELDS}
        later = temp if (temp['updated_at'] or '') >= (real['updated_at'] or '') else real
        merged['updated_at'] = later['updated_at']
        merged['updated_by'] = later['updated_by']
        names = list(merged)
        hub.db.execute_sql(
            f'UPDATE issue_note SET {", ".join(f"{n} = ?" for n in names)} WHERE key = ?',
            [merged[name] for name in names] + [real_key])
        hub.db.execute_sql('DELETE FROM issue_note WHERE key = ?', (temp_key,))
