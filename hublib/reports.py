"""Reports from the change history (contract §17): the sprint report with its burndown, the
cumulative flow, cycle time and velocity, answered offline from ``issue_change``, the boards and
the sprints. Read-only.

Every report finds its issues with one or two set-based reads and rebuilds their past with
:mod:`hublib.reconstruction` (one query over ``issue_change`` for all the keys); nothing here
queries per issue or per day. Days are calendar days in ``tz`` (IANA, default UTC); times in the
answers are hub time (UTC ISO strings).

Decisions the contract leaves open:
- *Sprint report.* A sprint without ``start_date`` has not started either: 409 like a ``future``
  one. ``end`` earlier than ``start`` (an active sprint whose start lies ahead) is read as
  ``start``. The report covers every mirrored issue of the sprint, whatever its labels: the
  sprint belongs to the board, and Jira's sprint report shows all of its issues. The issues
  looked at are those the mirror holds in the sprint now (``issue_sprint``) and those whose sprint
  changes between ``start`` and ``end`` name it; an issue taken out of a sprint only after the
  sprint ended (Jira keeps closed sprints in the field, so this takes a bulk edit) is missed.
  *Entered* means: not in the sprint at ``start`` and in it at some moment of (``start``,
  ``end``]; an issue that entered, left and entered again is listed once. An issue created
  during the sprint straight into it is *added* (it did not exist at ``start``).
- *Flow.* Without a board the columns are ``[]`` and every issue is ``unmapped``. A status in two
  columns counts in the first. Both ``since`` and ``until`` are dates; the default window is the
  30 days that end with today in ``tz``; with only ``until`` given the window is the 30 days
  ending then, with only ``since`` it ends today. A day after today is counted as it stands now.
- *Cycle time.* An *entry into a done status* is a status change from a status that is not done
  into one that is (``Готово`` → ``Снято`` is not a new entry); ``done`` is the last entry at or
  before ``until``. ``started`` is the first change out of a status of the board's first column:
  an issue whose history starts outside that column never left it (``started`` null), and without
  a board there is no first column. The default window is the 90 days (90 × 24 h) up to now;
  with only ``since`` given it ends now, with only ``until`` it starts 90 days before. Items
  come in pages like every list (``limit``, default 500, at most 1,000; ``cursor``); the summary
  is always over all of them, so every page computes all the items and keeps only its own:
  a window of 70,000 done issues answered 11 MB at once and held every timeline in memory.
- *Both windows:* ``since`` after ``until``, or more than 366 days between them, is a 422 naming
  ``since``.
- *Velocity.* The last closed sprints by ``complete_date`` (else ``end_date``, else
  ``start_date``), then id; a closed sprint without ``start_date`` has no report and is skipped.
"""
from __future__ import annotations

import json
import math
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Any

from peewee import SQL, Value, fn

from .db import Hub, Prepared, json_list
from .errors import ConflictError, NotFoundError, ValidationError
from .paging import cursor_field, decode_cursor, page
from .models import IssueChange, IssueMember, IssueSprint, JiraSprint
from .projects import require_project
from .reads import board_of
from .reconstruction import (SPRINT_FIELD, STATUS_FIELD, Columns, Timeline, closed_statuses,
                             daily, day_end, day_of, day_start, days, own_timelines,
                             sprint_field_id, timelines)
from .slices import natural_key
from .timeutil import format_utc, parse_utc, to_utc
from .validation import Day, DayOrTime, LenientInt, Schema, TimeZoneName, is_int64, load

FLOW_DAYS = 30
CYCLE_DAYS = 90
CYCLE_LIMIT, CYCLE_LIMIT_MAX = 500, 1000
# Issues whose timelines a report holds at once: memory stays flat at any window.
TIMELINE_CHUNK = 2000
MAX_SPAN_DAYS = 366
VELOCITY_DEFAULT, VELOCITY_MAX = 6, 50
PERCENTILES = (50, 85, 95)
NOT_STARTED = 'спринт ещё не начат'
SPRINT_COLUMNS = ('sprint_id', 'name', 'state', 'start_date', 'end_date', 'complete_date', 'goal')
LISTS = ('committed', 'added', 'removed', 'completed', 'not_completed')

