"""The `jira` module: command types (contract §9.2), estimates (§9.6), tables, retired settings.

Each validator takes the hub and the raw params and returns the normalized params, or raises
``ValidationError`` with field names relative to params (the queue prefixes
``commands[<i>].params.``). Validators are plain Python: a batch of hundreds of commands is
checked in a few milliseconds.

Decisions the contract left open:
- unknown params keys are refused (a typo would otherwise be silently ignored by the agent);
  ``refresh`` also accepts ``board_id`` (integer > 0), the board of commands queued before the v4
  migration that the agent still understands;
- temp keys (``new:<n>``) are accepted wherever a params field names an issue: ``epic_key`` of
  ``ensure_issue``, both ends of ``ensure_link``, ``key`` of ``add_comment`` and ``transition``;
- dates are ``YYYY-MM-DD`` and must be real calendar dates; ``summary`` ≤ 255 characters (Jira's
  limit); texts (``description``, ``body``) ≤ 32,000 characters (Jira's default limit).
"""
from __future__ import annotations

import re
from datetime import date
from typing import Any, Mapping

from ..errors import ValidationError
from .base import CommandType, Module

DEPRECATED_SETTINGS = ('status_labels', 'transitions_map')
TABLES = ('jira_project', 'jira_board', 'jira_sprint', 'issue_sprint')

ISSUE_KEY = re.compile(r'^[A-Z][A-Z0-9_]*-[0-9]+$')
TEMP_KEY = re.compile(r'^new:[0-9]+$')
_DATE = re.compile(r'^\d{4}-\d{2}-\d{2}$')
SUMMARY_MAX = 255
TEXT_MAX = 32000
ESTIMATED_CALLS_ENSURE_ISSUE = 3


def is_issue_key(value: object) -> bool:
    """A Jira issue key like ``AURORA-1640``."""
    return isinstance(value, str) and ISSUE_KEY.match(value) is not None


def is_temp_key(value: object) -> bool:
    """A temp key like ``new:5`` (an issue an earlier ``ensure_issue`` of the batch creates)."""
    return isinstance(value, str) and TEMP_KEY.match(value) is not None


class _Checker:
    """Collects field errors of one params object, then raises them all at once."""

    def __init__(self, params: object, allowed: tuple[str, ...]):
        if not isinstance(params, Mapping):
            raise ValidationError({'_params': ['ожидается объект параметров']})
        self.params = params
        self.errors: dict[str, list[str]] = {}
        self.out: dict[str, Any] = {}
        for name in params:
            if name not in allowed:
                self.fail(str(name), 'неизвестный параметр')

    def fail(self, name: str, message: str) -> None:
        self.errors.setdefault(name, []).append(message)

    def text(self, name: str, *, required: bool = False, max_len: int = TEXT_MAX,
             strip: bool = False) -> None:
        if name not in self.params or (self.params[name] is None and not required):
            if required:
                self.fail(name, 'обязательное поле')
            return
        value = self.params[name]
        if not isinstance(value, str):
            self.fail(name, 'ожидается строка')
            return
        if strip:
            value = value.strip()
        if required and not value.strip():
            self.fail(name, 'не может быть пустым')
        elif len(value) > max_len:
            self.fail(name, f'длиннее {max_len} символов')
        else:
            self.out[name] = value

    def key(self, name: str, *, required: bool = False, temp: bool = True) -> None:
        if name not in self.params or (self.params[name] is None and not required):
            if required:
                self.fail(name, 'обязательное поле')
            return
        value = self.params[name]
        if is_issue_key(value) or (temp and is_temp_key(value)):
            self.out[name] = value
        elif temp:
            self.fail(name, 'ожидается ключ задачи (AURORA-1) или временный ключ (new:1)')
        else:
            self.fail(name, 'ожидается ключ задачи, например AURORA-1')

    def day(self, name: str) -> None:
        value = self.params.get(name)
        if value is None:
            return
        try:
            if not (isinstance(value, str) and _DATE.match(value)):
                raise ValueError
            date.fromisoformat(value)
        except ValueError:
            self.fail(name, 'ожидается дата YYYY-MM-DD')
            return
        self.out[name] = value

    def setting_key(self, name: str, mapping: object, what: str) -> None:
        value = self.params.get(name)
        if value is None:
            self.fail(name, 'обязательное поле')
        elif not isinstance(value, str):
            self.fail(name, 'ожидается строка')
        elif not isinstance(mapping, Mapping) or value not in mapping:
            configured = ', '.join(mapping) if isinstance(mapping, Mapping) and mapping else 'нет'
            self.fail(name, f'{what} {value!r} не настроен (настроены: {configured})')
        else:
            self.out[name] = value

    def done(self) -> dict:
        if self.errors:
            raise ValidationError(self.errors)
        return self.out


def _setting(hub: Any, key: str) -> Any:
    from ..settings import setting  # settings imports the module registry
    return setting(hub, key)


# --- params validators ---------------------------------------------------------------------------

