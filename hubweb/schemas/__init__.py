"""Request/response schemas (marshmallow), one module per feature, and the loading helpers.

Schemas validate small request bodies and query strings at the edge and document every endpoint
in the OpenAPI document. Hot agent paths pass the raw JSON to hublib, which validates it in plain
Python; their schemas here exist for the document only.

Importing this package also does two things for every feature at once: marshmallow's built-in
messages become Russian (contract §13: users read Russian), and :func:`loads` is the JSON parser
the app installs for request bodies, so values SQLite or the JSON encoder cannot hold never reach
hublib.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

import falcon
import marshmallow
from marshmallow import Schema, fields, validate

from hublib.errors import ValidationError

# --- Russian messages for marshmallow ------------------------------------------------------------
# Patched on the classes themselves (not a base Schema) so that every feature's schemas get them,
# including ones written against plain ``marshmallow.Schema``.

FIELD_MESSAGES: dict[type, dict[str, str]] = {
    fields.Field: {'null': 'значение не может быть null', 'required': 'обязательное поле',
                   'validator_failed': 'неверное значение'},
    fields.String: {'invalid': 'ожидается строка', 'invalid_utf8': 'ожидается строка UTF-8'},
    fields.Number: {'invalid': 'ожидается число', 'too_large': 'слишком большое число'},
    fields.Integer: {'invalid': 'ожидается целое число'},
    fields.Float: {'special': 'NaN и бесконечность не допускаются'},
    fields.Decimal: {'special': 'NaN и бесконечность не допускаются'},
    fields.Boolean: {'invalid': 'ожидается true или false'},
    fields.List: {'invalid': 'ожидается список'},
    fields.Tuple: {'invalid': 'ожидается список'},
    fields.Mapping: {'invalid': 'ожидается объект'},
    fields.Nested: {'type': 'ожидается объект'},
    fields.Date: {'invalid': 'ожидается дата ГГГГ-ММ-ДД', 'format': 'неверная дата'},
    fields.DateTime: {'invalid': 'ожидаются дата и время ISO-8601', 'format': 'неверные дата и время'},
    fields.Email: {'invalid': 'неверный адрес почты'},
    fields.Url: {'invalid': 'неверный URL'},
    fields.UUID: {'invalid_uuid': 'неверный UUID'},
    fields.Enum: {'unknown': 'ожидается одно из: {choices}'},
}
SCHEMA_MESSAGES = {'type': 'ожидается JSON-объект', 'unknown': 'неизвестное поле'}
VALIDATOR_MESSAGES: dict[type, dict[str, str]] = {
    validate.Range: {'message_min': 'должно быть {min_op} {{min}}',
                     'message_max': 'должно быть {max_op} {{max}}',
                     'message_all': 'должно быть {min_op} {{min}} и {max_op} {{max}}',
                     'message_gte': 'не меньше', 'message_gt': 'больше',
                     'message_lte': 'не больше', 'message_lt': 'меньше'},
    validate.Length: {'message_min': 'длина меньше {min}', 'message_max': 'длина больше {max}',
                      'message_all': 'длина должна быть от {min} до {max}',
                      'message_equal': 'длина должна быть {equal}'},
    validate.OneOf: {'default_message': 'ожидается одно из: {choices}'},
    validate.NoneOf: {'default_message': 'недопустимое значение'},
    validate.Equal: {'default_message': 'ожидается {other}'},
    validate.Regexp: {'default_message': 'строка не подходит под шаблон'},
    validate.Predicate: {'default_message': 'неверное значение'},
    validate.ContainsOnly: {'default_message': 'допустимы только: {choices}'},
    validate.ContainsNoneOf: {'default_message': 'недопустимы: {values}'},
    validate.URL: {'default_message': 'неверный URL'},
    validate.Email: {'default_message': 'неверный адрес почты'},
}


def _russify() -> None:
    for cls, messages in FIELD_MESSAGES.items():
        # Assign a copy on the class itself: a subclass without its own dict must not share ours.
        cls.default_error_messages = {**cls.__dict__.get('default_error_messages', {}), **messages}
    marshmallow.Schema._default_error_messages = {
        **marshmallow.Schema._default_error_messages, **SCHEMA_MESSAGES}
    for cls, attributes in VALIDATOR_MESSAGES.items():
        for name, text in attributes.items():
            setattr(cls, name, text)


_russify()


# --- request JSON --------------------------------------------------------------------------------

# SQLite stores signed 64-bit integers; a bigger JSON integer could only end as an OverflowError
# deep in hublib, so it is refused at parse time (as is a number with more digits than Python
# converts by default).
INT_MIN, INT_MAX = -2**63, 2**63 - 1
# Deeper than any payload of the contract (an agent's boards are 5 levels) yet far from the
# recursion limit of the JSON encoder and of validators that walk the value.
MAX_DEPTH = 32
_ESCAPED_SURROGATE = re.compile(r'\\u[dD][89a-fA-F]')


def _body_error(message: str) -> ValidationError:
    return ValidationError({'_body': [message]})


def _parse_int(text: str) -> int:
    if len(text) > 20:
        raise _body_error('целое число вне диапазона 64 бит')
    number = int(text)
    if not INT_MIN <= number <= INT_MAX:
        raise _body_error('целое число вне диапазона 64 бит')
    return number


def _parse_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _body_error('число вне допустимого диапазона')
    return number


def _parse_constant(name: str) -> float:
    raise _body_error(f'{name} не допускается в JSON')


def _check_shape(value: Any, check_strings: bool) -> None:
    """Refuse nesting deeper than MAX_DEPTH and (when asked) strings with lone surrogates."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
            if check_strings and any(_has_surrogate(key) for key in item):
                raise falcon.HTTPBadRequest(title='Неверный запрос', description=SURROGATE_MESSAGE)
        elif isinstance(item, list):
            children = item
        else:
            if check_strings and isinstance(item, str) and _has_surrogate(item):
                raise falcon.HTTPBadRequest(title='Неверный запрос', description=SURROGATE_MESSAGE)
            continue
        if depth > MAX_DEPTH:
            raise _body_error(f'вложенность JSON глубже {MAX_DEPTH} уровней')
        for child in children:
            if isinstance(child, (dict, list)) or (check_strings and isinstance(child, str)):
                stack.append((child, depth + 1))


