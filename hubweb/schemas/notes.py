"""Response schema of the note endpoints (contract §10); the body is hublib's ``notes.NoteChange``."""
from __future__ import annotations

from marshmallow import Schema, fields


class NoteSchema(Schema):
    key = fields.String(required=True)
    work_kind = fields.String(allow_none=True)
    done_text = fields.String(allow_none=True)
    rest_text = fields.String(allow_none=True)
    owner_note = fields.String(allow_none=True)
    updated_at = fields.String(allow_none=True)
    updated_by = fields.String(allow_none=True)
