"""The `jira` module: command types (contract §9.2), estimates (§9.6), retired settings.

Each command type publishes a params schema and a result schema (marshmallow). The params schema
of a type is the contract of its commands: ``hublib.batches`` validates every command of a batch
with it, and the OpenAPI document is generated from the same schema, so each limit below is a
validator JSON Schema can say (length, range, enum, pattern). Two rules span two params; each
params schema that has one says it in ``OPENAPI`` (JSON-schema keywords for the object).
Settings-dependent rules (``issue_type`` one of the configured ``issue_types``, ``link_type`` one
of ``link_types``) are an enum of the keys configured when the schema is built.

Decisions the contract left open:
- unknown params are refused (a typo would otherwise be silently ignored by the agent);
  ``refresh`` also accepts ``board_id`` (integer > 0), the board of commands queued before the v4
  migration that the agent still understands;
- temp keys (``new:<n>``) are accepted wherever a param names an issue: ``epic_key`` of
  ``ensure_issue``, both ends of ``ensure_link``, ``key`` of ``add_comment`` and ``transition``;
- dates are ``YYYY-MM-DD`` and must be real calendar dates; ``summary`` and ``status`` ≤ 255
  characters (Jira's limit) and stored stripped; texts (``jql``, ``description``, ``body``) ≤ 32,000
  characters (Jira's default limit); a param given as ``null`` is the same as one left out.
"""
from __future__ import annotations

import functools
import re
from datetime import date
from typing import Any, Mapping

from marshmallow import ValidationError, post_load, validates_schema
from peewee import fn

from .. import fields, validators
from ..db import Hub
from ..models import IssueAttachment, IssueMember
from ..validation import (NOT_BLANK_PATTERN, SHA256_PATTERN, TEMP_KEY_PATTERN, WHITESPACE,
                          AttachmentId, Int, LenientSchema, Pattern, Schema, StrippedText, Text,
                          issue_key_field, issue_or_temp_key_field)
from .base import CommandType, Module

DEPRECATED_SETTINGS = ('status_labels', 'transitions_map')

SUMMARY_MAX = 255
# Keys per refresh: a refresh is one sync run whose query lists them all (10,000 keys ≈ 120 KB);
# more is a job for a jql refresh or several batches. The hub's own read-your-writes refresh is
# queued without this check.
REFRESH_KEYS_MAX = 10000
TEXT_MAX = 32000
ESTIMATED_CALLS_ENSURE_ISSUE = 3
DATE_PATTERN = r'^[0-9]{4}-[0-9]{2}-[0-9]{2}$'
BLANK_MESSAGE = 'не может быть пустым'


# --- fields ----------------------------------------------------------------------------------------

class Day(fields.String):
    """A calendar date ``YYYY-MM-DD`` that exists (no 2026-02-30), kept as its string."""

    OPENAPI = {'type': 'string', 'format': 'date', 'pattern': DATE_PATTERN}
    default_error_messages = {'invalid': 'ожидается дата YYYY-MM-DD'}
    _SHAPE = re.compile(DATE_PATTERN)

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        try:
            if self._SHAPE.fullmatch(text) is None:
                raise ValueError(text)
            date.fromisoformat(text)
        except ValueError:
            raise self.make_error('invalid') from None
        return text


def _long_text(**kwargs) -> fields.String:
    """A text up to ``TEXT_MAX`` characters that is not only whitespace."""
    return fields.String(validate=[validators.Length(max=TEXT_MAX),
                                   Pattern(NOT_BLANK_PATTERN, BLANK_MESSAGE)], **kwargs)


def _optional_text() -> Text:
    return Text(max_length=TEXT_MAX, allow_none=True)


# --- params schemas --------------------------------------------------------------------------------

class Params(Schema):
    """Params of a command: unknown names are refused, ``null`` means "not given"."""

    @post_load
    def drop_nulls(self, data: dict, **kwargs) -> dict:
        return {name: value for name, value in data.items() if value is not None}


