"""An issue at a past moment, rebuilt from the change history (contract §17, «Reconstruction»).

Every report reads its issues' change rows once, set-based (:func:`timelines`: one query over
``issue_change`` for all the keys, by its ``(key, at)`` index), and answers every question about a
moment in Python from those rows:

- *status at t*: ``to_string`` of the last ``status`` change with ``at ≤ t``; if none, the
  ``from_string`` of the first change after t; if the issue has no status change, its current
  status;
- *sprints at t*: the same over sprint changes (``field_id`` equal to ``field_ids.sprint`` when
  that is set, or ``field`` equal to ``Sprint`` in any case), whose values are comma-separated
  sprint ids (spaces ignored, empty or null = none); with no sprint change, the issue's current
  ``issue_sprint`` rows;
- *done at t*: the status at t is in the last column of the project's board, or in
  ``closed_statuses`` when the project has no board (:class:`Columns`);
- *exists at t*: ``created ≤ t``; a null ``created`` always exists.

Moments are hub time strings (``YYYY-MM-DDTHH:MM:SS+00:00``), which order as text exactly as the
times they name, so a lookup is a ``bisect`` over the sorted change times. Changes at the same
second keep the order of the change feed (``at``, ``history_id``, ``seq``). Rows without ``at``
(an unreadable Jira time) cannot be placed in time and are left out.

Decisions the contract leaves open:
- a sprint id that is not an integer (``"101, abc"``) is skipped: the hub's sprints have integer ids;
- an issue is *in a sprint at t* when it exists at t and the sprint is among its sprints at t, so
  an issue created during a sprint straight into it (Jira records no change for the value given
  at creation) counts as added, not as committed.
"""
from __future__ import annotations

import bisect
import json
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any, Callable, Iterable, Sequence

from peewee import SQL, Value, fn

from . import settings
from .db import Hub, Prepared
from .models import Issue, IssueChange, IssueMember, IssueSprint
from .settings import DEFAULT_CLOSED_STATUSES
from .timeutil import format_utc, parse_utc, to_utc

STATUS_FIELD = 'status'
SPRINT_FIELD = 'sprint'  # compared case-insensitively with the logical field name
ONE_SECOND = timedelta(seconds=1)


# --- the board's columns ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Columns:
    """The project's board columns as the reports read them: the column of a status, the done
    statuses (last column, or ``closed_statuses`` without a board) and the first column's."""

    names: tuple[str, ...]
    column_of: dict[str, int]
    done: frozenset[str]
    first: frozenset[str]

    @classmethod
    def of(cls, columns: Sequence[dict], closed_statuses: Iterable[str]) -> 'Columns':
        """From the board's ``columns`` (``[{name, statuses}]``, board order)."""
        column_of: dict[str, int] = {}
        for index, column in enumerate(columns):
            for status in column.get('statuses') or ():
                column_of.setdefault(status, index)  # a status in two columns: the first one
        statuses = [frozenset(column.get('statuses') or ()) for column in columns]
        return cls(names=tuple(str(column.get('name') or '') for column in columns),
                   column_of=column_of,
                   done=statuses[-1] if statuses else frozenset(closed_statuses),
                   first=statuses[0] if statuses else frozenset())


def closed_statuses(hub: Hub) -> list[str]:
    """The ``closed_statuses`` setting (done statuses of a project without a board)."""
    value = settings.setting(hub, 'closed_statuses')
    return value if isinstance(value, list) else list(DEFAULT_CLOSED_STATUSES)


# --- sprint values ---------------------------------------------------------------------------------

def sprint_ids(value: str | None) -> frozenset[int]:
    """The sprint ids of a sprint change's value: ``"101, 102"`` → ``{101, 102}``."""
    if not value:
        return frozenset()
    ids = set()
    for part in value.replace(' ', '').split(','):
        if part.isascii() and part.isdigit():
            ids.add(int(part))
    return frozenset(ids)


def is_sprint_change(field: str | None, field_id: str | None, sprint_field_id: str | None) -> bool:
    """Whether a change row is a sprint change (``field_ids.sprint``, else the name ``Sprint``)."""
    return ((sprint_field_id is not None and field_id == sprint_field_id)
            or (field is not None and field.casefold() == SPRINT_FIELD))


def sprint_field_id(hub: Hub) -> str | None:
    """``field_ids.sprint`` when set."""
    field_ids = settings.setting(hub, 'field_ids')
    configured = field_ids.get('sprint') if isinstance(field_ids, dict) else None
    return configured if isinstance(configured, str) and configured else None


