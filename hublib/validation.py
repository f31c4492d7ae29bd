"""Validation of every input the hub takes: marshmallow schemas, the fields they share, one loader.

hublib owns validation, so scripts, the HTTP adapter and the MCP server all meet the same rules and
the same Russian messages; the adapters also generate their documents (OpenAPI, tool schemas) from
these schemas, so what is documented is what is enforced.

Fields here are strict about JSON types (an integer field takes no ``"5"`` and no ``true``) because
bodies are JSON. Query schemas use the lenient twins (``LenientInt``, ``fields.Boolean``)
that also accept the strings a URL carries.

Every custom field carries ``OPENAPI``: the JSON-schema keywords it enforces, so the document says
exactly what the field accepts without this module knowing about any document generator.
"""
from __future__ import annotations

import math
import re
import threading
from datetime import date, datetime, timezone, tzinfo
from typing import Any, Callable, Mapping

import marshmallow

from . import fields, validators
from .errors import ValidationError
from .fields import FIELD_MESSAGES
from .timeutil import parse_utc, time_zone, to_utc

# SQLite stores signed 64-bit integers: the one definition of the bound every integer input obeys.
INT64_MIN, INT64_MAX = -2 ** 63, 2 ** 63 - 1

ISSUE_KEY_PATTERN = r'^[A-Z][A-Z0-9_]*-[0-9]+$'
TEMP_KEY_PATTERN = r'^new:[0-9]+$'
ISSUE_KEY = re.compile(ISSUE_KEY_PATTERN)
TEMP_KEY = re.compile(TEMP_KEY_PATTERN)
ISSUE_KEY_MESSAGE = 'ожидается ключ задачи Jira, например AURORA-1'


# A key as a person types it: Jira's shape in any (ASCII) case.
LOOKUP_KEY = re.compile(r'[A-Za-z][A-Za-z0-9_]*-[0-9]+')
LOOKUP_KEY_PATTERN = r'^(?:[A-Za-z][A-Za-z0-9_]*-[0-9]+|new:[0-9]+)$'


def lookup_key(value: object) -> object:
    """A key to look up, in Jira's case: ``aurora-1`` → ``AURORA-1`` (Jira keys are upper-case).

    A temp key (``new:5``) and anything else come back unchanged, for the caller's validation
    to judge.
    """
    if type(value) is str and LOOKUP_KEY.fullmatch(value):
        return value.upper()
    return value


def is_issue_key(value: object) -> bool:
    """A Jira issue key like ``AURORA-1640``."""
    return type(value) is str and ISSUE_KEY.fullmatch(value) is not None


def is_temp_key(value: object) -> bool:
    """A temp key like ``new:5`` (an issue an earlier ``ensure_issue`` of the batch creates)."""
    return type(value) is str and TEMP_KEY.fullmatch(value) is not None


# --- Russian messages ------------------------------------------------------------------------------
# On the hub's own classes only: fields (``hublib.fields``), validators (``hublib.validators``) and
# the base schema below. marshmallow's classes keep their messages for the rest of the process.

SCHEMA_MESSAGES = {'type': 'ожидается JSON-объект', 'unknown': 'неизвестное поле'}


class Schema(marshmallow.Schema):
    """The base of every hub schema: marshmallow's Schema with Russian messages."""

    error_messages = SCHEMA_MESSAGES


# --- fields ----------------------------------------------------------------------------------------

class Int(fields.Integer):
    """A JSON integer in SQLite's range (no strings, no booleans, no 1.5)."""

    OPENAPI = {'type': 'integer'}

    def __init__(self, *, minimum: int = INT64_MIN, maximum: int = INT64_MAX, **kwargs):
        kwargs.setdefault('validate', validators.Range(minimum, maximum))
        super().__init__(strict=True, **kwargs)


class LenientInt(fields.Integer):
    """An integer that may also come as its decimal string (query strings, path parameters)."""

    def __init__(self, *, minimum: int = INT64_MIN, maximum: int = INT64_MAX, **kwargs):
        kwargs.setdefault('validate', validators.Range(minimum, maximum))
        super().__init__(**kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str) and not (value.isascii() and value.lstrip('-').isdigit()
                                           and len(value) <= 20):
            raise self.make_error('invalid')
        if isinstance(value, float):
            raise self.make_error('invalid')
        return super()._deserialize(value, attr, data, **kwargs)


