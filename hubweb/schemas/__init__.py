"""Request/response schemas (marshmallow), one module per feature, and the loading helpers.

Schemas validate small request bodies and query strings at the edge and document every endpoint
in the OpenAPI document. Hot agent paths pass the raw JSON to hublib, which validates it in plain
Python; their schemas here exist for the document only.
"""
from __future__ import annotations

from typing import Any, Mapping

import falcon
import marshmallow
from marshmallow import Schema, fields

from hublib.errors import ValidationError


class ErrorSchema(Schema):
    """The error body of every 4xx/5xx (contract §13)."""

    title = fields.String(required=True)
    description = fields.String(allow_none=True)
    fields = fields.Dict(keys=fields.String(), values=fields.List(fields.String()))


def flatten_errors(messages: Any, prefix: str = '') -> dict[str, list[str]]:
    """marshmallow's nested error dict as ``{"commands[0].params.key": [...]}``."""
    flat: dict[str, list[str]] = {}
    if isinstance(messages, Mapping):
        for key, value in messages.items():
            if key == '_schema':
                name = prefix or '_body'
            elif isinstance(key, int):
                name = f'{prefix}[{key}]'
            else:
                name = f'{prefix}.{key}' if prefix else str(key)
            flat.update(flatten_errors(value, name) if isinstance(value, (Mapping, list)) else
                        {name: [str(value)]})
        return flat
    if isinstance(messages, list) and all(isinstance(item, str) for item in messages):
        return {prefix or '_body': list(messages)}
    if isinstance(messages, list):
        for item in messages:
            for name, msgs in flatten_errors(item, prefix).items():
                flat.setdefault(name, []).extend(msgs)
        return flat
    return {prefix or '_body': [str(messages)]}


def media(req: falcon.Request) -> Any:
    """The JSON body (400 when it is not JSON; an empty body is ``None``)."""
    return req.get_media(default_when_empty=None)


def load(schema: type[Schema] | Schema, req: falcon.Request) -> dict:
    """Validate the JSON body with ``schema``; errors become a 422 naming each field."""
    return load_data(schema, media(req))


def load_data(schema: type[Schema] | Schema, data: Any) -> dict:
    """Validate already-parsed data with ``schema``."""
    instance = schema() if isinstance(schema, type) else schema
    if not isinstance(data, Mapping):
        raise ValidationError({'_body': ['ожидается JSON-объект']})
    try:
        return instance.load(data)
    except marshmallow.ValidationError as error:
        raise ValidationError(flatten_errors(error.messages)) from None


def load_query(schema: type[Schema] | Schema, req: falcon.Request) -> dict:
    """Validate the query string with ``schema`` (repeated names stay lists)."""
    return load_data(schema, dict(req.params))