class RefreshParams(Params):
    """``refresh``: exactly one of ``jql`` or ``keys``."""

    # exactly one of the two given (a null counts as not given)
    OPENAPI = {'oneOf': [
        {'required': ['jql'], 'properties': {'jql': {'type': 'string'}},
         'not': {'required': ['keys'], 'properties': {'keys': {'type': 'array'}}}},
        {'required': ['keys'], 'properties': {'keys': {'type': 'array'}},
         'not': {'required': ['jql'], 'properties': {'jql': {'type': 'string'}}}}]}

    jql = _long_text(allow_none=True)
    keys = fields.List(issue_key_field(), allow_none=True, validate=[
        validators.Length(min=1, error='ожидается непустой список ключей задач'),
        validators.Length(max=REFRESH_KEYS_MAX,
                          error=f'больше {REFRESH_KEYS_MAX} ключей в одном обновлении')])
    board_id = Int(minimum=1, allow_none=True,
                   metadata={'description': 'доска команд, поставленных до миграции v4'})

    @validates_schema
    def one_query(self, data: dict, **kwargs) -> None:
        if (data.get('jql') is None) == (data.get('keys') is None):
            raise ValidationError('нужен ровно один из параметров jql или keys', 'jql')


class EnsureIssueParams(Params):
    """``ensure_issue``: a configured ``issue_type``, ``summary``, at most one of key/temp_key."""

    OPENAPI = {'not': {'required': ['key', 'temp_key'],
                       'properties': {'key': {'type': 'string'}, 'temp_key': {'type': 'string'}}}}

    issue_type = fields.String(required=True)  # one of the configured keys: ensure_issue_params
    summary = StrippedText(required=True, max_length=SUMMARY_MAX)
    key = issue_key_field(allow_none=True, metadata={'description': 'существующая задача'})
    temp_key = fields.String(allow_none=True, validate=Pattern(
        TEMP_KEY_PATTERN, 'ожидается временный ключ new:<n>'))
    description = _optional_text()
    priority = _optional_text()
    assignee = _optional_text()
    duedate = Day(allow_none=True)
    planned_start = Day(allow_none=True)
    planned_end = Day(allow_none=True)
    epic_key = issue_or_temp_key_field(allow_none=True)
    labels = fields.List(fields.String(validate=Pattern(
        f'^[^{WHITESPACE}]+$', 'метка — непустая строка без пробельных символов')),
        allow_none=True)

    @validates_schema
    def key_or_temp_key(self, data: dict, **kwargs) -> None:
        if data.get('key') is not None and data.get('temp_key') is not None:
            raise ValidationError('нужен только один из параметров key или temp_key', 'temp_key')


class EnsureLinkParams(Params):
    """``ensure_link``: source and target (keys or temp keys), a configured ``link_type``."""

    source_key = issue_or_temp_key_field(required=True)
    target_key = issue_or_temp_key_field(required=True)
    link_type = fields.String(required=True)  # one of the configured keys: ensure_link_params


class AddCommentParams(Params):
    """``add_comment``: ``key`` and a non-blank ``body``."""

    key = issue_or_temp_key_field(required=True)
    body = _long_text(required=True)


class TransitionParams(Params):
    """``transition``: ``key`` and the target ``status`` name."""

    key = issue_or_temp_key_field(required=True)
    status = StrippedText(required=True, max_length=SUMMARY_MAX)


class FetchAttachmentParams(Params):
    """``fetch_attachment``: ``attachment_id`` of an attachment in the mirror."""

    # Jira ids are numeric strings; the number is accepted too and stored as its string.
    attachment_id = AttachmentId(required=True)


@functools.lru_cache(maxsize=64)
def _configured(schema: type[Schema], name: str, setting: str, keys: tuple[str, ...],
                what: str) -> type[Schema]:
    """``schema`` whose param ``name`` must be one of ``keys`` (the keys of setting ``setting``).

    One class per (schema, keys): a document that names the schema twice sees one component.
    """
    if keys:
        error = f'{what} {{input!r}} не настроен (настроены: {{choices}})'
    else:
        error = f'{what} {{input!r}} не настроен: настройка {setting} пуста'
    field = fields.String(required=True, validate=validators.OneOf(keys, error=error),
                          metadata={'description': f'ключ настройки {setting}'})
    return type(schema.__name__, (schema,), {name: field, '__doc__': schema.__doc__,
                                             '__module__': schema.__module__})


