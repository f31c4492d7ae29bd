"""``open_hub``: what a process does to open a hub directory, whatever it is (server, CLI, script,
MCP session).

1. the data directory and its ``backups/``, ``files/`` exist and are private (0700);
2. the schema is created or migrated (``hublib.db``), once however many processes start together;
3. the hub's own tables (``models.INTERNAL_MODELS``) exist, and derived indexes that were missing
   are built from the mirror (a migrated file, or one an earlier release made);
4. default settings and tokens are filled, retired module keys removed (``settings.ensure_defaults``).
"""
from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from . import facet_counts, jql, reconstruction, search, settings, slices
from .db import (BUSY_TIMEOUT_MS, Hub, check_data_dir, connect, create_internal_tables,
                 default_data_dir, mirror_guard, prepare_directories, prepare_schema,
                 refuse_unusable_file, require_hub)
from .models import SCHEMA_VERSION, Issue, Project
from .timeutil import Clock, system_clock

log = logging.getLogger('hublib.startup')


def open_hub(data_dir: str | os.PathLike | None = None, *, clock: Clock = system_clock,
             create: bool = True, guard_mirror: bool = False,
             busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> Hub:
    """Open (create or migrate) the hub in ``data_dir`` and fill default settings.

    ``create=False`` opens only an existing hub: with no ``hub.sqlite`` it raises NotFoundError
    and creates nothing (a mistyped path must not become a new hub with new tokens).

    ``guard_mirror``: for interface processes (MCP). Once the schema, the derived tables and the
    defaults are ready, every connection of this hub (one per thread) refuses writes to the
    mirror and its derived tables (``db.MIRROR_GUARD_TABLES``); the work before that (a
    migration rewrites mirror rows, derived indexes are built) is the hub's own, not guarded.

    ``busy_timeout_ms``: how long a write waits for another process's lock (then BusyError).
    """
    data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
    check_data_dir(data_dir)
    if not create:
        require_hub(data_dir)
    refuse_unusable_file(data_dir)  # a foreign or newer file: refused before anything is created
    prepare_directories(data_dir)
    hub = connect(data_dir, clock=clock, busy_timeout_ms=busy_timeout_ms)
    try:
        hub.opened_at_version, _ = prepare_schema(hub)
        _prepare_derived(hub)
        settings.ensure_defaults(hub)
    except BaseException:
        hub.close()
        raise
    if guard_mirror:
        hub.db.guard(mirror_guard)
    return hub


def _prepare_derived(hub: Hub) -> None:
    # One write transaction, re-checked inside: several processes opening a file that lacks the
    # derived tables build them once. A migrated mirror of 1,000,000 issues takes ~2.5 minutes
    # (200,000: ~30 s), once; the log says so, since the server listens only after it.
    with hub.write():
        created = create_internal_tables(hub)
        count_facets = facet_counts.due(
            hub, migrated=hub.opened_at_version not in (None, SCHEMA_VERSION))
        for statement in (slices.DERIVED_INDEXES + jql.DERIVED_INDEXES
                          + reconstruction.DERIVED_INDEXES + facet_counts.DERIVED_TRIGGERS):
            hub.db.execute_sql(statement)
        build_slices, build_search = 'issue_member' in created, not search.exists(hub)
        announce = (build_slices or build_search) and Issue.select().exists(hub.db)
        if announce:
            log.info('строю по зеркалу %s — один раз для этого файла ...', ' и '.join(
                what for what, due in (('разрезы проектов', build_slices),
                                       ('полнотекстовый индекс', build_search)) if due))
        started = time.monotonic()
        if build_slices:
            _build_slices(hub)
        elif 'slice_count' in created:  # slices of an earlier build of this release: count them
            for (label,) in Project.select(Project.label).tuples().execute(hub.db):
                slices.recount(hub, label)
        if build_search:
            search.build(hub)
        if count_facets:
            facet_counts.rebuild(hub)
        if announce:
            log.info('готово за %.0f с', time.monotonic() - started)


def _build_slices(hub: Hub) -> None:
    for (label,) in Project.select(Project.label).tuples().execute(hub.db):
        slices.build_slice(hub, label)


def rebuild_derived(hub: Hub) -> None:
    """Rebuild every project slice and the full-text index from the mirror, in one transaction.

    For a mirror written by something other than state ingest (a bulk load, a restored table)."""
    with hub.write():
        _build_slices(hub)
        search.build(hub)
        facet_counts.rebuild(hub)


__all__ = ['open_hub', 'rebuild_derived']
