"""Service notes: fields Jira does not have, kept per issue key (spec «Служебные заметки»).

Only interfaces (``put_note``) and the queue (``merge_note`` when an ``ensure_issue`` with a temp
key finishes) write ``issue_note``; mirror writes never touch it.
"""
from __future__ import annotations

from typing import Any, Mapping

from . import fields, validators
from .db import Hub
from .errors import NotFoundError
from .models import IssueNote
from .validation import (NOT_BLANK_PATTERN, Pattern, Schema, Text, issue_or_temp_key_field, load,
                         lookup_key)

TEXT_FIELDS = ('work_kind', 'done_text', 'rest_text', 'owner_note')
TEXT_MAX = 20000
AUTHOR_MAX = 200

# Body of ``PUT /notes/{key}``: a partial change of the texts, and who makes it.
NoteChange = Schema.from_dict({
    **{name: Text(max_length=TEXT_MAX, allow_none=True) for name in TEXT_FIELDS},
    'updated_by': fields.String(required=True, validate=[
        validators.Length(max=AUTHOR_MAX), Pattern(NOT_BLANK_PATTERN, 'укажите, кто правит заметку')]),
}, name='NoteChange')
NoteKey = Schema.from_dict({'key': issue_or_temp_key_field(required=True)}, name='NoteKey')


def _checked_key(key: str) -> str:
    """A Jira key (in Jira's case, whatever case it was typed in) or a temp key."""
    return load(NoteKey, {'key': lookup_key(key)})['key']


def _row(hub: Hub, key: str) -> dict | None:
    found = IssueNote.select().where(IssueNote.key == key).dicts().execute(hub.db)
    return found[0] if found else None


def note(hub: Hub, key: str) -> dict:
    """The note of ``key`` (a Jira key or a temp key); NotFoundError when the key has none."""
    key = _checked_key(key)
    found = _row(hub, key)
    if found is None:
        raise NotFoundError(f'у {key} нет заметки')
    return found


def put_note(hub: Hub, key: str, changes: Mapping[str, Any]) -> dict:
    """Create or partially update the note of ``key``; ``updated_at`` = now."""
    key = _checked_key(key)
    values = {**load(NoteChange, changes, what='объект заметки'), 'updated_at': hub.now()}
    with hub.write():
        (IssueNote.insert(key=key, **values)
         .on_conflict(conflict_target=[IssueNote.key], preserve=list(values))
         .execute(hub.db))
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
            IssueNote.update(key=real_key).where(IssueNote.key == temp_key).execute(hub.db)
            return
        merged = {name: temp[name] if temp[name] not in (None, '') else real[name]
                  for name in TEXT_FIELDS}
        later = temp if (temp['updated_at'] or '') >= (real['updated_at'] or '') else real
        merged['updated_at'] = later['updated_at']
        merged['updated_by'] = later['updated_by']
        IssueNote.update(**merged).where(IssueNote.key == real_key).execute(hub.db)
        IssueNote.delete().where(IssueNote.key == temp_key).execute(hub.db)


__all__ = ['NoteChange', 'NoteKey', 'note', 'put_note', 'merge_note', 'TEXT_FIELDS', 'TEXT_MAX']