# --- one issue through time ------------------------------------------------------------------------

_NONE: tuple = ()  # the change lists of a timeline without such changes (shared, never changed)


def status_rule(ats: Sequence[str], befores: Sequence[str | None], afters: Sequence[str | None],
                current: str | None, moment: str) -> str | None:
    """The status at ``moment`` of an issue whose status changes (in feed order) are the
    parallel ``ats``, ``befores``, ``afters`` and whose current status is ``current``: the
    ``to_string`` of the last change at or before it, else the ``from_string`` of the first one
    after it, else the current status (contract §17; the one spelling of the rule)."""
    if not ats:
        return current
    applied = bisect.bisect_right(ats, moment)
    return afters[applied - 1] if applied else befores[0]


class Timeline:
    """One issue's status and sprints through time, from its change rows and current values.

    The change lists are parallel (``status_at_``, ``status_from``, ``status_to``) and start as
    one shared empty tuple: a report builds a timeline for each of tens of thousands of issues,
    most of them with few changes or none of a kind.
    """

    __slots__ = ('key', 'created', 'status', 'sprints', 'points', 'status_at_', 'status_from',
                 'status_to', 'sprint_at_', 'sprint_from', 'sprint_to')

    def __init__(self, key: str, *, status: str | None = None, created: str | None = None,
                 sprints: frozenset[int] = frozenset(), points: float | None = None):
        self.key = key
        self.status = status            # current status
        self.created = created          # hub time, or None
        self.sprints = sprints          # current issue_sprint rows
        self.points = points            # current story points
        self.status_at_ = self.status_from = self.status_to = _NONE
        self.sprint_at_ = self.sprint_from = self.sprint_to = _NONE

    def add_status(self, at: str, before: str | None, after: str | None) -> None:
        """A status change (rows must come in feed order)."""
        if self.status_at_ is _NONE:
            self.status_at_, self.status_from, self.status_to = [at], [before], [after]
        else:
            self.status_at_.append(at)
            self.status_from.append(before)
            self.status_to.append(after)

    def add_sprint(self, at: str, before: str | None, after: str | None) -> None:
        """A sprint change (rows must come in feed order)."""
        if self.sprint_at_ is _NONE:
            self.sprint_at_, self.sprint_from, self.sprint_to = [], [], []
        self.sprint_at_.append(at)
        self.sprint_from.append(sprint_ids(before))
        self.sprint_to.append(sprint_ids(after))

    def status_at(self, moment: str) -> str | None:
        """Status at ``moment`` (contract §17)."""
        return status_rule(self.status_at_, self.status_from, self.status_to, self.status, moment)

    def sprints_at(self, moment: str) -> frozenset[int]:
        """Sprint ids at ``moment`` (contract §17)."""
        if not self.sprint_at_:
            return self.sprints
        applied = bisect.bisect_right(self.sprint_at_, moment)
        return self.sprint_to[applied - 1] if applied else self.sprint_from[0]

    def exists_at(self, moment: str) -> bool:
        """``created ≤ moment``; an issue without ``created`` always exists."""
        return self.created is None or self.created <= moment

    def in_sprint_at(self, sprint_id: int, moment: str) -> bool:
        """The issue exists at ``moment`` and ``sprint_id`` is among its sprints then."""
        return self.exists_at(moment) and sprint_id in self.sprints_at(moment)

    def moments(self) -> list[str]:
        """Every moment at which anything this timeline knows may change, sorted."""
        found = [*self.status_at_, *self.sprint_at_]
        if self.created is not None:
            found.append(self.created)
        found.sort()
        return found

    def last_moment(self) -> str:
        """The latest of :meth:`moments` ('' when there is none)."""
        return max(self.status_at_[-1] if self.status_at_ else '',
                   self.sprint_at_[-1] if self.sprint_at_ else '', self.created or '')

    def status_entries(self, statuses: frozenset[str]) -> list[str]:
        """Moments the status moved into ``statuses`` from a status outside them (in order)."""
        return [at for at, before, after in zip(self.status_at_, self.status_from, self.status_to)
                if after in statuses and before not in statuses]

    def first_exit(self, statuses: frozenset[str]) -> str | None:
        """The first moment the status moved from one of ``statuses`` to one outside them."""
        for at, before, after in zip(self.status_at_, self.status_from, self.status_to):
            if before in statuses and after not in statuses:
                return at
        return None


