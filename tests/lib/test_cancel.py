"""Cancelling a batch (contract §9.1, §15a): queued commands → cancelled and ``cancelled_at`` set
once; a batch that is already finished (every command terminal) without a cancel → 409 «пакет уже
завершён», nothing changed; a batch already cancelled → 200 again, nothing changed (idempotent)."""
from __future__ import annotations

import pytest

from hublib import queue
from hublib.errors import ConflictError


@pytest.fixture
def hub(hub, queue_settings):
    return queue_settings(hub)


def comment(key='AURORA-1'):
    return {'type': 'add_comment', 'params': {'key': key, 'body': 'текст'}}


def run(hub, status='done'):
    command = queue.claim_command(hub, agent='jira')['command']
    queue.report_command(hub, command['id'], agent='jira', status=status,
                         error='HTTP 500' if status == 'failed' else None)
    return command


@pytest.mark.parametrize('statuses', [('done', 'done'), ('done', 'failed'), ('failed', 'failed')])
def test_cancel_of_a_finished_batch_is_409_and_changes_nothing(hub, clock, statuses):
    made = queue.create_batch(hub, title='t', commands=[comment('AURORA-1'), comment('AURORA-2')])
    for status in statuses:
        run(hub, status)
    before = queue.batch(hub, made['id'])
    assert before['status'] == 'done'
    clock.advance(minutes=1)
    with pytest.raises(ConflictError) as refused:
        queue.cancel_batch(hub, made['id'])
    assert refused.value.message == 'пакет уже завершён'
    assert queue.batch(hub, made['id']) == before


def test_cancel_of_a_batch_with_queued_commands_cancels_them(hub, clock):
    made = queue.create_batch(hub, title='t', commands=[comment('AURORA-1'), comment('AURORA-2')])
    run(hub)
    clock.advance(minutes=1)
    cancelled = queue.cancel_batch(hub, made['id'])
    assert cancelled['status'] == 'cancelled' and cancelled['cancelled_at'] == hub.now()
    assert [c['status'] for c in cancelled['commands']] == ['done', 'cancelled']


def test_cancel_again_of_a_cancelled_batch_is_idempotent(hub, clock):
    made = queue.create_batch(hub, title='t', commands=[comment()])
    first = queue.cancel_batch(hub, made['id'])
    assert first['status'] == 'cancelled'
    clock.advance(minutes=1)
    assert queue.cancel_batch(hub, made['id']) == first


def test_cancel_of_a_running_batch_without_queued_commands_waits_for_the_report(hub, clock):
    made = queue.create_batch(hub, title='t', commands=[comment()])
    command = queue.claim_command(hub, agent='jira')['command']
    cancelled = queue.cancel_batch(hub, made['id'])
    assert (cancelled['status'], cancelled['cancelled_at']) == ('running', hub.now())
    queue.report_command(hub, command['id'], agent='jira', status='done')
    assert queue.batch(hub, made['id'])['status'] == 'cancelled'
