"""JQL's dates: the request's time zone, absolute and relative values, the date functions."""
from __future__ import annotations

import re
from dataclasses import dataclass
from calendar import monthrange
from datetime import date, datetime, timedelta, timezone, tzinfo

from ..errors import ValidationError
from ..timeutil import time_zone
from .language import DATE_FUNCTIONS, MAX_DIGITS, Value, refusal, shown

# --- time ------------------------------------------------------------------------------------------

def zone(name: str | None) -> tzinfo:
    """The request's time zone: an IANA name (``tz=``), UTC when absent; refused naming ``tz``."""
    try:
        return time_zone(name)
    except ValueError:
        raise ValidationError({'tz': [f'неизвестный часовой пояс "{name}": ожидается имя IANA, '
                                      'например Europe/Moscow']}) from None


_DATE = re.compile(r'(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[ T](\d{1,2}):(\d{2}))?')
# An offset: parts of a signed count and a unit; a count of more than MAX_DIGITS digits is no
# offset at all (no date is that far, and Python reads no int of over 4,300 digits).
_OFFSET_PART = re.compile(r'\s*([+-]?)(\d{1,%d})([wdhm])' % MAX_DIGITS)
# The increment of a date function takes Jira's units: years and months too (y, M).
_INCREMENT_PART = re.compile(r'\s*([+-]?)(\d{1,%d})([yMwdhm])' % MAX_DIGITS)
_PERIOD_COUNT = re.compile(r'([+-]?)(\d{1,%d})' % MAX_DIGITS)
_UNITS = {'w': timedelta(weeks=1), 'd': timedelta(days=1), 'h': timedelta(hours=1),
          'm': timedelta(minutes=1)}


@dataclass(frozen=True)
class Span:
    """A date value as a half-open interval of aware moments: ``[start, end)``."""

    start: datetime
    end: datetime


def _parts(text: str, pattern: re.Pattern) -> list[tuple[int, str]] | None:
    """The signed counts and units of an offset (``"-1w 2d"``: a part without a sign takes the
    sign of the part before it), None when the text is no offset."""
    position, parts, sign = 0, [], 1
    text = text.strip()
    if not text:
        return None
    while position < len(text):
        match = pattern.match(text, position)
        if match is None:
            return None
        if match.group(1):
            sign = -1 if match.group(1) == '-' else 1
        parts.append((sign * int(match.group(2)), match.group(3)))
        position = match.end()
    return parts


def _offset(text: str) -> timedelta | None:
    """A relative offset from now (``-7d``, ``"-1w 2d"``), None when the text is none."""
    parts = _parts(text, _OFFSET_PART)
    if parts is None:
        return None
    return sum((count * _UNITS[unit] for count, unit in parts), timedelta())


def _add_months(moment: datetime, months: int) -> datetime:
    """The same wall time ``months`` later, the day cut to the month's last (31 January + 1M:
    28 or 29 February), as Jira's calendar adds months."""
    month = moment.month - 1 + months
    year, month = moment.year + month // 12, month % 12 + 1
    return moment.replace(year=year, month=month, day=min(moment.day, monthrange(year, month)[1]))


