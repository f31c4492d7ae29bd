"""Keyset pagination shared by every collection: opaque cursors and the page cut.

A cursor is the sort key of the last row of a page, JSON-encoded and base64url'd, so clients treat
it as an opaque string and the hub can change a collection's order without changing the API.
"""
from __future__ import annotations

import base64
import binascii
import json
from typing import Callable

from . import fields
from .errors import ValidationError
from .validation import INT64_MAX, INT64_MIN, Pattern

# The alphabet of a cursor (base64url, no padding), published so that a document reader knows a
# cursor is a token to pass back, not a value to build.
CURSOR_PATTERN = r'^[A-Za-z0-9_-]*$'
CURSOR_MESSAGE = 'неверный курсор'


def cursor_field() -> fields.String:
    """The ``cursor`` of a collection's query: a ``next_cursor`` the hub issued."""
    return fields.String(validate=Pattern(CURSOR_PATTERN, CURSOR_MESSAGE),
                         metadata={'description': 'next_cursor предыдущей страницы'})


def page_limit(value: object, default: int, maximum: int, *, name: str = 'limit',
               minimum: int = 1) -> int:
    """``limit`` (or another bounded count, ``name``) from a query string or a script:
    minimum..maximum, ``default`` when absent."""
    if value is None or value == '':
        return default
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() \
            and len(value.strip()) <= 9:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise ValidationError({name: [f'ожидается целое от {minimum} до {maximum}']})
    return value


def encode_cursor(values: list) -> str:
    """Opaque cursor of a sort key."""
    raw = json.dumps(values, ensure_ascii=False, separators=(',', ':')).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip('=')


def decode_cursor(value: object, shape: tuple[type | tuple[type, ...], ...]) -> list | None:
    """The sort key of a cursor whose values have the types of ``shape`` (an entry may be a tuple
    of types: one of them); ``None`` when absent."""
    if value is None or value == '':
        return None
    try:
        text = str(value)
        values = json.loads(base64.urlsafe_b64decode(text + '=' * (-len(text) % 4)))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        values = None
    if not (isinstance(values, list) and len(values) == len(shape) and all(
            type(v) in (t if isinstance(t, tuple) else (t,))
            and (type(v) is not int or INT64_MIN <= v <= INT64_MAX)
            for v, t in zip(values, shape))):
        raise ValidationError({'cursor': [CURSOR_MESSAGE]})
    return values


def page(rows: list, limit: int, cursor_of: Callable) -> tuple[list, str | None]:
    """The first ``limit`` of ``limit + 1`` fetched rows and the cursor of the next page."""
    if len(rows) > limit:
        rows = rows[:limit]
        return rows, encode_cursor(cursor_of(rows[-1]))
    return rows, None
