"""Settings: key → JSON pairs in ``setting`` (spec «Настройки», contract §6).

Every writer (HTTP, CLI ``init``, scripts, MCP) goes through :func:`update_settings`, which
validates the whole change with :class:`SettingsChange` before writing anything. The base JQL is
computed here from the projects' labels (spec «Проекты»): it is the one derived setting.
"""
from __future__ import annotations

import json
import re
import secrets
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping

from peewee import JOIN

from . import fields, jsontext, modules, validators
from .db import Hub
from .errors import ValidationError
from .models import JiraProject, Project, Setting, SqlNames
from .validation import Int, Number, Pattern, Schema, Text, load

DEFAULT_PACING = {'interval_ms': 500, 'pause_on_rate_limit_seconds': 60}
DEFAULT_CLOSED_STATUSES = ('Готово', 'Снято')
DEFAULT_BACKUP_KEEP = 14
DEFAULT_READ_DEADLINE_SECONDS = 10
READ_DEADLINE_RANGE = (0.01, 3600)
FIELD_ID_KEYS = ('planned_start', 'planned_end', 'epic_link', 'story_points', 'sprint', 'rank')

BASE_JQL_MESSAGE = 'базовая JQL собирается из проектов'
LEGACY_KEYS = ('base_jql', 'board_id')
READ_ONLY_KEYS = ('settings_version', 'schema_version', 'tokens')
AGENT_KEYS = ('project_key', 'field_ids', 'issue_types', 'priority_map', 'link_types', 'pacing',
              'settings_version')
# Projects in base-JQL order (contract §7): by creation, then label.
PROJECT_ORDER = (Project.created_at, Project.label)


def _defaults() -> dict[str, Any]:
    return {
        'closed_statuses': list(DEFAULT_CLOSED_STATUSES),
        'backup_keep': DEFAULT_BACKUP_KEEP,
        'auto_refresh_minutes': 0,
        'relay_dir': None,
        'pacing': dict(DEFAULT_PACING),
        'read_deadline_seconds': DEFAULT_READ_DEADLINE_SECONDS,
    }


# --- the schema of a change ----------------------------------------------------------------------
# Upper bounds keep every derived figure (estimates, pauses, time arithmetic of the auto refresh)
# inside SQLite's integers and datetime's range, so no setting can break a claim.

# Jira ids of the custom fields the agent reads (each a non-empty string or null).
FieldIds = Schema.from_dict({name: Text(min_length=1, allow_none=True) for name in FIELD_ID_KEYS},
                            name='FieldIds')


class IssueType(Schema):
    name = fields.String(allow_none=True)
    id = fields.String(allow_none=True)


class IssueTypes(Schema):
    """``{task, epic[, bug]}``, each ``{name, id}``."""

    task = fields.Nested(IssueType, required=True)
    epic = fields.Nested(IssueType, required=True)
    bug = fields.Nested(IssueType)


class Pacing(Schema):
    interval_ms = Int(minimum=0, maximum=60_000)
    pause_on_rate_limit_seconds = Int(minimum=0, maximum=86_400)


# Absolute on POSIX or on Windows (a drive with a root, a root, or a UNC share): what
# posixpath.isabs or ntpath.isabs accepts.
ABSOLUTE_PATH = r'^([/\\]|.:[/\\]).*$'
PROJECT_KEY_PATTERN = r'^[A-Z][A-Z0-9_]*$'


class SettingsChange(Schema):
    """Body of ``PUT /settings``: any subset of the writable keys."""

    project_key = fields.String(validate=Pattern(
        PROJECT_KEY_PATTERN, 'ключ проекта Jira: заглавные латинские буквы, цифры и _, '
                             'например AURORA'), metadata={'example': 'AURORA'})
    field_ids = fields.Nested(FieldIds, metadata={'description': 'custom field id по назначению'})
    issue_types = fields.Nested(IssueTypes)
    priority_map = fields.Dict(keys=fields.String(), values=Text(min_length=1))
    link_types = fields.Dict(keys=fields.String(), values=Text(min_length=1))
    pacing = fields.Nested(Pacing)
    backup_keep = Int(minimum=1, maximum=10_000)
    auto_refresh_minutes = Int(minimum=0, maximum=525_600,  # a year
                               metadata={'description': '0 — выключено'})
    relay_dir = fields.String(allow_none=True, validate=Pattern(
        ABSOLUTE_PATH, 'ожидается абсолютный путь папки реле или null'))
    closed_statuses = fields.List(Text(min_length=1))
    read_deadline_seconds = Number(
        validate=validators.Range(*READ_DEADLINE_RANGE),
        metadata={'description': 'сколько секунд может идти чтение, прежде чем хаб его '
                                 f'остановит (503); по умолчанию {DEFAULT_READ_DEADLINE_SECONDS}'})


