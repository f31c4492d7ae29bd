"""Shared fixtures: a migrated file database in tmp_path and a clock the test moves by hand."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from hublib import open_hub


class FakeClock:
    """A clock that stands still until the test moves it."""

    def __init__(self, start: str = '2026-11-30T10:00:00+00:00'):
        self.moment = datetime.fromisoformat(start)

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, **delta) -> None:
        self.moment += timedelta(**delta)

    def set(self, text: str) -> None:
        self.moment = datetime.fromisoformat(text).astimezone(timezone.utc)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def data_dir(tmp_path):
    return tmp_path / 'hub-data'


@pytest.fixture
def hub(data_dir, clock):
    hub = open_hub(data_dir, clock=clock)
    yield hub
    hub.close()
