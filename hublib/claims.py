"""The agent side of the queue: claim, report and agent status (contract §9.3–§9.5).

Import these through ``hublib.queue``. Every claim and report is one ``BEGIN IMMEDIATE``
transaction, and every state change re-checks the row's state in the UPDATE's WHERE and trusts
it only when ``rowcount == 1`` (the huey pattern), so two agents asking at the same moment are
serialized by the write lock and can never both take one step of one command.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from . import modules
from .db import Hub
from .errors import ConflictError, ValidationError
from .modules.jira import is_issue_key
from .notes import merge_note
from .queue import (COMMAND_COLUMNS, COMMAND_NOT_FOUND, _COMMAND_SELECT, _positive_int,
                    command_dict, command_row, dump, insert_batch, pacing, uses_temp_key)
from .settings import setting
from .timeutil import minutes_before, parse_utc, to_utc

MAX_DELIVERIES = 3
DELIVERY_LIMIT_ERROR = f'агент не отчитался после {MAX_DELIVERIES} выдач'
ERROR_MAX = 1500
REPORT_STATUSES = ('done', 'failed', 'skipped', 'confirmed_by_state')
DONE_STATUSES = ('done', 'confirmed_by_state')
NOT_DONE = ('failed', 'skipped', 'cancelled')
ONLINE_MINUTES = 5
COUNTER_MAX = 2**31 - 1
AUTO_REFRESH_TITLE = 'Автообновление'
AUTO_REFRESH_AUTHOR = 'hub'


def _journal():
    # Imported at call time: the sync journal belongs to the mirror work and imports the queue's
    # neighbours; only refresh commands need it.
    from . import syncjournal
    return syncjournal


def _in(types: tuple[str, ...]) -> str:
    return '(' + ', '.join('?' * len(types)) + ')'


def _dependency_error(dependency_id: int) -> str:
    return f'зависимость #{dependency_id} не выполнена'


def skip_dependents(hub: Hub, command_id: int, now: str) -> list[int]:
    """Every queued command depending on ``command_id`` (transitively) → skipped; their ids."""
    skipped: list[int] = []
    frontier = [command_id]
    while frontier:
        rows = hub.db.execute_sql(
            f"SELECT id, depends_on FROM command WHERE status = 'queued' "
            f"AND depends_on IN {_in(tuple(frontier))}", frontier).fetchall()
        frontier = []
        for dependent, dependency in rows:
            if hub.db.execute_sql(
                    "UPDATE command SET status = 'skipped', error = ?, finished_at = ? "
                    "WHERE id = ? AND status = 'queued'",
                    (_dependency_error(dependency), now, dependent)).rowcount == 1:
                frontier.append(dependent)
                skipped.append(dependent)
    return skipped


# --- claim ---------------------------------------------------------------------------------------

_RECENTLY_REPORTED = 50
_PREVIOUS_REPORT = (
    'WITH recent(id) AS ('
    + ' UNION ALL '.join(
        f"SELECT * FROM (SELECT id FROM command WHERE status = '{status}' "
        f"ORDER BY id DESC LIMIT {_RECENTLY_REPORTED})" for status in REPORT_STATUSES)
    + ') SELECT c.rate_limited FROM recent JOIN command c ON c.id = recent.id '
    'WHERE c.type IN {types} AND c.deliveries > 0 AND c.finished_at IS NOT NULL '
    "AND coalesce(c.error, '') != ? ORDER BY c.finished_at DESC, c.id DESC LIMIT 1")


def _pause_seconds(hub: Hub, types: tuple[str, ...], rules: dict) -> int:
    """``pause_on_rate_limit_seconds`` when the module's previous report was rate limited.

    "The previous report" is the module's command an agent finished last (largest
    ``finished_at``, then id). Hub-made endings carry no report: never delivered, or failed by
    the delivery limit. Decision: only the 50 newest commands of each reportable status are
    looked at (status-index lookups instead of sorting the whole history on every claim); the
    agent works through the queue in id order, so its last report is always among them.
    """
    row = hub.db.execute_sql(_PREVIOUS_REPORT.format(types=_in(types)),
                             (*types, DELIVERY_LIMIT_ERROR)).fetchone()
    return int(rules['pause_on_rate_limit_seconds']) if row and row[0] else 0


def _resolve_temp_keys(hub: Hub, item: dict) -> tuple[dict, str | None]:
    """Params with temp keys replaced by real keys, or the first temp key that has none.

    The owner of a temp key is the ``ensure_issue`` of the same batch, earlier by ``seq``, that
    creates it (the ``depends_on`` chain lies inside the batch, and temp keys are unique per
    batch). Decision: when the batch has no such command, the latest earlier ``ensure_issue`` of
    any batch that creates it and finished with a key resolves it, so a follow-up batch can
    address an issue created under a temp key.
    """
    used = uses_temp_key(item['params'], item['type'])
    if not used:
        return item['params'], None
    params = dict(item['params'])
    for name, temp_key in used.items():
        # The owner in this batch, found through the (batch_id, seq) index.
        row = hub.db.execute_sql(
            "SELECT json_extract(result, '$.key') FROM command WHERE batch_id = ? AND seq < ? "
            "AND type = 'ensure_issue' AND json_extract(params, '$.temp_key') = ? "
            'ORDER BY seq DESC LIMIT 1', (item['batch_id'], item['seq'], temp_key)).fetchone()
        if row is None:
            row = hub.db.execute_sql(
                "SELECT json_extract(result, '$.key') FROM command WHERE id < ? "
                "AND type = 'ensure_issue' AND json_extract(params, '$.temp_key') = ? "
                "AND json_extract(result, '$.key') IS NOT NULL ORDER BY id DESC LIMIT 1",
                (item['id'], temp_key)).fetchone()
        if row is None or not is_issue_key(row[0]):
            return params, temp_key
        params[name] = row[0]
    return params, None


def _delivery(item: dict, params: dict, deliveries: int, pause: int) -> dict:
    return {'id': item['id'], 'batch_id': item['batch_id'], 'seq': item['seq'],
            'type': item['type'], 'params': params, 'deliveries': deliveries,
            'pause_seconds': pause}


def _redeliver_lost(hub: Hub, types: tuple[str, ...], now: str, pause: int) -> dict | None:
    """Step 1: a claimed command of the module lost its delivery: deliver again or give up."""
    rows = hub.db.execute_sql(
        _COMMAND_SELECT + f" WHERE status = 'claimed' AND type IN {_in(types)} "
        f"ORDER BY batch_id, seq", types).fetchall()
    for item in map(command_dict, rows):
        if item['deliveries'] < MAX_DELIVERIES:
            params, unresolved = _resolve_temp_keys(hub, item)
            if hub.db.execute_sql(
                    "UPDATE command SET deliveries = deliveries + 1, claimed_at = ?, "
                    "pause_seconds = ? WHERE id = ? AND status = 'claimed' AND deliveries = ?",
                    (now, pause, item['id'], item['deliveries'])).rowcount != 1:
                continue
            if item['type'] == 'refresh':
                _journal().restart_run(hub, item['id'])
            return _delivery(item, params, item['deliveries'] + 1, pause)
        if hub.db.execute_sql(
                "UPDATE command SET status = 'failed', error = ?, finished_at = ? "
                "WHERE id = ? AND status = 'claimed'",
                (DELIVERY_LIMIT_ERROR, now, item['id'])).rowcount != 1:
            continue
        skip_dependents(hub, item['id'], now)
        if item['type'] == 'refresh':
            _journal().close_run(hub, item['id'], status='failed', params=item['params'],
                                 result=None, jira_calls=item['jira_calls'] or 0,
                                 rate_limited=item['rate_limited'] or 0)
    return None


def _auto_refresh(hub: Hub, now: str) -> None:
    """Step 2: queue «Автообновление» when the last full refresh is older than the setting."""
    minutes = setting(hub, 'auto_refresh_minutes', 0)
    if not isinstance(minutes, int) or minutes <= 0:
        return
    from .projects import base_jql
    jql = base_jql(hub)
    if jql is None or hub.db.execute_sql(
            "SELECT 1 FROM command WHERE type = 'refresh' AND status IN ('queued', 'claimed') "
            "LIMIT 1").fetchone():
        return
    started = _journal().latest_full_run_started(hub)
    if started is not None and started > minutes_before(now, minutes):
        return
    refresh = modules.command_type('refresh')
    insert_batch(hub, title=AUTO_REFRESH_TITLE, author=AUTO_REFRESH_AUTHOR, project=None,
                 commands=[{'type': 'refresh', 'params': {'jql': jql},
                            'calls': refresh.estimate_calls}])


_NEXT_QUEUED = (
    f"SELECT {', '.join('c.' + name for name in COMMAND_COLUMNS)}, d.status "
    "FROM command c LEFT JOIN command d ON d.id = c.depends_on "
    "WHERE c.status = 'queued' AND c.type IN {types} "
    "AND (c.depends_on IS NULL OR d.status IN ('done', 'failed', 'skipped', 'cancelled', "
    "'confirmed_by_state')) ORDER BY c.id LIMIT 1")


def _deliver_next(hub: Hub, types: tuple[str, ...], now: str, pause: int) -> dict | None:
    """Step 3: the first deliverable queued command; dead dependencies and temp keys → skipped.

    Order by id is order by (batch_id, seq): a batch's commands are inserted in seq order in the
    transaction that creates the batch, and ids only grow. It lets the status index hand out the
    first queued command without sorting the whole queue on every claim.

    Decision: a command whose dependency is not terminal yet (possible only across modules) is
    passed over until it is, rather than blocking the whole queue of the module.
    """
    sql = _NEXT_QUEUED.format(types=_in(types))
    while True:
        row = hub.db.execute_sql(sql, types).fetchone()
        if row is None:
            return None
        item, dependency_status = command_dict(row[:-1]), row[-1]
        error = None
        if dependency_status in NOT_DONE:
            error = _dependency_error(item['depends_on'])
        else:
            params, unresolved = _resolve_temp_keys(hub, item)
            if unresolved:
                error = (f'временный ключ {unresolved} не разрешён: команда ensure_issue, '
                         f'которая его заводит, не вернула ключ задачи')
        if error is not None:
            if hub.db.execute_sql(
                    "UPDATE command SET status = 'skipped', error = ?, finished_at = ? "
                    "WHERE id = ? AND status = 'queued'", (error, now, item['id'])).rowcount == 1:
                skip_dependents(hub, item['id'], now)
            continue
        if hub.db.execute_sql(
                "UPDATE command SET status = 'claimed', deliveries = deliveries + 1, "
                "claimed_at = ?, pause_seconds = ? WHERE id = ? AND status = 'queued'",
                (now, pause, item['id'])).rowcount != 1:
            continue
        if item['type'] == 'refresh':
            _journal().open_run(hub, item['id'], item['params'])
        return _delivery(item, params, item['deliveries'] + 1, pause)


def _check_claim(agent_version: object, settings_version: object,
                 last_call_at: object) -> str | None:
    errors: dict[str, list[str]] = {}
    if agent_version is not None and not (isinstance(agent_version, str)
                                          and len(agent_version) <= 100):
        errors['agent_version'] = ['ожидается строка до 100 символов']
    if settings_version is not None and (isinstance(settings_version, bool)
                                         or not isinstance(settings_version, int)
                                         or not 0 <= settings_version <= COUNTER_MAX):
        errors['settings_version'] = ['ожидается целое ≥ 0']
    normalized = None
    if last_call_at is not None:
        normalized = to_utc(last_call_at)
        if normalized is None:
            errors['last_jira_call_at'] = ['ожидается время ISO-8601']
    if errors:
        raise ValidationError(errors)
    return normalized


def claim_command(hub: Hub, *, agent: str, agent_version: str | None,
                  settings_version: int | None, last_call_at: str | None) -> dict:
    """The next delivery for the agent of module ``agent`` (contract §9.3); one write transaction."""
    module = modules.get_module(agent)
    if isinstance(agent_version, int) and not isinstance(agent_version, bool):
        agent_version = str(agent_version)
    last_call_at = _check_claim(agent_version, settings_version, last_call_at)
    types = tuple(module.command_types)
    with hub.write():
        now = hub.now()
        delivered = None
        if types:
            pause = _pause_seconds(hub, types, pacing(hub))
            delivered = _redeliver_lost(hub, types, now, pause)
            if delivered is None:
                if 'refresh' in types:
                    _auto_refresh(hub, now)
                delivered = _deliver_next(hub, types, now, pause)
        hub.db.execute_sql(
            'INSERT INTO agent_status (agent, last_seen_at, agent_version, settings_version, '
            'current_command_id, last_call_at) VALUES (?, ?, ?, ?, ?, ?) '
            'ON CONFLICT (agent) DO UPDATE SET last_seen_at = excluded.last_seen_at, '
            'agent_version = coalesce(excluded.agent_version, agent_status.agent_version), '
            'settings_version = coalesce(excluded.settings_version, '
            'agent_status.settings_version), '
            'current_command_id = excluded.current_command_id, '
            'last_call_at = coalesce(excluded.last_call_at, agent_status.last_call_at)',
            (module.name, now, agent_version, settings_version,
             delivered['id'] if delivered else None, last_call_at))
        return {'command': delivered, 'settings_version': setting(hub, 'settings_version')}


# --- report --------------------------------------------------------------------------------------

def _check_report(status: object, result: object, error: object, jira_calls: object,
                  rate_limited: object) -> tuple[str | None, int, int]:
    errors: dict[str, list[str]] = {}
    if status not in REPORT_STATUSES:
        errors['status'] = [f'ожидается один из: {", ".join(REPORT_STATUSES)}']
    if result is not None and not isinstance(result, dict):
        errors['result'] = ['ожидается объект или null']
    if error is not None and not isinstance(error, str):
        errors['error'] = ['ожидается строка или null']
    counters = []
    for name, value in (('jira_calls', jira_calls), ('rate_limited', rate_limited)):
        value = 0 if value is None else value
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= COUNTER_MAX:
            errors[name] = ['ожидается целое ≥ 0']
        counters.append(value)
    if errors:
        raise ValidationError(errors)
    return (error[:ERROR_MAX] if error is not None else None), counters[0], counters[1]


def _apply_done(hub: Hub, item: dict, result: dict | None) -> None:
    """Side effects of a done/confirmed_by_state report (also of a late one), refresh aside."""
    result = result or {}
    if item['type'] == 'ensure_issue':
        temp_key = item['params'].get('temp_key')
        if temp_key and is_issue_key(result.get('key')):
            merge_note(hub, temp_key, result['key'])
    elif item['type'] == 'fetch_attachment':
        sha256, size = result.get('sha256'), result.get('size')
        if not isinstance(sha256, str) or len(sha256) != 64 or any(
                ch not in '0123456789abcdef' for ch in sha256):
            raise ValidationError({'result.sha256': ['ожидается sha256 скачанного файла (64 hex)']})
        if size is not None and (isinstance(size, bool) or not isinstance(size, int)
                                 or not 0 <= size <= 2**63 - 1):
            raise ValidationError({'result.size': ['ожидается целое ≥ 0 или null']})
        from .files import record_download
        record_download(hub, item['params']['attachment_id'], sha256, size)


def report_command(hub: Hub, command_id: int, *, agent: str, status: str, result: dict | None,
                   error: str | None, jira_calls: int, rate_limited: int) -> dict:
    """Record the agent's report of a delivery (contract §9.4); the command plus ``late``."""
    module = modules.get_module(agent)
    command_id = _positive_int(command_id, 'id', COMMAND_NOT_FOUND)
    error, jira_calls, rate_limited = _check_report(status, result, error, jira_calls, rate_limited)
    with hub.write():
        item = command_row(hub, command_id)
        owner = modules.module_of(item['type'])
        if owner != module.name:
            raise ConflictError(
                f'команда #{command_id} принадлежит модулю {owner}, не {module.name}')
        if item['status'] == 'queued':
            raise ConflictError(f'команда #{command_id} ещё не выдана агенту')
        now = hub.now()
        late = item['status'] in ('failed', 'cancelled')
        if item['status'] == 'claimed':
            if hub.db.execute_sql(
                    'UPDATE command SET status = ?, finished_at = ?, result = ?, error = ?, '
                    "jira_calls = ?, rate_limited = ? WHERE id = ? AND status = 'claimed'",
                    (status, now, dump(result), error, jira_calls, rate_limited,
                     command_id)).rowcount != 1:
                # unreachable under the write lock; the huey pattern trusts rowcount only
                raise ConflictError(f'команда #{command_id} уже не выдана')
            hub.db.execute_sql('UPDATE agent_status SET current_command_id = NULL '
                               'WHERE agent = ? AND current_command_id = ?',
                               (module.name, command_id))
            if status in ('failed', 'skipped'):
                skip_dependents(hub, command_id, now)
        elif late:
            if result is not None:
                hub.db.execute_sql('UPDATE command SET result = ? WHERE id = ?',
                                   (dump(result), command_id))
        else:  # done, confirmed_by_state, skipped: a repeated report changes nothing
            return {**item, 'late': False}
        if status in DONE_STATUSES:
            _apply_done(hub, item, result)
        # A late report leaves the run as the hub closed it: the command stays failed, and the
        # spec (001 «Отметка журнала…») keeps history_at NULL and marks no neighbours for a
        # refresh that did not end done; contract §9.4's "side effects still apply" yields here.
        if item['type'] == 'refresh' and item['deliveries'] > 0 and not late:
            _journal().close_run(hub, command_id, status=status, params=item['params'],
                                 result=result, jira_calls=jira_calls, rate_limited=rate_limited)
        return {**command_row(hub, command_id), 'late': late}


