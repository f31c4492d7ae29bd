"""Tool arguments as the assistant sees them and as the hub reports them.

The SDK derives each tool's input schema from its signature and checks the types with pydantic;
:func:`compact_input` trims that schema to what a client needs (no titles, ``null`` as a type
instead of an ``anyOf``), and :func:`argument_errors` turns pydantic's refusals into the hub's
422 body: Russian messages by argument name, the words hublib's own validation uses.
"""
from typing import Any

import pydantic
from marshmallow import fields as marshmallow_fields

from hublib.errors import ValidationError
from hublib.validation import FIELD_MESSAGES

UNKNOWN_ARGUMENT = 'неизвестный аргумент'
_MESSAGES = {
    'missing': FIELD_MESSAGES[marshmallow_fields.Field]['required'],
    'string_type': FIELD_MESSAGES[marshmallow_fields.String]['invalid'],
    'bool_type': FIELD_MESSAGES[marshmallow_fields.Boolean]['invalid'],
    'int_type': FIELD_MESSAGES[marshmallow_fields.Integer]['invalid'],
    'list_type': FIELD_MESSAGES[marshmallow_fields.List]['invalid'],
    'dict_type': FIELD_MESSAGES[marshmallow_fields.Mapping]['invalid'],
}
_BOUNDS = {'greater_than_equal': 'должно быть не меньше {ge}',
           'less_than_equal': 'должно быть не больше {le}'}


def argument_errors(error: pydantic.ValidationError) -> ValidationError:
    """The SDK's check of argument types as the hub's 422: Russian messages by argument name."""
    fields: dict[str, list[str]] = {}
    for item in error.errors():
        # Arguments are scalars (or Any, checked by hublib): the first part names the argument,
        # the rest would only be pydantic's member tags of a union (``attachment_id.str``).
        name = str(item['loc'][0]) if item['loc'] else '_arguments'
        if item['type'] in _BOUNDS:
            message = _BOUNDS[item['type']].format(**item.get('ctx', {}))
        else:
            message = _MESSAGES.get(item['type'],
                                    FIELD_MESSAGES[marshmallow_fields.Field]['validator_failed'])
        if message not in fields.setdefault(name, []):
            fields[name].append(message)
    return ValidationError(fields)


def compact_input(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema without pydantic's titles and ``"default": null``, with ``{"type": [t,
    "null"]}`` for optional scalars: the same constraints in fewer bytes (every client reads the
    whole tool list)."""
    schema = {key: value for key, value in schema.items() if key != 'title'}
    properties = {}
    for name, prop in schema.get('properties', {}).items():
        prop = {key: value for key, value in prop.items() if key != 'title'}
        variants = prop.get('anyOf')
        if variants and len(variants) == 2 and {'type': 'null'} in variants:
            (other,) = [variant for variant in variants if variant != {'type': 'null'}]
            if isinstance(other.get('type'), str):
                del prop['anyOf']
                prop = {**other, **prop, 'type': [other['type'], 'null']}
        if 'default' in prop and prop['default'] is None:
            del prop['default']  # not required already says it may be left out
        properties[name] = prop
    if 'properties' in schema:
        schema['properties'] = properties
    return schema
