"""The error body of every 4xx/5xx (contract §13): the HTTP API's response and the MCP tools'
``isError`` text, decided here once for both adapters."""
from __future__ import annotations

from marshmallow import Schema, fields

from hublib.errors import HubError, ValidationError

INTERNAL = {'title': 'Внутренняя ошибка',
            'description': 'Внутренняя ошибка хаба; подробности в журнале сервера.'}


class ErrorSchema(Schema):
    """The error body of every 4xx/5xx (contract §13)."""

    title = fields.String(required=True)
    description = fields.String(allow_none=True)
    fields = fields.Dict(keys=fields.String(), values=fields.List(fields.String()))


def error_body(error: HubError) -> dict:
    """``{"title", "description", "fields"?}`` of a hub error."""
    body = {'title': error.title, 'description': error.message}
    if isinstance(error, ValidationError):
        body['fields'] = error.fields
    return body
