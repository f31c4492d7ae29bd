"""marshmallow's field classes as the hub uses them: the same classes with Russian messages.

Every schema field of the hub is one of these (or a subclass in ``hublib.validation``), so a
refused value is named in Russian on every road; marshmallow's own classes keep their messages
for any other library in the process (STYLE 16). ``FIELD_MESSAGES`` is the table they are made
from, keyed by marshmallow's class (the MCP adapter reuses it for its argument errors).
"""
from __future__ import annotations

from marshmallow import fields as marshmallow_fields

# The messages of each marshmallow class, applied to the hub's subclass of it and of its
# subclasses (a hub Integer has the Field, Number and Integer messages, the last one winning).
FIELD_MESSAGES: dict[type, dict[str, str]] = {
    marshmallow_fields.Field: {'null': 'значение не может быть null',
                               'required': 'обязательное поле',
                               'validator_failed': 'неверное значение'},
    marshmallow_fields.String: {'invalid': 'ожидается строка',
                                'invalid_utf8': 'ожидается строка UTF-8'},
    marshmallow_fields.Number: {'invalid': 'ожидается число', 'too_large': 'слишком большое число'},
    marshmallow_fields.Integer: {'invalid': 'ожидается целое число'},
    marshmallow_fields.Float: {'special': 'NaN и бесконечность не допускаются'},
    marshmallow_fields.Boolean: {'invalid': 'ожидается true или false'},
    marshmallow_fields.List: {'invalid': 'ожидается список'},
    marshmallow_fields.Mapping: {'invalid': 'ожидается объект'},
    marshmallow_fields.Nested: {'type': 'ожидается объект'},
}


def _messages(marshmallow_class: type) -> dict[str, str]:
    """The hub's messages for ``marshmallow_class``: those of the class and its ancestors."""
    return {key: text for cls in reversed(marshmallow_class.__mro__)
            for key, text in FIELD_MESSAGES.get(cls, {}).items()}


class Field(marshmallow_fields.Field):
    default_error_messages = _messages(marshmallow_fields.Field)


class Raw(marshmallow_fields.Raw):
    default_error_messages = _messages(marshmallow_fields.Raw)


class String(marshmallow_fields.String):
    default_error_messages = _messages(marshmallow_fields.String)


class Integer(marshmallow_fields.Integer):
    default_error_messages = _messages(marshmallow_fields.Integer)


class Float(marshmallow_fields.Float):
    default_error_messages = _messages(marshmallow_fields.Float)


class Boolean(marshmallow_fields.Boolean):
    default_error_messages = _messages(marshmallow_fields.Boolean)


class List(marshmallow_fields.List):
    default_error_messages = _messages(marshmallow_fields.List)


class Dict(marshmallow_fields.Dict):
    default_error_messages = _messages(marshmallow_fields.Dict)


class Nested(marshmallow_fields.Nested):
    default_error_messages = _messages(marshmallow_fields.Nested)


__all__ = ['FIELD_MESSAGES', 'Field', 'Raw', 'String', 'Integer', 'Float', 'Boolean', 'List',
           'Dict', 'Nested']
