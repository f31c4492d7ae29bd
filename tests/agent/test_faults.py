"""The agent under faults (issue 7's simulated-agent test, now through the real agent): reports
lost on the way, the agent dying between doing a command and reporting it (and coming back with
no memory), reports sent twice, Jira answering 429 — every command ends, none is delivered more
than three times, nothing is written twice in Jira, a redelivered refresh counts its issues once."""
from __future__ import annotations

from hublib import projects, queue
from hubweb.jira_agent import Agent
from tests.agent.conftest import SteppingClock, configure, make_agent
from tests.agent.mirror import rows

LIMIT_ERROR = 'агент не отчитался после 3 выдач'


class Crash(Exception):
    """The agent process 'died' (the test starts a new one)."""


class FaultyAgent(Agent):
    """An agent that, by ``plan[(command id, delivery)]``, loses its report (``lose``), dies
    before sending it (``crash``) or sends it twice (``twice``)."""

    def __init__(self, *args, plan: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self.plan = plan

    def report(self, command, status, result, error):
        action = self.plan.get((command['id'], command['deliveries']))
        if action == 'lose':
            return
        if action == 'crash':
            raise Crash(command['id'])
        super().report(command, status, result, error)
        if action == 'twice':
            super().report(command, status, result, error)


def test_with_lost_reports_crashes_and_429s_every_command_ends_and_nothing_is_written_twice(
        hub, hub_url, jira_site):
    configure(hub)
    clock = SteppingClock()
    model, app, server = jira_site('Cloud', issues=80, seed=11, clock=lambda: clock.elapsed)
    app.storm(4, retry_after='2', path='/rest/api/2/issue/AURORA-5/comment')  # command 6
    commands = [{'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}}]           # 1
    commands += [{'type': 'add_comment', 'params': {'key': f'AURORA-{n}', 'body': f'к {n}'}}
                 for n in range(1, 11)]                                                     # 2-11
    commands += [{'type': 'ensure_issue', 'params': {'issue_type': 'task', 'temp_key': f'new:{n}',
                                                     'summary': f'Новая {n}'}}
                 for n in range(1, 6)]                                                      # 12-16
    commands += [{'type': 'ensure_link', 'params': {'source_key': 'new:1', 'target_key': 'new:2',
                                                    'link_type': 'blocks'}, 'depends_on': 13},
                 {'type': 'ensure_link', 'params': {'source_key': 'new:3', 'target_key': 'new:4',
                                                    'link_type': 'relates'}, 'depends_on': 15}]
    batch = queue.create_batch(hub, title='С отказами', author='test', commands=commands)
    plan = {(1, 1): 'lose', (1, 2): 'crash',                   # the refresh: done the third time
            (2, 1): 'crash', (3, 1): 'lose', (3, 2): 'lose', (3, 3): 'lose',  # 3: given up
            (4, 1): 'twice', (7, 1): 'lose', (7, 2): 'twice',
            (12, 1): 'crash', (13, 1): 'lose', (14, 1): 'lose', (14, 2): 'crash',
            (17, 1): 'lose', (18, 1): 'crash'}
    crashes = 0
    for _ in range(20):
        base = make_agent(hub, hub_url, server.url, 'Cloud', clock=clock)
        agent = FaultyAgent(base.hub, base.jira, clock=clock, poll_interval=0.0, plan=plan)
        try:
            agent.run(once=True)
            break
        except Crash:
            crashes += 1
    assert crashes == 5
    final = queue.batch(hub, batch['id'])
    assert final['status'] == 'done'
    by_id = {item['id']: item for item in final['commands']}
    assert all(item['deliveries'] <= 3 for item in final['commands'])
    assert {item['id'] for item in final['commands'] if item['status'] != 'done'} == {3}
    assert (by_id[3]['status'], by_id[3]['error']) == ('failed', LIMIT_ERROR)
    # nothing twice in Jira: one issue per ensure_issue, one comment per add_comment, one link each
    created = model.created_issues()
    markers = [model.property(f'issue/{key}', 'sdlc-hub')['command_id'] for key in created]
    assert sorted(markers) == [12, 13, 14, 15, 16]
    assert {by_id[n]['result']['key'] for n in range(12, 17)} == set(created)
    for n in range(1, 11):
        assert [comment['body'] for comment in model.issue(f'AURORA-{n}')['comments']
                if comment['author'] == 'sdlc-agent'] == [f'к {n}']  # command 3's too: once
    first, second = by_id[12]['result']['key'], by_id[13]['result']['key']
    assert [link for link in model.issue(first)['links'] if link['key'] == second] == [
        {'type': 'Blocks', 'direction': 'outward', 'key': second}]
    assert by_id[17]['result'] == {'created': False, 'link_type': 'Blocks'}
    # the refresh, delivered three times, counted its issues once; the 429s were counted
    refresh = by_id[1]
    assert (refresh['status'], refresh['deliveries']) == ('done', 3)
    assert rows(hub, 'SELECT issues_count FROM sync_run WHERE command_id = 1') == [
        (refresh['result']['issues'],)]
    assert [(item['id'], item['rate_limited']) for item in final['commands']
            if item['rate_limited']] == [(6, 4)]
    assert by_id[7]['pause_seconds'] == 60 and 60 in clock.slept  # the hub's pause, waited
    # and the hub refreshed what the batch wrote, once
    followups = [item for item in queue.batches(hub)['items'] if item['id'] != batch['id']]
    assert [(item['title'], item['status']) for item in followups] == [
        ('Обновление после записи', 'done')]
