"""Response schema of the note endpoints (contract §10); the body is hublib's ``notes.NoteChange``."""
from __future__ import annotations

from . import response, strings

NoteSchema = response('Note', strings('key', required=True),
                      strings('work_kind done_text rest_text owner_note updated_at updated_by',
                              allow_none=True))