_TZ = {'description': 'часовой пояс IANA для границ суток, по умолчанию UTC'}


class SprintReportQuery(Schema):
    """Query of ``GET /projects/{label}/sprints/{sprint_id}/report``."""

    tz = TimeZoneName(metadata=_TZ)


class FlowQuery(Schema):
    """Query of ``GET /projects/{label}/flow``."""

    since = Day(metadata={'description': 'первый день; по умолчанию за 29 дней до until'})
    until = Day(metadata={'description': 'последний день включительно; по умолчанию сегодня'})
    tz = TimeZoneName(metadata=_TZ)


class CycleTimeQuery(Schema):
    """Query of ``GET /projects/{label}/cycle-time``."""

    since = DayOrTime(metadata={'description': 'начало окна (дата — начало суток в tz), '
                                               'включительно; по умолчанию за 90 дней до until'})
    until = DayOrTime(metadata={'description': 'конец окна, не включительно; по умолчанию '
                                               'сейчас'})
    tz = TimeZoneName(metadata=_TZ)
    limit = LenientInt(minimum=1, maximum=CYCLE_LIMIT_MAX, load_default=CYCLE_LIMIT,
                       metadata={'description': f'задач на странице, по умолчанию {CYCLE_LIMIT}'})
    cursor = cursor_field()


class VelocityQuery(Schema):
    """Query of ``GET /projects/{label}/velocity``."""

    sprints = LenientInt(minimum=1, maximum=VELOCITY_MAX, load_default=VELOCITY_DEFAULT,
                         metadata={'description': f'сколько последних закрытых спринтов, по '
                                                  f'умолчанию {VELOCITY_DEFAULT}'})


def _loaded(schema: type[Schema], **values: Any) -> dict:
    return load(schema, {name: value for name, value in values.items() if value is not None})


def _zone(args: dict) -> tzinfo:
    return args.get('tz') or timezone.utc


def _check_window(since: date | datetime, until: date | datetime) -> None:
    if since > until:
        raise ValidationError({'since': ['начало периода позже его конца (until)']})
    if until - since > timedelta(days=MAX_SPAN_DAYS):
        raise ValidationError({'since': [f'период длиннее {MAX_SPAN_DAYS} дней']})


def _ordered(lines: dict[str, Timeline]) -> list[Timeline]:
    return sorted(lines.values(), key=lambda line: natural_key(line.key))


def _in_chunks(hub: Hub, keys: list[str]):
    """The timelines of ``keys`` in their order, read :data:`TIMELINE_CHUNK` at a time (the
    caller holds a read); the read budget is looked at between chunks."""
    for start in range(0, len(keys), TIMELINE_CHUNK):
        hub.check_budget()
        chunk = keys[start:start + TIMELINE_CHUNK]
        lines = timelines(hub, chunk)
        yield from (lines[key] for key in chunk if key in lines)


def _points(lines: list[Timeline]) -> float:
    # rounded like the burndown's running sums, so that its last day equals not_completed
    return round(math.fsum(line.points for line in lines if line.points is not None), 6)


# --- the sprint report ---------------------------------------------------------------------------

_SPRINT_ROW = tuple(getattr(JiraSprint, name) for name in SPRINT_COLUMNS)
_SPRINT = Prepared(lambda p: JiraSprint.select(*_SPRINT_ROW).where(
    (JiraSprint.sprint_id == p('sprint_id')) & (JiraSprint.board_id == p('board_id'))))
_CLOSED_SPRINTS = Prepared(lambda p: JiraSprint.select(*_SPRINT_ROW).where(
    (JiraSprint.board_id == p('board_id')) & (JiraSprint.state == 'closed')))


def _as_list(column):
    # ',' || the ids without spaces || ',', in which ',<id>,' finds the id as one whole item
    return Value(',').concat(fn.replace(column, ' ', '')).concat(',')


