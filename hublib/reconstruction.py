"""An issue at a past moment, rebuilt from the change history (contract §17, «Reconstruction»).

Every report reads its issues' change rows once, set-based (:func:`timelines`: one query over
``issue_change`` for all the keys, by its ``(key, at)`` index or the status rows' own index; a
flow's settled issues are counted by one statement, :func:`own_timelines`), and answers every
question about a moment in Python from those rows:

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

from peewee import Value, fn

from . import settings
from .db import Hub, Prepared, json_list
from .models import Issue, IssueChange, IssueMember, IssueSprint, SqlNames
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

# Status changes are read through a partial covering index of the status rows (a quarter of
# issue_change), built at open like the other derived indexes: an issue's status at a moment is one
# seek in it and no table row is read (~45 MiB at 200,000 issues / 2,000,000 change rows, built
# once in ~8 s). Its statements are hand-built: a partial index needs the literal 'status', and
# the planner, without ANALYZE statistics, would rather walk offline JQL's (field, at, …) index
# over every status change of the mirror (a flow at 200,000 issues took minutes), so they name
# the index (INDEXED BY).
_CHANGE, _ISSUE, _MEMBER = SqlNames(IssueChange), SqlNames(Issue), SqlNames(IssueMember)
STATUS_INDEX, ISSUE_INDEX = 'issue_change_status', 'issue_key_status_created'
_STATUS_ROWS = f"{_CHANGE.field} = '{STATUS_FIELD}'"
DERIVED_INDEXES = (
    f'CREATE INDEX IF NOT EXISTS {STATUS_INDEX} ON {_CHANGE} ({_CHANGE.key}, {_CHANGE.at}, '
    f'{_CHANGE.history_id}, {_CHANGE.seq}, {_CHANGE.from_string}, {_CHANGE.to_string}, '
    f'{_CHANGE.field}) WHERE {_STATUS_ROWS}',
    # a flow's own issues without their wide rows (descriptions push `created` to overflow pages)
    f'CREATE INDEX IF NOT EXISTS {ISSUE_INDEX} ON {_ISSUE} ({_ISSUE.key}, {_ISSUE.status}, '
    f'{_ISSUE.created})',
)


# The status rows of a report's keys (cycle time), from the status index alone.
_STATUS_CHANGES = (
    f'SELECT {_CHANGE.key}, {_CHANGE.at}, {_CHANGE.history_id}, {_CHANGE.seq}, {_CHANGE.field}, '
    f'NULL, NULL, NULL, {_CHANGE.from_string}, {_CHANGE.to_string} '
    f'FROM {_CHANGE} INDEXED BY {STATUS_INDEX} WHERE {_CHANGE.key} IN (SELECT value FROM '
    f"json_each(?)) AND {_CHANGE.field} = '{STATUS_FIELD}' AND {_CHANGE.at} IS NOT NULL")


_ISSUES = Prepared(lambda p: Issue.select(Issue.key, Issue.status, Issue.created,
                                          Issue.story_points).where(Issue.key.in_(json_list(p, 'keys'))))
_SPRINTS = Prepared(lambda p: IssueSprint.select(IssueSprint.key, IssueSprint.sprint_id)
                    .where(IssueSprint.key.in_(json_list(p, 'keys'))))
_CHANGE_COLUMNS = (IssueChange.key, IssueChange.at, IssueChange.history_id, IssueChange.seq,
                   IssueChange.field, IssueChange.field_id, IssueChange.from_value,
                   IssueChange.to_value, IssueChange.from_string, IssueChange.to_string)
# The one read of issue_change per report: the keys' status (and sprint) rows through the
# (key, at) index.
_STATUS_AND_SPRINT_CHANGES = Prepared(lambda p: IssueChange.select(*_CHANGE_COLUMNS).where(
    IssueChange.key.in_(json_list(p, 'keys')) & IssueChange.at.is_null(False)
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
        rows = hub.db.execute_sql(_STATUS_CHANGES, (keys_json,)).fetchall()
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


# --- a project's own issues over a window (the flow) -----------------------------------------

def _status_change(alias: str, condition: str) -> str:
    """A status row of issue ``m``'s key through the status index, ``condition`` on it."""
    return (f'FROM {_CHANGE} AS {alias} INDEXED BY {STATUS_INDEX} '
            f'WHERE {alias}.{_CHANGE.key} = m.{_MEMBER.key} '
            f"AND {alias}.{_CHANGE.field} = '{STATUS_FIELD}' AND {alias}.{_CHANGE.at} {condition}")


