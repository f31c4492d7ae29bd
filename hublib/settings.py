"""Settings: key → JSON pairs in ``setting`` (spec «Настройки», contract §6).

Every writer (HTTP, CLI ``init``, scripts) goes through :func:`update_settings`, which validates
the whole change with the one table of validators below before writing anything.
"""
from __future__ import annotations

import json
import ntpath
import posixpath
import re
import secrets
from typing import Any, Callable, Mapping

from . import projects
from .db import Hub
from .errors import ValidationError
from .modules import deprecated_settings, get_module

DEFAULT_PACING = {'interval_ms': 500, 'pause_on_rate_limit_seconds': 60}
DEFAULT_CLOSED_STATUSES = ['Готово', 'Снято']
FIELD_ID_KEYS = ('planned_start', 'planned_end', 'epic_link', 'story_points', 'sprint', 'rank')
ISSUE_TYPE_KEYS = ('task', 'epic', 'bug')

BASE_JQL_MESSAGE = 'базовая JQL собирается из проектов'
LEGACY_KEYS = ('base_jql', 'board_id')
READ_ONLY_KEYS = ('settings_version', 'schema_version', 'tokens')
AGENT_KEYS = ('project_key', 'field_ids', 'issue_types', 'priority_map', 'link_types', 'pacing',
              'settings_version')


def _defaults() -> dict[str, Any]:
    return {
        'closed_statuses': list(DEFAULT_CLOSED_STATUSES),
        'backup_keep': 14,
        'auto_refresh_minutes': 0,
        'relay_dir': None,
        'pacing': dict(DEFAULT_PACING),
    }


# --- validators: each returns a list of messages (empty = valid) --------------------------------

def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _string_map(value: object) -> list[str]:
    if not isinstance(value, dict):
        return ['ожидается объект']
    if not all(isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()):
        return ['значения должны быть непустыми строками']
    return []


_PROJECT_KEY = re.compile(r'[A-Z][A-Z0-9_]*')


def _project_key(value: object) -> list[str]:
    if not isinstance(value, str) or not _PROJECT_KEY.fullmatch(value):
        return ['ключ проекта Jira: заглавные латинские буквы, цифры и _, например AURORA']
    return []


def _field_ids(value: object) -> list[str]:
    if not isinstance(value, dict):
        return ['ожидается объект']
    errors = [f'неизвестное поле {key!r}' for key in value if key not in FIELD_ID_KEYS]
    errors += [f'{key}: ожидается строка или null' for key, field_id in value.items()
               if field_id is not None and not (isinstance(field_id, str) and field_id)]
    return errors


def _issue_types(value: object) -> list[str]:
    if not isinstance(value, dict):
        return ['ожидается объект {task, epic, bug?}']
    errors = [f'неизвестный тип {key!r}' for key in value if key not in ISSUE_TYPE_KEYS]
    errors += [f'нет типа {key!r}' for key in ('task', 'epic') if key not in value]
    for key, spec in value.items():
        if not isinstance(spec, dict) or set(spec) - {'name', 'id'}:
            errors.append(f'{key}: ожидается объект {{name, id}}')
        elif any(spec.get(part) is not None and not isinstance(spec.get(part), str)
                 for part in ('name', 'id')):
            errors.append(f'{key}: name и id — строки или null')
    return errors


# Upper bounds keep every derived figure (estimates, pauses, time arithmetic of the auto
# refresh) inside SQLite's integers and datetime's range, so no setting can break a claim.
PACING_MAXIMUM = {'interval_ms': 60_000, 'pause_on_rate_limit_seconds': 86_400}


def _pacing(value: object) -> list[str]:
    if not isinstance(value, dict):
        return ['ожидается объект']
    errors = [f'неизвестный ключ {key!r}' for key in value if key not in DEFAULT_PACING]
    errors += [f'{key}: ожидается целое от 0 до {PACING_MAXIMUM[key]}'
               for key, number in value.items() if key in DEFAULT_PACING
               and not (_is_int(number) and 0 <= number <= PACING_MAXIMUM[key])]
    return errors


def _int_between(minimum: int, maximum: int) -> Callable[[object], list[str]]:
    def check(value: object) -> list[str]:
        if _is_int(value) and minimum <= value <= maximum:
            return []
        return [f'ожидается целое от {minimum} до {maximum}']
    return check


def _relay_dir(value: object) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, str) or not (posixpath.isabs(value) or ntpath.isabs(value)):
        return ['ожидается абсолютный путь папки реле или null']
    return []


