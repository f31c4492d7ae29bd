"""Project slices (spec «Проекты») as a derived table, and the natural order of issue keys.

The slice of project P is its *own* issues (label P in ``labels``, exact match) and its
*neighbours*: issues without label P linked to an own issue either way, and epics of own issues,
when they are in the mirror. ``issue_member`` holds one row per (label, issue of the slice) with
``neighbor`` relative to P and the issue's natural ``sort_key``, so that a slice page is a single
index range whatever the size of the mirror or the position of the cursor.

Decision: the alternative — walking the mirror in key order and testing membership per
issue through indexes — is O(limit / share of the mirror in the slice): measured at 200,000 issues
it cost 128 ms p95 for a page of 500 of a project holding a tenth of the mirror, against a few ms
for the index range here (``scripts/bench_scale.py``). The price is paid by ingest: one set-based
recompute per page for the page's issues and their link partners and epics (see
:func:`refresh_members`): a refresh of changed issues stays within 2x of raw ``executemany`` at
200,000 and 1,000,000 issues (1.2-1.4x, ``scripts/bench_scale.py``); the first fill of an empty
mirror, where every row is new, costs 2.4x (``scripts/bench_ingest.py``).

Natural order (contract §10): project key, then the issue number as a number (``AURORA-2`` before
``AURORA-10``). ``sort_key`` spells it as one string so that SQLite can keep it in one index:
``<project key>-<number, 20 digits>`` followed by the key itself (which only breaks the tie of
``X-01`` and ``X-1``). ``-`` sorts below every character a project key may hold, so ``A`` comes
before ``AB`` as in a plain comparison of project keys.
"""
from __future__ import annotations

import collections
import json
from typing import Iterable

from peewee import fn

from .db import Hub
from .models import Issue, IssueLink, IssueMember, IssueSprint, SliceCount, SqlNames
from .settings import project_labels

_ISSUE, _LINK, _MEMBER, _SLICE_COUNT = map(SqlNames, (Issue, IssueLink, IssueMember, SliceCount))
_ISSUE_SPRINT = SqlNames(IssueSprint)

# The SQL spelling of natural_key(); the issue table has an index on exactly this expression.
NATURAL_KEY_SQL = ("substr({key}, 1, instr({key}, '-')) || "
                   "printf('%020d', CAST(substr({key}, instr({key}, '-') + 1) AS INTEGER)) || {key}")
ISSUE_SORT_KEY = NATURAL_KEY_SQL.format(key=_ISSUE.key)

DERIVED_INDEXES = (
    f'CREATE INDEX IF NOT EXISTS issue_natural_key ON {_ISSUE} ({ISSUE_SORT_KEY})',
    # neighbour recompute looks up "issues whose epic is X"
    f'CREATE INDEX IF NOT EXISTS issue_epic_key ON {_ISSUE} ({_ISSUE.epic_key})',
    # boards and sprints read the status and rank of a project's own issues: from this index,
    # not from rows whose long descriptions push the later columns to overflow pages (50,000
    # issues, a board of 17,000 own issues: 180 -> 48 ms with the covering slice index)
    f'CREATE INDEX IF NOT EXISTS issue_key_status_rank ON {_ISSUE} '
    f'({_ISSUE.key}, {_ISSUE.status}, {_ISSUE.rank})',
    # a sprint's board walks the sprint's members: keys from this index, not one table row each
    # (50,000 issues, a sprint of 8,334: 19 -> 13 ms CPU; 2.6 MiB at 200,000 issues, the size of
    # issue_sprint's primary key index, which holds the same pairs the other way round)
    f'CREATE INDEX IF NOT EXISTS issue_sprint_sprint_key ON {_ISSUE_SPRINT} '
    f'({_ISSUE_SPRINT.sprint_id}, {_ISSUE_SPRINT.key})',
)


def natural_key(key: str) -> str:
    """The natural sort key of an issue key (the Python twin of ``NATURAL_KEY_SQL``)."""
    project, _, number = key.partition('-')
    return f'{project}-{int(number):020d}{key}'


# --- building --------------------------------------------------------------------------------------

# A whole slice in two set-based statements (project creation, repair): the work is SQLite's,
# whatever builds the text.
_MEMBER_COLUMNS = (f'{_MEMBER} ({_MEMBER.label}, {_MEMBER.key}, {_MEMBER.sort_key}, '
                   f'{_MEMBER.neighbor})')
