"""A simulated agent runs a 200-command batch with lost reports and crashes (contract §9.3–§9.4).

The in-test agent claims through hublib, "executes" each delivery and then, by a seeded coin,
reports done, reports failed, or crashes before reporting (the report is lost and the hub must
deliver again, at most 3 times). Sometimes a crashed delivery's report arrives late, after the
command was given up. The run must end with every command terminal, none delivered more than 3
times, and no dependent executed unless its dependency was done.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from hublib import queue, settings
from hublib.validation import is_temp_key

SEED = 20261130
COMMANDS = 200
LOST_REPORT = 0.30
FAILED_REPORT = 0.10
LATE_REPORT = 0.5  # share of lost reports that arrive later anyway
ISSUE_TYPES = {'task': {'name': 'Задача', 'id': '3'}, 'epic': {'name': 'Эпик', 'id': '6'}}


def make_commands(rng: random.Random) -> list[dict]:
    commands: list[dict] = []
    owners: list[int] = []  # seq of ensure_issue commands with a temp key
    for seq in range(1, COMMANDS + 1):
        roll = rng.random()
        if roll < 0.25 or not owners:
            commands.append({'type': 'ensure_issue', 'params': {
                'issue_type': 'task', 'summary': f'Задача {seq}', 'temp_key': f'new:{seq}'}})
            owners.append(seq)
        elif roll < 0.55:
            owner = rng.choice(owners)
            commands.append({'type': 'add_comment', 'depends_on': owner,
                             'params': {'key': f'new:{owner}', 'body': f'к {owner}'}})
        elif roll < 0.7 and len(owners) > 1:
            source, target = rng.sample(owners, 2)
            commands.append({'type': 'ensure_link', 'depends_on': max(source, target),
                             'params': {'source_key': f'new:{source}', 'target_key': f'new:{target}',
                                        'link_type': 'blocks'}})
        elif roll < 0.85:
            commands.append({'type': 'transition', 'depends_on': rng.randint(1, seq - 1),
                             'params': {'key': f'AURORA-{seq}', 'status': 'В работе'}})
        else:
            commands.append({'type': 'add_comment', 'params': {'key': f'AURORA-{seq}', 'body': 'x'}})
    return commands


@pytest.mark.slow
def test_simulated_agent_with_lost_reports_and_crashes(hub, clock):
    settings.update_settings(hub, {'issue_types': ISSUE_TYPES, 'link_types': {'blocks': 'Blocks'}})
    rng = random.Random(SEED)
    batch = queue.create_batch(hub, title='Симуляция', author='sim', commands=make_commands(rng))
    by_id = {c['id']: c for c in batch['commands']}
    deliveries: Counter[int] = Counter()
    executed: list[int] = []
    pending_late: list[tuple[int, dict]] = []
    outcomes: Counter[str] = Counter()

    def claim():
        return queue.claim_command(hub, agent='jira', agent_version='15')['command']

    for _ in range(COMMANDS * 5):
        delivered = claim()
        if delivered is None:
            break
        clock.advance(seconds=rng.randint(1, 20))
        command_id = delivered['id']
        deliveries[command_id] += 1
        assert delivered['deliveries'] == deliveries[command_id] <= 3
        # Executing: the dependency must have been done, every temp key must be resolved.
        # (The hub's own «Обновление после записи» refresh comes last and depends on nothing.)
        depends_on = by_id[command_id]['depends_on'] if command_id in by_id else None
        if depends_on is not None:
            assert queue.command(hub, depends_on)['status'] in ('done', 'confirmed_by_state')
        for name, value in delivered['params'].items():
            assert not is_temp_key(value) or (delivered['type'] == 'ensure_issue'
                                              and name == 'temp_key'), delivered
        executed.append(command_id)
        result = {'key': f'AURORA-{10000 + command_id}'} if delivered['type'] == 'ensure_issue' else {}
        roll = rng.random()
        if roll < LOST_REPORT:
            outcomes['lost'] += 1
            if rng.random() < LATE_REPORT:
                pending_late.append((command_id, result))
            continue
        status = 'failed' if roll < LOST_REPORT + FAILED_REPORT else 'done'
        outcomes[status] += 1
        answer = queue.report_command(hub, command_id, agent='jira', status=status, result=result,
                                      error='HTTP 500' if status == 'failed' else None,
                                      jira_calls=rng.randint(1, 4), rate_limited=0)
        assert answer['late'] is False
        if rng.random() < 0.1 and status == 'done':  # a duplicated report changes nothing
            again = queue.report_command(hub, command_id, agent='jira', status='done',
                                         result=result, error=None, jira_calls=9, rate_limited=9)
            assert (again['status'], again['jira_calls']) == (status, answer['jira_calls'])
        if pending_late and rng.random() < 0.3:  # a lost report arrives after all
            late_id, late_result = pending_late.pop(0)
            queue.report_command(hub, late_id, agent='jira', status='done', result=late_result,
                                 error=None, jira_calls=1, rate_limited=0)
    else:
        pytest.fail('the queue never drained')

    final = queue.batch(hub, batch['id'])
    statuses = Counter(c['status'] for c in final['commands'])
    assert final['status'] == 'done'
    assert statuses['queued'] == statuses['claimed'] == 0
    assert max(deliveries.values()) <= 3
    assert all(c['deliveries'] <= 3 for c in final['commands'])
    stored = {c['id']: c for c in final['commands']}
    given_up = [c for c in final['commands'] if c['error'] == 'агент не отчитался после 3 выдач']
    assert given_up, 'the seed should make at least one command hit the delivery limit'
    for item in final['commands']:
        dependency = stored.get(item['depends_on'])
        if dependency and dependency['status'] not in ('done', 'confirmed_by_state'):
            assert item['status'] == 'skipped', item
            assert item['id'] not in executed
    assert outcomes['lost'] and outcomes['failed'] and outcomes['done']
    assert statuses['skipped'] > 0
    # Read your writes (contract §9.4a): one refresh for the batch however the reports came
    # (lost, late, repeated), the interface's batch keeping exactly its commands.
    assert len(final['commands']) == COMMANDS
    followups = [item for item in queue.batches(hub)['items'] if item['id'] != batch['id']]
    assert [(item['title'], item['author'], item['status']) for item in followups] == [
        ('Обновление после записи', 'hub', 'done')]