def validate_refresh(hub: Any, params: Mapping[str, Any]) -> dict:
    """``refresh``: exactly one of ``jql`` (string) or ``keys`` (non-empty list of issue keys)."""
    check = _Checker(params, ('jql', 'keys', 'board_id'))
    has_jql = params.get('jql') is not None
    has_keys = params.get('keys') is not None
    if has_jql == has_keys:
        check.fail('jql', 'нужен ровно один из параметров jql или keys')
    elif has_jql:
        check.text('jql', required=True)
    else:
        keys = params['keys']
        if not isinstance(keys, list) or not keys:
            check.fail('keys', 'ожидается непустой список ключей задач')
        elif not all(is_issue_key(key) for key in keys):
            check.fail('keys', 'каждый элемент — ключ задачи, например AURORA-1')
        else:
            check.out['keys'] = list(keys)
    board_id = params.get('board_id')
    if board_id is not None:
        if isinstance(board_id, bool) or not isinstance(board_id, int) or not 0 < board_id < 2**63:
            check.fail('board_id', 'номер доски — целое больше нуля или null')
        else:
            check.out['board_id'] = board_id
    return check.done()


_ENSURE_ISSUE_TEXTS = ('description', 'priority', 'assignee')


def validate_ensure_issue(hub: Any, params: Mapping[str, Any]) -> dict:
    """``ensure_issue``: configured ``issue_type``, ``summary``, at most one of key/temp_key."""
    check = _Checker(params, ('issue_type', 'summary', 'key', 'temp_key', 'description', 'priority',
                              'assignee', 'duedate', 'planned_start', 'planned_end', 'epic_key',
                              'labels'))
    check.setting_key('issue_type', _setting(hub, 'issue_types'), 'тип задачи')
    check.text('summary', required=True, max_len=SUMMARY_MAX, strip=True)
    if params.get('key') is not None and params.get('temp_key') is not None:
        check.fail('temp_key', 'нужен только один из параметров key или temp_key')
    else:
        check.key('key', temp=False)
        temp_key = params.get('temp_key')
        if temp_key is not None:
            if is_temp_key(temp_key):
                check.out['temp_key'] = temp_key
            else:
                check.fail('temp_key', 'ожидается временный ключ new:<n>')
    for name in _ENSURE_ISSUE_TEXTS:
        check.text(name)
    for name in ('duedate', 'planned_start', 'planned_end'):
        check.day(name)
    check.key('epic_key')
    labels = params.get('labels')
    if labels is not None:
        if not isinstance(labels, list) or not all(
                isinstance(label, str) and label and not any(ch.isspace() for ch in label)
                for label in labels):
            check.fail('labels', 'ожидается список меток без пробелов')
        else:
            check.out['labels'] = list(labels)
    return check.done()


def validate_ensure_link(hub: Any, params: Mapping[str, Any]) -> dict:
    """``ensure_link``: source and target (keys or temp keys), configured ``link_type``."""
    check = _Checker(params, ('source_key', 'target_key', 'link_type'))
    check.key('source_key', required=True)
    check.key('target_key', required=True)
    check.setting_key('link_type', _setting(hub, 'link_types'), 'тип связи')
    return check.done()


def validate_add_comment(hub: Any, params: Mapping[str, Any]) -> dict:
    """``add_comment``: ``key`` and a non-empty ``body``."""
    check = _Checker(params, ('key', 'body'))
    check.key('key', required=True)
    check.text('body', required=True)
    return check.done()


def validate_transition(hub: Any, params: Mapping[str, Any]) -> dict:
    """``transition``: ``key`` and the target ``status`` name."""
    check = _Checker(params, ('key', 'status'))
    check.key('key', required=True)
    check.text('status', required=True, max_len=255, strip=True)
    return check.done()


def validate_fetch_attachment(hub: Any, params: Mapping[str, Any]) -> dict:
    """``fetch_attachment``: ``attachment_id`` of an attachment listed in ``issue_attachment``."""
    check = _Checker(params, ('attachment_id',))
    attachment_id = params.get('attachment_id')
    if isinstance(attachment_id, int) and not isinstance(attachment_id, bool):
        attachment_id = str(attachment_id)  # Jira ids are numeric strings; accept the number too
    if not isinstance(attachment_id, str) or not attachment_id:
        check.fail('attachment_id', 'обязательное поле: id вложения')
    elif hub.db.execute_sql('SELECT 1 FROM issue_attachment WHERE attachment_id = ?',
                            (attachment_id,)).fetchone() is None:
        check.fail('attachment_id', f'вложения {attachment_id} нет в зеркале')
    else:
        check.out['attachment_id'] = attachment_id
    return check.done()


# --- Jira-call estimates (contract §9.6) ---------------------------------------------------------

def estimate_refresh(hub: Any, params: Mapping[str, Any]) -> int:
    """By keys: one call per key; by jql: the mirror's issues of the base JQL (a project label) + 1."""
    if params.get('keys'):
        return len(params['keys'])
    row = hub.db.execute_sql(
        'SELECT count(*) FROM issue i WHERE EXISTS (SELECT 1 FROM json_each(i.labels) AS l '
        'JOIN project p ON p.label = l.value)').fetchone()
    return row[0] + 1


COMMAND_TYPES = {
    'refresh': CommandType('refresh', validate_refresh, estimate_refresh),
    'ensure_issue': CommandType('ensure_issue', validate_ensure_issue,
                                ESTIMATED_CALLS_ENSURE_ISSUE, key_fields=('epic_key',)),
    'ensure_link': CommandType('ensure_link', validate_ensure_link, 1,
                               key_fields=('source_key', 'target_key')),
    'add_comment': CommandType('add_comment', validate_add_comment, 1, key_fields=('key',)),
    'transition': CommandType('transition', validate_transition, 1, key_fields=('key',)),
    'fetch_attachment': CommandType('fetch_attachment', validate_fetch_attachment, 1),
}

MODULE = Module(name='jira', command_types=COMMAND_TYPES,
                deprecated_settings=DEPRECATED_SETTINGS, tables=TABLES)