def daily(timeline: Timeline, ends: Sequence[str], value: Callable[[Timeline, str], Any],
          ) -> list[tuple[int, Any]]:
    """``value(timeline, t)`` at each moment of ``ends`` (sorted), as steps ``[(index, value)]``:
    the value holds from that index until the next step.

    Between two of its moments a timeline does not change, so the value is computed only at the
    first end on or after each moment (and at the first end): O(changes), not O(days), per issue;
    a timeline whose every moment lies before the first end is one step (most issues of a flow).
    """
    count = len(ends)
    if not count:
        return []
    if timeline.last_moment() <= ends[0]:
        return [(0, value(timeline, ends[0]))]
    indexes = {0}
    for moment in timeline.moments():
        index = bisect.bisect_left(ends, moment)
        if index >= count:
            break
        indexes.add(index)
    steps: list[tuple[int, Any]] = []
    for index in sorted(indexes):
        current = value(timeline, ends[index])
        if not steps or steps[-1][1] != current:
            steps.append((index, current))
    return steps


# --- reading the history, set-based ---------------------------------------------------------------

def _keys(p: Callable[[str], str]) -> SQL:
    """The keys of a report, a JSON list bound once (``json_each``): one statement per table
    whatever the number of keys, each key one lookup of the table's key index."""
    return SQL('(SELECT value FROM json_each(?))', [p('keys')])


_ISSUES = Prepared(lambda p: Issue.select(Issue.key, Issue.status, Issue.created,
                                          Issue.story_points).where(Issue.key.in_(_keys(p))))
_SPRINTS = Prepared(lambda p: IssueSprint.select(IssueSprint.key, IssueSprint.sprint_id)
                    .where(IssueSprint.key.in_(_keys(p))))
_CHANGE_COLUMNS = (IssueChange.key, IssueChange.at, IssueChange.history_id, IssueChange.seq,
                   IssueChange.field, IssueChange.field_id, IssueChange.from_value,
                   IssueChange.to_value, IssueChange.from_string, IssueChange.to_string)
# The one read of issue_change per report: the keys' status (and sprint) rows through the
# (key, at) index.
_STATUS_CHANGES = Prepared(lambda p: IssueChange.select(*_CHANGE_COLUMNS).where(
    IssueChange.key.in_(_keys(p)) & IssueChange.at.is_null(False)
    & (IssueChange.field == STATUS_FIELD)))
_STATUS_AND_SPRINT_CHANGES = Prepared(lambda p: IssueChange.select(*_CHANGE_COLUMNS).where(
    IssueChange.key.in_(_keys(p)) & IssueChange.at.is_null(False)
    & ((IssueChange.field == STATUS_FIELD)
       | (IssueChange.field_id == Value(p('sprint_field'), converter=False))
       | (fn.lower(IssueChange.field) == SPRINT_FIELD))))


def timelines(hub: Hub, keys: Iterable[str], *, sprints: bool = False) -> dict[str, Timeline]:
    """Timelines of those of ``keys`` the mirror holds, from three set-based reads (issues, their
    sprints when ``sprints``, their status and sprint changes); the caller holds a read."""
    keys_json = json.dumps(list(keys), ensure_ascii=False)
    found = {key: Timeline(key, status=status, created=to_utc(created), points=points)
             for key, status, created, points in _ISSUES.tuples(hub, keys=keys_json)}
    if not sprints:
        rows = _STATUS_CHANGES.tuples(hub, keys=keys_json)
        sprint_field = None
    else:
        current: dict[str, set[int]] = {}
        for key, sprint_id in _SPRINTS.tuples(hub, keys=keys_json):
            current.setdefault(key, set()).add(sprint_id)
        for key, ids in current.items():
            if key in found:
                found[key].sprints = frozenset(ids)
        sprint_field = sprint_field_id(hub)
        rows = _STATUS_AND_SPRINT_CHANGES.tuples(hub, keys=keys_json, sprint_field=sprint_field)
    rows.sort(key=_feed_order)
    for key, at, _, _, field, field_id, from_value, to_value, from_string, to_string in rows:
        timeline = found.get(key)
        if timeline is None:
            continue
        if field == STATUS_FIELD:
            timeline.add_status(at, from_string, to_string)
        elif sprints and is_sprint_change(field, field_id, sprint_field):
            timeline.add_sprint(at, from_value, to_value)
    return found


