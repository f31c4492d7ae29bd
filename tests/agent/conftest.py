"""The agent's test harness: the hub served by waitress on 127.0.0.1 (a thread over the test's hub),
the test fake Jira (``tests.support.jira_rest``) served the same way, and the agent in-process on a
clock that moves only when it sleeps."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from hublib import projects, settings
from hubweb import create_app
from hubweb.demo.fake_jira import FIELD_IDS, KANBAN_BOARD, SCRUM_BOARD, FakeJira
from hubweb.demo.jira_rest import CLOUD, Server
from hubweb.jira_agent import Agent, Clock, Stopped, build_agent
from tests.support.jira_rest import TOKEN, USER, TestJira, serve

SETTINGS = {
    'project_key': 'AURORA',
    'issue_types': {'task': {'name': 'Задача', 'id': '10002'}, 'epic': {'name': 'Эпик', 'id': '10000'},
                    'bug': {'name': 'Ошибка', 'id': '10004'}},
    'link_types': {'blocks': 'Blocks', 'relates': 'Relates'},
    'priority_map': {'high': 'Высокий', 'medium': 'Средний', 'low': 'Низкий'},
    'field_ids': dict(FIELD_IDS),
    'pacing': {'interval_ms': 0, 'pause_on_rate_limit_seconds': 60},
}


class SteppingClock(Clock):
    """The agent's clock for tests: it stands still until the agent sleeps, then jumps."""

    def __init__(self, start: datetime = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)):
        super().__init__()
        self.start = start
        self.elapsed = 0.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.elapsed

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.elapsed)

    def sleep(self, seconds: float) -> None:
        if self.stop.is_set():
            raise Stopped()
        if seconds > 0:
            self.slept.append(seconds)
            self.elapsed += seconds


def configure(hub) -> None:
    """Settings and the two projects (AWPCA on the scrum board, ORION on the kanban one)."""
    settings.update_settings(hub, SETTINGS)
    projects.create_project(hub, 'AWPCA', 'Аврора', SCRUM_BOARD)
    projects.create_project(hub, 'ORION', 'Орион', KANBAN_BOARD)


@pytest.fixture
def hub_url(hub):
    """The test's hub served by waitress on 127.0.0.1."""
    server = Server(create_app(hub))
    yield server.url
    server.close()


@pytest.fixture
def jira_site():
    """``make(deployment, issues=…, **options)`` → (model, TestJira app, server); servers closed after."""
    servers = []

    def make(deployment: str = 'Server', *, issues: int = 60, seed: int = 5, jira: FakeJira | None = None,
             **options):
        model = jira or FakeJira(issues, seed=seed)
        app = TestJira(model, deployment=deployment, **options)
        servers.append(serve(app))
        return model, app, servers[-1]
    yield make
    for server in servers:
        server.close()


def make_agent(hub, hub_url: str, jira_url: str, deployment: str, *, clock: Clock | None = None,
               index_lag: float = 0.0) -> Agent:
    """The agent between the served hub and a fake Jira (not yet connected)."""
    return build_agent(hub_url, settings.tokens(hub)['agent'], jira_url, TOKEN,
                       jira_user=USER if deployment == CLOUD else None,
                       clock=clock or SteppingClock(), poll_interval=0.0, index_lag=index_lag)
