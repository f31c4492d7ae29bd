"""The queue as an agent and a client drive it in tests: claims, reports, commands of a batch."""
from __future__ import annotations

from hublib import queue


def claim(hub, agent='jira', **kwargs) -> dict:
    kwargs = {'agent_version': '15', 'settings_version': 2, **kwargs}
    return queue.claim_command(hub, agent=agent, **kwargs)


def report(hub, command_id, status='done', result=None, error=None, jira_calls=1, rate_limited=0,
           agent='jira') -> dict:
    return queue.report_command(hub, command_id, agent=agent, status=status, result=result,
                                error=error, jira_calls=jira_calls, rate_limited=rate_limited)


def comment(key='AURORA-1', **extra) -> dict:
    return {'type': 'add_comment', 'params': {'key': key, 'body': 'текст'}, **extra}


def ensure(temp_key=None, **extra) -> dict:
    params = {'issue_type': 'task', 'summary': 'Новая задача'}
    if temp_key:
        params['temp_key'] = temp_key
    return {'type': 'ensure_issue', 'params': params, **extra}


def link(source, target, **extra) -> dict:
    return {'type': 'ensure_link',
            'params': {'source_key': source, 'target_key': target, 'link_type': 'blocks'}, **extra}


def make_batch(hub, *commands, title='t') -> dict:
    return queue.create_batch(hub, title=title, author='ivanov', commands=list(commands))


def run_queue(hub, outcomes: dict[int, tuple[str, dict | None]] | None = None) -> None:
    """Claim and report until nothing is delivered; ``outcomes`` by seq (default: done)."""
    outcomes = outcomes or {}
    while True:
        command = claim(hub)['command']
        if command is None:
            return
        status, result = outcomes.get(command['seq'], ('done', None))
        if status == 'done' and result is None and command['type'] == 'ensure_issue':
            result = {'key': f'AURORA-{10000 + command["id"]}'}  # done must name the issue
        report(hub, command['id'], status=status, result=result,
               error='Jira: 500' if status == 'failed' else None)
