"""``kill -9`` of the agent process at random points of a batch, restarted 20 times (issue 32):
every command ends, nothing is created twice in Jira. The hub (waitress, 127.0.0.1) and the fake
Jira (Data Center's dialect: a created issue or comment gets its marker in a second request, the
widest window for a kill) serve from this process; each Jira request takes 40 ms, so a kill lands
inside a command. Bounded: about 30 s."""
from __future__ import annotations

import random
import signal
import subprocess
import time
from collections import Counter

import pytest

from hublib import queue, settings
from tests.agent.conftest import configure, make_agent
from tests.support.jira_rest import TOKEN
from tests.support.server import agent_command, agent_environment

pytestmark = pytest.mark.slow

ROUNDS = 20
NEW = 10
TERMINAL = {'done', 'failed', 'skipped', 'cancelled', 'confirmed_by_state'}


def batch_commands(model) -> list[dict]:
    commands = [{'type': 'ensure_issue', 'params': {'issue_type': 'task', 'temp_key': f'new:{n}',
                                                    'summary': f'Под нож {n}', 'labels': ['AWPCA']}}
                for n in range(1, NEW + 1)]
    commands += [{'type': 'ensure_link', 'depends_on': 2 * n,
                  'params': {'source_key': f'new:{2 * n - 1}', 'target_key': f'new:{2 * n}',
                             'link_type': 'blocks'}} for n in range(1, NEW // 2 + 1)]
    commands += [{'type': 'add_comment', 'depends_on': n,
                  'params': {'key': f'new:{n}', 'body': f'Комментарий к новой {n}'}}
                 for n in range(1, NEW + 1)]
    commands += [{'type': 'transition', 'params': {'key': key,
                                                   'status': model.transitions(key)[0]}}
                 for key in ('AURORA-10', 'AURORA-11', 'AURORA-13', 'AURORA-14')]
    commands += [{'type': 'fetch_attachment', 'params': {'attachment_id': number}}
                 for number in ('4', '8')]
    return commands


def test_kill_9_at_random_points_of_a_batch_twenty_times_writes_nothing_twice(hub, hub_url,
                                                                              jira_site):
    configure(hub)
    model, app, server = jira_site('Server', issues=40, latency=0.04)
    make_agent(hub, hub_url, server.url, 'Server').run(once=True)  # nothing queued: connects
    queue.create_batch(hub, title='Вложения', author='test', commands=[
        {'type': 'refresh', 'params': {'keys': ['AURORA-4', 'AURORA-8']}}])
    make_agent(hub, hub_url, server.url, 'Server').run(once=True)
    batch = queue.create_batch(hub, title='Под нож', author='test', commands=batch_commands(model))
    env = agent_environment(settings.tokens(hub)['agent'], TOKEN)
    command = agent_command(hub_url, server.url, '--poll', '0.1', '--index-lag', '0.2')
    rng = random.Random(32)
    kills_in_flight = 0
    started = time.monotonic()
    for _ in range(ROUNDS):
        before = len(app.requests)
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while len(app.requests) < before + 3 and process.poll() is None:  # connected, working
            assert time.monotonic() < deadline, 'the agent never reached Jira'
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.35))
        in_flight = app.requests[-1].status == 0
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        kills_in_flight += in_flight
    looped = time.monotonic() - started
    finished = subprocess.run(command + ['--once'], env=env, capture_output=True, text=True,
                              timeout=120)
    assert finished.returncode == 0, finished.stderr
    elapsed = time.monotonic() - started
    final = queue.batch(hub, batch['id'])
    statuses = Counter(item['status'] for item in final['commands'])
    assert set(statuses) <= TERMINAL, statuses
    assert all(item['deliveries'] <= 3 for item in final['commands'])
    # nothing created twice: one issue per ensure_issue (each has its own summary), marked with
    # its command id — unmarked only when every delivery of its command was killed between the
    # creation and the marker (the hub then failed the command)
    created = model.created_issues()
    summaries = Counter(issue['summary'] for issue in created.values())
    assert all(count == 1 for count in summaries.values()), summaries
    markers = {key: (model.property(f'issue/{key}', 'sdlc-hub') or {}).get('command_id')
               for key in created}
    marked = Counter(marker for marker in markers.values() if marker is not None)
    assert all(count == 1 for count in marked.values()), marked
    ensure = {item['id']: item for item in final['commands'] if item['type'] == 'ensure_issue'}
    for item in ensure.values():
        if item['status'] == 'done':
            assert markers[item['result']['key']] == item['id']
    by_summary = {item['params']['summary']: item for item in ensure.values()}
    for key, marker in markers.items():
        if marker is None:
            assert by_summary[created[key]['summary']]['status'] == 'failed', key
    assert len(created) <= NEW
    # one comment per text, one link per pair
    for key in created:
        bodies = Counter(comment['body'] for comment in model.issue(key)['comments'])
        assert all(count == 1 for count in bodies.values()), (key, bodies)
        links = [(link['type'], link['direction'], link['key']) for link in model.issue(key)['links']]
        assert len(links) == len(set(links)), (key, links)
    assert statuses['done'] + statuses['confirmed_by_state'] >= len(final['commands']) // 2
    print(f'{ROUNDS} kills ({kills_in_flight} with a Jira request in flight), {dict(statuses)}, '
          f'{len(created)} issues created, {elapsed:.1f} s ({looped:.1f} s of kills)')