class Number(fields.Float):
    """A finite JSON number (integer or fraction) that fits a REAL column."""

    OPENAPI = {'type': 'number'}

    def _deserialize(self, value, attr, data, **kwargs):
        if type(value) not in (int, float) or (type(value) is int and not
                                                INT64_MIN <= value <= INT64_MAX):
            raise self.make_error('invalid')
        if not math.isfinite(value):
            raise self.make_error('special')
        return float(value)


class Bool(fields.Boolean):
    """A JSON ``true``/``false`` only."""

    def _deserialize(self, value, attr, data, **kwargs):
        if value is True or value is False:
            return value
        raise self.make_error('invalid')


class Text(fields.String):
    """A string with an optional length bound (the bound is documented as ``maxLength``)."""

    def __init__(self, *, max_length: int | None = None, min_length: int | None = None,
                 **kwargs):
        checks = list(kwargs.pop('validate', None) or [])
        if max_length is not None or min_length is not None:
            checks.insert(0, validators.Length(min=min_length, max=max_length))
        super().__init__(validate=checks, **kwargs)


class JiraId(fields.String):
    """A Jira id: a non-empty string, or an integer that is stored as its string."""

    OPENAPI = {'oneOf': [{'type': 'string', 'minLength': 1},
                         {'type': 'integer', 'minimum': INT64_MIN, 'maximum': INT64_MAX}]}

    def _deserialize(self, value, attr, data, **kwargs):
        if type(value) is int and INT64_MIN <= value <= INT64_MAX:
            return str(value)
        if type(value) is str and value:
            return value
        raise self.make_error('invalid')

    default_error_messages = {'invalid': 'ожидается id: непустая строка или целое'}


# Jira's attachment ids are decimal numbers: as a string (the REST API's form) 1 to 19 ASCII
# digits, the most an int64 prints. The id goes into URLs (/attachments/{id}), so anything else
# (a '/', a space, '..') would be stored but never reachable.
ATTACHMENT_ID_PATTERN = r'^[0-9]{1,19}$'
ATTACHMENT_ID = re.compile(ATTACHMENT_ID_PATTERN)
ATTACHMENT_ID_MESSAGE = 'ожидается id вложения Jira: от 1 до 19 десятичных цифр'


def is_attachment_id(value: object) -> bool:
    """A Jira attachment id: 1 to 19 decimal digits, or a non-negative 64-bit integer."""
    if type(value) is str:
        return ATTACHMENT_ID.fullmatch(value) is not None
    return type(value) is int and 0 <= value <= INT64_MAX


class AttachmentId(fields.String):
    """A Jira attachment id (:func:`is_attachment_id`), kept as its string."""

    OPENAPI = {'oneOf': [{'type': 'string', 'pattern': ATTACHMENT_ID_PATTERN},
                         {'type': 'integer', 'minimum': 0, 'maximum': INT64_MAX}]}
    default_error_messages = {'invalid': ATTACHMENT_ID_MESSAGE}

    def _deserialize(self, value, attr, data, **kwargs):
        if not is_attachment_id(value):
            raise self.make_error('invalid')
        return str(value)


class UtcTime(fields.Field):
    """A moment: an ISO-8601 string (``Z``, ``+0300``, ``+03:00``, none = UTC) or a datetime.

    Deserializes to an aware UTC ``datetime``.
    """

    OPENAPI = {'type': 'string', 'format': 'date-time'}
    default_error_messages = {
        'invalid': 'ожидается время ISO-8601, например 2026-10-22T09:00:00Z'}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, datetime):
            if value.tzinfo is None:
                value = value.replace(tzinfo=timezone.utc)
            return value.astimezone(timezone.utc)
        normalized = to_utc(value) if isinstance(value, str) else None
        if normalized is None:
            raise self.make_error('invalid')
        return parse_utc(normalized)