class AgentQuery(Schema):
    """Query of ``GET /agent/settings``: the agent's module."""

    agent = modules.agent_field(description='модуль агента')


def validate_changes(changes: object) -> dict[str, Any]:
    """Check a whole settings change; raise one ValidationError listing every bad key.

    Errors are named by the top-level key (``pacing``), the nested path inside the message.
    """
    try:
        normalized = load(SettingsChange, changes, what='объект настроек')
    except ValidationError as error:
        by_key: dict[str, list[str]] = {}
        for name, messages in error.fields.items():
            key, rest = re.match(r'([^.\[]*)[.]?(.*)', name).groups()
            if key in LEGACY_KEYS:
                messages = [BASE_JQL_MESSAGE]
            elif key in READ_ONLY_KEYS:
                messages = ['настройка только для чтения']
            by_key.setdefault(key, []).extend(f'{rest}: {m}' if rest else m for m in messages)
        only_legacy = set(by_key) <= set(LEGACY_KEYS)
        raise ValidationError(by_key, BASE_JQL_MESSAGE if only_legacy else None) from None
    if 'pacing' in normalized:
        normalized['pacing'] = {**DEFAULT_PACING, **normalized['pacing']}
    return normalized


# --- storage -------------------------------------------------------------------------------------

# Settings whose key order is meaning: JQL's ORDER BY priority follows priority_map as the
# client wrote it (contract §16), so it is stored, compared and shown in that order.
ORDERED_KEYS = frozenset(('priority_map',))


def _dump(value: object, key: str | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=key not in ORDERED_KEYS)


def stored_settings(hub: Hub) -> dict[str, Any]:
    """Every stored key with its decoded value (tokens included: callers filter)."""
    return {key: jsontext.load(text) for key, text in
            Setting.select(Setting.key, Setting.value).tuples().execute(hub.db)}


_SETTING = SqlNames(Setting)
# Read on every claim and every page of history: 7 µs as SQL text, ~300 µs through peewee's
# query building (measured with bench_queue).
_ONE_SETTING = f'SELECT {_SETTING.value} FROM {_SETTING} WHERE {_SETTING.key} = ?'


def setting(hub: Hub, key: str, default: Any = None) -> Any:
    """One decoded setting, ``default`` when absent."""
    row = hub.db.execute_sql(_ONE_SETTING, (key,)).fetchone()
    return default if row is None or row[0] is None else jsontext.load(row[0])


def _write(hub: Hub, values: Mapping[str, Any]) -> None:
    if values:
        Setting.replace_many([(key, _dump(value, key)) for key, value in values.items()],
                             fields=[Setting.key, Setting.value]).execute(hub.db)


def ensure_defaults(hub: Hub) -> None:
    """Add missing defaults and tokens, drop retired module keys; never bumps settings_version."""
    with hub.write():
        stored = stored_settings(hub)
        missing = {key: value for key, value in _defaults().items() if key not in stored}
        tokens = stored.get('tokens') if isinstance(stored.get('tokens'), dict) else {}
        if not (tokens.get('agent') and tokens.get('client')):
            missing['tokens'] = {'agent': tokens.get('agent') or secrets.token_urlsafe(32),
                                 'client': tokens.get('client') or secrets.token_urlsafe(32)}
        if 'settings_version' not in stored:
            missing['settings_version'] = 1
        _write(hub, missing)
        retired = modules.deprecated_settings() & set(stored)
        if retired:
            Setting.delete().where(Setting.key.in_(sorted(retired))).execute(hub.db)


