"""The sync journal: one ``sync_run`` per ``refresh`` command (spec «Журнал синхронизаций…»,
«Отметка журнала в журнале синхронизаций», contract §9.3–9.4).

The queue calls these functions inside its own claim/report transaction; ``hub.write()`` nests
as a savepoint there, so a run and its command always change together.

"Written by this run" is exact: state ingest records, per delivery of a refresh, every key it
wrote in ``refresh_written`` (``models.RefreshWritten``). A redelivery starts that record over,
as it starts the counters over, so what only a lost earlier delivery wrote does not count; when
the run closes, a full run marks every other issue a neighbour and the record is dropped. No
clock is involved: several runs within one second are told apart as well as any.
"""
from __future__ import annotations

from typing import Any, Mapping

from peewee import fn

from .db import Hub
from .models import Issue, RefreshWritten, SyncRun
from .settings import base_jql
from .statuses import DONE_STATUSES


def _kind_and_query(params: Mapping[str, Any]) -> tuple[str, str | None]:
    if params.get('jql') is not None:
        return 'jql', params['jql']
    keys = params.get('keys')
    if isinstance(keys, list):
        return 'keys', ','.join(str(key) for key in keys)
    return 'keys', None


def _ensure_run(hub: Hub, command_id: int, params: Mapping[str, Any]) -> bool:
    """Create the run of ``command_id`` when it has none; whether it had one."""
    if SyncRun.select().where(SyncRun.command_id == command_id).exists(hub.db):
        return True
    kind, query = _kind_and_query(params if isinstance(params, Mapping) else {})
    SyncRun.insert(started_at=hub.now(), kind=kind, query=query,
                   command_id=command_id).execute(hub.db)
    return False


def open_run(hub: Hub, command_id: int, params: Mapping[str, Any]) -> None:
    """Create the sync_run of a refresh at its first delivery (a second call changes nothing)."""
    with hub.write():
        _ensure_run(hub, command_id, params)


def restart_run(hub: Hub, command_id: int, params: Mapping[str, Any]) -> None:
    """Redelivery of a refresh: counters and the record of written keys start over,
    ``started_at`` stays (the run is created if missing)."""
    with hub.write():
        if _ensure_run(hub, command_id, params):
            SyncRun.update(issues_count=0, links_count=0) \
                .where(SyncRun.command_id == command_id).execute(hub.db)
        RefreshWritten.delete().where(RefreshWritten.command_id == command_id).execute(hub.db)


def _history_accepted(result: object) -> bool:
    if not isinstance(result, Mapping):
        return False
    history = result.get('history')
    return isinstance(history, Mapping) and not history.get('error')


def close_run(hub: Hub, command_id: int, *, status: str, params: Mapping[str, Any],
              result: Mapping[str, Any] | None, jira_calls: int, rate_limited: int) -> None:
    """Finish the refresh's sync_run: counters, full-run neighbour marking, ``history_at``.

    A full run (``params.jql`` equals the base JQL now) that ended ``done``/``confirmed_by_state``
    with at least one issue marks every issue its finishing delivery did not write a neighbour.
    A run missing at report time (should not happen: claim opens it) is created on the spot so
    the journal still records the refresh.
    """
    with hub.write():
        _ensure_run(hub, command_id, params)
        now = hub.now()
        base = base_jql(hub)
        full = base is not None and isinstance(params, Mapping) and params.get('jql') == base
        history_at = now if full and status == 'done' and _history_accepted(result) else None
        (SyncRun.update(finished_at=now, jira_calls=jira_calls, rate_limited=rate_limited,
                        history_at=fn.COALESCE(history_at, SyncRun.history_at))
         .where(SyncRun.command_id == command_id).execute(hub.db))
        written = RefreshWritten.select(RefreshWritten.key) \
            .where(RefreshWritten.command_id == command_id)
        if full and status in DONE_STATUSES and SyncRun.select(SyncRun.issues_count).where(
                SyncRun.command_id == command_id).order_by(SyncRun.id.desc()).scalar(hub.db) >= 1:
            Issue.update(neighbor=1) \
                .where((Issue.neighbor == 0) & Issue.key.not_in(written)).execute(hub.db)
        RefreshWritten.delete().where(RefreshWritten.command_id == command_id).execute(hub.db)


def latest_full_run_started(hub: Hub, jql: str) -> str | None:
    """``started_at`` of the newest sync_run of a refresh by ``jql`` (the base JQL: auto refresh)."""
    return SyncRun.select(fn.MAX(SyncRun.started_at)) \
        .where((SyncRun.kind == 'jql') & (SyncRun.query == jql)).scalar(hub.db)


__all__ = ['open_run', 'restart_run', 'close_run', 'latest_full_run_started']
