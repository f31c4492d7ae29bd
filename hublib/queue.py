"""Command queue for interfaces: batches of agent commands (spec «Пакеты и команды», contract §9.1).

The agent side (claim, report, agent status) lives in ``hublib.claims`` and is re-exported here, so
``hublib.queue`` is the one entry point of the queue. A batch's status is computed from its
commands and ``cancelled_at`` at every read and never stored.
"""
from __future__ import annotations

import json
import math
from typing import Any, Mapping

from . import modules
from .db import Hub
from .errors import NotFoundError, ValidationError
from .modules.jira import is_temp_key
from .paging import decode_cursor, page, page_limit
from .settings import DEFAULT_PACING, setting

TERMINAL = ('done', 'failed', 'skipped', 'cancelled', 'confirmed_by_state')
STATUSES = ('queued', 'claimed') + TERMINAL
BATCH_STATUSES = ('queued', 'running', 'cancelled', 'done')
TITLE_MAX = 200
AUTHOR_MAX = 200
MAX_COMMANDS = 10000
LIMIT_DEFAULT = 50
LIMIT_MAX = 1000
SQLITE_INT_MAX = 2**63 - 1

COMMAND_COLUMNS = ('id', 'batch_id', 'seq', 'type', 'params', 'status', 'claimed_at', 'deliveries',
                   'finished_at', 'result', 'error', 'jira_calls', 'rate_limited', 'pause_seconds',
                   'depends_on')
_COMMAND_SELECT = f'SELECT {", ".join(COMMAND_COLUMNS)} FROM command'
BATCH_COLUMNS = ('id', 'title', 'author', 'project', 'created_at', 'cancelled_at',
                 'estimate_seconds')


