"""The sync journal: one ``sync_run`` per ``refresh`` command (spec «Журнал синхронизаций…»,
«Отметка журнала в журнале синхронизаций», contract §9.3–9.4).

The queue calls these functions inside its own claim/report transaction; ``hub.write()`` nests
as a savepoint there, so a run and its command always change together.

"Written by this run" is known from ``issue.fetched_at >= sync_run.started_at``: state ingest
stamps every issue it writes with the hub time, and one agent per module runs one command at a
time, so any issue stamped at or after the run's start was written by this run (or a redelivery
of it, which is the same run). The hub clock has one-second resolution: an issue written by the
previous command in the very second this run started counts as written by this run and merely
keeps its flag until the next full run — the rule errs toward not marking an issue a neighbour.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

from . import projects
from .db import Hub

FULL_RUN_STATUSES = ('done', 'confirmed_by_state')


def _kind_and_query(params: Mapping[str, Any]) -> tuple[str, str | None]:
    if isinstance(params, Mapping) and params.get('jql') is not None:
        return 'jql', params['jql']
    keys = params.get('keys') if isinstance(params, Mapping) else None
    if isinstance(keys, list):
        return 'keys', ','.join(str(key) for key in keys)
    return 'keys', None


def _insert_run(hub: Hub, command_id: int, params: Mapping[str, Any]) -> None:
    kind, query = _kind_and_query(params)
    hub.db.execute_sql(
        'INSERT INTO sync_run (started_at, kind, query, command_id) VALUES (?, ?, ?, ?)',
        (hub.now(), kind, query, command_id))


def _run_exists(hub: Hub, command_id: int) -> bool:
    return hub.db.execute_sql('SELECT 1 FROM sync_run WHERE command_id = ?',
                              (command_id,)).fetchone() is not None


def _command_params(hub: Hub, command_id: int) -> dict:
    row = hub.db.execute_sql('SELECT params FROM command WHERE id = ?', (command_id,)).fetchone()
    try:
        params = json.loads(row[0]) if row and row[0] else {}
    except ValueError:
        params = {}
    return params if isinstance(params, dict) else {}


def open_run(hub: Hub, command_id: int, params: dict) -> None:
    """Create the sync_run of a refresh at its first delivery (a second call changes nothing)."""
    with hub.write():
        if not _run_exists(hub, command_id):
            _insert_run(hub, command_id, params)


def restart_run(hub: Hub, command_id: int) -> None:
    """Redelivery of a refresh: its counters start over, ``started_at`` stays (run created if missing)."""
    with hub.write():
        cursor = hub.db.execute_sql(
            'UPDATE sync_run SET issues_count = 0, links_count = 0 WHERE command_id = ?',
            (command_id,))
        if cursor.rowcount == 0:
            _insert_run(hub, command_id, _command_params(hub, command_id))


def _history_accepted(result: object) -> bool:
    if not isinstance(result, Mapping):
        return False
    history = result.get('history')
    return isinstance(history, Mapping) and not history.get('error')


def close_run(hub: Hub, command_id: int, *, status: str, params: dict, result: dict | None,
              jira_calls: int, rate_limited: int) -> None:
    """Finish the refresh's sync_run: counters, full-run neighbour marking, ``history_at``.

    A run missing at report time (should not happen: claim opens it) is created on the spot so
    the journal still records the refresh.
    """
    with hub.write():
        if not _run_exists(hub, command_id):
            _insert_run(hub, command_id, params or {})
        now = hub.now()
        base = projects.base_jql(hub)
        full = isinstance(params, Mapping) and base is not None and params.get('jql') == base
        history_at = now if full and status == 'done' and _history_accepted(result) else None
        hub.db.execute_sql(
            'UPDATE sync_run SET finished_at = ?, jira_calls = ?, rate_limited = ?, '
            'history_at = coalesce(?, history_at) WHERE command_id = ?',
            (now, int(jira_calls or 0), int(rate_limited or 0), history_at, command_id))
        if not (full and status in FULL_RUN_STATUSES):
            return
        # "Written by this run" = fetched since the delivery that finished it (command.claimed_at
        # moves with every redelivery, while sync_run.started_at stays at the first one): what
        # only a lost earlier delivery wrote does not count, just as its counters do not.
        delivered_at, issues_count = hub.db.execute_sql(
            'SELECT coalesce(c.claimed_at, r.started_at), r.issues_count FROM sync_run r '
            'JOIN command c ON c.id = r.command_id WHERE r.command_id = ? '
            'ORDER BY r.id DESC LIMIT 1', (command_id,)).fetchone()
        if issues_count >= 1:
            hub.db.execute_sql(
                'UPDATE issue SET neighbor = 1 '
                'WHERE neighbor = 0 AND (fetched_at IS NULL OR fetched_at < ?)', (delivered_at,))


def latest_full_run_started(hub: Hub) -> str | None:
    """``started_at`` of the newest sync_run over the current base JQL (for auto refresh)."""
    base = projects.base_jql(hub)
    if base is None:
        return None
    row = hub.db.execute_sql(
        "SELECT max(started_at) FROM sync_run WHERE kind = 'jql' AND query = ?", (base,)).fetchone()
    return row[0] if row else None
