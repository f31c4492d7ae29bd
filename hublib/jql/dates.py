"""JQL's dates: the request's time zone, absolute and relative values, the date functions."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo

from ..errors import ValidationError
from ..timeutil import time_zone
from .language import DATE_FUNCTIONS, Value, refusal

# --- time ------------------------------------------------------------------------------------------

def zone(name: str | None) -> tzinfo:
    """The request's time zone: an IANA name (``tz=``), UTC when absent; refused naming ``tz``."""
    try:
        return time_zone(name)
    except ValueError:
        raise ValidationError({'tz': [f'неизвестный часовой пояс "{name}": ожидается имя IANA, '
                                      'например Europe/Moscow']}) from None


_DATE = re.compile(r'(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[ T](\d{1,2}):(\d{2}))?')
_OFFSET_PART = re.compile(r'\s*([+-]?)(\d+)([wdhm])')
_UNITS = {'w': timedelta(weeks=1), 'd': timedelta(days=1), 'h': timedelta(hours=1),
          'm': timedelta(minutes=1)}


@dataclass(frozen=True)
class Span:
    """A date value as a half-open interval of aware moments: ``[start, end)``."""

    start: datetime
    end: datetime


def _relative(text: str) -> timedelta | None:
    try:
        return _offset(text)
    except OverflowError:  # -99999999999d: no date at all
        return None


def _offset(text: str) -> timedelta | None:
    position, total, sign = 0, timedelta(), 1
    text = text.strip()
    if not text:
        return None
    while position < len(text):
        match = _OFFSET_PART.match(text, position)
        if match is None:
            return None
        if match.group(1):
            sign = -1 if match.group(1) == '-' else 1
        total += sign * int(match.group(2)) * _UNITS[match.group(3)]
        position = match.end()
    return total


def _add_months(moment: datetime, months: int) -> datetime:
    month = moment.month - 1 + months
    return moment.replace(year=moment.year + month // 12, month=month % 12 + 1)


class Clock:
    """Dates of one request: ``now`` and the time zone of day, week, month and year boundaries."""

    def __init__(self, now: datetime, tz):
        self.tz = tz
        self.now = now.astimezone(tz)

    def _local(self, year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
        # fold=0 and a round trip through UTC: a wall time skipped by a DST change moves forward
        moment = datetime(year, month, day, hour, minute, tzinfo=self.tz)
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
        """The interval a date value names; refused when it is no date (or none SQL can hold)."""
        span = self._span(value)
        try:
            # every bound SQL will see, in UTC, a day away from datetime's ends
            if all(1 <= moment.astimezone(timezone.utc).year <= 9998
                   for moment in (span.start, span.end)):
                return span
        except (OverflowError, ValueError):
            pass
        raise refusal(f'неверная дата "{value.shown()}"', value.position)

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
            try:
                date(year, month, day)
                if hour is None:
                    start = self._local(year, month, day)
                    return Span(start, self._shift_days(start, 1))
                if not (0 <= hour <= 23 and 0 <= minute <= 59):
                    raise ValueError
                start = self._local(year, month, day, hour, minute)
                return Span(start, start + timedelta(minutes=1))
            except (ValueError, OverflowError):
                raise refusal(f'неверная дата "{value.text}"', value.position) from None
        offset = _relative(text)
        if offset is None:
            raise refusal(f'неверная дата "{value.text}"', value.position)
        try:
            moment = self.now + offset
        except OverflowError:
            raise refusal(f'неверная дата "{value.text}"', value.position) from None
        return Span(moment, moment + timedelta(seconds=1))

    def _function(self, value: Value) -> Span:
        name = value.function
        if name not in DATE_FUNCTIONS:
            raise refusal(f'функция {value.text}() не даёт дату', value.position)
        if len(value.arguments) > 1:
            raise refusal(f'функция {value.text}() принимает не больше одного аргумента',
                         value.position)
        moment, shift = self.now, 0
        if value.arguments:
            argument = value.arguments[0]
            text = argument.text.strip()
            offset = None if argument.function or argument.empty else _relative(text)
            if offset is not None:
                moment = moment + offset
            elif re.fullmatch(r'[+-]?\d{1,4}', text) and name != 'now':
                shift = int(text)
            else:
                raise refusal(f'неверное смещение "{argument.text}"', argument.position)
        try:
            if name == 'now':
                return Span(moment, moment + timedelta(seconds=1))
            edge, period = ('start', name[7:]) if name.startswith('startOf') else ('end', name[5:])
            start, end = self.period(period, moment, shift)
        except (ValueError, OverflowError):
            raise refusal(f'неверное смещение у {value.text}()', value.position) from None
        moment = start if edge == 'start' else end - timedelta(seconds=1)
        return Span(moment, moment + timedelta(seconds=1))


def sql_moment(moment: datetime) -> str:
    """An aware moment as :func:`utc_sql` spells it."""
    return moment.astimezone(timezone.utc).strftime('%Y-%m-%d %H:%M:%S')
