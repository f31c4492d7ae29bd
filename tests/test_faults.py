"""Fault tests against real server processes on 127.0.0.1 (issue 7): kill -9 during ingest and
during migration, and concurrent agents. Bounded in time; the sizes are module constants."""
from __future__ import annotations

import http.client
import json
import random
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
from collections import Counter
from pathlib import Path

import pytest

from hubweb.jira_agent.hub import HubClient, HubHTTPError
from hubweb.demo.fake_jira import FakeJira
from tests.support.bulk import fill_legacy_database, row_counts
from tests.support.server import ServerProcess

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

# kill -9 during ingest: ROUNDS kills at random moments while an agent pushes INGEST_ISSUES issues.
INGEST_ISSUES = 10_000
ROUNDS = 20
PAGE = 100
# kill -9 during migration of a v1 database of MIGRATION_ISSUES issues, one round per stage: the
# migration is seen from outside (polled every millisecond) and killed the moment it reaches it.
MIGRATION_ISSUES = 50_000
# 'copying': backups/*.tmp appeared (inside BEGIN IMMEDIATE, the copy is being written);
# 'copied': the finished copy backups/*-schema-v1.sqlite appeared (the steps run next);
# 'random': a random moment after the copy began (sometimes the migration is done by then).
MIGRATION_STAGES = ('copying', 'copied', 'copying', 'random', 'random')
# Concurrency: PROCESSES agent processes × THREADS threads for LOAD_SECONDS.
PROCESSES = 2
THREADS = 8
LOAD_SECONDS = 60

MIRROR_TABLES = ['issue', 'issue_link', 'issue_note', 'command', 'sync_run', 'setting']


def integrity(path: Path) -> str:
    conn = sqlite3.connect(str(path))
    try:
        return conn.execute('PRAGMA integrity_check').fetchone()[0]
    finally:
        conn.close()


def schema_version(path: Path) -> int:
    conn = sqlite3.connect(str(path))
    try:
        return int(json.loads(conn.execute(
            "SELECT value FROM setting WHERE key = 'schema_version'").fetchone()[0]))
    finally:
        conn.close()


# --- kill -9 during a migration -------------------------------------------------------------------

@pytest.fixture(scope='module')
def v1_template(tmp_path_factory):
    path = tmp_path_factory.mktemp('v1') / 'hub.sqlite'
    counts = fill_legacy_database(path, 1, issues=MIGRATION_ISSUES, links_per_issue=3)
    return path, counts