def _closed_statuses(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        return ['ожидается список имён статусов']
    return []


VALIDATORS: dict[str, Callable[[object], list[str]]] = {
    'project_key': _project_key,
    'field_ids': _field_ids,
    'issue_types': _issue_types,
    'priority_map': _string_map,
    'link_types': _string_map,
    'pacing': _pacing,
    'backup_keep': _int_between(1, 10_000),
    'auto_refresh_minutes': _int_between(0, 525_600),  # a year
    'relay_dir': _relay_dir,
    'closed_statuses': _closed_statuses,
}


def validate_changes(changes: object) -> dict[str, Any]:
    """Check a whole settings change; raise one ValidationError listing every bad key."""
    if not isinstance(changes, dict):
        raise ValidationError({'_body': ['ожидается объект настроек']})
    errors: dict[str, list[str]] = {}
    for key, value in changes.items():
        if key in LEGACY_KEYS:
            errors[key] = [BASE_JQL_MESSAGE]
        elif key in READ_ONLY_KEYS:
            errors[key] = ['настройка только для чтения']
        elif key not in VALIDATORS:
            errors[key] = ['неизвестная настройка']
        else:
            messages = VALIDATORS[key](value)
            if messages:
                errors[key] = messages
    if errors:
        message = BASE_JQL_MESSAGE if set(errors) <= set(LEGACY_KEYS) else None
        raise ValidationError(errors, message)
    normalized = dict(changes)
    if 'pacing' in normalized:
        normalized['pacing'] = {**DEFAULT_PACING, **normalized['pacing']}
    return normalized


# --- storage -----------------------------------------------------------------------------------

def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _load(text: str | None) -> Any:
    # A value that is not JSON (hand-edited, or written by some old tool) reads as the raw text
    # rather than breaking every reader of settings.
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def stored_settings(hub: Hub) -> dict[str, Any]:
    """Every stored key with its decoded value (tokens included: callers filter)."""
    return {key: _load(text) for key, text in hub.db.execute_sql('SELECT key, value FROM setting')}


def setting(hub: Hub, key: str, default: Any = None) -> Any:
    """One decoded setting, ``default`` when absent."""
    row = hub.db.execute_sql('SELECT value FROM setting WHERE key = ?', (key,)).fetchone()
    if row is None or row[0] is None:
        return default
    return _load(row[0])


def _write(hub: Hub, values: Mapping[str, Any]) -> None:
    hub.db.cursor().executemany('INSERT OR REPLACE INTO setting (key, value) VALUES (?, ?)',
                                [(key, _dump(value)) for key, value in values.items()])


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
        retired = sorted(deprecated_settings() & set(stored))
        if retired:
            hub.db.execute_sql('DELETE FROM setting WHERE key IN (%s)' % ','.join('?' * len(retired)),
                               retired)


def update_settings(hub: Hub, changes: object) -> dict[str, Any]:
    """Apply a partial change; +1 to settings_version when any value really changed."""
    normalized = validate_changes(changes)
    with hub.write():
        stored = stored_settings(hub)
        changed = {key: value for key, value in normalized.items()
                   if key not in stored or _dump(stored[key]) != _dump(value)}
        if changed:
            changed['settings_version'] = int(stored.get('settings_version') or 0) + 1
            _write(hub, changed)
        return _client_view(hub)


def _client_view(hub: Hub) -> dict[str, Any]:
    view = {key: value for key, value in stored_settings(hub).items()
            if key not in ('tokens', 'schema_version')}
    view['base_jql'] = projects.base_jql(hub)
    return view


def client_settings(hub: Hub) -> dict[str, Any]:
    """Settings for interfaces: everything but tokens and schema_version, plus computed base_jql."""
    with hub.read():
        return _client_view(hub)


def agent_settings(hub: Hub, agent: object) -> dict[str, Any]:
    """Settings an agent of module ``agent`` works with (contract §6)."""
    module = get_module(agent)
    with hub.read():
        stored = stored_settings(hub)
        if module.name != 'jira':
            return {'settings_version': stored.get('settings_version')}
        result = {key: stored.get(key) for key in AGENT_KEYS}
        result['pacing'] = {**DEFAULT_PACING, **(stored.get('pacing') or {})}
        result['base_jql'] = projects.base_jql(hub)
        if 'board_id' in stored:
            result['board_id'] = stored['board_id']
        result['projects'] = [
            {key: item[key] for key in ('label', 'name', 'board_id', 'board_type')}
            for item in _projects_with_boards(hub)]
        return result


def _projects_with_boards(hub: Hub) -> list[dict]:
    rows = hub.db.execute_sql(
        'SELECT p.label, p.name, jp.board_id, jp.board_type FROM project p '
        'LEFT JOIN jira_project jp ON jp.label = p.label ORDER BY p.created_at, p.label')
    return [dict(zip(('label', 'name', 'board_id', 'board_type'), row)) for row in rows]


def tokens(hub: Hub) -> dict[str, str]:
    """The agent and client bearer tokens."""
    return setting(hub, 'tokens', {})


# --- jira-sync config import (CLI `init`) --------------------------------------------------------

CONFIG_SETTINGS = ('project_key', 'field_ids', 'priority_map', 'link_types', 'pacing', 'backup_keep',
                   'auto_refresh_minutes')


def settings_from_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The settings a jira-sync config carries; secrets (login, password, token, url) are never read."""
    if not isinstance(config, Mapping):
        raise ValidationError({'config': ['конфиг должен быть JSON-объектом']})
    values = {key: config[key] for key in CONFIG_SETTINGS if key in config}

    def issue_type(kind: str) -> dict[str, str | None]:
        name, type_id = config.get(f'issue_type_{kind}'), config.get(f'issue_type_{kind}_id')
        return {'name': name, 'id': str(type_id) if _is_int(type_id) else type_id}

    values['issue_types'] = {'task': issue_type('task'), 'epic': issue_type('epic')}
    if 'issue_type_bug' in config or 'issue_type_bug_id' in config:
        values['issue_types']['bug'] = issue_type('bug')
    return values


def import_config(hub: Hub, config: Mapping[str, Any]) -> dict[str, Any]:
    """Import a jira-sync config: settings (one version bump) and missing projects."""
    values = validate_changes(settings_from_config(config))
    raw_projects = config.get('projects') or []
    if not isinstance(raw_projects, list) or not all(isinstance(p, dict) for p in raw_projects):
        raise ValidationError({'projects': ['ожидается список объектов {label, name, board_id?}']})
    with hub.write():
        update_settings(hub, values)
        existing = {label.casefold() for label in projects.project_labels(hub)}
        created = []
        for item in raw_projects:
            label = item.get('label')
            if isinstance(label, str) and label.casefold() in existing:
                continue
            projects.create_project(hub, label, item.get('name', label), item.get('board_id'))
            existing.add(label.casefold())
            created.append(label)
    return {'projects_created': created}