SURROGATE_MESSAGE = 'строка в JSON содержит одиночный суррогат \\uD800–\\uDFFF: это не текст UTF-8'


def _has_surrogate(text: str) -> bool:
    return any('\ud800' <= ch <= '\udfff' for ch in text)


def loads(text: str) -> Any:
    """Parse a request body: ``json.loads`` that refuses what SQLite or UTF-8 cannot hold.

    Out-of-range or non-finite numbers and nesting deeper than ``MAX_DEPTH`` → 422 (``_body``);
    a lone UTF-16 surrogate escape (``"\\ud800"``) → 400 like any other non-UTF-8 body.
    """
    try:
        value = json.loads(text, parse_int=_parse_int, parse_float=_parse_float,
                           parse_constant=_parse_constant)
    except RecursionError:
        raise _body_error(f'вложенность JSON глубже {MAX_DEPTH} уровней') from None
    if isinstance(value, (dict, list)) or _ESCAPED_SURROGATE.search(text):
        _check_shape(value, check_strings=_ESCAPED_SURROGATE.search(text) is not None)
    return value


def json_handler() -> falcon.media.JSONHandler:
    """The JSON media handler of the app: :func:`loads` in, UTF-8 JSON out."""
    return falcon.media.JSONHandler(loads=loads,
                                    dumps=lambda obj: json.dumps(obj, ensure_ascii=False))


# --- schemas and loading helpers -------------------------------------------------------------------

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
            for field_name, msgs in (flatten_errors(value, name)
                                     if isinstance(value, (Mapping, list))
                                     else {name: [str(value)]}).items():
                flat.setdefault(field_name, []).extend(msgs)
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


def object_body(req: falcon.Request) -> dict:
    """The JSON body, which must be an object (hot agent paths hand it to hublib as is)."""
    body = media(req)
    if not isinstance(body, dict):
        raise ValidationError({'_body': ['ожидается JSON-объект']})
    return body


def query_values(req: falcon.Request, names: tuple[str, ...]) -> dict[str, Any]:
    """The raw values of the named query parameters that are present (hublib checks them)."""
    return {name: req.params[name] for name in names if name in req.params}


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


def _is_multiple(field: fields.Field) -> bool:
    return isinstance(field, (fields.List, fields.Tuple))


def load_query(schema: type[Schema] | Schema, req: falcon.Request) -> dict:
    """Validate the query string with ``schema``.

    A name given twice (``?agent=jira&agent=wiki``) is a 422 naming it, unless the schema's
    field is a list, which then gets every value (and a single value as a one-item list).
    """
    instance = schema() if isinstance(schema, type) else schema
    data: dict[str, Any] = {}
    repeated: dict[str, list[str]] = {}
    for name, value in req.params.items():
        field = instance.fields.get(name)
        if field is not None and _is_multiple(field):
            data[name] = value if isinstance(value, list) else [value]
        elif isinstance(value, list):
            repeated[name] = ['параметр указан несколько раз']
        else:
            data[name] = value
    if repeated:
        raise ValidationError(repeated)
    return load_data(instance, data)
