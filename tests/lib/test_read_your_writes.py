"""Read your writes (contract §9.4a, issue 10.4): when a batch's writes are over, the hub queues
one keys refresh of what they touched, as its own batch «Обновление после записи».

Every road that ends a write command is walked: a report (also repeated and late), a cancel, the
skip of dependents, the give-up after three deliveries and the skip at delivery.
"""
from __future__ import annotations

import pytest

from hublib import queue

TITLE = 'Обновление после записи'


@pytest.fixture
def hub(hub, queue_settings):
    return queue_settings(hub)


def claim(hub):
    return queue.claim_command(hub, agent='jira', agent_version='15')['command']


def report(hub, command_id, status='done', result=None):
    return queue.report_command(hub, command_id, agent='jira', status=status, result=result,
                                error='HTTP 500' if status == 'failed' else None)


def comment(key, **extra):
    return {'type': 'add_comment', 'params': {'key': key, 'body': 'текст'}, **extra}


def transition(key, **extra):
    return {'type': 'transition', 'params': {'key': key, 'status': 'В работе'}, **extra}


def ensure(temp_key):
    return {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'summary': 'Новая',
                                               'temp_key': temp_key}}


def make_batch(hub, *commands, project=None):
    return queue.create_batch(hub, title='Работа', author='ivanov', project=project,
                              commands=list(commands))


def followups(hub) -> list[dict]:
    """The hub's «Обновление после записи» batches, oldest first, with their commands."""
    return [queue.batch(hub, item['id']) for item in reversed(queue.batches(hub)['items'])
            if item['title'] == TITLE]


def refreshed_keys(hub) -> list[list[str]]:
    """The keys of each read-your-writes refresh (one list per follow-up batch)."""
    found = []
    for item in followups(hub):
        assert (item['author'], [c['type'] for c in item['commands']]) == ('hub', ['refresh'])
        found.append(item['commands'][0]['params']['keys'])
    return found


def test_scenario_batch_creates_comments_and_transitions_then_one_refresh_of_what_it_touched(hub):
    """An issue created under new:1, commented and linked, and another issue transitioned; the
    reports come repeated and lost: one refresh of exactly those keys, in natural key order."""
    made = make_batch(hub, ensure('new:1'), comment('new:1', depends_on=1), transition('AURORA-7'),
                      {'type': 'ensure_link', 'depends_on': 1, 'params': {
                          'source_key': 'new:1', 'target_key': 'AURORA-12', 'link_type': 'blocks'}},
                      project='AWPCA')
    ids = [c['id'] for c in made['commands']]
    report(hub, claim(hub)['id'], result={'key': 'AURORA-1640'})
    report(hub, claim(hub)['id'])
    report(hub, ids[1])                           # a repeated report changes nothing
    report(hub, claim(hub)['id'])
    assert claim(hub)['id'] == ids[3]            # the link: its report is lost ...
    assert followups(hub) == []                   # ... so the batch's writes are not over yet
    assert claim(hub)['deliveries'] == 2          # delivered again
    report(hub, ids[3])
    assert refreshed_keys(hub) == [['AURORA-7', 'AURORA-12', 'AURORA-1640']]
    followup = followups(hub)[0]
    assert followup['project'] == 'AWPCA' and followup['status'] == 'queued'
    report(hub, ids[2])                           # repeated and late reports: still one refresh
    report(hub, ids[3])
    assert len(followups(hub)) == 1
    work = queue.batch(hub, made['id'])           # the interface's batch keeps its commands
    assert [c['id'] for c in work['commands']] == ids and work['status'] == 'done'
    delivered = claim(hub)                        # and the agent gets the refresh next
    assert (delivered['type'], delivered['params']) == (
        'refresh', {'keys': ['AURORA-7', 'AURORA-12', 'AURORA-1640']})


def test_late_done_of_a_given_up_write_counts_when_it_comes_before_the_batch_ends(hub, clock):
    made = make_batch(hub, ensure('new:1'), transition('AURORA-7'))
    created, moved = (c['id'] for c in made['commands'])
    for _ in range(3):
        assert claim(hub)['id'] == created        # three deliveries, no report
    assert claim(hub)['id'] == moved              # the fourth claim gives the first up
    assert queue.command(hub, created)['status'] == 'failed'
    assert report(hub, created, result={'key': 'AURORA-1640'})['late'] is True
    assert followups(hub) == []                   # the transition is still out
    report(hub, moved)
    assert refreshed_keys(hub) == [['AURORA-7', 'AURORA-1640']]


