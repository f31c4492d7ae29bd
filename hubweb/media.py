"""Request and response JSON of the Falcon app, and the helpers that turn a request into the
typed values hublib takes.

:func:`loads` is the JSON parser the app installs for request bodies, so values SQLite or the JSON
encoder cannot hold never reach hublib; :func:`dumps` writes responses.
"""
from __future__ import annotations

import json
import math
import re
import sys
from itertools import chain
from typing import Any, TypeVar

import falcon
import msgspec
import orjson
from marshmallow import Schema

from hublib.errors import NotFoundError, ValidationError
from hublib.validation import INT64_MAX, load

# --- JSON -----------------------------------------------------------------------------------------

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
    """Refuse nesting deeper than MAX_DEPTH; whether a float at least as large as a 64-bit
    integer was met (orjson reads an integer literal beyond 64 bits as such a float, the standard
    parser as an int).

    A level of the tree at a time, its values' types gathered by C loops (``map``, ``set``): a
    Python step per container, none per scalar (a history page of 1,000 items: 1.3 -> 0.3 ms). A
    level of objects alone is read straight from their values, and its children are listed only
    when some are containers or floats: the last level of a page (11,000 scalars of 1,000 items)
    is never copied into a list."""
    level, depth, wide, objects = [value], 1, False, type(value) is dict
    while level:
        if depth > MAX_DEPTH:
            raise _body_error(f'вложенность JSON глубже {MAX_DEPTH} уровней')
        if objects:
            children = None
            kinds = set(map(type, chain.from_iterable(map(_VALUES_OF, level))))
        else:
            children = list(chain.from_iterable(
                [item.values() if type(item) is dict else item for item in level]))
            kinds = set(map(type, children))
        if kinds.isdisjoint(_NOT_LEAVES):
            break
        if children is None:
            children = list(chain.from_iterable(map(_VALUES_OF, level)))
        if float in kinds:
            wide = wide or any(not -_WIDE < child < _WIDE for child in children
                               if type(child) is float)
        if dict in kinds or list in kinds:
            level = (children if kinds <= _CONTAINERS else
                     [child for child in children if type(child) is dict or type(child) is list])
            objects = list not in kinds
        else:
            level = []
        depth += 1
    return wide


_VALUES_OF = dict.values
_CONTAINERS = frozenset((dict, list))
_NOT_LEAVES = frozenset((dict, list, float))
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


def _parse(data: bytes) -> Any:
    """:func:`loads` with falcon's error for malformed JSON or UTF-8 (a 400; our 422s are
    HubErrors and pass)."""
    try:
        return loads(data)
    except ValueError as error:
        raise falcon.MediaMalformedError('JSON') from error


class JSONHandler(falcon.media.JSONHandler):
    """Falcon's JSON handler, reading the body as bytes into :func:`loads` (no decode to str
    first: orjson reads UTF-8 itself)."""

    def deserialize(self, stream, content_type: str | None, content_length: int | None) -> Any:
        data = stream.read()
        if not data:
            raise falcon.MediaNotFoundError('JSON')
        return _parse(data)


def dumps(value: Any) -> bytes:
    """Response JSON, compact UTF-8 by orjson: a slice page of 500 issues (650 KB) takes 0.3 ms
    instead of 4.8 ms with ``json.dumps``. Keys that are not strings are written as
    ``json.dumps`` writes them (``1`` → ``"1"``).

    orjson's option for such keys doubles its time on every dict (a page of 500 issues, 960 KiB:
    1.5 -> 3.0 ms), so it is used only for a value that has one (refused without it)."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


def json_handler() -> falcon.media.JSONHandler:
    """The JSON media handler of the app: :func:`loads` in, :func:`dumps` out."""
    return JSONHandler(loads=loads, dumps=dumps)


# --- requests -----------------------------------------------------------------------------------

T = TypeVar('T')


def media(req: falcon.Request) -> Any:
    """The JSON body (400 when it is not JSON; an empty body is ``None``)."""
    return req.get_media(default_when_empty=None)


def object_body(req: falcon.Request) -> dict:
    """The JSON body, which must be an object (hublib validates its fields)."""
    return _object(media(req))


def _object(body: Any) -> dict:
    if not isinstance(body, dict):
        raise ValidationError({'_body': ['ожидается JSON-объект']})
    return body


def typed_body(req: falcon.Request, kind: type[T]) -> T | dict:
    """The JSON body as a ``kind`` (a msgspec type of hublib: a page in the agent's usual shape),
    parsed and type-checked in one pass; a body that is not one: the same as
    :func:`object_body`, whose value, or error, hublib then judges with its general rules.

    Every limit of :func:`loads` holds: ``kind`` is a fixed tree of exact types (no unknown
    field, no float, no integer past 64 bits), and anything it does not take is parsed again the
    general way."""
    data = req.bounded_stream.read()
    try:
        return msgspec.json.decode(data, type=kind)
    except msgspec.MsgspecError:  # not that shape: the general way says what it is
        return _object(_parse(data) if data else None)


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
