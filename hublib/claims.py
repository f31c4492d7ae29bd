"""The agent side of the queue: claim, report and agent status (contract §9.3–§9.5).

Every claim and report is one ``BEGIN IMMEDIATE`` transaction, and every state change re-checks
the row's state in the UPDATE's WHERE and trusts it only when ``rowcount == 1`` (the huey
pattern), so two agents asking at the same moment are serialized by the write lock and can never
both take one step of one command.

Claim and report are the hot path of the queue: their statements are SQL text built once at import
from the models' names (``models.SqlNames``). Measured on the 2-core VM: peewee builds a query in
~300 µs (a setting read 312 µs against 7 µs for the same prepared text, an UPDATE of a command
372 µs against 47 µs), so a claim → report round trip built with peewee (about ten statements)
took 1.27 ms in ``scripts/bench_queue.py`` where the prepared texts take 0.3 ms.
"""
from __future__ import annotations

import functools
import json
from datetime import datetime, timedelta
from sqlite3 import Cursor
from typing import Any, Mapping, Sequence

from . import fields, files, jsontext, modules, validators
from .batches import COMMAND_NOT_FOUND, HUB_AUTHOR, command_dict, follow_writes, insert_batch
from .db import Hub
from .errors import ConflictError, NotFoundError, ValidationError
from .models import AgentStatus, Command, LateDone, Setting, SqlNames, sql_list
from .notes import merge_note
from .settings import base_jql, pacing_of
from .statuses import ACTIVE, DONE_STATUSES, NOT_DONE, REPORT_STATUSES, TERMINAL
from .syncjournal import close_run, latest_full_run_started, open_run, restart_run
from .timeutil import FUTURE_TOLERANCE, format_utc, minutes_before, parse_utc
from .validation import Int, LenientSchema, UtcTime, is_issue_key, is_temp_key, load

MAX_DELIVERIES = 3
DELIVERY_LIMIT_ERROR = f'агент не отчитался после {MAX_DELIVERIES} выдач'
ERROR_MAX = 1500
ONLINE_MINUTES = 5
COUNTER_MAX = 2**31 - 1
AGENT_VERSION_MAX = 100
AUTO_REFRESH_TITLE = 'Автообновление'


# --- bodies ----------------------------------------------------------------------------------------