class JiraTime(fields.String):
    """A Jira time as the agent sends it (``2026-10-22T09:00:00.000+0300``), kept as its string.

    Any string is taken, and ``null`` is "not known" where the field allows it. One that
    :func:`timeutil.to_utc` cannot read (``garbage``, ``""``, ``2026-02-30T…``) is no malformed
    value: the spec (seed 001 «Журнал изменений задач») stores it as sent with ``NULL`` in the
    normalised column, and ingest counts it in its answer's ``unparsed_times``
    (docs/agent-protocol.md). Only another JSON type (a number, an object) is refused.
    """

    OPENAPI = {'type': 'string', 'description': (
        'время Jira как есть, ISO-8601, например 2026-10-22T09:00:00.000+0300; неразбираемое '
        'сохраняется как прислано, приведённое время — null, и считается в unparsed_times ответа')}


class Pattern(validators.Regexp):
    """A whole-string regular expression (``^…$`` as JSON Schema reads it: no trailing newline).

    ``pattern`` is what the document publishes; ``reasons`` optionally explain a mismatch in more
    words: ``(regex, message)`` pairs, each message given when its regex finds something.
    """

    def __init__(self, pattern: str, error: str, reasons: tuple[tuple[str, str], ...] = ()):
        super().__init__(pattern, error=error)
        self.reasons = tuple((re.compile(found), message) for found, message in reasons)

    def __call__(self, value: str) -> str:
        # fullmatch: Python's `$` would also accept a trailing newline that JSON Schema's does not
        if self.regex.fullmatch(value) is None:
            messages = [message for found, message in self.reasons if found.search(value)]
            raise marshmallow.ValidationError(messages or [self.error])
        return value


def issue_key_field(**kwargs) -> fields.String:
    """A Jira issue key field (pattern documented and enforced)."""
    return fields.String(validate=Pattern(ISSUE_KEY_PATTERN, ISSUE_KEY_MESSAGE), **kwargs)


REQUIRED_MESSAGE = 'обязательное поле'


class LenientSchema(Schema):
    """A schema that ignores keys it does not know (an agent may send more than the hub keeps).

    A required field given as null is named like a missing one, «обязательное поле»: an adapter
    that reads a body with ``body.get(name)`` passes a missing field on as null.
    """

    class Meta:
        unknown = marshmallow.EXCLUDE

    def on_bind_field(self, field_name: str, field_obj: fields.Field) -> None:
        if field_obj.required and not field_obj.allow_none:
            field_obj.error_messages = {**field_obj.error_messages, 'null': REQUIRED_MESSAGE}


def is_int64(value: object) -> bool:
    """A JSON integer (not a boolean) that SQLite can store."""
    return type(value) is int and INT64_MIN <= value <= INT64_MAX


def require_int(value: object, name: str, *, required: bool = True) -> int | None:
    """``value`` when it is a 64-bit integer (or ``None`` when optional), else a ValidationError."""
    if value is None:
        if not required:
            return None
        raise ValidationError({name: [REQUIRED_MESSAGE]})
    if not is_int64(value):
        raise ValidationError({name: ['ожидается целое число']})
    return value


def require_list(value: object, name: str) -> list:
    """``value`` when it is a list, else a ValidationError naming ``name``."""
    if value is None:
        raise ValidationError({name: [REQUIRED_MESSAGE]})
    if not isinstance(value, list):
        raise ValidationError({name: ['ожидается список']})
    return value


# --- loading ---------------------------------------------------------------------------------------

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
            nested = (flatten_errors(value, name) if isinstance(value, (Mapping, list))
                      else {name: [str(value)]})
            for field_name, texts in nested.items():
                flat.setdefault(field_name, []).extend(texts)
        return flat
    if isinstance(messages, list) and all(isinstance(item, str) for item in messages):
        return {prefix or '_body': list(messages)}
    if isinstance(messages, list):
        for item in messages:
            for name, texts in flatten_errors(item, prefix).items():
                flat.setdefault(name, []).extend(texts)
        return flat
    return {prefix or '_body': [str(messages)]}


_schemas = threading.local()


def _instance_of(schema: type[marshmallow.Schema]) -> marshmallow.Schema:
    """One instance of ``schema`` per thread, made once: making one deep-copies its declared
    fields (~0.1-0.2 ms for a query schema, twice a read: the adapter's query string, then the
    hublib function's arguments), and loading leaves an instance as it was. Per thread, so no
    two requests ever share one."""
    known = _schemas.__dict__.setdefault('by_class', {})
    instance = known.get(schema)
    if instance is None:
        instance = known[schema] = schema()
    return instance


