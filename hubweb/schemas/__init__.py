"""Response schemas (documentation of what hublib returns), one module per feature, and the
helpers that turn an HTTP request into the typed values hublib takes.

Input schemas are not here: hublib owns validation (``hublib.validation`` and the schemas next to
each rule), and the OpenAPI document is generated from those very schemas. :func:`loads` is the
JSON parser the app installs for request bodies, so values SQLite or the JSON encoder cannot hold
never reach hublib.
"""
from __future__ import annotations

import json
import math
import sys
import re
from typing import Any

import falcon
import orjson
from marshmallow import Schema, fields

from hublib.errors import NotFoundError, ValidationError
from hublib.validation import INT64_MAX, load

# --- request JSON --------------------------------------------------------------------------------

# Python converts at most this many digits of an integer literal (sys.get_int_max_str_digits).
MAX_INT_DIGITS = sys.get_int_max_str_digits()
# Deeper than any payload of the contract (an agent's boards are 5 levels) yet far from the
# recursion limit of the JSON encoder and of validators that walk the value.
MAX_DEPTH = 32
_ESCAPED_SURROGATE = re.compile(r'\\u[dD][89a-fA-F]')


def _body_error(message: str) -> ValidationError:
    return ValidationError({'_body': [message]})


def _parse_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _body_error('число вне допустимого диапазона')
    return number


def _parse_constant(name: str) -> float:
    raise _body_error(f'{name} не допускается в JSON')


def _check_depth(value: Any) -> bool:
    """Refuse nesting deeper than MAX_DEPTH (the containers are walked, never the scalars);
    whether a float at least as large as a 64-bit integer was met (orjson reads an integer
    literal beyond 64 bits as such a float, the standard parser as an int)."""
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    wide = False
    while stack:
        item, depth = pop()
        if depth > MAX_DEPTH:
            raise _body_error(f'вложенность JSON глубже {MAX_DEPTH} уровней')
        for child in (item.values() if type(item) is dict else item):
            kind = type(child)
            if kind is dict or kind is list:
                push((child, depth + 1))
            elif kind is float and not -_WIDE < child < _WIDE:
                wide = True
    return wide


_WIDE = float(INT64_MAX)  # rounds up to the first integer beyond 64 bits


def _check_surrogates(value: Any) -> None:
    """Refuse strings (keys included) with a lone UTF-16 surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if any(_has_surrogate(key) for key in item):
                raise falcon.HTTPBadRequest(title='Неверный запрос', description=SURROGATE_MESSAGE)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and _has_surrogate(item):
            raise falcon.HTTPBadRequest(title='Неверный запрос', description=SURROGATE_MESSAGE)


SURROGATE_MESSAGE = 'строка в JSON содержит одиночный суррогат \\uD800–\\uDFFF: это не текст UTF-8'


def _has_surrogate(text: str) -> bool:
    return any('\ud800' <= ch <= '\udfff' for ch in text)


def loads(data: bytes | str) -> Any:
    """Parse a request body: JSON that SQLite and UTF-8 can hold, else an error.

    Integers of more than ``MAX_INT_DIGITS`` digits, non-finite numbers and nesting deeper than
    ``MAX_DEPTH`` → 422 (``_body``); a lone UTF-16 surrogate escape (``"\\ud800"``) → 400 like
    any other non-UTF-8 body; malformed JSON → ValueError (400).

    orjson parses first (a history page of 1,000 items: 0.6 ms instead of 1.5 ms with the
    standard parser). Whatever it refuses (malformed JSON, but also NaN, 1e400, lone surrogates,
    integers beyond 64 bits, nesting past 1,024), and any value it may read differently (a float
    of 64-bit integer size, which may have been such an integer), goes through the standard
    parser, whose answer, value or error, is the one given: both read every other JSON text alike.
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _standard_loads(data)
    kind = type(value)
    if kind is dict or kind is list:
        if _check_depth(value):
            return _standard_loads(data)
    elif kind is float and not -_WIDE < value < _WIDE:
        return _standard_loads(data)
    return value


def _standard_loads(data: bytes | str) -> Any:
    """The standard library's parser with the same limits (the precise errors)."""
    text = data.decode() if isinstance(data, bytes) else data  # UnicodeDecodeError: a 400
    try:
        # no parse_int hook: one Python call per integer would cost a page of history ~1 ms
        value = json.loads(text, parse_float=_parse_float, parse_constant=_parse_constant)
    except RecursionError:
        raise _body_error(f'вложенность JSON глубже {MAX_DEPTH} уровней') from None
    except ValueError as error:
        if 'digits' in str(error):  # Python's own limit on converting a huge integer literal
            raise _body_error(f'целое число длиннее {MAX_INT_DIGITS} цифр') from None
        raise
    if type(value) is dict or type(value) is list:
        _check_depth(value)
    if _ESCAPED_SURROGATE.search(text):
        _check_surrogates(value)
    return value