_ISSUE_SORT_KEY = NATURAL_KEY_SQL.format(key=f'i.{_ISSUE.key}')
_OWN_OF_LABEL = (
    f'INSERT OR REPLACE INTO {_MEMBER_COLUMNS} '
    f'SELECT :label, i.{_ISSUE.key}, {_ISSUE_SORT_KEY}, 0 FROM {_ISSUE} i '
    f'WHERE EXISTS (SELECT 1 FROM json_each(i.{_ISSUE.labels}) AS l WHERE l.value = :label)')
_OWN_MEMBERS = f'm.{_MEMBER.label} = :label AND m.{_MEMBER.neighbor} = 0'
_NEIGHBOURS_OF_LABEL = (
    f'INSERT OR IGNORE INTO {_MEMBER_COLUMNS} '
    f'SELECT :label, i.{_ISSUE.key}, {_ISSUE_SORT_KEY}, 1 FROM {_ISSUE} i WHERE i.{_ISSUE.key} IN ('
    f'  SELECT l.{_LINK.target_key} FROM {_MEMBER} m '
    f'JOIN {_LINK} l ON l.{_LINK.source_key} = m.{_MEMBER.key}'
    f'  WHERE {_OWN_MEMBERS}'
    f'  UNION SELECT l.{_LINK.source_key} FROM {_MEMBER} m '
    f'JOIN {_LINK} l ON l.{_LINK.target_key} = m.{_MEMBER.key}'
    f'  WHERE {_OWN_MEMBERS}'
    f'  UNION SELECT o.{_ISSUE.epic_key} FROM {_MEMBER} m '
    f'JOIN {_ISSUE} o ON o.{_ISSUE.key} = m.{_MEMBER.key}'
    f'  WHERE {_OWN_MEMBERS} AND o.{_ISSUE.epic_key} IS NOT NULL)')


def build_slice(hub: Hub, label: str) -> None:
    """(Re)build the rows of one project's slice from the mirror, and its counts (caller holds
    the write)."""
    IssueMember.delete().where(IssueMember.label == label).execute(hub.db)
    for statement in (_OWN_OF_LABEL, _NEIGHBOURS_OF_LABEL):
        hub.db.execute_sql(statement, {'label': label})
    recount(hub, label)


def recount(hub: Hub, label: str) -> None:
    """Count the slice of ``label`` again from its rows (O(slice): creation and repair only)."""
    counted = dict(IssueMember.select(IssueMember.neighbor, fn.COUNT(IssueMember.key))
                   .where(IssueMember.label == label).group_by(IssueMember.neighbor)
                   .tuples().execute(hub.db))
    SliceCount.replace(label=label, own_count=counted.get(0, 0),
                       neighbor_count=counted.get(1, 0)).execute(hub.db)


def counts(hub: Hub, label: str) -> dict[str, int]:
    """How many own issues and neighbours the project's slice has (one row, whatever its size)."""
    found = SliceCount.select(SliceCount.own_count, SliceCount.neighbor_count) \
        .where(SliceCount.label == label).tuples().execute(hub.db)
    own_count, neighbor_count = found[0] if found else (0, 0)
    return {'own_count': own_count, 'neighbor_count': neighbor_count}


# --- keeping it current during ingest ------------------------------------------------------------

_KEYS = 'IN (SELECT value FROM json_each(:keys))'
_RELATED = (
    f'SELECT {_LINK.target_key} FROM {_LINK} WHERE {_LINK.source_key} {_KEYS} '
    f'UNION SELECT {_LINK.source_key} FROM {_LINK} WHERE {_LINK.target_key} {_KEYS} '
    f'UNION SELECT {_ISSUE.epic_key} FROM {_ISSUE} WHERE {_ISSUE.key} {_KEYS} '
    f'AND {_ISSUE.epic_key} IS NOT NULL')
_MEMBERS = (f'SELECT {_MEMBER.label}, {_MEMBER.key}, {_MEMBER.neighbor} FROM {_MEMBER} '
            f'WHERE {_MEMBER.key} {_KEYS}')
# (label, key) of every mirrored issue among :keys that touches an own issue of some project.
_NEIGHBOURHOOD = (
    f'SELECT DISTINCT m.{_MEMBER.label}, r.key FROM '
    f'(SELECT l.{_LINK.source_key} AS key, l.{_LINK.target_key} AS other FROM {_LINK} l '
    f'  WHERE l.{_LINK.source_key} {_KEYS} '
    f' UNION SELECT l.{_LINK.target_key}, l.{_LINK.source_key} FROM {_LINK} l '
    f'  WHERE l.{_LINK.target_key} {_KEYS} '
    f' UNION SELECT o.{_ISSUE.epic_key}, o.{_ISSUE.key} FROM {_ISSUE} o '
    f'  WHERE o.{_ISSUE.epic_key} {_KEYS}) AS r '
    f'JOIN {_ISSUE} i ON i.{_ISSUE.key} = r.key '
    f'JOIN {_MEMBER} m ON m.{_MEMBER.key} = r.other AND m.{_MEMBER.neighbor} = 0')