def _keys_of(settings: Mapping[str, Any], name: str) -> tuple[str, ...]:
    value = settings.get(name)
    return tuple(value) if isinstance(value, Mapping) else ()


def ensure_issue_params(settings: Mapping[str, Any]) -> Schema:
    """``EnsureIssueParams`` with ``issue_type`` one of the configured ``issue_types``."""
    return _configured(EnsureIssueParams, 'issue_type', 'issue_types',
                       _keys_of(settings, 'issue_types'), 'тип задачи')()


def ensure_link_params(settings: Mapping[str, Any]) -> Schema:
    """``EnsureLinkParams`` with ``link_type`` one of the configured ``link_types``."""
    return _configured(EnsureLinkParams, 'link_type', 'link_types',
                       _keys_of(settings, 'link_types'), 'тип связи')()


def _static(schema: type[Schema]):
    return lambda settings: schema()


# --- result schemas --------------------------------------------------------------------------------
# What the agent reports in ``result`` (any status, so every field may be missing); extra fields
# are kept as sent.

class RefreshHistory(LenientSchema):
    """``result.history`` of a refresh (spec «Отметка журнала…»)."""

    issues = Int(minimum=0, allow_none=True)
    changes = Int(minimum=0, allow_none=True)
    incomplete = fields.List(fields.Raw(), allow_none=True,
                             metadata={'description': 'задачи, журнал которых не дочитан'})
    error = fields.String(allow_none=True, metadata={'description': 'журнал не принят'})
    backfill_error = fields.String(allow_none=True,
                                   metadata={'description': 'ошибка стартовой загрузки'})


class RefreshResult(LenientSchema):
    issues = Int(minimum=0, allow_none=True)
    links = Int(minimum=0, allow_none=True)
    history = fields.Nested(RefreshHistory, allow_none=True)


class EnsureIssueResult(LenientSchema):
    key = issue_key_field(allow_none=True, metadata={'description': 'ключ заведённой задачи'})


class FetchAttachmentResult(LenientSchema):
    sha256 = fields.String(allow_none=True, validate=Pattern(
        SHA256_PATTERN, 'ожидается sha256 скачанного файла (64 строчные hex)'))
    size = Int(minimum=0, allow_none=True)


class AnyResult(LenientSchema):
    """Any object."""


# --- estimates (contract §9.6) and references --------------------------------------------------------

def estimate_refresh(hub: Hub, params: Mapping[str, Any]) -> int:
    """By keys: one call per key; by jql: the mirror's issues of the base JQL (own issues of some
    project, ``hublib.slices``) + 1."""
    if params.get('keys'):
        return len(params['keys'])
    own = (IssueMember.select(fn.COUNT(IssueMember.key.distinct()))
           .where(IssueMember.neighbor == 0).scalar(hub.db))
    return own + 1


def missing_attachment(hub: Hub, params: Mapping[str, Any]) -> dict[str, str]:
    attachment_id = params['attachment_id']
    if IssueAttachment.select().where(IssueAttachment.attachment_id == attachment_id).exists(hub.db):
        return {}
    return {'attachment_id': f'вложения {attachment_id} нет в зеркале'}


COMMAND_TYPES = {
    'refresh': CommandType('refresh', _static(RefreshParams), RefreshResult, estimate_refresh),
    'ensure_issue': CommandType('ensure_issue', ensure_issue_params, EnsureIssueResult,
                                ESTIMATED_CALLS_ENSURE_ISSUE, key_fields=('epic_key',),
                                writes=True),
    'ensure_link': CommandType('ensure_link', ensure_link_params, AnyResult,
                               key_fields=('source_key', 'target_key'), writes=True),
    'add_comment': CommandType('add_comment', _static(AddCommentParams), AnyResult,
                               key_fields=('key',), writes=True),
    'transition': CommandType('transition', _static(TransitionParams), AnyResult,
                              key_fields=('key',), writes=True),
    'fetch_attachment': CommandType('fetch_attachment', _static(FetchAttachmentParams),
                                    FetchAttachmentResult, references=missing_attachment,
                                    done_requires=('sha256',)),
}

MODULE = Module(name='jira', command_types=COMMAND_TYPES,
                deprecated_settings=DEPRECATED_SETTINGS)
