"""Facet counts of each project slice (``slice_facet``), kept as the slices and issues change.

The facets of a whole slice (``GET /issues/facets?project=P`` with no other filter: the filter
lists the issues view opens on) grouped every issue of the slice by (status, assignee, issue
type, priority, labels): at 50,000 issues a slice of 36,681 cost 84–94 ms CPU however it was
joined (the ``issue_facet`` walk probed the slice once per issue; driving from the slice read
each issue's columns and sorted them). ``slice_facet`` holds that GROUP BY, one row per
(label, combination) with its count: the same facets are a read of ~1,800 rows (6 ms).

The invariant: ``count`` of (label, combination) = the number of ``issue_member`` rows of the
label whose issue is mirrored with that combination (NULL stored as ''). Two sides move it:
- membership: SQLite triggers on ``issue_member`` (slice refresh, rebuild, project creation, any
  other writer); an ``INSERT OR REPLACE`` deletes the row it replaces, which fires the delete
  trigger only with ``PRAGMA recursive_triggers`` (``db.PRAGMAS``).
- an issue's own columns: state ingest, the one writer of them, counts the page's memberships
  by combination before and after its upsert (:func:`counted`, :func:`move`). Not a trigger on
  ``issue``: any trigger there makes SQLite keep a statement journal for every row the upsert
  writes (the table has 15 indexes), ~90 µs an issue even for a trigger that does nothing;
  state ingest of 10,000 new issues took 3.95–4.57 s CPU without, 6.27–6.57 s with them.
A migration may rewrite issues: the counts are built again at the first open after one, and
whenever a trigger is missing (a new file, a file from before them); ``rebuild_derived`` (a
bulk load) builds them too. ``tests/lib/test_facet_counts.py`` compares them with the GROUP BY
after each kind of write. Rows whose count reaches 0 are deleted by the write that brings them
there.
"""
from __future__ import annotations

from peewee import SQL, Table, fn

from .db import Hub
from .models import Issue, IssueMember, SliceFacet, SqlNames

_ISSUE, _MEMBER, _FACET = map(SqlNames, (Issue, IssueMember, SliceFacet))
_MASTER = Table('sqlite_master', ('type', 'name'))
COLUMNS = ('status', 'assignee', 'issue_type', 'priority', 'labels')
_KEY = ', '.join(getattr(_FACET, name) for name in ('label', *COLUMNS))
# An insert of counts adds to the count already kept for its (label, combination).
_ADD_TO_KEPT = (f'ON CONFLICT ({_KEY}) DO UPDATE SET '
                f'{_FACET.count} = {_FACET.count} + excluded.{_FACET.count}')


def _values(row: str) -> str:
    return ', '.join(f"coalesce({row}.{getattr(_ISSUE, name)}, '')" for name in COLUMNS)


def _add(label: str, row: str, source: str, delta: int) -> str:
    """Move by ``delta`` the count of ``label`` and the combination of ``row`` (an issue row:
    ``NEW``, ``OLD`` or ``i``) for each row of ``source`` (a FROM … WHERE …)."""
    return (f'INSERT INTO {_FACET} ({_KEY}, {_FACET.count}) '
            f'SELECT {label}, {_values(row)}, {delta} {source} {_ADD_TO_KEPT};')


def _drop_empty(label: str, row: str, source: str) -> str:
    """Delete the (now zero) counts of ``label`` and ``row``'s combination for ``source``."""
    return (f'DELETE FROM {_FACET} WHERE {_FACET.count} = 0 AND ({_KEY}) IN '
            f'(SELECT {label}, {_values(row)} {source});')


def _issue_of(member: str) -> str:
    return f'FROM {_ISSUE} i WHERE i.{_ISSUE.key} = {member}.{_MEMBER.key}'


TRIGGERS = {
    'slice_facet_member_insert': (
        f'AFTER INSERT ON {_MEMBER}', _add(f'NEW.{_MEMBER.label}', 'i', _issue_of('NEW'), 1)),
    'slice_facet_member_delete': (
        f'AFTER DELETE ON {_MEMBER}', _add(f'OLD.{_MEMBER.label}', 'i', _issue_of('OLD'), -1)
        + _drop_empty(f'OLD.{_MEMBER.label}', 'i', _issue_of('OLD'))),
    'slice_facet_member_update': (
        f'AFTER UPDATE OF {_MEMBER.label}, {_MEMBER.key} ON {_MEMBER} '
        f'WHEN OLD.{_MEMBER.label} IS NOT NEW.{_MEMBER.label} OR OLD.{_MEMBER.key} IS NOT NEW.{_MEMBER.key}',
        _add(f'OLD.{_MEMBER.label}', 'i', _issue_of('OLD'), -1)
        + _drop_empty(f'OLD.{_MEMBER.label}', 'i', _issue_of('OLD'))
        + _add(f'NEW.{_MEMBER.label}', 'i', _issue_of('NEW'), 1)),
}