# The issues a sprint report looks at: those in the sprint now, and those whose sprint changes
# between the sprint's start and end name it (read by the `at` index: two weeks of changes).
_SPRINT_KEYS = Prepared(lambda p: (
    IssueSprint.select(IssueSprint.key).where(IssueSprint.sprint_id == p('sprint_id'))
    | IssueChange.select(IssueChange.key).where(
        (IssueChange.at >= p('start')) & (IssueChange.at <= p('end'))
        & ((IssueChange.field_id == Value(p('sprint_field'), converter=False))
           | (fn.lower(IssueChange.field) == SPRINT_FIELD))
        & ((fn.instr(_as_list(IssueChange.from_value), p('item')) > 0)
           | (fn.instr(_as_list(IssueChange.to_value), p('item')) > 0)))))


def _sprint_on_board(hub: Hub, label: str, sprint_id: int) -> tuple[dict, Columns]:
    if not is_int64(sprint_id):
        raise NotFoundError(f'спринта {sprint_id} нет на доске проекта {label}')
    board = board_of(hub, label)
    found = _SPRINT.dicts(hub, sprint_id=sprint_id, board_id=board['board_id']) \
        if board['board_id'] is not None else []
    if not found:
        raise NotFoundError(f'спринта {sprint_id} нет на доске проекта {label}')
    return found[0], Columns.of(board['columns'], closed_statuses(hub))


def _window(hub: Hub, sprint: dict) -> tuple[str, str]:
    """(start, end) of a started sprint as hub time; ConflictError for one not started."""
    start = to_utc(sprint['start_date'])
    if sprint['state'] == 'future' or start is None:
        raise ConflictError(NOT_STARTED)
    end = to_utc(sprint['complete_date']) or hub.now()
    return start, max(start, end)


def _sprint_lines(hub: Hub, sprint_id: int, start: str, end: str) -> dict[str, Timeline]:
    keys = [key for (key,) in _SPRINT_KEYS.tuples(
        hub, sprint_id=sprint_id, start=start, end=end, sprint_field=sprint_field_id(hub),
        item=f',{sprint_id},')]
    return timelines(hub, keys, sprints=True)


def _membership(sprint_id: int, start: str, end: str, lines: dict[str, Timeline],
                done: frozenset[str]) -> dict[str, list[Timeline]]:
    """The report's lists (``LISTS``) of timelines, in natural key order."""
    found: dict[str, list[Timeline]] = {name: [] for name in LISTS}
    for line in _ordered(lines):
        if line.in_sprint_at(sprint_id, start):
            found['committed'].append(line)
        elif any(line.in_sprint_at(sprint_id, moment)
                 for moment in line.moments() if start < moment <= end):
            found['added'].append(line)
        else:
            continue
        if not line.in_sprint_at(sprint_id, end):
            found['removed'].append(line)
        elif line.status_at(end) in done:
            found['completed'].append(line)
        else:
            found['not_completed'].append(line)
    return found


def _burndown(sprint_id: int, start: str, end: str, lines: list[Timeline], done: frozenset[str],
              zone: tzinfo) -> list[dict]:
    """Remaining issues and points at the end of each day of the sprint (at ``end`` on its last)."""
    span = days(day_of(start, zone), day_of(end, zone))
    ends = [day_end(day, zone) for day in span]
    ends[-1] = end

    def remaining(line: Timeline, moment: str) -> bool:
        return line.in_sprint_at(sprint_id, moment) and line.status_at(moment) not in done

    issues = [0] * (len(span) + 1)
    points = [0.0] * (len(span) + 1)
    for line in lines:
        weight = line.points or 0.0
        steps = daily(line, ends, remaining)
        for number, (index, value) in enumerate(steps):
            if not value:
                continue
            until = steps[number + 1][0] if number + 1 < len(steps) else len(span)
            issues[index] += 1
            issues[until] -= 1
            points[index] += weight
            points[until] -= weight
    burndown, count, total = [], 0, 0.0
    for index, day in enumerate(span):
        count += issues[index]
        total += points[index]
        burndown.append({'date': day.isoformat(), 'remaining_issues': count,
                         'remaining_points': round(total, 6)})
    return burndown