def load(schema: marshmallow.Schema | type[marshmallow.Schema], data: object, *,
         what: str = 'JSON-объект', prefix: str = '') -> dict:
    """Validate ``data`` with ``schema``; a hublib ValidationError naming every bad field."""
    instance = _instance_of(schema) if isinstance(schema, type) else schema
    if not isinstance(data, Mapping):
        raise ValidationError({prefix or '_body': [f'ожидается {what}']})
    try:
        return instance.load(data)
    except marshmallow.ValidationError as error:
        raise ValidationError(flatten_errors(error.messages, prefix)) from None


def check_page(items: object, name: str, fast: Callable[[object], bool],
               schema: type[marshmallow.Schema]) -> list:
    """A page of an agent's items (``issues``, ``items``): ``fast`` — the hot path's plain-Python
    twin of ``schema`` — judges each one, and ``schema`` names the fields of those it refuses
    (built only then: an instance costs ~150 µs, more than checking a valid page)."""
    items = require_list(items, name)
    errors: dict[str, list[str]] = {}
    for index, item in enumerate(items):
        if not fast(item):
            errors.update(errors_of(schema, item, f'{name}[{index}]'))
    if errors:
        raise ValidationError(errors)
    return items


def errors_of(schema: marshmallow.Schema | type[marshmallow.Schema], data: object,
              prefix: str) -> dict[str, list[str]]:
    """The flattened messages ``schema`` has for ``data`` (empty when it is valid)."""
    try:
        load(schema, data, prefix=prefix)
    except ValidationError as error:
        return error.fields
    return {}


# --- texts and keys of the queue's inputs -------------------------------------------------------
# Whitespace as str.isspace() (and so str.strip()) sees it, spelled out rather than \s so that
# Python and JSON Schema (whose \s differs) read the patterns alike.
WHITESPACE = r'\x09-\x0d\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000'
# At least one character that is not whitespace.
NOT_BLANK_PATTERN = f'^[\\s\\S]*[^{WHITESPACE}][\\s\\S]*$'
ISSUE_OR_TEMP_KEY_PATTERN = f'^(?:{ISSUE_KEY_PATTERN[1:-1]}|{TEMP_KEY_PATTERN[1:-1]})$'
ISSUE_OR_TEMP_KEY_MESSAGE = 'ожидается ключ задачи (AURORA-1) или временный ключ (new:1)'
# A downloaded file's name in the store: the sha256 of its content, lowercase hex.
SHA256_PATTERN = r'^[0-9a-f]{64}$'


def stripped_pattern(max_length: int, blank: str, too_long: str) -> Pattern:
    """A text that, stripped of whitespace at both ends, has 1 to ``max_length`` characters."""
    return Pattern(
        f'^[{WHITESPACE}]*[^{WHITESPACE}]([\\s\\S]{{0,{max_length - 2}}}[^{WHITESPACE}])?'
        f'[{WHITESPACE}]*$', too_long,
        ((f'^[{WHITESPACE}]*$', blank),
         (f'[^{WHITESPACE}][\\s\\S]{{{max_length - 1},}}[^{WHITESPACE}]', too_long)))


