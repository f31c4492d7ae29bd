"""Benchmark: a full refresh by ``sdlc-hub agent`` from the fake Jira, and where its time goes.

    .venv/bin/python scripts/bench_agent.py [--issues 20000] [--deployment Server|Cloud|both]

Three processes on 127.0.0.1, each measured by its own CPU time (``/proc/<pid>/stat`` for the
two servers, ``wait4`` for the agent):

- the hub: a real ``sdlc-hub serve`` (4 threads) on a fresh data directory with the demo's
  settings (no pacing) and projects, a full refresh queued;
- the fake Jira: ``scripts/fake_jira.py`` (the demo's generated Jira served as REST API v2 and the
  Agile API, in Data Center's or Cloud's dialect);
- the agent: ``sdlc-hub agent --once``, which runs the refresh (search pages of 100 issues with
  their changelog — Cloud: the changelog pages of issues whose search entry is cut short —,
  comment pages, neighbours, boards), pushes state and history pages and reports.

Baselines measured in the same run:
- *hub floor*: the same mirror pushed to a second fresh hub by a minimal pusher in this process
  (the hub-shaped pages built and encoded before the clock starts, one keep-alive connection):
  what writing the mirror costs the hub when nothing maps Jira's JSON; the ratio is the agent
  run's hub CPU over it;
- *agent start*: ``sdlc-hub agent --once`` on the empty queue afterwards (imports, connecting):
  subtracted from the agent's CPU for its CPU per 100 issues.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hublib import open_hub, projects, queue, settings  # noqa: E402
from hubweb.demo import DEMO_PROJECTS, DEMO_SETTINGS  # noqa: E402
from hubweb.demo.fake_jira import FakeJira  # noqa: E402
from hubweb.demo.jira_rest import person_in_mirror  # noqa: E402
from tests.support.server import (FakeJiraProcess, ServerProcess, agent_command,  # noqa: E402
                                  agent_environment)
from tests.support.timing import KeepAliveClient  # noqa: E402

SEED = 3
TOKEN = 'bench'
USER = 'sdlc-agent@aurora.example'
PAGE = 100
HISTORY_PAGE = 1000
TICK = os.sysconf('SC_CLK_TCK')


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a running process."""
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def prepare(data_dir: Path) -> dict:
    hub = open_hub(data_dir)
    try:
        settings.update_settings(hub, {**DEMO_SETTINGS, 'pacing': {
            'interval_ms': 0, 'pause_on_rate_limit_seconds': 60}})
        for label, name, board_id in DEMO_PROJECTS:
            projects.create_project(hub, label, name, board_id)
        queue.create_batch(hub, title='Полная загрузка', author='bench', commands=[
            {'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}}])
        return {**settings.tokens(hub), 'jql': projects.base_jql(hub)}
    finally:
        hub.close()


def refresh_outcome(data_dir: Path) -> dict:
    hub = open_hub(data_dir, create=False)
    try:
        command = queue.command(hub, 1)
        issues = hub.db.execute_sql('SELECT count(*) FROM issue').fetchone()[0]
        changes = hub.db.execute_sql('SELECT count(*) FROM issue_change').fetchone()[0]
        return {'status': command['status'], 'error': command['error'],
                'jira_calls': command['jira_calls'], 'issues': issues, 'changes': changes}
    finally:
        hub.close()


def run_agent(hub_url: str, jira_url: str, agent_token: str, deployment: str) -> tuple[float, float]:
    """``sdlc-hub agent --once``: (wall seconds, CPU seconds of the process)."""
    user = ('--jira-user', USER) if deployment == 'Cloud' else ()
    started = time.perf_counter()
    process = subprocess.Popen(agent_command(hub_url, jira_url, '--once', '--poll', '0.2', *user),
                               env=agent_environment(agent_token, TOKEN),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f'the agent exited {process.returncode}')
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def measure_agent(root: Path, issues: int, deployment: str) -> dict:
    data_dir = root / f'hub-{deployment}'
    tokens = prepare(data_dir)
    with ServerProcess(data_dir, threads=4) as server, \
            FakeJiraProcess('--issues', str(issues), '--seed', str(SEED), '--deployment',
                            deployment, '--token', TOKEN, '--user', USER) as jira:
        hub_before, jira_before = cpu_seconds(server.process.pid), cpu_seconds(jira.process.pid)
        wall, agent_cpu = run_agent(server.url, jira.url, tokens['agent'], deployment)
        hub_cpu = cpu_seconds(server.process.pid) - hub_before
        jira_cpu = cpu_seconds(jira.process.pid) - jira_before
        _, start_cpu = run_agent(server.url, jira.url, tokens['agent'], deployment)
    return {'wall': wall, 'agent': agent_cpu, 'hub': hub_cpu, 'jira': jira_cpu,
            'agent_start': start_cpu, **refresh_outcome(data_dir)}


def hub_pages(issues: int, jql: str, cloud: bool) -> tuple[list[bytes], list[bytes], int]:
    """The pages the agent sends for this Jira, built from the model directly."""
    jira = FakeJira(issues, seed=SEED)
    own = jira.search(jql)
    inside = set(own)
    neighbours = list(dict.fromkeys(link['key'] for key in own for link in jira.issue(key)['links']
                                    if link['key'] not in inside))

    def shaped(key: str, neighbour: bool) -> dict:
        issue = jira.issue(key)
        for name in ('assignee', 'reporter'):
            issue[name] = person_in_mirror(issue[name], cloud)
        for item in issue['comments'] + issue['attachments']:
            item['author'] = person_in_mirror(item['author'], cloud)
        return {**issue, 'neighbor': neighbour}

    keys = [(key, False) for key in own] + [(key, True) for key in neighbours]
    states, history, items = [], [], []
    for start in range(0, len(keys), PAGE):
        page = [shaped(key, neighbour) for key, neighbour in keys[start:start + PAGE]]
        states.append(page)
        items += [{**item, 'author': person_in_mirror(item['author'], cloud),
                   'field_id': item['field_id'] if cloud else None}
                  for issue in page for item in jira.history(issue['key'])]
    history = [items[start:start + HISTORY_PAGE] for start in range(0, len(items), HISTORY_PAGE)]
    return states, history, len(keys)


def measure_floor(root: Path, issues: int, deployment: str) -> dict:
    data_dir = root / f'floor-{deployment}'
    tokens = prepare(data_dir)
    states, history, count = hub_pages(issues, tokens['jql'], deployment == 'Cloud')
    with ServerProcess(data_dir, threads=4) as server:
        client = KeepAliveClient(server.url, tokens['agent'])
        command = client.json('POST', '/agent/claim', {'agent': 'jira'})['command']
        bodies = [('/agent/state', json.dumps({'agent': 'jira', 'command_id': command['id'],
                                               'issues': page}, ensure_ascii=False).encode())
                  for page in states]
        bodies += [('/agent/history', json.dumps({'agent': 'jira', 'command_id': command['id'],
                                                  'items': page}, ensure_ascii=False).encode())
                   for page in history]
        hub_before = cpu_seconds(server.process.pid)
        started = time.perf_counter()
        for path, body in bodies:
            _, status, data = client.timed('POST', path, body)
            if status != 200:
                raise SystemExit(f'POST {path}: HTTP {status} {data[:200]!r}')
        client.json('POST', f'/agent/commands/{command["id"]}/report', {
            'agent': 'jira', 'status': 'done', 'result': {'issues': count}})
        wall = time.perf_counter() - started
        hub_cpu = cpu_seconds(server.process.pid) - hub_before
        client.close()
    return {'wall': wall, 'hub': hub_cpu, 'issues': count}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--issues', type=int, default=20_000)
    parser.add_argument('--deployment', choices=('Server', 'Cloud', 'both'), default='Server')
    args = parser.parse_args(argv)
    deployments = ('Server', 'Cloud') if args.deployment == 'both' else (args.deployment,)
    root = Path(tempfile.mkdtemp(prefix='bench-agent-'))
    try:
        for deployment in deployments:
            run = measure_agent(root, args.issues, deployment)
            floor = measure_floor(root, args.issues, deployment)
            if run['status'] != 'done':
                raise SystemExit(f'the refresh ended {run["status"]}: {run["error"]}')
            total = run['agent'] + run['hub'] + run['jira']
            sent = run['issues']
            dialect = 'Data Center' if deployment == 'Server' else 'Cloud'
            print(f'full refresh, {args.issues:,} generated issues, {dialect}: {sent:,} issues '
                  f'(neighbours included), {run["changes"]:,} history rows, '
                  f'{run["jira_calls"]:,} Jira requests, {run["wall"]:.1f} s wall '
                  f'({sent / run["wall"]:,.0f} issues/s)')
            print(f'{"process":<34} {"CPU s":>8} {"share":>7} {"per 100 issues":>15}')
            for name, seconds in (('agent (sdlc-hub agent)', run['agent']),
                                  ('fake Jira (scripts/fake_jira.py)', run['jira']),
                                  ('hub (sdlc-hub serve)', run['hub'])):
                print(f'{name:<34} {seconds:>8.2f} {seconds / total:>6.0%} '
                      f'{seconds / sent * 100 * 1000:>12.1f} ms')
            own = run['agent'] - run['agent_start']
            print(f'agent without its start ({run["agent_start"]:.2f} s: imports, connecting): '
                  f'{own:.2f} s CPU, {own / sent * 100 * 1000:.1f} ms per 100 issues')
            print(f'hub floor (the same pages pushed without Jira): {floor["hub"]:.2f} s CPU, '
                  f'{floor["wall"]:.1f} s wall; hub CPU with the agent / floor = '
                  f'{run["hub"] / floor["hub"]:.2f}x, wall = {run["wall"] / floor["wall"]:.2f}x')
            print()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
