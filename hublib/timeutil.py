"""Time: one parser for Jira time strings, one writer format for hub time.

The hub writes UTC as ``YYYY-MM-DDTHH:MM:SS+00:00`` (seconds, no fraction) so that the strings sort
and compare as times. Jira sends ``2026-10-22T09:00:00.000+0300``; ``datetime.fromisoformat`` of
3.11 accepts ``+0300`` and any fraction length, so it does the heavy lifting here.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Callable

Clock = Callable[[], datetime]

_JIRA_TIME = re.compile(
    r'^\s*(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:[.,]\d+)?'
    r'(Z|z|[+-]\d{2}(?::?\d{2})?)?\s*$')


def system_clock() -> datetime:
    """The real clock: an aware datetime in UTC."""
    return datetime.now(timezone.utc)


def format_utc(moment: datetime) -> str:
    """Hub time format of an aware (or naive = UTC) datetime."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).replace(microsecond=0).isoformat()


def parse_utc(text: str) -> datetime:
    """Parse a hub time string back into an aware datetime (raises ValueError)."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment


def to_utc(text: object) -> str | None:
    """Normalize a Jira ISO-8601 date-time to hub UTC; ``None`` for anything unparseable."""
    if not isinstance(text, str):
        return None
    match = _JIRA_TIME.match(text)
    if match is None:
        return None
    day, clock, offset = match.groups()
    try:
        moment = datetime.fromisoformat(f'{day}T{clock}')
        if offset and offset not in ('Z', 'z'):
            sign = -1 if offset[0] == '-' else 1
            digits = offset[1:].replace(':', '')
            hours, minutes = int(digits[:2]), int(digits[2:] or 0)
            if hours > 23 or minutes > 59:
                return None
            moment -= sign * timedelta(hours=hours, minutes=minutes)
    except (ValueError, OverflowError):
        return None
    return moment.replace(tzinfo=timezone.utc).isoformat()


def minutes_before(text: str, minutes: float) -> str:
    """Hub time ``minutes`` before the hub time ``text``."""
    return format_utc(parse_utc(text) - timedelta(minutes=minutes))