class AgentVersion(fields.String):
    """The agent's version: a string up to 100 characters, or an integer kept as its string."""

    OPENAPI = {'oneOf': [{'type': 'string', 'maxLength': AGENT_VERSION_MAX}, {'type': 'integer'}]}

    def __init__(self, **kwargs):
        super().__init__(validate=validators.Length(max=AGENT_VERSION_MAX), **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        if type(value) is int:
            value = str(value)
        return super()._deserialize(value, attr, data, **kwargs)


def _counter() -> Int:
    return Int(minimum=0, maximum=COUNTER_MAX, allow_none=True, load_default=None)


class ClaimBody(LenientSchema):
    """Body of ``POST /agent/claim``."""

    agent = modules.agent_field(description='модуль агента')
    agent_version = AgentVersion(allow_none=True, load_default=None)
    settings_version = _counter()
    last_jira_call_at = UtcTime(allow_none=True, load_default=None,
                                metadata={'description': 'последнее обращение агента к Jira'})


class ReportBody(LenientSchema):
    """Body of ``POST /agent/commands/{id}/report`` (``result``: the result schema of the type)."""

    agent = modules.agent_field(description='модуль агента')
    status = fields.String(required=True, validate=validators.OneOf(REPORT_STATUSES))
    result = fields.Dict(allow_none=True, load_default=None)
    error = fields.String(allow_none=True, load_default=None,
                          metadata={'description': f'обрезается до {ERROR_MAX} символов'})
    jira_calls = _counter()
    rate_limited = _counter()


# Schemas are built once: an instance costs ~100 µs (marshmallow copies its fields), a load ~40.
_CLAIM_BODY, _REPORT_BODY = ClaimBody(), ReportBody()
_RESULTS = modules.result_schemas()


# --- statements ------------------------------------------------------------------------------------

_COMMAND, _AGENT, _SETTING = SqlNames(Command), SqlNames(AgentStatus), SqlNames(Setting)
COMMAND_COLUMNS = _COMMAND.columns()
_SELECT = f'SELECT {", ".join(COMMAND_COLUMNS)} FROM {_COMMAND}'
_BY_ID = f'{_SELECT} WHERE {_COMMAND.id} = ?'
# The settings a claim needs, in one read.
CLAIM_SETTINGS = ('pacing', 'auto_refresh_minutes', 'settings_version')
_SETTINGS = (f'SELECT {_SETTING.key}, {_SETTING.value} FROM {_SETTING} '
             f'WHERE {_SETTING.key} IN ({sql_list(CLAIM_SETTINGS)})')
_REDELIVER = (
    f'UPDATE {_COMMAND} SET {_COMMAND.deliveries} = {_COMMAND.deliveries} + 1, '
    f'{_COMMAND.claimed_at} = ?, {_COMMAND.pause_seconds} = ? '
    f"WHERE {_COMMAND.id} = ? AND {_COMMAND.status} = 'claimed' AND {_COMMAND.deliveries} = ?")
_DELIVER = (
    f"UPDATE {_COMMAND} SET {_COMMAND.status} = 'claimed', "
    f'{_COMMAND.deliveries} = {_COMMAND.deliveries} + 1, {_COMMAND.claimed_at} = ?, '
    f"{_COMMAND.pause_seconds} = ? WHERE {_COMMAND.id} = ? AND {_COMMAND.status} = 'queued'")
# A hub-made ending: (new status, error, finished_at, id, status it must still have).
_END = (f'UPDATE {_COMMAND} SET {_COMMAND.status} = ?, {_COMMAND.error} = ?, '
        f'{_COMMAND.finished_at} = ? WHERE {_COMMAND.id} = ? AND {_COMMAND.status} = ?')
_DEPENDENTS = (f'SELECT {_COMMAND.id}, {_COMMAND.depends_on}, {_COMMAND.type} FROM {_COMMAND} '
               f"WHERE {_COMMAND.status} = 'queued' "
               f'AND {_COMMAND.depends_on} IN (SELECT value FROM json_each(?))')
_CREATED_KEY = (
    f"SELECT json_extract({_COMMAND.result}, '$.key') FROM {_COMMAND} "
    f'WHERE {_COMMAND.batch_id} = ? AND {_COMMAND.seq} < ? '
    f"AND {_COMMAND.type} = 'ensure_issue' AND json_extract({_COMMAND.params}, '$.temp_key') = ? "
    f"AND json_extract({_COMMAND.result}, '$.key') IS NOT NULL "
    f'ORDER BY {_COMMAND.seq} DESC LIMIT 1')
# A later ensure_issue that creates the same temp key. Searched by id from the reported command
# on (a rowid range: the queue's tail when the report is timely).
_LATER_CREATOR = (f"SELECT 1 FROM {_COMMAND} WHERE {_COMMAND.id} > ? "
                  f"AND {_COMMAND.type} = 'ensure_issue' "
                  f"AND json_extract({_COMMAND.params}, '$.temp_key') = ? LIMIT 1")
_REFRESH_ACTIVE = (f"SELECT 1 FROM {_COMMAND} WHERE {_COMMAND.type} = 'refresh' "
                   f'AND {_COMMAND.status} IN ({sql_list(ACTIVE)}) LIMIT 1')
_UPSERT_AGENT = (
    _AGENT.insert('agent', 'last_seen_at', 'agent_version', 'settings_version',
                  'current_command_id', 'last_call_at')
    + f' ON CONFLICT ({_AGENT.agent}) DO UPDATE SET '
    f'{_AGENT.last_seen_at} = excluded.{_AGENT.last_seen_at}, '
    + ', '.join(f'{name} = coalesce(excluded.{name}, {_AGENT}.{name})'
                for name in (_AGENT.agent_version, _AGENT.settings_version, _AGENT.last_call_at))
    + f', {_AGENT.current_command_id} = excluded.{_AGENT.current_command_id}')
_REPORT = (f'UPDATE {_COMMAND} SET {_COMMAND.status} = ?, {_COMMAND.finished_at} = ?, '
           f'{_COMMAND.result} = ?, {_COMMAND.error} = ?, {_COMMAND.jira_calls} = ?, '
           f"{_COMMAND.rate_limited} = ? WHERE {_COMMAND.id} = ? AND {_COMMAND.status} = 'claimed'")
_SET_RESULT = f'UPDATE {_COMMAND} SET {_COMMAND.result} = ? WHERE {_COMMAND.id} = ?'
# The queued commands of a batch after a seq: those an ensure_issue that got no key holds up.
_QUEUED_AFTER = (f'SELECT {_COMMAND.id}, {_COMMAND.type}, {_COMMAND.params}, {_COMMAND.depends_on} '
                 f"FROM {_COMMAND} WHERE {_COMMAND.batch_id} = ? AND {_COMMAND.seq} > ? "
                 f"AND {_COMMAND.status} = 'queued' ORDER BY {_COMMAND.seq}")
_LATE_DONE = SqlNames(LateDone).insert('command_id', conflict='IGNORE')
_CLEAR_CURRENT = (f'UPDATE {_AGENT} SET {_AGENT.current_command_id} = NULL '
                  f'WHERE {_AGENT.agent} = ? AND {_AGENT.current_command_id} = ?')
# The module's previous report: the 50 newest of each reportable status (status-index lookups
# instead of sorting the whole history on every claim).
_RECENTLY_REPORTED = 50


@functools.lru_cache(maxsize=None)
def _module_statements(types: tuple[str, ...]) -> dict[str, str]:
    """The statements that name a module's command types (built once per module)."""
    names = sql_list(types)
    command = _COMMAND
    return {
        'claimed': (f"{_SELECT} WHERE {command.status} = 'claimed' AND {command.type} IN ({names}) "
                    f'ORDER BY {command.batch_id}, {command.seq}'),
        'next': (
            f'SELECT {", ".join("c." + name for name in COMMAND_COLUMNS)}, d.{command.status} '
            f'FROM {command} c LEFT JOIN {command} d ON d.{command.id} = c.{command.depends_on} '
            f"WHERE c.{command.status} = 'queued' AND c.{command.type} IN ({names}) "
            f'AND (c.{command.depends_on} IS NULL OR d.{command.status} IN ({sql_list(TERMINAL)})) '
            f'ORDER BY c.{command.id} LIMIT 1'),
        'previous_report': (
            'WITH recent(id) AS ('
            + ' UNION ALL '.join(
                f'SELECT * FROM (SELECT {command.id} FROM {command} '
                f"WHERE {command.status} = '{status}' "
                f'ORDER BY {command.id} DESC LIMIT {_RECENTLY_REPORTED})'
                for status in REPORT_STATUSES)
            + f') SELECT c.{command.rate_limited} FROM recent '
            f'JOIN {command} c ON c.{command.id} = recent.id '
            f'WHERE c.{command.type} IN ({names}) AND c.{command.deliveries} > 0 '
            f"AND c.{command.finished_at} IS NOT NULL AND coalesce(c.{command.error}, '') != ? "
            f'ORDER BY c.{command.finished_at} DESC, c.{command.id} DESC LIMIT 1'),
    }


def _execute(hub: Hub, statement: str, params: Sequence[Any] = ()) -> Cursor:
    """Run one of the statements above: the one place this module reaches SQLite."""
    return hub.db.execute_sql(statement, params)


def _row(hub: Hub, command_id: int) -> dict:
    row = _execute(hub, _BY_ID, (command_id,)).fetchone()
    if row is None:
        raise NotFoundError(COMMAND_NOT_FOUND.format(command_id))
    return command_dict(zip(COMMAND_COLUMNS, row))


def _claim_settings(hub: Hub) -> dict[str, Any]:
    stored = {key: jsontext.load(text) for key, text in _execute(hub, _SETTINGS)}
    stored['pacing'] = pacing_of(stored.get('pacing'))
    return stored


# --- terminal steps --------------------------------------------------------------------------------

def _dependency_error(dependency_id: int) -> str:
    return f'зависимость #{dependency_id} не выполнена'


def skip_dependents(hub: Hub, command_id: int, now: str) -> list[str]:
    """Every queued command depending on ``command_id`` (transitively) → skipped; their types."""
    skipped: list[str] = []
    frontier = [command_id]
    while frontier:
        rows = _execute(hub, _DEPENDENTS, (json.dumps(frontier),)).fetchall()
        frontier = []
        for dependent, dependency, type_name in rows:
            if _execute(hub, _END, ('skipped', _dependency_error(dependency), now, dependent,
                                    'queued')).rowcount == 1:
                frontier.append(dependent)
                skipped.append(type_name)
    return skipped


def _unkeyed_error(temp_key: str) -> str:
    """Why a command waiting for ``temp_key`` was skipped: its ``ensure_issue`` ended done without
    ``result.key``."""
    return f'временный ключ {temp_key} не получил ключ Jira'


def _skip_unkeyed(hub: Hub, item: dict, now: str) -> None:
    """``item``, an ``ensure_issue`` with a temp key, ended done without ``result.key``: every
    queued command of its batch that depends on it or names its temp key is skipped at once
    naming the key (contract §9.4), and what depends on those (transitively).
    (``confirmed_by_state`` without a key, which no later report completes, leaves them to be
    skipped at delivery, :func:`_deliver_next`.)"""
    temp_key = item['params'].get('temp_key')
    for command_id, type_name, params, depends_on in _execute(
            hub, _QUEUED_AFTER, (item['batch_id'], item['seq'])).fetchall():
        params = jsontext.load(params) or {}
        names_key = any(params.get(name) == temp_key
                        for name in modules.command_type(type_name).key_fields)
        if (depends_on == item['id'] or names_key) and _execute(
                hub, _END, ('skipped', _unkeyed_error(temp_key), now, command_id,
                            'queued')).rowcount == 1:
            skip_dependents(hub, command_id, now)


def _ended(hub: Hub, item: dict, now: str, *, dependents: bool) -> None:
    """After ``item`` became terminal: its dependents are skipped (when it was not done) and the
    batch's writes may be over (read your writes)."""
    skipped = skip_dependents(hub, item['id'], now) if dependents else []
    if item['type'] in modules.WRITE_TYPES or set(skipped) & set(modules.WRITE_TYPES):
        follow_writes(hub, item['batch_id'])


# --- claim -----------------------------------------------------------------------------------------

def _pause_seconds(hub: Hub, statements: dict[str, str], pacing: Mapping[str, int]) -> int:
    """``pause_on_rate_limit_seconds`` when the module's previous report was rate limited.

    "The previous report" is the module's command an agent finished last (largest
    ``finished_at``, then id). Hub-made endings carry no report: never delivered, or failed by
    the delivery limit. Decision: only the 50 newest commands of each reportable status are
    looked at; the agent works through the queue in id order, so its last report is among them.
    """
    row = _execute(hub, statements['previous_report'], (DELIVERY_LIMIT_ERROR,)).fetchone()
    return int(pacing['pause_on_rate_limit_seconds']) if row and row[0] else 0


def _resolve_temp_keys(hub: Hub, item: dict) -> tuple[dict, str | None]:
    """Params with temp keys replaced by real keys, or the first temp key that has none.

    A temp key is created by the ``ensure_issue`` of the same batch, earlier by ``seq``, whose
    ``temp_key`` it is (checked when the batch was queued); its ``result.key`` resolves it.
    """
    params = item['params']
    for name in modules.command_type(item['type']).key_fields:
        temp_key = params.get(name)
        if not is_temp_key(temp_key):
            continue
        row = _execute(hub, _CREATED_KEY, (item['batch_id'], item['seq'], temp_key)).fetchone()
        if row is None or not is_issue_key(row[0]):
            return params, temp_key
        params = {**params, name: row[0]}
    return params, None


def _delivery(item: dict, params: dict, pause: int) -> dict:
    return {'id': item['id'], 'batch_id': item['batch_id'], 'seq': item['seq'],
            'type': item['type'], 'params': params, 'deliveries': item['deliveries'] + 1,
            'pause_seconds': pause}


def _redeliver_lost(hub: Hub, statements: dict[str, str], now: str, pause: int) -> dict | None:
    """Step 1: a claimed command of the module lost its delivery: deliver again or give up."""
    for row in _execute(hub, statements['claimed']).fetchall():
        item = command_dict(zip(COMMAND_COLUMNS, row))
        if item['deliveries'] < MAX_DELIVERIES:
            if _execute(hub, _REDELIVER,
                        (now, pause, item['id'], item['deliveries'])).rowcount != 1:
                continue
            if item['type'] == 'refresh':
                restart_run(hub, item['id'], item['params'])
            return _delivery(item, _resolve_temp_keys(hub, item)[0], pause)
        if _execute(hub, _END,
                    ('failed', DELIVERY_LIMIT_ERROR, now, item['id'], 'claimed')).rowcount != 1:
            continue
        if item['type'] == 'refresh':
            close_run(hub, item['id'], status='failed', params=item['params'], result=None,
                      jira_calls=item['jira_calls'] or 0, rate_limited=item['rate_limited'] or 0)
        _ended(hub, item, now, dependents=True)
    return None


def _auto_refresh(hub: Hub, now: str, minutes: object) -> None:
    """Step 2: queue «Автообновление» when the last full refresh is older than the setting."""
    if not isinstance(minutes, int) or minutes <= 0:
        return
    if _execute(hub, _REFRESH_ACTIVE).fetchone():
        return
    jql = base_jql(hub)
    if jql is None:
        return
    started = latest_full_run_started(hub, jql)
    if started is not None and started > minutes_before(now, minutes):
        return
    insert_batch(hub, title=AUTO_REFRESH_TITLE, author=HUB_AUTHOR, project=None,
                 commands=[{'type': 'refresh', 'params': {'jql': jql}}])


def _deliver_next(hub: Hub, statements: dict[str, str], now: str, pause: int) -> dict | None:
    """Step 3: the first deliverable queued command; dead dependencies and temp keys → skipped.

    Order by id is order by (batch_id, seq): a batch's commands are inserted in seq order in the
    transaction that creates the batch, and ids only grow. It lets the status index hand out the
    first queued command without sorting the whole queue on every claim.

    Decision: a command whose dependency is not terminal yet (possible only across modules) is
    passed over until it is, rather than blocking the whole queue of the module.
    """
    while True:
        row = _execute(hub, statements['next']).fetchone()
        if row is None:
            return None
        item, dependency_status = command_dict(zip(COMMAND_COLUMNS, row)), row[-1]
        params, error = item['params'], None
        if dependency_status in NOT_DONE:
            error = _dependency_error(item['depends_on'])
        else:
            params, unresolved = _resolve_temp_keys(hub, item)
            if unresolved:
                error = (f'временный ключ {unresolved} не разрешён: команда ensure_issue, '
                         f'которая его заводит, не вернула ключ задачи')
        if error is not None:
            if _execute(hub, _END, ('skipped', error, now, item['id'], 'queued')).rowcount == 1:
                _ended(hub, item, now, dependents=True)
            continue
        if _execute(hub, _DELIVER, (now, pause, item['id'])).rowcount != 1:
            continue
        if item['type'] == 'refresh':
            open_run(hub, item['id'], item['params'])
        return _delivery(item, params, pause)


def claim_command(hub: Hub, *, agent: str, agent_version: str | int | None = None,
                  settings_version: int | None = None,
                  last_jira_call_at: datetime | str | None = None) -> dict:
    """:func:`submit_claim` with the fields of the body as arguments."""
    return submit_claim(hub, {'agent': agent, 'agent_version': agent_version,
                              'settings_version': settings_version,
                              'last_jira_call_at': last_jira_call_at})


def submit_claim(hub: Hub, body: Mapping[str, Any]) -> dict:
    """The next delivery for the agent of module ``body.agent`` (contract §9.3): the body of
    ``POST /agent/claim``, checked once by :class:`ClaimBody`; one write transaction."""
    args = load(_CLAIM_BODY, body)
    module = modules.MODULES[args['agent']]
    last_call = args['last_jira_call_at']
    statements = _module_statements(tuple(module.command_types))
    with hub.write():
        now = hub.now()
        stored = _claim_settings(hub)
        delivered = None
        if module.command_types:
            pause = _pause_seconds(hub, statements, stored['pacing'])
            delivered = _redeliver_lost(hub, statements, now, pause)
            if delivered is None:
                if 'refresh' in module.command_types:
                    _auto_refresh(hub, now, stored.get('auto_refresh_minutes'))
                delivered = _deliver_next(hub, statements, now, pause)
        _execute(hub, _UPSERT_AGENT, (
            module.name, now, args['agent_version'], args['settings_version'],
            delivered['id'] if delivered else None,
            format_utc(last_call) if last_call is not None else None))
        return {'command': delivered, 'settings_version': stored.get('settings_version')}


# --- report ----------------------------------------------------------------------------------------

DONE_REQUIRES_MESSAGE = 'обязательное поле в отчёте со статусом done'


def _checked_result(type_name: str, status: str, result: dict | None) -> dict | None:
    """``result`` when it fits the result schema of its type (field names ``result.<field>``)
    and, for ``done``, carries what the type needs of a done command (``done_requires``)."""
    if result is not None:
        load(_RESULTS[type_name], result, prefix='result')
    if status == 'done':
        missing = [name for name in modules.command_type(type_name).done_requires
                   if (result or {}).get(name) is None]
        if missing:
            raise ValidationError({f'result.{name}': [DONE_REQUIRES_MESSAGE] for name in missing})
    return result


def _created_key(result: dict | None) -> str | None:
    """The issue key an ``ensure_issue`` reported (``result.key``), if any."""
    key = (result or {}).get('key')
    return key if is_issue_key(key) else None


def _completes(item: dict, status: str, result: dict | None) -> bool:
    """Whether a report on the finished ``item`` completes it rather than contradicting it: an
    ``ensure_issue`` stored ``done`` without ``result.key``, reported ``done`` with one (contract
    §9.4). The key is stored and the note moves; what was skipped for want of it stays skipped
    (``POST /batches/{id}/retry`` queues it again). Any other change of a finished outcome is a
    contradiction (409)."""
    return (item['type'] == 'ensure_issue' and item['status'] == status == 'done'
            and _created_key(item['result']) is None and _created_key(result) is not None)


def _apply_done(hub: Hub, item: dict, result: dict | None) -> None:
    """Side effects of a done/confirmed_by_state report (also of a late one), refresh aside.

    The note under a temp key belongs to the newest ``ensure_issue`` that creates that key: once
    the hub has failed or cancelled one, the key is free for another batch (a retry, contract
    §9.4b), and a late ``done`` of the old command must not carry the new one's note off to the
    old issue. So the note moves only when no later ``ensure_issue`` names the same temp key.
    """
    result = result or {}
    if item['type'] == 'ensure_issue':
        temp_key = item['params'].get('temp_key')
        if temp_key and is_issue_key(result.get('key')) and not _execute(
                hub, _LATER_CREATOR, (item['id'], temp_key)).fetchone():
            merge_note(hub, temp_key, result['key'])
    elif item['type'] == 'fetch_attachment':
        if result.get('sha256') is None:
            raise ValidationError({'result.sha256': ['обязательное поле: sha256 скачанного файла']})
        files.record_download(hub, item['params']['attachment_id'], result['sha256'],
                              result.get('size'))


def report_command(hub: Hub, command_id: int, *, agent: str, status: str,
                   result: dict | None = None, error: str | None = None,
                   jira_calls: int | None = 0, rate_limited: int | None = 0) -> dict:
    """:func:`submit_report` with the fields of the body as arguments."""
    return submit_report(hub, command_id, {
        'agent': agent, 'status': status, 'result': result, 'error': error,
        'jira_calls': jira_calls, 'rate_limited': rate_limited})


def submit_report(hub: Hub, command_id: int, body: Mapping[str, Any]) -> dict:
    """Record the agent's report of a delivery (contract §9.4): the body of
    ``POST /agent/commands/{id}/report``, checked once by :class:`ReportBody`; the command plus
    ``late``.

    A report on a command already done, confirmed or skipped is idempotent only as a
    repetition: the same status and result → 200, nothing changes; a different status or result →
    409 (the hub keeps the outcome it recorded first). One report completes instead: ``done`` with
    ``result.key`` on an ``ensure_issue`` stored ``done`` without one (:func:`_completes`).

    An ``ensure_issue`` reported ``done`` without ``result.key`` (an agent that lost it) is kept
    as done: a 422 would leave it claimed, and its redelivery could create the issue in Jira a
    second time. What waits for its temp key is skipped at once naming it
    (:func:`_skip_unkeyed`). Decisions: a ``done`` report must still carry what the hub needs to
    record a download (``fetch_attachment``: ``result.sha256``), else 422 and the command stays
    claimed (a second download harms nothing). Counters and ``error`` of a repetition are not
    compared.
    """
    args = load(_REPORT_BODY, body)
    module = modules.MODULES[args['agent']]
    status, result = args['status'], args['result']
    error = args['error'][:ERROR_MAX] if args['error'] is not None else None
    jira_calls, rate_limited = args['jira_calls'] or 0, args['rate_limited'] or 0
    with hub.write():
        item = _row(hub, command_id)
        owner = modules.module_of(item['type'])
        if owner != module.name:
            raise ConflictError(
                f'команда #{command_id} принадлежит модулю {owner}, не {module.name}')
        if item['status'] == 'queued':
            raise ConflictError(f'команда #{command_id} ещё не выдана агенту')
        result = _checked_result(item['type'], status, result)
        late = item['status'] in ('failed', 'cancelled')
        if item['status'] not in ('claimed', 'failed', 'cancelled'):
            # done, confirmed_by_state, skipped: the outcome is recorded; the same report again
            # (a lost answer) changes nothing, another one contradicts it
            if (status, result) == (item['status'], item['result']):
                return {**item, 'late': False}
            if not _completes(item, status, result):
                raise ConflictError(
                    f'команда #{command_id} уже завершена со статусом {item["status"]}; отчёт с '
                    'другим статусом или результатом не принят')
            _execute(hub, _SET_RESULT, (jsontext.dump(result), command_id))
            _apply_done(hub, item, result)
            follow_writes(hub, item['batch_id'])
            return {**_row(hub, command_id), 'late': False}
        now = hub.now()
        if late:
            if result is not None:
                _execute(hub, _SET_RESULT, (jsontext.dump(result), command_id))
        else:
            if _execute(hub, _REPORT, (status, now, jsontext.dump(result), error, jira_calls,
                                       rate_limited, command_id)).rowcount != 1:
                # unreachable under the write lock; the huey pattern trusts rowcount only
                raise ConflictError(f'команда #{command_id} уже не выдана')
            _execute(hub, _CLEAR_CURRENT, (module.name, command_id))
        if status in DONE_STATUSES:
            _apply_done(hub, item, result)
            if late:
                _execute(hub, _LATE_DONE, (command_id,))
            elif status == 'done' and item['type'] == 'ensure_issue' \
                    and item['params'].get('temp_key') and not _created_key(result):
                _skip_unkeyed(hub, item, now)
        # A late report leaves the run as the hub closed it: the command stays failed, and the
        # spec (001 «Отметка журнала…») keeps history_at NULL and marks no neighbours for a
        # refresh that did not end done; contract §9.4's "side effects still apply" yields here.
        if item['type'] == 'refresh' and item['deliveries'] > 0 and not late:
            close_run(hub, command_id, status=status, params=item['params'], result=result,
                      jira_calls=jira_calls, rate_limited=rate_limited)
        if not late or status in DONE_STATUSES:
            _ended(hub, item, now, dependents=not late and status in ('failed', 'skipped'))
        return {**_row(hub, command_id), 'late': late}


# --- agents ----------------------------------------------------------------------------------------

def _online(last_seen_at: str | None, now: datetime) -> bool:
    if not last_seen_at:
        return False
    try:
        return -FUTURE_TOLERANCE <= now - parse_utc(last_seen_at) \
            < timedelta(minutes=ONLINE_MINUTES)
    except ValueError:
        return False


def agents(hub: Hub) -> dict:
    """Status of every registered module's agent, with ``online`` and ``redelivered``."""
    now = hub.clock()
    columns = AgentStatus._meta.sorted_field_names
    with hub.read():
        rows = {row['agent']: row for row in AgentStatus.select().dicts().execute(hub.db)}
        redelivered = list(Command.select(Command.id, Command.type, Command.claimed_at,
                                          Command.deliveries)
                           .where((Command.status == 'claimed') & (Command.deliveries > 1))
                           .order_by(Command.id).dicts().execute(hub.db))
    items = []
    for name, module in modules.MODULES.items():
        item = rows.get(name) or dict.fromkeys(columns)
        item['agent'] = name
        item['online'] = _online(item['last_seen_at'], now)
        item['redelivered'] = [row for row in redelivered if row['type'] in module.command_types]
        items.append(item)
    return {'items': items}


__all__ = ['claim_command', 'submit_claim', 'report_command', 'submit_report', 'agents',
           'skip_dependents', 'ClaimBody', 'ReportBody', 'MAX_DELIVERIES', 'DELIVERY_LIMIT_ERROR']