class Clock:
    """Dates of one request: ``now`` and the time zone of day, week, month and year boundaries."""

    def __init__(self, now: datetime, tz):
        self.tz = tz
        self.now = now.astimezone(tz)

    def _local(self, year: int, month: int, day: int, hour: int = 0, minute: int = 0,
               second: int = 0) -> datetime:
        # fold=0 and a round trip through UTC: a wall time skipped by a DST change moves forward
        moment = datetime(year, month, day, hour, minute, second, tzinfo=self.tz)
        return moment.astimezone(timezone.utc).astimezone(self.tz)

    def day_start(self, moment: datetime) -> datetime:
        local = moment.astimezone(self.tz)
        return self._local(local.year, local.month, local.day)

    def period(self, name: str, moment: datetime, shift: int) -> tuple[datetime, datetime]:
        """Start and (exclusive) end of the day/week/month/year of ``moment``, moved ``shift``."""
        local = moment.astimezone(self.tz)
        if name == 'Day':
            start = self._local(local.year, local.month, local.day)
            start = self._shift_days(start, shift)
            return start, self._shift_days(start, 1)
        if name == 'Week':
            monday = local.date() - timedelta(days=local.weekday())
            start = self._shift_days(self._local(monday.year, monday.month, monday.day), 7 * shift)
            return start, self._shift_days(start, 7)
        if name == 'Month':
            first = _add_months(local.replace(day=1), shift)
            start = self._local(first.year, first.month, 1)
            after = _add_months(first, 1)
            return start, self._local(after.year, after.month, 1)
        start = self._local(local.year + shift, 1, 1)
        return start, self._local(local.year + shift + 1, 1, 1)

    def _shift_days(self, start: datetime, days: int) -> datetime:
        day = start.astimezone(self.tz).date() + timedelta(days=days)
        return self._local(day.year, day.month, day.day)

    def span(self, value: Value) -> Span:
        """The interval a date value names; refused when it is no date (or none SQL can hold:
        an offset or increment that leaves the calendar is «неверная дата» naming the value)."""
        try:
            span = self._span(value)
            # every bound SQL will see, in UTC, a day away from datetime's ends
            if all(1 <= moment.astimezone(timezone.utc).year <= 9998
                   for moment in (span.start, span.end)):
                return span
        except (OverflowError, ValueError):
            pass
        raise refusal(f'неверная дата "{shown(written(value))}"', value.position)

    def _span(self, value: Value) -> Span:
        if value.moment is not None:
            moment = value.moment if value.moment.tzinfo else value.moment.replace(
                tzinfo=timezone.utc)
            return Span(moment, moment + timedelta(seconds=1))
        if value.function is not None:
            return self._function(value)
        if value.empty:
            raise refusal('ожидается дата, а не EMPTY', value.position)
        text = value.text.strip()
        match = _DATE.fullmatch(text)
        if match:
            year, month, day, hour, minute = (int(part) if part else None for part in match.groups())
            date(year, month, day)  # ValueError: no such day (span refuses it)
            if hour is None:
                start = self._local(year, month, day)
                return Span(start, self._shift_days(start, 1))
            if not (0 <= hour <= 23 and 0 <= minute <= 59):
                raise ValueError(text)
            start = self._local(year, month, day, hour, minute)
            return Span(start, start + timedelta(minutes=1))
        offset = _offset(text)
        if offset is None:
            raise ValueError(text)
        moment = self.now + offset
        return Span(moment, moment + timedelta(seconds=1))

    def _function(self, value: Value) -> Span:
        """A date function as Jira reads it: the boundary of the current period first (the start
        or the last second of this day, week, month or year in the request's zone), then the
        increment moves that moment: ``startOfMonth("+14d")`` is the 15th of this month,
        ``endOfMonth(+2w)`` two weeks after the end of this month. An increment without a unit
        counts the function's own period (``startOfMonth(-1)``: the start of last month); months
        and years keep the day where the month has it (else its last day), days and weeks the
        wall time, hours and minutes move the moment."""
        name = value.function
        if name not in DATE_FUNCTIONS:
            raise refusal(f'функция {value.text}() не даёт дату', value.position)
        if len(value.arguments) > 1:
            raise refusal(f'функция {value.text}() принимает не больше одного аргумента',
                         value.position)
        parts, shift = [], 0
        if value.arguments:
            argument = value.arguments[0]
            text = argument.text.strip()
            found = None if argument.function or argument.empty else _parts(text, _INCREMENT_PART)
            if found is not None:
                parts = found
            elif re.fullmatch(r'[+-]?\d{1,4}', text) and name != 'now':
                shift = int(text)
            else:
                raise refusal(f'неверное смещение "{shown(argument.text)}"', argument.position)
        if name == 'now':
            moment = self.now
        else:
            edge, period = ('start', name[7:]) if name.startswith('startOf') else ('end', name[5:])
            start, end = self.period(period, self.now, shift)
            moment = start if edge == 'start' else end - timedelta(seconds=1)
        for count, unit in parts:
            moment = self._moved(moment, count, unit)
        return Span(moment, moment + timedelta(seconds=1))

    def _moved(self, moment: datetime, count: int, unit: str) -> datetime:
        """``moment`` moved by ``count`` ``unit`` (y M w d: on the calendar of the request's zone;
        h m: on the clock)."""
        if unit in 'hm':
            return moment + count * _UNITS[unit]
        local = moment.astimezone(self.tz)
        if unit in 'yM':
            day = _add_months(local.replace(tzinfo=None), count * (12 if unit == 'y' else 1))
        else:
            day = local.replace(tzinfo=None) + timedelta(days=count * (7 if unit == 'w' else 1))
        return self._local(day.year, day.month, day.day, day.hour, day.minute, day.second)


def written(value: Value) -> str:
    """A value as the query wrote it (a function with its arguments)."""
    if value.function is None:
        return value.text
    return f'{value.text}({", ".join(map(written, value.arguments))})'


def sql_moment(moment: datetime) -> str:
    """An aware moment as :func:`utc_sql` spells it."""
    return moment.astimezone(timezone.utc).strftime('%Y-%m-%d %H:%M:%S')
