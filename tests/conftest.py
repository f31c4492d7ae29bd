"""Shared fixtures: a migrated file database in tmp_path and a clock the test moves by hand;
for the whole run, a guard on the repository root and hypothesis's storage in a temporary
directory."""
from __future__ import annotations

import json
import tempfile
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import configuration as hypothesis_configuration
from hypothesis import settings as hypothesis_settings

from hublib import open_hub
from tests.support.repository import listing_change, root_listing

# The repository root as the run found it: taken when pytest loads this file, before any test
# module is imported (collection may already write files).
ROOT_AT_START = root_listing()

# hypothesis keeps no examples between runs, and its caches (constants of the modules under test,
# Unicode tables) go to a temporary directory instead of ./.hypothesis; set before collection,
# which may already use them.
hypothesis_settings.register_profile('hub', database=None)
hypothesis_settings.load_profile('hub')
HYPOTHESIS_HOME = tempfile.TemporaryDirectory(prefix='sdlc-hub-hypothesis-')
hypothesis_configuration.set_hypothesis_home_dir(HYPOTHESIS_HOME.name)


@pytest.fixture(scope='session', autouse=True)
def repository_root_unchanged():
    """Fail the run when it added or removed anything at the repository root."""
    yield
    change = listing_change(ROOT_AT_START, root_listing())
    if change:
        pytest.fail(f'the test run changed the repository root: {change}', pytrace=False)


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
def claimed_refresh():
    """Make a refresh command in ``claimed`` (first delivery) with its sync run, written
    directly: library tests of ingest and reads need a claimed refresh but not the queue."""
    from hublib import syncjournal

    def make(hub, params: dict | None = None) -> int:
        params = params or {'keys': ['AURORA-1']}
        with hub.write():
            batch = hub.db.execute_sql("INSERT INTO batch (title, created_at) VALUES ('x', ?)",
                                       (hub.now(),)).lastrowid
            command_id = hub.db.execute_sql(
                'INSERT INTO command (batch_id, seq, type, params, status, deliveries) '
                "VALUES (?, 1, 'refresh', ?, 'claimed', 1)",
                (batch, json.dumps(params, ensure_ascii=False))).lastrowid
            syncjournal.open_run(hub, command_id, params)
        return command_id
    return make


@pytest.fixture
def ingest(claimed_refresh):
    """Write issues the way the mirror is written: a page of a claimed refresh."""
    def write(hub, *issues):
        from hublib import mirror

        mirror.ingest_state(hub, 'jira', claimed_refresh(hub), list(issues))
    return write


@pytest.fixture
def two(hub):
    """The hub of Jira project AURORA with two project slices, P and Q."""
    from hublib import projects, settings

    settings.update_settings(hub, {'project_key': 'AURORA'})
    projects.create_project(hub, 'P', 'P')
    projects.create_project(hub, 'Q', 'Q')
    return hub


@pytest.fixture
def queue_settings():
    """Configure a hub for queue tests: project key AURORA, task/epic issue types, blocks/relates
    links and project AWPCA (a function, so that a module's own ``hub`` fixture can apply it)."""
    from hublib import projects, settings

    def apply(hub):
        settings.update_settings(hub, {
            'project_key': 'AURORA',
            'issue_types': {'task': {'name': 'Задача', 'id': '3'}, 'epic': {'name': 'Эпик', 'id': '6'}},
            'link_types': {'blocks': 'Blocks', 'relates': 'Relates'}})
        projects.create_project(hub, 'AWPCA', 'АРМ КА')
        return hub
    return apply


@pytest.fixture
def hub(data_dir, clock):
    hub = open_hub(data_dir, clock=clock)
    yield hub
    hub.close()


class LiveServer(dict):
    """A running ``sdlc-hub serve`` subprocess: url, tokens, data_dir, process."""

    def stop(self, timeout: float = 10) -> int:
        return self['server'].stop(timeout)


def start_server(data_dir, *extra_args: str, timeout: float = 30) -> LiveServer:
    """Start ``sdlc-hub serve`` on a free loopback port (``tests.support.server``) with its tokens."""
    from tests.support.server import ServerProcess

    server = ServerProcess(data_dir, start_timeout=timeout, extra_args=extra_args)
    tokens = server.tokens()
    return LiveServer(url=server.url, agent_token=tokens['agent'], client_token=tokens['client'],
                      data_dir=data_dir, process=server.process, server=server)


@pytest.fixture
def live_server(tmp_path):
    """A real waitress server on 127.0.0.1 in a subprocess, stopped after the test."""
    server = start_server(tmp_path / 'live-data')
    yield server
    server.stop()


@pytest.fixture
def server_factory():
    """``start_server`` for tests that need their own server options; stops them all afterwards."""
    servers = []

    def start(data_dir, *extra_args: str) -> LiveServer:
        servers.append(start_server(data_dir, *extra_args))
        return servers[-1]
    yield start
    for server in servers:
        server.stop()
