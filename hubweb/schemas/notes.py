"""Schemas of the note endpoints (contract §10). hublib checks the key and the texts."""
from __future__ import annotations

from marshmallow import Schema, fields, validate

TEXT = {'validate': validate.Length(max=20000), 'allow_none': True}


class NotePutSchema(Schema):
    work_kind = fields.String(**TEXT)
    done_text = fields.String(**TEXT)
    rest_text = fields.String(**TEXT)
    owner_note = fields.String(**TEXT)
    updated_by = fields.String(required=True)


class NoteSchema(Schema):
    key = fields.String(required=True)
    work_kind = fields.String(allow_none=True)
    done_text = fields.String(allow_none=True)
    rest_text = fields.String(allow_none=True)
    owner_note = fields.String(allow_none=True)
    updated_at = fields.String(allow_none=True)
    updated_by = fields.String(allow_none=True)