def test_kill_during_migration_leaves_v1_intact_and_next_start_migrates(tmp_path, v1_template):
    template, counts = v1_template
    tables = list(counts)
    killed_mid_way = 0
    rng = random.Random(7)
    for round_number, stage in enumerate(MIGRATION_STAGES):
        data_dir = tmp_path / f'round{round_number}'
        backups = data_dir / 'backups'
        backups.mkdir(parents=True)
        shutil.copyfile(template, data_dir / 'hub.sqlite')
        migrate = subprocess.Popen([sys.executable, '-m', 'hubweb.cli', 'migrate', '--data', str(data_dir)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            # Both backup files appear inside BEGIN IMMEDIATE, before any step runs: a kill the
            # moment one shows up lands inside the migration (the steps of 50,000 issues take
            # a tenth of a second more; a poll takes a millisecond).
            wanted = '*-schema-v1.sqlite' if stage == 'copied' else '*.tmp'
            deadline = time.monotonic() + 30
            while not any(backups.glob(wanted)) and migrate.poll() is None:
                assert time.monotonic() < deadline, f'round {round_number}: no {wanted} within 30 s'
                time.sleep(0.001)
            if stage == 'random':
                time.sleep(rng.uniform(0, 0.3))
        finally:
            migrate.kill()
            migrate.wait()
        path = data_dir / 'hub.sqlite'
        version = schema_version(path)
        assert version in (1, 9)
        assert integrity(path) == 'ok'
        assert row_counts(path, tables) == counts
        if version == 1:
            killed_mid_way += 1
        print(f'migration round {round_number} ({stage}): found v{version} after the kill')
        rerun = subprocess.run([sys.executable, '-m', 'hubweb.cli', 'migrate', '--data', str(data_dir)],
                               capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr
        expected = 'schema v1 -> v9' if version == 1 else 'schema v9 (up to date)'
        assert rerun.stdout.strip() == expected
        assert schema_version(path) == 9
        assert integrity(path) == 'ok'
        assert row_counts(path, tables) == counts
        # A killed run may leave its finished copy next to the one of the run that completed:
        # both are copies of the same v1 file.
        copies = sorted((data_dir / 'backups').glob('*-schema-v1.sqlite'))
        assert copies
        for copy in copies:
            assert schema_version(copy) == 1 and integrity(copy) == 'ok'
            assert row_counts(copy, tables) == counts
    # Each stage round is killed inside the migration unless this process was descheduled for
    # the whole tenth of a second the migration still takes after its backup file appears.
    assert killed_mid_way >= 1, 'no kill landed inside the migration; make the database bigger'


# --- kill -9 during a 10,000-issue ingest -----------------------------------------------------

def configure_hub(data_dir: Path) -> tuple[int, dict]:
    """Settings, one project, and a refresh claimed through hublib; returns (command id, tokens)."""
    from hublib import open_hub, projects, queue, settings
    hub = open_hub(data_dir)
    try:
        settings.update_settings(hub, {'project_key': 'AURORA'})
        projects.create_project(hub, 'AWPCA', 'Аврора')
        queue.create_batch(hub, title='Загрузка', author='test',
                           commands=[{'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}}])
        command = queue.claim_command(hub, agent='jira', agent_version='test', settings_version=None,
                                      last_jira_call_at=None)['command']
        return command['id'], settings.tokens(hub)
    finally:
        hub.close()


class Pusher(threading.Thread):
    """Posts pages (state, then history) in order until the server dies; records what got a 2xx.

    With ``kill_after`` it counts its own acknowledged pages and sets ``armed`` just before it
    sends the request after that many; with ``wrap`` it starts over at page 0 after the last page,
    so it keeps pushing until the server dies. ``cut``: a request it had sent died with the server
    (not merely refused at connect because the server was already gone).
    """

    def __init__(self, url: str, token: str, command_id: int, pages: list[list[dict]],
                 histories: list[list[dict]], start_page: int, acked_state: set, acked_history: set,
                 *, kill_after: int | None = None, wrap: bool = False):
        super().__init__(daemon=True)
        self.client = HubClient(url, token, timeout=30)
        self.command_id = command_id
        self.pages, self.histories = pages, histories
        self.next_page = start_page
        self.acked_state, self.acked_history = acked_state, acked_history
        self.acked_now = 0
        self.kill_after, self.wrap = kill_after, wrap
        self.armed = threading.Event()
        self.cut = False
        self.refused: list[str] = []

    def run(self) -> None:
        while self.next_page < len(self.pages):
            index = self.next_page
            try:
                if self.acked_now == self.kill_after:
                    self.armed.set()
                self.client.post('/agent/state', {'agent': 'jira', 'command_id': self.command_id,
                                                  'issues': self.pages[index]})
                self.acked_state.add(index)
                self.client.post('/agent/history', {'agent': 'jira', 'command_id': self.command_id,
                                                    'items': self.histories[index]})
                self.acked_history.add(index)
            except HubHTTPError as error:
                self.refused.append(str(error))
                return
            except (OSError, http.client.HTTPException) as error:  # the server was killed
                self.cut = not (isinstance(error, urllib.error.URLError)
                                and isinstance(error.reason, ConnectionRefusedError))
                return
            self.next_page += 1
            self.acked_now += 1
            if self.wrap and self.next_page == len(self.pages):
                self.next_page = 0


def check_pages(path: Path, pages: list[list[dict]], histories: list[list[dict]],
                acked_state: set, acked_history: set) -> None:
    assert integrity(path) == 'ok'
    conn = sqlite3.connect(str(path))
    try:
        present = {key for key, in conn.execute('SELECT key FROM issue')}
        comments = dict(conn.execute('SELECT key, count(*) FROM issue_comment GROUP BY key').fetchall())
        changes = {(h, s) for h, s in conn.execute('SELECT history_id, seq FROM issue_change')}
    finally:
        conn.close()
    for index, page in enumerate(pages):
        keys = {issue['key'] for issue in page}
        found = len(keys & present)
        if index in acked_state:
            assert found == len(keys), f'page {index}: acknowledged but {found}/{len(keys)} present'
        assert found in (0, len(keys)), f'page {index} partly present: {found}/{len(keys)}'
        if found:
            assert all(comments.get(issue['key'], 0) == len(issue['comments']) for issue in page)
        rows = {(item['history_id'], item['seq']) for item in histories[index]}
        stored = len(rows & changes)
        if index in acked_history:
            assert stored == len(rows), f'history page {index}: acknowledged but {stored}/{len(rows)}'
        assert stored in (0, len(rows)), f'history page {index} partly present: {stored}/{len(rows)}'


def test_kill_9_during_ingest_loses_no_acknowledged_page(tmp_path):
    data_dir = tmp_path / 'hub'
    command_id, tokens = configure_hub(data_dir)
    jira = FakeJira(INGEST_ISSUES, seed=17)
    keys = jira.all_keys()
    pages = []
    for start in range(0, len(keys), PAGE):
        page = jira.issues(keys[start:start + PAGE])
        for issue in page:
            issue['neighbor'] = False
        pages.append(page)
    histories = [[item for issue in page for item in jira.history(issue['key'])] for page in pages]
    acked_state: set[int] = set()
    acked_history: set[int] = set()
    rng = random.Random(20)
    next_page = 0
    kills_during_ingest = 0
    for round_number in range(ROUNDS):
        server = ServerProcess(data_dir, threads=4)
        # Kill after a random number of pages this pusher got acknowledged, a random moment
        # (within about one request's time) after it began the next request. It never runs out
        # of pages (wrap), so the kill finds it pushing, nearly always with a request in flight.
        pusher = Pusher(server.url, tokens['agent'], command_id, pages, histories, next_page,
                        acked_state, acked_history, kill_after=rng.randint(1, 7), wrap=True)
        pusher.start()
        try:
            deadline = time.monotonic() + 60
            while not pusher.armed.wait(0.005):
                assert pusher.is_alive(), f'round {round_number}: pusher stopped: {pusher.refused}'
                assert time.monotonic() < deadline, (
                    f'round {round_number}: {pusher.acked_now} pages acknowledged in 60 s')
            time.sleep(rng.uniform(0, 0.03))
        finally:
            server.kill()
        pusher.join(timeout=30)
        assert not pusher.is_alive(), f'round {round_number}: the pusher hangs after the kill'
        assert not pusher.refused, pusher.refused
        kills_during_ingest += pusher.cut
        next_page = pusher.next_page
        check_pages(data_dir / 'hub.sqlite', pages, histories, acked_state, acked_history)
    print(f'ingest: {kills_during_ingest} of {ROUNDS} kills cut a request in flight')
    assert kills_during_ingest >= ROUNDS // 2
    # The last start ingests the rest; nothing is missing in the end.
    with ServerProcess(data_dir, threads=4) as server:
        pusher = Pusher(server.url, tokens['agent'], command_id, pages, histories, next_page,
                        acked_state, acked_history)
        pusher.run()
        assert not pusher.refused and pusher.next_page == len(pages)
        assert 'database is locked' not in server.log_text()
    check_pages(data_dir / 'hub.sqlite', pages, histories, acked_state, acked_history)
    assert len(acked_state) == len(pages)


# --- 2 processes × 8 threads -------------------------------------------------------------------

def test_two_processes_of_eight_threads_no_5xx_no_lock_errors_counters_consistent(tmp_path):
    data_dir = tmp_path / 'hub'
    from hublib import open_hub, projects, settings
    hub = open_hub(data_dir)
    settings.update_settings(hub, {'project_key': 'AURORA'})
    projects.create_project(hub, 'AWPCA', 'Аврора')
    tokens = settings.tokens(hub)
    hub.close()
    with ServerProcess(data_dir, threads=8) as server:
        workers = [subprocess.Popen(
            [sys.executable, '-m', 'tests.support.load', '--url', server.url,
             '--agent-token', tokens['agent'], '--client-token', tokens['client'],
             '--worker', str(n), '--threads', str(THREADS), '--seconds', str(LOAD_SECONDS)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=ROOT) for n in range(PROCESSES)]
        results = []
        for worker in workers:
            out, err = worker.communicate(timeout=LOAD_SECONDS + 60)
            assert worker.returncode == 0, err
            results.append(json.loads(out.strip().splitlines()[-1]))
        log_text = server.log_text()
    problems = [problem for result in results for problem in result['problems']]
    assert not problems, problems[:5]
    statuses = sum((Counter(result['statuses']) for result in results), Counter())
    assert not any(code.startswith('5') for code in statuses), statuses
    assert 'connection_error' not in statuses
    assert 'database is locked' not in log_text and 'Traceback' not in log_text
    assert statuses['200'] > 100, statuses

    conn = sqlite3.connect(str(data_dir / 'hub.sqlite'))
    try:
        assert conn.execute('PRAGMA integrity_check').fetchone()[0] == 'ok'
        changes = conn.execute('SELECT count(*) FROM issue_change').fetchone()[0]
        by_status = dict(conn.execute('SELECT status, count(*) FROM command GROUP BY status').fetchall())
        done = {row[0] for row in conn.execute("SELECT id FROM command WHERE status = 'done'")}
        late = {row[0] for row in conn.execute(
            "SELECT id FROM command WHERE status IN ('failed', 'cancelled')")}
        max_deliveries = conn.execute('SELECT max(deliveries) FROM command').fetchone()[0]
        claimed = conn.execute("SELECT count(*) FROM command WHERE status = 'claimed'").fetchone()[0]
        issues = {row[0] for row in conn.execute('SELECT key FROM issue')}
    finally:
        conn.close()
    # History: every row the hub said it inserted is there, exactly once; repeats were ignored.
    assert changes == sum(result['history_inserted'] for result in results)
    assert sum(result['history_sent'] for result in results) == \
        sum(result['history_inserted'] + result['history_ignored'] for result in results)
    assert sum(result['history_ignored'] for result in results) > 0
    # Queue: a command is done only if some agent's done report was accepted for it, and every
    # accepted non-late done report left its command done; deliveries never pass the limit.
    reported_done = {command_id for result in results for command_id in result['reported_done']}
    assert done <= reported_done
    assert reported_done <= done | late
    assert max_deliveries <= 3
    assert claimed <= 1  # one agent per module: at most the last delivery is still open
    assert sum(by_status.values()) > 0 and by_status.get('done', 0) > 0
    # State: every key of a page that got 200 is in the mirror.
    assert {key for result in results for key in result['state_keys']} <= issues