# --- agents --------------------------------------------------------------------------------------

AGENT_COLUMNS = ('agent', 'last_seen_at', 'agent_version', 'settings_version',
                 'current_command_id', 'last_call_at')


def _online(last_seen_at: str | None, now) -> bool:
    if not last_seen_at:
        return False
    try:
        return now - parse_utc(last_seen_at) < timedelta(minutes=ONLINE_MINUTES)
    except ValueError:
        return False


def agents(hub: Hub) -> dict:
    """Status of every registered module's agent, with ``online`` and ``redelivered``."""
    now = hub.clock()
    with hub.read():
        rows = {row[0]: dict(zip(AGENT_COLUMNS, row)) for row in hub.db.execute_sql(
            f'SELECT {", ".join(AGENT_COLUMNS)} FROM agent_status')}
        items = []
        for name, module in modules.MODULES.items():
            item = rows.get(name) or dict.fromkeys(AGENT_COLUMNS)
            item['agent'] = name
            item['online'] = _online(item['last_seen_at'], now)
            types = tuple(module.command_types)
            item['redelivered'] = [] if not types else [
                dict(zip(('id', 'type', 'claimed_at', 'deliveries'), row))
                for row in hub.db.execute_sql(
                    "SELECT id, type, claimed_at, deliveries FROM command WHERE status = 'claimed' "
                    f"AND deliveries > 1 AND type IN {_in(types)} ORDER BY id", types)]
            items.append(item)
    return {'items': items}