class JSONHandler(falcon.media.JSONHandler):
    """Falcon's JSON handler, reading the body as bytes into :func:`loads` (no decode to str
    first: orjson reads UTF-8 itself)."""

    def deserialize(self, stream, content_type: str | None, content_length: int | None) -> Any:
        data = stream.read()
        if not data:
            raise falcon.MediaNotFoundError('JSON')
        try:
            return loads(data)
        except ValueError as error:  # malformed JSON or UTF-8 (not our 422s: HubError)
            raise falcon.MediaMalformedError('JSON') from error


def dumps(value: Any) -> bytes:
    """Response JSON, compact UTF-8 by orjson: a slice page of 500 issues (650 KB) takes 0.3 ms
    instead of 4.8 ms with ``json.dumps``. Keys that are not strings are written as
    ``json.dumps`` writes them (``1`` → ``"1"``)."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


def json_handler() -> falcon.media.JSONHandler:
    """The JSON media handler of the app: :func:`loads` in, :func:`dumps` out."""
    return JSONHandler(loads=loads, dumps=dumps)


# --- schemas and loading helpers -------------------------------------------------------------------

class ErrorSchema(Schema):
    """The error body of every 4xx/5xx (contract §13)."""

    title = fields.String(required=True)
    description = fields.String(allow_none=True)
    fields = fields.Dict(keys=fields.String(), values=fields.List(fields.String()))


def media(req: falcon.Request) -> Any:
    """The JSON body (400 when it is not JSON; an empty body is ``None``)."""
    return req.get_media(default_when_empty=None)


def object_body(req: falcon.Request) -> dict:
    """The JSON body, which must be an object (hublib validates its fields)."""
    body = media(req)
    if not isinstance(body, dict):
        raise ValidationError({'_body': ['ожидается JSON-объект']})
    return body


_NO_BODY = object()


def optional_object_body(req: falcon.Request) -> dict:
    """An optional JSON body: ``{}`` when there is none, else a body that must be an object
    (malformed JSON 400, ``null``, ``[]`` or a string 422), like every other body."""
    body = req.get_media(default_when_empty=_NO_BODY)
    if body is _NO_BODY:
        return {}
    if not isinstance(body, dict):
        raise ValidationError({'_body': ['ожидается JSON-объект']})
    return body


def load_query(schema: type[Schema], req: falcon.Request) -> dict[str, Any]:
    """The query string as the typed values of ``schema`` (a hublib query schema).

    An unknown parameter (``?stauts=``) and a name given twice (``?agent=jira&agent=wiki``) are a
    422 naming it, instead of being ignored and answering an unfiltered list.
    """
    repeated = {name: ['параметр указан несколько раз'] for name, value in req.params.items()
                if isinstance(value, list)}
    if repeated:
        raise ValidationError(repeated)
    return load(schema, dict(req.params))


def path_int(value: str, not_found: str) -> int:
    """A numeric path segment (an id) as an int; anything else is a 404 with ``not_found``."""
    if value.isascii() and value.isdecimal() and len(value) <= 19 and 0 < int(value) <= INT64_MAX:
        return int(value)
    raise NotFoundError(not_found.format(value))



# --- building the response schemas ---------------------------------------------------------------
# Responses are documentation of what hublib returns: many fields of a few kinds. These build a
# schema from field names by kind, so a schema reads as the list of its fields.

def strings(names: str, **options) -> dict[str, fields.Field]:
    """String fields, one per name in ``names`` (space separated)."""
    return {name: fields.String(**options) for name in names.split()}


def integers(names: str, **options) -> dict[str, fields.Field]:
    """Integer fields, one per name in ``names`` (space separated)."""
    return {name: fields.Integer(**options) for name in names.split()}


def response(name: str, *parts: dict[str, fields.Field], base: type[Schema] = Schema,
             **named: fields.Field) -> type[Schema]:
    """A response schema called ``name`` (its component name) with the fields of ``parts``."""
    declared: dict[str, fields.Field] = {}
    for part in parts:
        declared.update(part)
    declared.update(named)
    return base.from_dict(declared, name=name)


def page_of(name: str, item: type[Schema], *, paged: bool = True,
            **named: fields.Field) -> type[Schema]:
    """A collection answer ``{items: [item], next_cursor}`` (contract §10), with ``named``
    fields beside them."""
    listed = {'items': fields.List(fields.Nested(item), required=True)}
    if paged:
        listed['next_cursor'] = fields.String(allow_none=True)
    return response(name, listed, **named)
