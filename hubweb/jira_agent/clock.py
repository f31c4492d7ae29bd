"""The agent's sense of time: a monotonic clock for pacing, the wall clock for Jira's HTTP dates
and ``last_jira_call_at``, and a sleep that a stop request cuts short.

Injectable (STYLE 6): the rate-limit tests run the agent on a clock that only moves when the agent
sleeps, so a storm of ``Retry-After: 30`` answers is checked in milliseconds.
"""
from __future__ import annotations

import threading
import time
from datetime import datetime, timezone


class Stopped(Exception):
    """The agent was asked to stop (SIGTERM, Ctrl+C) while it waited."""


class Clock:
    """Real time; ``sleep`` returns early with :class:`Stopped` once ``stop`` is set."""

    def __init__(self, stop: threading.Event | None = None):
        self.stop = stop or threading.Event()

    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    def sleep(self, seconds: float) -> None:
        if self.stop.is_set():
            raise Stopped()
        if seconds > 0 and self.stop.wait(seconds):
            raise Stopped()


def utc_text(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS+00:00``, the form the hub reads ``last_jira_call_at`` in."""
    return moment.astimezone(timezone.utc).strftime('%Y-%m-%dT%H:%M:%S+00:00')


__all__ = ['Clock', 'Stopped', 'utc_text']
