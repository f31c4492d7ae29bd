"""Benchmark: read latency (p50/p95) at 50,000 issues, idle and while an ingest runs in parallel.

    .venv/bin/python scripts/bench_reads.py [--issues 50000] [--samples 60]

1. A hub is filled through hublib (in-process, fast) with ``--issues`` issues of
   ``hubweb.demo.fake_jira.FakeJira`` (links, comments, sprints, 3 history rows each) and its boards.
2. A real ``sdlc-hub serve`` (waitress, 127.0.0.1, 8 threads) serves it. One client on a keep-alive
   connection measures, round-robin, ``--samples`` times each:
   the project slice ``GET /issues?project=AWPCA&limit=1000`` (and ``limit=100``), the slice counts
   ``GET /projects/AWPCA``, an issue card ``GET /issues/<random key>`` and a changes-feed page
   ``GET /changes?since=<random moment>&limit=100`` — first idle (the baseline of the same run),
   then while ``sdlc-hub agent`` (its own process) runs a full refresh of the same 50,000 issues
   from the demo's fake Jira (``scripts/fake_jira.py``, its own process, no pacing): pages of 100
   to ``/agent/state`` and their history to ``/agent/history``.

Targets (issue 7), under ingest: project slice p95 < 150 ms, issue card p95 < 30 ms.
"""
from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hublib import history, mirror, open_hub, projects, queue, settings  # noqa: E402
from hubweb.demo.fake_jira import KANBAN_BOARD, SCRUM_BOARD, FakeJira  # noqa: E402
from tests.support.server import (FakeJiraProcess, ServerProcess, agent_command,  # noqa: E402
                                  agent_environment)
from tests.support.timing import KeepAliveClient, percentile  # noqa: E402

SEED = 3
TARGETS_MS = {'project slice, limit=1000': 150.0, 'issue card': 30.0}


