"""A compact JSON Schema of any marshmallow schema: the MCP tools' ``outputSchema``.

The same response schemas give the OpenAPI document its components (through apispec); here they
give an assistant the shape of a tool's result in as few bytes as a client will read on every
session: types, ``required``, enums and nullability only. Descriptions, examples, formats and
validators stay in the OpenAPI document — the tool's own description says what the result means —
and every nested schema is written inline (no ``$ref``), so a result reads without a lookup.
Unknown keys are allowed (no ``additionalProperties: false``): a key hublib adds later reaches the
assistant before its schema does.
"""
from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

# Most specific first: a hub field (``hublib.validation.Int``) is found through its marshmallow base.
_TYPES: tuple[tuple[type[fields.Field], str], ...] = (
    (fields.Boolean, 'boolean'), (fields.Integer, 'integer'), (fields.Number, 'number'),
    (fields.String, 'string'), (fields.DateTime, 'string'), (fields.Date, 'string'),
    (fields.Mapping, 'object'), (fields.List, 'array'), (fields.Tuple, 'array'))


def json_schema(schema: Schema | type[Schema]) -> dict[str, Any]:
    """``{"type": "object", "properties": …, "required"?: …}`` of ``schema``'s dumped fields."""
    instance = schema() if isinstance(schema, type) else schema
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, field in instance.fields.items():
        if field.load_only:
            continue
        key = field.data_key or name
        properties[key] = field_schema(field)
        if field.required:
            required.append(key)
    result: dict[str, Any] = {'type': 'object', 'properties': properties}
    if required:
        result['required'] = required
    return result


def field_schema(field: fields.Field) -> dict[str, Any]:
    """The JSON Schema of one field's dumped value."""
    if isinstance(field, fields.Nested):
        inner = json_schema(field.schema)
        result = {'type': 'array', 'items': inner} if field.many else inner
    elif isinstance(field, fields.List):
        result = {'type': 'array', 'items': field_schema(field.inner)}
    else:
        kind = _type_of(field)
        result = {'type': kind} if kind else {}
        choices = _choices(field)
        if choices is not None:
            result['enum'] = choices
    if field.allow_none and result:
        kind = result.get('type')
        if kind is not None:
            result['type'] = [kind, 'null']
        if 'enum' in result and None not in result['enum']:
            result['enum'] = [*result['enum'], None]
    return result


def _type_of(field: fields.Field) -> str | None:
    declared = getattr(field, 'OPENAPI', None) or {}
    if isinstance(declared.get('type'), str):
        return declared['type']
    for cls, kind in _TYPES:
        if isinstance(field, cls):
            return kind
    return None  # fields.Raw and any other: any JSON value


def _choices(field: fields.Field) -> list | None:
    enum = field.metadata.get('enum')
    if enum is not None:
        return [choice for choice in enum if choice is not None]
    validators = field.validators if isinstance(field.validators, list) else [field.validators]
    for validator in validators:
        if isinstance(validator, validate.OneOf):
            return list(validator.choices)
    return None
