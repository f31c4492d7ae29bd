"""Response schemas of the attachment endpoints (contract §8.4, §10)."""
from __future__ import annotations

from marshmallow import fields, validate

from hublib.statuses import ATTACHMENT_STATES as STATES

from . import integers, response, strings


def _state(**options) -> fields.String:
    return fields.String(validate=validate.OneOf(STATES), **options)


# PUT /agent/files/{sha256}: 201 when the file is new, 200 when it was there.
StoredFileSchema = response('StoredFile', strings('sha256', required=True),
                            created=fields.Boolean(required=True))
# GET /attachments/{id}: the mirror's metadata plus the state computed at read time.
AttachmentSchema = response(
    'Attachment', strings('attachment_id', required=True),
    strings('key filename mime_type author', allow_none=True), integers('size', allow_none=True),
    created=fields.String(allow_none=True, metadata={'description': 'время Jira как есть'}),
    created_at=fields.String(allow_none=True, metadata={'description': 'UTC'}),
    state=_state(required=True),
    error=fields.String(allow_none=True, metadata={'description': 'ошибка при state = failed'}),
    command_id=fields.Integer(metadata={'description': 'команда скачивания при state = fetching'}))
# 200: ready, or already fetching (with its command); 202: a new command was enqueued.
FetchAnswerSchema = response('FetchAnswer', integers('command_id'), state=_state(required=True))