class StrippedText(fields.String):
    """A required kind of text stored without whitespace at its ends: 1 to ``max_length``
    characters once stripped (the pattern publishes exactly that rule)."""

    def __init__(self, *, max_length: int, blank: str = 'не может быть пустым',
                 too_long: str | None = None, **kwargs):
        too_long = too_long or f'длиннее {max_length} символов'
        super().__init__(validate=stripped_pattern(max_length, blank, too_long), **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        # Validators run on the stripped text: the pattern (which describes the text as sent)
        # gives it the same verdict, as it only ever strips the same whitespace.
        return super()._deserialize(value, attr, data, **kwargs).strip()


def issue_or_temp_key_field(**kwargs) -> fields.String:
    """An issue key or a temp key (``new:<n>``) field (pattern documented and enforced)."""
    return fields.String(validate=Pattern(ISSUE_OR_TEMP_KEY_PATTERN, ISSUE_OR_TEMP_KEY_MESSAGE),
                         **kwargs)


# --- days and time zones (reports, contract §17) ---------------------------------------------------
# Calendar days are read in an IANA time zone; the years are bounded so that the first and last
# moment of any accepted day, in any zone, is a datetime Python can hold.
FIRST_YEAR, LAST_YEAR = 1900, 9998
_DAY = re.compile(r'[0-9]{4}-[0-9]{2}-[0-9]{2}')


def _day(value: object) -> date | None:
    """A date from a ``date`` or an ISO ``YYYY-MM-DD`` string within the accepted years."""
    if isinstance(value, date) and not isinstance(value, datetime):
        day = value
    elif isinstance(value, str) and _DAY.fullmatch(value):
        try:
            day = date.fromisoformat(value)
        except ValueError:
            return None
    else:
        return None
    return day if FIRST_YEAR <= day.year <= LAST_YEAR else None


class Day(fields.Field):
    """A calendar day: ``YYYY-MM-DD`` (or a ``date``); deserializes to a ``date``."""

    OPENAPI = {'type': 'string', 'format': 'date'}
    default_error_messages = {
        'invalid': f'ожидается дата ГГГГ-ММ-ДД с {FIRST_YEAR} по {LAST_YEAR} год'}

    def _deserialize(self, value, attr, data, **kwargs):
        day = _day(value)
        if day is None:
            raise self.make_error('invalid')
        return day


class DayOrTime(fields.Field):
    """A calendar day (``YYYY-MM-DD``: its start in the request's time zone) or a moment (ISO-8601
    as :class:`UtcTime` reads it); deserializes to a ``date`` or an aware UTC ``datetime``."""

    OPENAPI = {'anyOf': [{'type': 'string', 'format': 'date'},
                         {'type': 'string', 'format': 'date-time'}]}
    default_error_messages = {
        'invalid': 'ожидается дата ГГГГ-ММ-ДД или время ISO-8601, например 2026-10-22T09:00:00Z'}

    def _deserialize(self, value, attr, data, **kwargs):
        day = _day(value)
        if day is not None:
            return day
        if isinstance(value, datetime):
            moment = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
        else:
            normalized = to_utc(value) if isinstance(value, str) and not _DAY.fullmatch(value) \
                else None
            if normalized is None:
                raise self.make_error('invalid')
            moment = parse_utc(normalized)
        if not FIRST_YEAR <= moment.year <= LAST_YEAR:
            raise self.make_error('invalid')
        return moment.astimezone(timezone.utc)


class TimeZoneName(fields.Field):
    """An IANA time zone name (``Europe/Moscow``, ``UTC``; empty = UTC) or a ``tzinfo``;
    deserializes to a ``tzinfo`` (``timeutil.time_zone``). Decision: only names the zone database
    holds (no ``+03:00``: days in Jira users' reports follow a place's clock, summer time
    included)."""

    OPENAPI = {'type': 'string', 'maxLength': 64, 'example': 'Europe/Moscow'}
    default_error_messages = {
        'invalid': 'ожидается часовой пояс IANA, например Europe/Moscow или UTC'}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, tzinfo):
            return value
        if isinstance(value, str) and len(value) <= 64:
            try:
                return time_zone(value)
            except ValueError:
                pass  # not a key of the zone database: a path, a directory, not a TZif file
        raise self.make_error('invalid')


__all__ = ['Schema', 'SCHEMA_MESSAGES', 'FIELD_MESSAGES', 'REQUIRED_MESSAGE', 'lookup_key',
           'LOOKUP_KEY_PATTERN', 'INT64_MIN', 'INT64_MAX', 'Int', 'LenientInt', 'Number', 'Bool',
           'Text', 'JiraId', 'UtcTime', 'JiraTime', 'AttachmentId',
           'is_attachment_id', 'ATTACHMENT_ID_PATTERN', 'Pattern', 'LenientSchema',
           'issue_key_field', 'is_issue_key', 'is_temp_key',
           'is_int64', 'require_int', 'require_list', 'check_page', 'load', 'errors_of', 'flatten_errors',
           'ISSUE_KEY_PATTERN', 'TEMP_KEY_PATTERN', 'WHITESPACE', 'NOT_BLANK_PATTERN',
           'ISSUE_OR_TEMP_KEY_PATTERN', 'SHA256_PATTERN', 'stripped_pattern', 'StrippedText',
           'issue_or_temp_key_field', 'Day', 'DayOrTime', 'TimeZoneName', 'FIRST_YEAR', 'LAST_YEAR']