def _decode(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:  # a legacy row written by hand: show it rather than fail the whole read
        return text


def dump(value: Any) -> str | None:
    """JSON text of a params/result value as the queue stores it."""
    return None if value is None else json.dumps(value, ensure_ascii=False)


def command_dict(row: tuple) -> dict:
    """A ``command`` row (selected in ``COMMAND_COLUMNS`` order) as the API shows it."""
    item = dict(zip(COMMAND_COLUMNS, row))
    item['params'] = _decode(item['params']) or {}
    item['result'] = _decode(item['result'])
    return item


def command_row(hub: Hub, command_id: int) -> dict:
    """One command as a dict; NotFoundError when there is none."""
    row = hub.db.execute_sql(_COMMAND_SELECT + ' WHERE id = ?', (command_id,)).fetchone()
    if row is None:
        raise NotFoundError(COMMAND_NOT_FOUND.format(command_id))
    return command_dict(row)


def command(hub: Hub, command_id: int) -> dict:
    """One command (contract §9.1 ``GET /commands/{id}``)."""
    return command_row(hub, _positive_int(command_id, 'id', COMMAND_NOT_FOUND))


def _positive_int(value: object, name: str, not_found: str | None = None) -> int:
    """An id or count from a path or query string; NotFoundError(``not_found``) when given, else
    a ValidationError naming ``name``."""
    if isinstance(value, str) and value.isdecimal():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= SQLITE_INT_MAX:
        if not_found is not None:
            raise NotFoundError(not_found.format(value))
        raise ValidationError({name: ['ожидается целое больше нуля']})
    return value


BATCH_NOT_FOUND = 'пакета #{} нет'
COMMAND_NOT_FOUND = 'команды #{} нет'


# --- batch status --------------------------------------------------------------------------------

# The status rule of contract §9.1, computed from the commands in one statement for one batch
# (``:id``) or a page of them, so the status filter and the single-batch view share it.
_COUNT_COLUMNS = ', '.join(f"coalesce(sum(c.status = '{s}'), 0) AS {s}" for s in STATUSES)
_BATCHES_SQL = f"""
WITH counted AS (
  SELECT {', '.join('b.' + c for c in BATCH_COLUMNS)}, count(c.id) AS total, {_COUNT_COLUMNS}
  FROM (SELECT * FROM batch
        WHERE (:id IS NULL OR id = :id) AND (:project IS NULL OR project = :project)
          AND (:cursor IS NULL OR id < :cursor)
        ORDER BY id DESC LIMIT :candidates) b
  LEFT JOIN command c ON c.batch_id = b.id
  GROUP BY b.id),
stated AS (
  SELECT *, CASE WHEN total > 0 AND queued = total THEN 'queued'
                 WHEN queued + claimed > 0 THEN 'running'
                 WHEN cancelled_at IS NOT NULL THEN 'cancelled'
                 ELSE 'done' END AS status
  FROM counted)
SELECT {', '.join(BATCH_COLUMNS)}, status, {', '.join(STATUSES)} FROM stated
WHERE (:status IS NULL OR status = :status)
ORDER BY id DESC LIMIT :limit
"""


def _batch_dict(row: tuple) -> dict:
    item = dict(zip(BATCH_COLUMNS + ('status',), row))
    item['counts'] = dict(zip(STATUSES, row[len(BATCH_COLUMNS) + 1:]))
    return item


def _batch(hub: Hub, batch_id: int, *, with_commands: bool) -> dict:
    row = hub.db.execute_sql(_BATCHES_SQL, {'id': batch_id, 'project': None, 'cursor': None,
                                            'status': None, 'limit': 1, 'candidates': 1}
                             ).fetchone()
    if row is None:
        raise NotFoundError(BATCH_NOT_FOUND.format(batch_id))
    item = _batch_dict(row)
    if with_commands:
        item['commands'] = [command_dict(r) for r in hub.db.execute_sql(
            _COMMAND_SELECT + ' WHERE batch_id = ? ORDER BY seq', (batch_id,))]
    return item


def batch(hub: Hub, batch_id: int) -> dict:
    """One batch with its status, counts and commands."""
    batch_id = _positive_int(batch_id, 'id', BATCH_NOT_FOUND)
    with hub.read():
        return _batch(hub, batch_id, with_commands=True)


def batches(hub: Hub, *, status: str | None = None, project: str | None = None,
            limit: int | str | None = LIMIT_DEFAULT, cursor: str | None = None) -> dict:
    """Batches newest first, filtered by computed status and project; keyset pagination by id."""
    errors: dict[str, list[str]] = {}
    if status is not None and status not in BATCH_STATUSES:
        errors['status'] = [f'ожидается один из: {", ".join(BATCH_STATUSES)}']
    if project is not None and not isinstance(project, str):
        errors['project'] = ['ожидается метка проекта']
    if errors:
        raise ValidationError(errors)
    limit = page_limit(limit, LIMIT_DEFAULT, LIMIT_MAX)
    after = decode_cursor(cursor, (int,))
    after = after[0] if after else None
    with hub.read():
        rows = hub.db.execute_sql(_BATCHES_SQL, {'id': None, 'project': project, 'cursor': after,
                                                 'status': status, 'limit': limit + 1,
                                                 # without a status filter only one page of
                                                 # batches needs its counts
                                                 'candidates': -1 if status else limit + 1}
                                  ).fetchall()
    rows, next_cursor = page(rows, limit, lambda row: [row[0]])
    return {'items': [_batch_dict(row) for row in rows], 'next_cursor': next_cursor}


# --- creating and cancelling ---------------------------------------------------------------------

def pacing(hub: Hub) -> dict:
    """The ``pacing`` setting over its defaults."""
    stored = setting(hub, 'pacing', None)
    return {**DEFAULT_PACING, **(stored if isinstance(stored, dict) else {})}


def _validate_commands(hub: Hub, commands: object) -> tuple[list[dict], dict[str, list[str]]]:
    errors: dict[str, list[str]] = {}
    if not isinstance(commands, list) or not commands:
        return [], {'commands': ['ожидается непустой список команд']}
    if len(commands) > MAX_COMMANDS:
        return [], {'commands': [f'больше {MAX_COMMANDS} команд в одном пакете']}
    normalized: list[dict] = []
    temp_owners: dict[str, int] = {}
    for index, raw in enumerate(commands):
        prefix = f'commands[{index}]'
        if not isinstance(raw, dict):
            errors[prefix] = ['ожидается объект {type, params, depends_on?}']
            continue
        unknown = sorted(str(k) for k in raw if k not in ('type', 'params', 'depends_on'))
        for name in unknown:
            errors[f'{prefix}.{name}'] = ['неизвестное поле команды']
        type_name = raw.get('type')
        command_type = None
        if isinstance(type_name, str) and modules.module_of(type_name):
            command_type = modules.command_type(type_name)
        else:
            errors[f'{prefix}.type'] = ['неизвестный тип команды']
        params = raw.get('params')
        params = {} if params is None else params
        depends_on = raw.get('depends_on')
        if depends_on is not None and (isinstance(depends_on, bool)
                                       or not isinstance(depends_on, int)
                                       or not 1 <= depends_on <= index):
            errors[f'{prefix}.depends_on'] = [
                'ожидается номер (seq, с 1) более ранней команды этого пакета']
        if command_type is None:
            continue
        try:
            params = command_type.validate(hub, params)
        except ValidationError as exc:
            for name, messages in exc.fields.items():
                field = f'{prefix}.params' if name == '_params' else f'{prefix}.params.{name}'
                errors[field] = messages
            continue
        temp_key = params.get('temp_key') if type_name == 'ensure_issue' else None
        if temp_key is not None:
            if temp_key in temp_owners:
                errors[f'{prefix}.params.temp_key'] = [
                    f'временный ключ {temp_key} уже заводит команда {temp_owners[temp_key] + 1}']
            temp_owners[temp_key] = index
        normalized.append({'type': type_name, 'params': params, 'depends_on': depends_on,
                           'calls': command_type.estimate_calls})
    return normalized, errors


def create_batch(hub: Hub, *, title: str, author: str | None, commands: list[dict],
                 project: str | None = None, dry_run: bool = False) -> dict:
    """Validate every command and queue them as one batch; returns the batch with its commands.

    Command errors name the command by its 0-based position in ``commands`` (JSON-path style,
    ``commands[1].params.summary``), while ``depends_on`` counts 1-based (``seq``) as the contract
    says. Temp keys an ``ensure_issue`` creates must be unique within the batch.

    ``dry_run``: the same validation, nothing written; returns the preview (``preview_batch``).
    """
    errors: dict[str, list[str]] = {}
    if not isinstance(title, str) or not title.strip():
        errors['title'] = ['обязательное поле: название пакета']
    elif len(title.strip()) > TITLE_MAX:
        errors['title'] = [f'длиннее {TITLE_MAX} символов']
    if author is not None and (not isinstance(author, str) or len(author) > AUTHOR_MAX):
        errors['author'] = [f'ожидается строка до {AUTHOR_MAX} символов или null']
    if project is not None and not isinstance(project, str):
        errors['project'] = ['ожидается метка проекта или null']
    # A preview only reads (project, settings, attachments), so it never takes the write lock.
    with hub.read() if dry_run else hub.write():
        if project is not None and 'project' not in errors and hub.db.execute_sql(
                'SELECT 1 FROM project WHERE label = ?', (project,)).fetchone() is None:
            errors['project'] = [f'проекта {project!r} нет']
        normalized, command_errors = _validate_commands(hub, commands)
        errors.update(command_errors)
        if errors:
            raise ValidationError(errors)
        if dry_run:
            return preview_batch(hub, title=title.strip(), author=author, project=project,
                                 commands=normalized)
        batch_id = insert_batch(hub, title=title.strip(), author=author, project=project,
                                commands=normalized)
        return _batch(hub, batch_id, with_commands=True)


def preview_batch(hub: Hub, *, title: str, author: str | None, project: str | None,
                  commands: list[dict]) -> dict:
    """What ``insert_batch`` would queue, without queueing it.

    Nothing has an id yet, so ``depends_on`` stays the ``seq`` of the command depended on (as
    in the request), and params are shown normalized, as they would be stored.
    """
    return {'dry_run': True, 'title': title, 'author': author, 'project': project,
            'estimate_seconds': estimate_seconds(hub, commands),
            'commands': [{'seq': seq, 'type': item['type'], 'params': item['params'],
                          'depends_on': item.get('depends_on')}
                         for seq, item in enumerate(commands, start=1)]}


def estimate_seconds(hub: Hub, commands: list[dict]) -> int:
    """``estimate_seconds`` of a batch of validated commands (contract §9.6)."""
    calls = sum(item['calls'](hub, item['params']) if callable(item['calls']) else item['calls']
                for item in commands)
    return min(math.ceil(calls * pacing(hub)['interval_ms'] / 1000), 2**31 - 1)


def insert_batch(hub: Hub, *, title: str, author: str | None, project: str | None,
                 commands: list[dict]) -> int:
    """Queue already-validated commands (``type``, ``params``, ``depends_on`` seq, ``calls``).

    The caller holds the write transaction. The hub's own batches (auto refresh) come here
    directly: their params are built by the hub, not typed by a client, and must never be
    refused by a client-input limit.
    """
    estimate = estimate_seconds(hub, commands)
    batch_id = hub.db.execute_sql(
        'INSERT INTO batch (title, author, created_at, estimate_seconds, project) '
        'VALUES (?, ?, ?, ?, ?)', (title, author, hub.now(), estimate, project)).lastrowid
    ids: list[int] = []
    for seq, item in enumerate(commands, start=1):
        depends_on = ids[item['depends_on'] - 1] if item.get('depends_on') else None
        ids.append(hub.db.execute_sql(
            'INSERT INTO command (batch_id, seq, type, params, status, depends_on) '
            "VALUES (?, ?, ?, ?, 'queued', ?)",
            (batch_id, seq, item['type'], dump(item['params']), depends_on)).lastrowid)
    return batch_id


def cancel_batch(hub: Hub, batch_id: int) -> dict:
    """Cancel a batch: ``cancelled_at`` once, queued commands → cancelled. Idempotent."""
    batch_id = _positive_int(batch_id, 'id', BATCH_NOT_FOUND)
    with hub.write():
        now = hub.now()
        if hub.db.execute_sql('UPDATE batch SET cancelled_at = coalesce(cancelled_at, ?) '
                              'WHERE id = ?', (now, batch_id)).rowcount != 1:
            raise NotFoundError(BATCH_NOT_FOUND.format(batch_id))
        hub.db.execute_sql("UPDATE command SET status = 'cancelled', finished_at = ? "
                           "WHERE batch_id = ? AND status = 'queued'", (now, batch_id))
        return _batch(hub, batch_id, with_commands=True)


def uses_temp_key(params: Mapping[str, Any], type_name: str) -> dict[str, str]:
    """The key fields of the command type that hold a temp key to resolve at delivery."""
    fields = modules.command_type(type_name).key_fields
    return {name: params[name] for name in fields if is_temp_key(params.get(name))}


_AGENT_SIDE = ('claim_command', 'report_command', 'agents')


def __getattr__(name: str):
    # The agent side lives in hublib.claims, which imports this module; resolving the re-exports
    # on first use keeps either import order working.
    if name in _AGENT_SIDE:
        from . import claims
        return getattr(claims, name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')

__all__ = ['create_batch', 'batch', 'batches', 'cancel_batch', 'command', 'claim_command',
           'report_command', 'agents']
