"""Schemas of the attachment endpoints (contract §8.4, §10)."""
from __future__ import annotations

from marshmallow import Schema, fields, validate

STATES = ('ready', 'fetching', 'failed', 'none')


class StoredFileSchema(Schema):
    """Answer of ``PUT /agent/files/{sha256}``: 201 when the file is new, 200 when it was there."""

    sha256 = fields.String(required=True)
    created = fields.Boolean(required=True)


class AttachmentSchema(Schema):
    """``GET /attachments/{id}``: the mirror's metadata plus the state computed at read time."""

    attachment_id = fields.String(required=True)
    key = fields.String(allow_none=True)
    filename = fields.String(allow_none=True)
    size = fields.Integer(allow_none=True)
    mime_type = fields.String(allow_none=True)
    author = fields.String(allow_none=True)
    created = fields.String(allow_none=True, metadata={'description': 'время Jira как есть'})
    created_at = fields.String(allow_none=True, metadata={'description': 'UTC'})
    state = fields.String(required=True, validate=validate.OneOf(STATES))
    error = fields.String(allow_none=True, metadata={'description': 'ошибка при state = failed'})
    command_id = fields.Integer(metadata={'description': 'команда скачивания при state = fetching'})


class FetchAnswerSchema(Schema):
    """200: ready, or already fetching (with its command); 202: a new command was enqueued."""

    state = fields.String(required=True, validate=validate.OneOf(STATES))
    command_id = fields.Integer()