# A flow reads a project's own issues, tens of thousands of them, for moments from `since` on:
# per issue only its status changes from the last one at or before `since` on (found by walking
# the (key, at) index back from `since`), not its whole history. 8,000 own issues of a
# 20,000-issue mirror (bench_scale): 20,272 -> 8,825 rows, CPU 166 -> ~110 ms of the query.
_OWN_ISSUES = Prepared(lambda p: IssueMember.select(Issue.key, Issue.status, Issue.created)
                       .join(Issue, on=(Issue.key == IssueMember.key))
                       .where((IssueMember.label == p('label')) & (IssueMember.neighbor == 0)))


def _own_status_changes(p: Callable[[str], str]):
    before = IssueChange.alias('before')
    last = (before.select(before.at)
            .where((before.key == IssueMember.key) & (before.at <= p('since'))
                   & (before.field == STATUS_FIELD))
            .order_by(before.at.desc()).limit(1))
    # from the last status change at or before `since` on; with none, from the second after it
    return (IssueMember.select(IssueChange.key, IssueChange.at, IssueChange.history_id,
                               IssueChange.seq, IssueChange.from_string, IssueChange.to_string)
            .join(IssueChange, on=((IssueChange.key == IssueMember.key)
                                   & (IssueChange.at >= fn.COALESCE(last, p('after')))))
            .where((IssueMember.label == p('label')) & (IssueMember.neighbor == 0)
                   & (IssueChange.field == STATUS_FIELD)))


_OWN_STATUS_SINCE = Prepared(_own_status_changes)


def own_timelines(hub: Hub, label: str, since: str) -> tuple[dict[str | None, int],
                                                            list[Timeline]]:
    """The project's own issues from ``since`` on (the caller holds a read), from two set-based
    reads, the issues and their status changes: ``(settled, moving)``.

    ``settled`` counts by status the issues that exist at ``since`` and have no status change
    after it (most of a project's issues: nothing about them changes in a flow's window); the
    others come as ``moving`` timelines, exact from ``since`` on and knowing nothing before it
    (``created`` is None for one that existed by then).
    """
    # A Jira time's UTC moment is within a day of the local time it spells: an issue created
    # two days or more before `since` by that text exists from `since` on, whatever its offset,
    # and needs no conversion (most of a project's issues: 21,000 times, ~80 ms on the bench VM).
    early = (parse_utc(since) - timedelta(days=2)).strftime('%Y-%m-%d')
    after = format_utc(parse_utc(since) + ONE_SECOND)
    rows = _OWN_STATUS_SINCE.tuples(hub, label=label, since=since, after=after)
    rows.sort(key=_feed_order)
    changes: dict[str, list[tuple]] = {}
    for row in rows:
        changes.setdefault(row[0], []).append(row)
    settled: dict[str | None, int] = {}
    moving = []
    for key, status, created in _OWN_ISSUES.tuples(hub, label=label):
        created = None if created is None or created < early else to_utc(created)
        own = changes.get(key, ())
        if (created is None or created <= since) and (not own or own[-1][1] <= since):
            if own:  # the last change(s) at or before `since`: the only ones read
                status = status_rule([row[1] for row in own], [row[4] for row in own],
                                     [row[5] for row in own], status, since)
            settled[status] = settled.get(status, 0) + 1
            continue
        line = Timeline(key, status=status, created=created)
        for _, at, _, _, before, after_status in own:
            line.add_status(at, before, after_status)
        moving.append(line)
    return settled, moving


def _feed_order(row: tuple) -> tuple:
    return row[1], row[2], row[3]


# --- days in a time zone --------------------------------------------------------------------------

def day_start(day: date, zone: tzinfo) -> datetime:
    """The first moment of ``day`` in ``zone`` (a day that starts in a DST gap starts when it
    really starts: zoneinfo reads the missing midnight with the offset before the change)."""
    return datetime.combine(day, time(), tzinfo=zone)


def day_end(day: date, zone: tzinfo) -> str:
    """The last second of ``day`` in ``zone`` as hub time: the moment "at the end of the day"."""
    return format_utc(day_start(day + timedelta(days=1), zone) - ONE_SECOND)


def day_of(moment: str, zone: tzinfo) -> date:
    """The calendar day in ``zone`` of a hub time."""
    return parse_utc(moment).astimezone(zone).date()


def days(first: date, last: date) -> list[date]:
    """Every day from ``first`` to ``last`` inclusive."""
    return [first + timedelta(days=offset) for offset in range((last - first).days + 1)]


__all__ = ['Columns', 'Timeline', 'status_rule', 'timelines', 'own_timelines', 'daily', 'sprint_ids', 'is_sprint_change',
           'sprint_field_id', 'closed_statuses', 'day_start', 'day_end', 'day_of', 'days']