def test_late_done_after_every_write_failed_queues_the_refresh(hub):
    made = make_batch(hub, comment('AURORA-3'))
    for _ in range(4):
        claim(hub)
    assert queue.command(hub, made['commands'][0]['id'])['status'] == 'failed'
    assert followups(hub) == []                   # nothing was done
    report(hub, made['commands'][0]['id'])        # ... until the agent says it was, after all
    report(hub, made['commands'][0]['id'])
    assert refreshed_keys(hub) == [['AURORA-3']]


def test_late_done_after_the_refresh_was_queued_queues_no_second_one(hub):
    made = make_batch(hub, comment('AURORA-3'), comment('AURORA-4'))
    for _ in range(3):
        claim(hub)
    report(hub, claim(hub)['id'])                 # the first given up, the second done
    assert refreshed_keys(hub) == [['AURORA-4']]
    assert report(hub, made['commands'][0]['id'])['late'] is True
    assert refreshed_keys(hub) == [['AURORA-4']]


def test_cancel_after_a_done_write_queues_the_refresh_at_once(hub):
    made = make_batch(hub, comment('AURORA-3'), comment('AURORA-4'))
    report(hub, claim(hub)['id'])
    cancelled = queue.cancel_batch(hub, made['id'])
    assert [c['status'] for c in cancelled['commands']] == ['done', 'cancelled']
    assert refreshed_keys(hub) == [['AURORA-3']]
    queue.cancel_batch(hub, made['id'])
    assert len(followups(hub)) == 1


def test_cancel_with_a_claimed_write_waits_for_its_report(hub):
    made = make_batch(hub, comment('AURORA-3'), comment('AURORA-4'), comment('AURORA-5'))
    report(hub, claim(hub)['id'])
    out = claim(hub)['id']
    queue.cancel_batch(hub, made['id'])
    assert followups(hub) == []
    report(hub, out)
    assert refreshed_keys(hub) == [['AURORA-3', 'AURORA-4']]
    assert queue.batch(hub, made['id'])['status'] == 'cancelled'


def test_cancel_before_any_write_ran_queues_nothing(hub):
    made = make_batch(hub, comment('AURORA-3'), transition('AURORA-4'))
    queue.cancel_batch(hub, made['id'])
    assert followups(hub) == [] and claim(hub) is None


def test_failed_write_skips_its_dependents_and_so_ends_the_batch(hub):
    make_batch(hub, comment('AURORA-3'), transition('AURORA-4'), comment('AURORA-5', depends_on=2))
    report(hub, claim(hub)['id'])
    report(hub, claim(hub)['id'], status='failed')
    assert refreshed_keys(hub) == [['AURORA-3']]


def test_give_up_that_skips_the_last_write_hands_out_the_refresh_in_the_same_claim(hub):
    make_batch(hub, comment('AURORA-3'), comment('AURORA-4'), comment('AURORA-5', depends_on=2))
    report(hub, claim(hub)['id'])
    for _ in range(3):
        claim(hub)
    delivered = claim(hub)                        # gives up, skips the dependent, ends the writes
    assert (delivered['type'], delivered['params']) == ('refresh', {'keys': ['AURORA-3']})
    assert len(followups(hub)) == 1


def test_skip_at_delivery_of_an_unresolved_temp_key_ends_the_batch(hub):
    # The issue exists (confirmed by state) but the agent did not say its key: new:5 is unknown.
    make_batch(hub, ensure('new:5'), comment('AURORA-3'), comment('new:5'))
    report(hub, claim(hub)['id'], status='confirmed_by_state', result={})
    report(hub, claim(hub)['id'])
    assert followups(hub) == []                   # the comment on new:5 is still queued
    delivered = claim(hub)                        # skipped at delivery: the refresh comes instead
    assert (delivered['type'], delivered['params']) == ('refresh', {'keys': ['AURORA-3']})


def test_batches_without_a_done_write_get_no_refresh(hub):
    refresh = make_batch(hub, {'type': 'refresh', 'params': {'keys': ['AURORA-1']}})
    failed = make_batch(hub, comment('AURORA-3'))
    report(hub, claim(hub)['id'])
    report(hub, claim(hub)['id'], status='failed')
    assert [queue.batch(hub, b['id'])['status'] for b in (refresh, failed)] == ['done', 'done']
    assert followups(hub) == [] and claim(hub) is None