def sprint_report(hub: Hub, label: str, sprint_id: int, *, tz: str | tzinfo | None = None) -> dict:
    """The sprint report of contract §17: committed, added, removed, completed, not completed,
    their points and the daily burndown (404: no such sprint on the project's board; 409: not
    started)."""
    zone = _zone(_loaded(SprintReportQuery, tz=tz))
    with hub.read():
        require_project(hub, label)
        sprint, columns = _sprint_on_board(hub, label, sprint_id)
        start, end = _window(hub, sprint)
        lines = _sprint_lines(hub, sprint_id, start, end)
    lists = _membership(sprint_id, start, end, lines, columns.done)
    involved = lists['committed'] + lists['added']
    return {'sprint': sprint, 'start': start, 'end': end,
            **{name: [line.key for line in found] for name, found in lists.items()},
            'points': {name: _points(found) for name, found in lists.items()},
            'burndown': _burndown(sprint_id, start, end, involved, columns.done, zone)}


# --- cumulative flow -------------------------------------------------------------------------------

def project_flow(hub: Hub, label: str, *, since: date | str | None = None,
                 until: date | str | None = None, tz: str | tzinfo | None = None) -> dict:
    """Cumulative flow of contract §17: per day, the project's own issues that exist at its end
    by the board column holding their status then (``unmapped``: in no column)."""
    args = _loaded(FlowQuery, since=since, until=until, tz=tz)
    zone = _zone(args)
    last = args.get('until') or hub.clock().astimezone(zone).date()
    first = args.get('since') or last - timedelta(days=FLOW_DAYS - 1)
    _check_window(first, last)
    span = days(first, last)
    ends = [day_end(day, zone) for day in span]
    with hub.read():
        require_project(hub, label)
        columns = Columns.of(board_of(hub, label)['columns'], closed_statuses(hub))
        width = len(columns.names) + 1  # the last slot counts the unmapped
        changes = [[0] * width for _ in range(len(span) + 1)]
        column_of, unmapped = columns.column_of, width - 1

        def slot(line: Timeline, moment: str) -> int | None:
            if not line.exists_at(moment):
                return None
            return column_of.get(line.status_at(moment), unmapped)

        settled, moving = own_timelines(hub, label, ends[0], ends[-1])
        for status, count in settled.items():  # the same column every day
            changes[0][column_of.get(status, unmapped)] += count
        for line in _in_chunks(hub, moving):
            steps = daily(line, ends, slot)
            for number, (index, value) in enumerate(steps):
                if value is None:
                    continue
                until_index = steps[number + 1][0] if number + 1 < len(steps) else len(span)
                changes[index][value] += 1
                changes[until_index][value] -= 1
    result, running = [], [0] * width
    for index, day in enumerate(span):
        running = [count + change for count, change in zip(running, changes[index])]
        result.append({'date': day.isoformat(), 'counts': running[:-1], 'unmapped': running[-1]})
    return {'columns': list(columns.names), 'days': result}


# --- cycle time ------------------------------------------------------------------------------------

# Own issues with a status change into a done status in the window: the `at` index over the
# window, each row's project checked by the slice's primary key.
_DONE_IN_WINDOW = Prepared(lambda p: IssueChange.select(IssueChange.key).distinct().where(
    (IssueChange.at >= p('since')) & (IssueChange.at < p('until'))
    & (IssueChange.field == STATUS_FIELD)
    & IssueChange.to_string.in_(json_list(p, 'done'))
    & fn.EXISTS(IssueMember.select(SQL('1')).where(
        (IssueMember.label == p('label')) & (IssueMember.key == IssueChange.key)
        & (IssueMember.neighbor == 0)))))


def _moment(value: date | datetime, zone: tzinfo) -> datetime:
    return value if isinstance(value, datetime) else day_start(value, zone)


def _days_between(later: str, earlier: str | None) -> float | None:
    if earlier is None:
        return None
    return round((parse_utc(later) - parse_utc(earlier)).total_seconds() / 86_400, 2)