def update_settings(hub: Hub, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Apply a partial change; +1 to settings_version when any value really changed."""
    normalized = validate_changes(changes)
    with hub.write():
        stored = stored_settings(hub)
        changed = {key: value for key, value in normalized.items()
                   if key not in stored or _dump(stored[key], key) != _dump(value, key)}
        if changed:
            changed['settings_version'] = int(stored.get('settings_version') or 0) + 1
            _write(hub, changed)
        return _client_view(hub)


def read_deadline_seconds(hub: Hub) -> float:
    """The ``read_deadline_seconds`` setting (the default when absent or not a number)."""
    value = setting(hub, 'read_deadline_seconds')
    low, high = READ_DEADLINE_RANGE
    if type(value) not in (int, float) or not low <= value <= high:
        return DEFAULT_READ_DEADLINE_SECONDS
    return value


@contextmanager
def bounded_reads(hub: Hub, cancelled: Callable[[], bool] | None = None) -> Iterator[None]:
    """Reads of this thread inside the block end after ``read_deadline_seconds`` (DeadlineError)
    or once ``cancelled()`` is true (ClientGoneError); see :meth:`Hub.bounded`."""
    with hub.bounded(read_deadline_seconds(hub), cancelled):
        yield


def pacing(hub: Hub) -> dict[str, int]:
    """The ``pacing`` setting over its defaults."""
    return pacing_of(setting(hub, 'pacing'))


def pacing_of(stored: object) -> dict[str, int]:
    """A stored ``pacing`` value over the defaults (anything but an object: the defaults)."""
    return {**DEFAULT_PACING, **(stored if isinstance(stored, dict) else {})}


def project_labels(hub: Hub) -> list[str]:
    """Project labels in base-JQL order: by creation time, then label."""
    return [label for (label,) in
            Project.select(Project.label).order_by(*PROJECT_ORDER).tuples().execute(hub.db)]


def base_jql(hub: Hub) -> str | None:
    """``project = <key> AND labels in ("L1", …)``; ``None`` without projects or project key."""
    project_key = setting(hub, 'project_key')
    labels = project_labels(hub)
    if not isinstance(project_key, str) or not project_key or not labels:
        return None
    return 'project = {} AND labels in ({})'.format(
        project_key, ', '.join(f'"{label}"' for label in labels))


def _client_view(hub: Hub) -> dict[str, Any]:
    view = {key: value for key, value in stored_settings(hub).items()
            if key not in ('tokens', 'schema_version')}
    view['base_jql'] = base_jql(hub)
    return view


def client_settings(hub: Hub) -> dict[str, Any]:
    """Settings for interfaces: everything but tokens and schema_version, plus computed base_jql."""
    with hub.read():
        return _client_view(hub)


def agent_settings(hub: Hub, agent: str) -> dict[str, Any]:
    """Settings an agent of module ``agent`` works with (contract §6)."""
    module = modules.get_module(agent)
    with hub.read():
        stored = stored_settings(hub)
        if module.name != 'jira':
            return {'settings_version': stored.get('settings_version')}
        result = {key: stored.get(key) for key in AGENT_KEYS}
        result['pacing'] = pacing(hub)
        result['base_jql'] = base_jql(hub)
        if 'board_id' in stored:
            result['board_id'] = stored['board_id']
        result['projects'] = list(
            Project.select(Project.label, Project.name, JiraProject.board_id,
                           JiraProject.board_type)
            .join(JiraProject, on=(JiraProject.label == Project.label), join_type=JOIN.LEFT_OUTER)
            .order_by(*PROJECT_ORDER).dicts().execute(hub.db))
        return result


def tokens(hub: Hub) -> dict[str, str]:
    """The agent and client bearer tokens."""
    return setting(hub, 'tokens', {})


TOKEN_ROLES = ('agent', 'client')


def rotate_token(hub: Hub, role: str) -> dict[str, str]:
    """A new random token for ``role`` (``agent`` or ``client``); both tokens as now stored.

    Tokens are not settings an agent follows: ``settings_version`` does not move. A running
    server takes the new token at once and refuses the old one within a second
    (``hubweb.auth.TokenAuth``).
    """
    if role not in TOKEN_ROLES:
        raise ValidationError({'role': [f'ожидается одно из: {", ".join(TOKEN_ROLES)}']})
    with hub.write():
        current = setting(hub, 'tokens', {})
        current = {**(current if isinstance(current, dict) else {}),
                   role: secrets.token_urlsafe(32)}
        _write(hub, {'tokens': current})
        return current


__all__ = ['SettingsChange', 'AgentQuery', 'validate_changes', 'stored_settings', 'setting', 'ensure_defaults',
           'update_settings', 'pacing', 'pacing_of', 'project_labels', 'base_jql', 'client_settings', 'agent_settings', 'tokens',
           'rotate_token', 'TOKEN_ROLES', 'read_deadline_seconds', 'bounded_reads',
           'DEFAULT_PACING', 'DEFAULT_BACKUP_KEEP', 'DEFAULT_READ_DEADLINE_SECONDS']