def fill(data_dir: Path, issues: int) -> tuple[dict, list[str]]:
    """The mirror of a FakeJira through hublib; returns tokens and the change moments."""
    hub = open_hub(data_dir)
    try:
        settings.update_settings(hub, {'project_key': 'AURORA', 'field_ids': {
            'planned_start': 'customfield_10015'},
            'pacing': {'interval_ms': 0, 'pause_on_rate_limit_seconds': 60}})
        projects.create_project(hub, 'AWPCA', 'Аврора', SCRUM_BOARD)
        projects.create_project(hub, 'ORION', 'Орион', KANBAN_BOARD)
        jql = projects.base_jql(hub)
        queue.create_batch(hub, title='Начальная загрузка', author='bench',
                           commands=[{'type': 'refresh', 'params': {'jql': jql}}])
        command = queue.claim_command(hub, agent='jira', agent_version='bench',
                                      settings_version=None)['command']
        jira = FakeJira(issues, seed=SEED)
        keys = jira.all_keys()
        for start in range(0, len(keys), 100):
            page = jira.issues(keys[start:start + 100])
            mirror.ingest_state(hub, 'jira', command['id'], page)
            history.ingest_history(hub, 'jira', command['id'],
                                   [item for issue in page for item in jira.history(issue['key'])])
        mirror.ingest_boards(hub, 'jira', command['id'], jira.boards())
        queue.report_command(hub, command['id'], agent='jira', status='done',
                             result={'history': {'issues': issues, 'changes': 0, 'incomplete': []}},
                             error=None, jira_calls=len(keys) // 100, rate_limited=0)
        moments = [row[0] for row in hub.db.execute_sql(
            'SELECT at FROM issue_change WHERE at IS NOT NULL ORDER BY at')]
        queue.create_batch(hub, title='Обновление под нагрузкой', author='bench',
                           commands=[{'type': 'refresh', 'params': {'jql': jql}}])
        hub.db.execute_sql('ANALYZE')
        return settings.tokens(hub), moments[::max(1, len(moments) // 1000)]
    finally:
        hub.close()


class Reader:
    def __init__(self, url: str, token: str, issues: int, moments: list[str], seed: int = 1):
        self.client = KeepAliveClient(url, token, timeout=60)
        self.rng = random.Random(seed)
        self.issues = issues
        self.moments = moments

    def get(self, path: str) -> float:
        return self.client.checked('GET', path)[0]

    def paths(self) -> dict[str, str]:
        return {
            'project slice, limit=1000': '/issues?project=AWPCA&limit=1000',
            'project slice, limit=100': '/issues?project=AWPCA&limit=100',
            'slice counts (GET /projects/AWPCA)': '/projects/AWPCA',
            'issue card': f'/issues/AURORA-{self.rng.randint(1, self.issues)}',
            'changes feed page (limit=100)':
                f'/changes?since={quote(self.rng.choice(self.moments))}&limit=100',
        }

    def sample(self, samples: int, keep_going=lambda: True) -> dict[str, list[float]]:
        timings: dict[str, list[float]] = {name: [] for name in self.paths()}
        for _ in range(samples):
            if not keep_going():
                break
            for name, path in self.paths().items():
                timings[name].append(self.get(path))
        return timings


def run_count(data_dir: Path) -> int:
    """Issues written so far by the newest refresh (the one the agent runs under load)."""
    hub = open_hub(data_dir)
    try:
        row = hub.db.execute_sql('SELECT issues_count FROM sync_run WHERE command_id = '
                                 "(SELECT max(id) FROM command WHERE type = 'refresh')").fetchone()
        return row[0] if row else 0
    finally:
        hub.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--issues', type=int, default=50_000)
    parser.add_argument('--samples', type=int, default=60)
    args = parser.parse_args(argv)
    overall = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix='bench-reads-'))
    agent = jira = None
    try:
        started = time.perf_counter()
        tokens, moments = fill(root / 'hub', args.issues)
        print(f'filled {args.issues:,} issues through hublib in {time.perf_counter() - started:.1f} s')
        with ServerProcess(root / 'hub', threads=8) as server:
            reader = Reader(server.url, tokens['client'], args.issues, moments)
            reader.sample(3)  # warm-up: page cache, statement caches
            idle = reader.sample(args.samples)
            jira = FakeJiraProcess('--issues', str(args.issues), '--seed', str(SEED),
                                   '--token', 'bench')
            agent = subprocess.Popen(agent_command(server.url, jira.url, '--once', '--poll', '0.2'),
                                     env=agent_environment(tokens['agent'], 'bench'),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 60
            while run_count(root / 'hub') == 0 and agent.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)  # the agent generates its pages first
            before = run_count(root / 'hub')
            loaded = reader.sample(args.samples, keep_going=lambda: agent.poll() is None)
            during = run_count(root / 'hub') - before
            still_running = agent.poll() is None
    finally:
        if agent is not None and agent.poll() is None:
            agent.kill()
            agent.wait()
        if jira is not None:
            jira.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(f'under load: the agent ingested {during:,} issues (+ history) while the samples ran'
          + ('' if still_running else ' and finished before the last sample'))
    print(f'{"read at " + format(args.issues, ",") + " issues (ms)":<38} {"idle p50":>9} {"idle p95":>9} '
          f'{"load p50":>9} {"load p95":>9} {"ratio p95":>9} {"target":>8}  n')
    ok = True
    for name in idle:
        i50, i95 = statistics.median(idle[name]), percentile(idle[name], 0.95)
        if not loaded[name]:
            print(f'{name:<38} {i50:>9.1f} {i95:>9.1f}   (no samples under load)')
            ok = False
            continue
        l50, l95 = statistics.median(loaded[name]), percentile(loaded[name], 0.95)
        target = TARGETS_MS.get(name)
        verdict = '' if target is None else (f'<{target:.0f} ok' if l95 < target else 'MISSED')
        ok &= target is None or l95 < target
        print(f'{name:<38} {i50:>9.1f} {i95:>9.1f} {l50:>9.1f} {l95:>9.1f} {l95 / i95:>8.2f}x '
              f'{verdict:>8}  {len(loaded[name])}')
    print(f'total benchmark time {time.perf_counter() - overall:.0f} s')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