# Created at open with the derived indexes (startup), after :func:`due` was asked.
DERIVED_TRIGGERS = tuple(f'CREATE TRIGGER IF NOT EXISTS {name} {event} BEGIN {body} END'
                         for name, (event, body) in TRIGGERS.items())


def due(hub: Hub, *, migrated: bool) -> bool:
    """Whether the counts must be built again at this open: a trigger is missing (a new file,
    a file from before the counts, a migration that rebuilt a table: its triggers go with it)
    or ``migrated`` (a migration may rewrite issues)."""
    present = {name for (name,) in _MASTER.select(_MASTER.name).where(_MASTER.type == 'trigger')
               .tuples().execute(hub.db)}
    return migrated or not set(TRIGGERS) <= present


# The memberships of a page's issues by combination, as stored (ingest, around its upsert).
_PAGE_COMBINATIONS = (
    f'SELECT m.{_MEMBER.label}, {_values("i")}, count(*) '
    f'FROM (SELECT DISTINCT value FROM json_each(:keys)) k '
    f'CROSS JOIN {_MEMBER} m ON m.{_MEMBER.key} = k.value '
    f'CROSS JOIN {_ISSUE} i ON i.{_ISSUE.key} = m.{_MEMBER.key} '
    f'GROUP BY m.{_MEMBER.label}, {_values("i")}')
_MOVE = f'INSERT INTO {_FACET} ({_KEY}, {_FACET.count}) VALUES (?, ?, ?, ?, ?, ?, ?) {_ADD_TO_KEPT}'
_DROP_EMPTY = (f'DELETE FROM {_FACET} WHERE ({_KEY}) = (?, ?, ?, ?, ?, ?) '
               f'AND {_FACET.count} = 0')


def counted(hub: Hub, keys_json: str) -> dict[tuple, int]:
    """How many memberships of these issues (a JSON list of keys) each (label, combination)
    has, as stored now: state ingest reads it before its upsert and hands it to :func:`move`."""
    return {tuple(row[:-1]): row[-1]
            for row in hub.db.execute_sql(_PAGE_COMBINATIONS, {'keys': keys_json})}


def move(hub: Hub, keys_json: str, before: dict[tuple, int]) -> None:
    """After the upsert of these issues: move the counts by what their combinations became
    (the memberships are those of :func:`counted`; slice refresh comes after, by triggers).
    A page of 100 issues costs two reads of its memberships (~0.2 ms each at 50,000 issues)."""
    after = counted(hub, keys_json)
    moves = [(*combination, after.get(combination, 0) - before.get(combination, 0))
             for combination in before.keys() | after.keys()
             if after.get(combination, 0) != before.get(combination, 0)]
    if moves:
        cursor = hub.db.cursor()
        cursor.executemany(_MOVE, moves)
        cursor.executemany(_DROP_EMPTY, [row[:-1] for row in moves if row[-1] < 0])


def rebuild(hub: Hub) -> None:
    """Count every slice's facet combinations from scratch (caller holds the write)."""
    values = [fn.COALESCE(getattr(Issue, name), '') for name in COLUMNS]
    SliceFacet.delete().execute(hub.db)
    SliceFacet.insert_from(
        IssueMember.select(IssueMember.label, *values, fn.COUNT(SQL('*')))
        .join(Issue, on=(Issue.key == IssueMember.key)).group_by(IssueMember.label, *values),
        [SliceFacet.label, *(getattr(SliceFacet, name) for name in COLUMNS), SliceFacet.count]
    ).execute(hub.db)


def slice_combinations(hub: Hub, label: str) -> list[tuple]:
    """(status, assignee, issue type, priority, labels, count) of ``label``'s slice ('' for no
    value): the rows of the grouped scan ``reads.issue_facets`` makes, read from the counts.
    Straight from the cursor: peewee's per-value conversion was half the read (1,797 rows of a
    slice of 36,681 at 50,000 issues: 8.4 -> 2.4 ms CPU)."""
    return hub.db.execute(SliceFacet.select(*(getattr(SliceFacet, name) for name in COLUMNS),
                                            SliceFacet.count)
                          .where((SliceFacet.label == label) & (SliceFacet.count != 0))).fetchall()


__all__ = ['COLUMNS', 'TRIGGERS', 'DERIVED_TRIGGERS', 'due', 'rebuild', 'counted', 'move', 'slice_combinations']