_DROP = f'DELETE FROM {_MEMBER} WHERE {_MEMBER.label} = ? AND {_MEMBER.key} = ?'
PUT_MEMBER = _MEMBER.insert('label', 'key', 'sort_key', 'neighbor', conflict='REPLACE')
_ADD_COUNTS = (
    f'UPDATE {_SLICE_COUNT} SET {_SLICE_COUNT.own_count} = {_SLICE_COUNT.own_count} + ?, '
    f'{_SLICE_COUNT.neighbor_count} = {_SLICE_COUNT.neighbor_count} + ? '
    f'WHERE {_SLICE_COUNT.label} = ?')


def related_keys(hub: Hub, keys: list[str]) -> set[str]:
    """Link partners (either way) and epics of ``keys``: whose neighbourhood they decide."""
    return {key for (key,) in hub.db.execute_sql(_RELATED, {'keys': json.dumps(keys)})}


def refresh_members(hub: Hub, issues: Iterable[tuple[str, list[str]]],
                    related: set[str]) -> None:
    """Bring the slices and their counts up to date after a page of ``(key, labels)`` was written.

    ``related`` holds the page's link partners and epics from before the write (``related_keys``);
    those after it are read here. Own rows of the page follow its labels; neighbour rows are
    recomputed for the page and everything related, before or after. Only rows that change are
    written: a refresh that finds the mirror as it was costs three reads (measured at 20,000
    issues: 9 ms a page of 100 when every neighbour row was deleted and inserted again, 1.5 ms
    when only the difference is). ``slice_count`` moves by exactly those changes.
    """
    labels_of = dict(issues)  # a key sent twice in a page: the last one was written
    labels = set(project_labels(hub))
    if not labels:
        return
    keys = list(labels_of)
    affected = json.dumps(sorted(set(keys) | related | related_keys(hub, keys)))
    stored = {(label, key): neighbor for label, key, neighbor in
              hub.db.execute_sql(_MEMBERS, {'keys': affected})}
    own = {(label, key) for key, issue_labels in labels_of.items()
           for label in labels.intersection(issue_labels)}
    # own rows of other issues stay; the page's follow its labels (written first: the
    # neighbourhood below is read through them)
    own_now = own | {pair for pair, neighbor in stored.items()
                     if not neighbor and pair[1] not in labels_of}
    changes = _apply(hub, stored, {pair: 0 for pair in own_now}, 0)
    neighbours = {pair: 1 for pair in hub.db.execute_sql(_NEIGHBOURHOOD, {'keys': affected})
                  if pair not in own_now}
    changes += _apply(hub, stored, neighbours, 1)
    counts = collections.defaultdict(lambda: [0, 0])
    for label, flag, delta in changes:
        counts[label][flag] += delta
    hub.db.cursor().executemany(_ADD_COUNTS, [(own, neighbor, label) for label, (own, neighbor)
                                         in counts.items() if own or neighbor])


def _apply(hub: Hub, stored: dict, wanted: dict, kind: int) -> list[tuple[str, int, int]]:
    """Write the rows of ``wanted`` that differ from ``stored`` and drop the stored rows of this
    ``kind`` (0 own, 1 neighbour) that are not wanted; the count changes as ``(label, flag, ±1)``."""
    drops = [pair for pair, flag in stored.items() if flag == kind and pair not in wanted]
    puts = [(label, key, natural_key(key), flag) for (label, key), flag in wanted.items()
            if stored.get((label, key)) != flag]
    cursor = hub.db.cursor()
    cursor.executemany(_DROP, drops)
    cursor.executemany(PUT_MEMBER, puts)
    changes = [(label, stored.pop((label, key)), -1) for label, key in drops]
    for label, key, _, flag in puts:
        changes.append((label, flag, 1))
        if (label, key) in stored:  # the row had the other flag: replaced
            changes.append((label, stored[label, key], -1))
        stored[label, key] = flag
    return changes


__all__ = ['natural_key', 'NATURAL_KEY_SQL', 'DERIVED_INDEXES', 'build_slice', 'recount', 'counts',
           'related_keys', 'refresh_members']
