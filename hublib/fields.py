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


def _russian(marshmallow_class: type) -> type:
    """``marshmallow_class`` under its own name, with the hub's messages."""
    return type(marshmallow_class.__name__, (marshmallow_class,), {
        'default_error_messages': _messages(marshmallow_class), '__module__': __name__,
        '__doc__': f'marshmallow\'s {marshmallow_class.__name__} with Russian messages.'})


Field = _russian(marshmallow_fields.Field)
Raw = _russian(marshmallow_fields.Raw)
String = _russian(marshmallow_fields.String)
Integer = _russian(marshmallow_fields.Integer)
Float = _russian(marshmallow_fields.Float)
Boolean = _russian(marshmallow_fields.Boolean)
List = _russian(marshmallow_fields.List)
Dict = _russian(marshmallow_fields.Dict)
Nested = _russian(marshmallow_fields.Nested)


__all__ = ['FIELD_MESSAGES', 'Field', 'Raw', 'String', 'Integer', 'Float', 'Boolean', 'List',
           'Dict', 'Nested']