# Each own issue once: its created time, its current status, its status at :since by the history
# (the to_string of its last status change at or before it, else the from_string of its first one
# after it; as a JSON array, so that a null string is told from no change; coalesce() reads the
# second only without the first) and whether a status change follows :since up to :until.
# VEGA of the 200,000-issue bench (31,081 own issues), CPU on the shared 2-core machine: two reads
# (issues, then their status rows from the last one before :since, by (key, at)), 231 + 513 ms
# -> this one, 443 ms through the issues' rows, 315 ms through issue_key_status_created.
_OWN_AT = (
    f'SELECT m.{_MEMBER.key}, i.{_ISSUE.created}, i.{_ISSUE.status}, '
    f'coalesce((SELECT json_array(b.{_CHANGE.to_string}) {_status_change("b", "<= :since")} '
    f'ORDER BY b.{_CHANGE.at} DESC, b.{_CHANGE.history_id} DESC, b.{_CHANGE.seq} DESC LIMIT 1), '
    f'(SELECT json_array(f.{_CHANGE.from_string}) {_status_change("f", "> :since")} '
    f'ORDER BY f.{_CHANGE.at}, f.{_CHANGE.history_id}, f.{_CHANGE.seq} LIMIT 1)), '
    f'EXISTS (SELECT 1 {_status_change("a", "> :since")} AND a.{_CHANGE.at} <= :until) '
    f'FROM {_MEMBER} AS m CROSS JOIN {_ISSUE} AS i INDEXED BY {ISSUE_INDEX} '
    f'ON i.{_ISSUE.key} = m.{_MEMBER.key} '
    f'WHERE m.{_MEMBER.label} = :label AND m.{_MEMBER.neighbor} = 0')


def own_timelines(hub: Hub, label: str, since: str, until: str,
                  ) -> tuple[dict[str | None, int], list[str]]:
    """The project's own issues from ``since`` to ``until`` (the caller holds a read):
    ``(settled, moving)``.

    ``settled`` counts by their status at ``since`` the issues that exist then and have no status
    change in (``since``, ``until``] (most of a project's issues: nothing about them changes in a
    flow's window); the others are ``moving``: their keys, whose timelines the caller reads from
    their whole status history (:func:`timelines`), a chunk at a time if it likes.
    """
    # A Jira time's UTC moment is within a day of the local time it spells: an issue created
    # two days or more before `since` by that text exists from `since` on, whatever its offset,
    # and needs no conversion (most of a project's issues).
    early = (parse_utc(since) - timedelta(days=2)).strftime('%Y-%m-%d')
    by_state: dict[tuple, int] = {}
    moving = []
    for key, created, status, then, changes_after in hub.db.execute_sql(
            _OWN_AT, {'label': label, 'since': since, 'until': until}).fetchall():
        if changes_after or (created is not None and created >= early
                             and (to_utc(created) or '') > since):
            moving.append(key)
            continue
        state = (then, None) if then is not None else (None, status)
        by_state[state] = by_state.get(state, 0) + 1
    settled: dict[str | None, int] = {}
    for (then, status), count in by_state.items():
        # by the history; with no status change at all, the current status
        at_since = json.loads(then)[0] if then is not None else status
        settled[at_since] = settled.get(at_since, 0) + count
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


__all__ = ['DERIVED_INDEXES', 'STATUS_INDEX', 'ISSUE_INDEX', 'Columns', 'Timeline', 'status_rule', 'timelines', 'own_timelines', 'daily', 'sprint_ids', 'is_sprint_change',
           'sprint_field_id', 'closed_statuses', 'day_start', 'day_end', 'day_of', 'days']