def nearest_rank(values: list[float], percent: int) -> float | None:
    """The ``percent``-th percentile by nearest rank (the ⌈p·n/100⌉-th smallest); None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, -(-percent * len(ordered) // 100)) - 1]


def _summary(values: list[float | None]) -> dict[str, float | None]:
    present = [value for value in values if value is not None]
    return {f'p{percent}': nearest_rank(present, percent) for percent in PERCENTILES}


def _cycle_item(line: Timeline, columns: Columns, since: str, until: str) -> dict | None:
    """The cycle-time item of an issue, or None when it is not done at ``until`` or its last
    entry into a done status lies outside [``since``, ``until``)."""
    if line.status_at(until) not in columns.done:
        return None
    entries = [at for at in line.status_entries(columns.done) if at <= until]
    if not entries or not since <= entries[-1] < until:
        return None
    done = entries[-1]
    started = line.first_exit(columns.first)
    return {'key': line.key, 'created': line.created, 'started': started, 'done': done,
            'lead_days': _days_between(done, line.created),
            'cycle_days': _days_between(done, started)}


def cycle_time(hub: Hub, label: str, *, since: date | datetime | str | None = None,
               until: date | datetime | str | None = None, tz: str | tzinfo | None = None,
               limit: int | None = None, cursor: str | None = None) -> dict:
    """Lead and cycle time of contract §17: the project's own issues done at ``until`` whose last
    entry into a done status falls in [``since``, ``until``), a page of them (natural key order)
    and nearest-rank percentiles over all of them."""
    args = _loaded(CycleTimeQuery, since=since, until=until, tz=tz, limit=limit, cursor=cursor)
    after = decode_cursor(args.get('cursor'), (str,))
    zone = _zone(args)
    end = _moment(args['until'], zone) if 'until' in args else hub.clock()
    start = _moment(args['since'], zone) if 'since' in args else end - timedelta(days=CYCLE_DAYS)
    _check_window(start, end)
    since_text, until_text = format_utc(start), format_utc(end)
    items, leads, cycles = [], [], []
    with hub.read():
        require_project(hub, label)
        columns = Columns.of(board_of(hub, label)['columns'], closed_statuses(hub))
        keys = sorted((key for (key,) in _DONE_IN_WINDOW.tuples(
            hub, since=since_text, until=until_text, label=label,
            done=json.dumps(sorted(columns.done), ensure_ascii=False))), key=natural_key)
        for line in _in_chunks(hub, keys):
            item = _cycle_item(line, columns, since_text, until_text)
            if item is None:
                continue
            leads.append(item['lead_days'])
            cycles.append(item['cycle_days'])
            if len(items) <= args['limit'] and (after is None or natural_key(item['key']) > after[0]):
                items.append(item)
    items, next_cursor = page(items, args['limit'], lambda item: [natural_key(item['key'])])
    return {'items': items, 'next_cursor': next_cursor, 'summary': {
        'count': len(leads), 'lead_days': _summary(leads), 'cycle_days': _summary(cycles)}}


# --- velocity --------------------------------------------------------------------------------------

def _closed_order(sprint: dict) -> tuple:
    finished = (to_utc(sprint['complete_date']) or to_utc(sprint['end_date'])
                or to_utc(sprint['start_date']))
    return finished or '', sprint['sprint_id']


def velocity(hub: Hub, label: str, *, sprints: int = VELOCITY_DEFAULT) -> dict:
    """Committed and completed issues and points of the board's last ``sprints`` closed sprints,
    oldest first, each equal to its sprint report."""
    count = _loaded(VelocityQuery, sprints=sprints)['sprints']
    items = []
    with hub.read():
        require_project(hub, label)
        board = board_of(hub, label)
        if board['board_id'] is None:
            return {'items': []}
        done = Columns.of(board['columns'], closed_statuses(hub)).done
        closed = [sprint for sprint in _CLOSED_SPRINTS.dicts(hub, board_id=board['board_id'])
                  if to_utc(sprint['start_date']) is not None]
        for sprint in sorted(closed, key=_closed_order)[-count:]:
            start, end = _window(hub, sprint)
            lists = _membership(sprint['sprint_id'], start, end,
                                _sprint_lines(hub, sprint['sprint_id'], start, end), done)
            items.append({'sprint_id': sprint['sprint_id'], 'name': sprint['name'],
                          'committed_issues': len(lists['committed']),
                          'completed_issues': len(lists['completed']),
                          'committed_points': _points(lists['committed']),
                          'completed_points': _points(lists['completed'])})
    return {'items': items}


__all__ = ['SprintReportQuery', 'FlowQuery', 'CycleTimeQuery', 'VelocityQuery', 'sprint_report',
           'project_flow', 'cycle_time', 'velocity', 'nearest_rank', 'NOT_STARTED']
