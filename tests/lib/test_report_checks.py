"""What a report must say and may not contradict (contract §9.4, issues 18 and 30).

- ``ensure_issue`` reported ``done`` without ``result.key`` (an agent that lost it) is kept: 200,
  stored ``done``, never left claimed (a redelivery could create the issue twice); what waits for
  its temp key is skipped at once naming it. A later ``done`` with the key completes it: the key
  is stored, the note moves, the skipped stay skipped, read your writes refreshes the new issue.
- A report on a command already ``done``/``confirmed_by_state``/``skipped`` is idempotent when it
  repeats the stored outcome (same status, same result): 200, nothing changes. One that says
  something else (another status or another result) contradicts what the hub recorded: 409,
  nothing changes.
"""
from __future__ import annotations

import pytest

from hublib import notes, queue
from hublib.errors import ConflictError, NotFoundError, ValidationError

from .test_claim_report import claim, comment, ensure, make_batch, report

UNKEYED = 'временный ключ new:5 не получил ключ Jira'


@pytest.fixture
def hub(hub, queue_settings):
    return queue_settings(hub)


@pytest.mark.parametrize('result', [None, {}, {'key': None}])
def test_ensure_issue_done_without_key_is_kept_and_its_dependants_skipped_naming_the_temp_key(
        hub, result):
    notes.put_note(hub, 'new:5', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    made = make_batch(hub, ensure('new:5'), comment('new:5', depends_on=1), comment('new:5'),
                      comment('AURORA-2', depends_on=2), comment('AURORA-3'))
    ids = [item['id'] for item in made['commands']]
    assert claim(hub)['command']['id'] == ids[0]
    answer = report(hub, ids[0], status='done', result=result)
    assert (answer['status'], answer['result'], answer['late']) == ('done', result, False)
    statuses = [(queue.command(hub, command_id)['status'], queue.command(hub, command_id)['error'])
                for command_id in ids[1:]]
    assert statuses == [('skipped', UNKEYED), ('skipped', UNKEYED),
                        ('skipped', f'зависимость #{ids[1]} не выполнена'), ('queued', None)]
    assert claim(hub)['command']['id'] == ids[4]          # never delivered again
    assert notes.note(hub, 'new:5')['work_kind'] == 'Аналитика'  # the note waits for the key


def test_a_later_done_with_the_key_completes_it_and_the_skipped_stay_skipped(hub):
    notes.put_note(hub, 'new:5', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    made = make_batch(hub, ensure('new:5'), comment('new:5', depends_on=1))
    ids = [item['id'] for item in made['commands']]
    claim(hub)
    report(hub, ids[0], status='done', result={})
    completed = report(hub, ids[0], status='done', result={'key': 'AURORA-1640'})
    assert (completed['status'], completed['result'], completed['late']) == (
        'done', {'key': 'AURORA-1640'}, False)
    assert notes.note(hub, 'AURORA-1640')['work_kind'] == 'Аналитика'
    with pytest.raises(NotFoundError):
        notes.note(hub, 'new:5')
    assert queue.command(hub, ids[1])['status'] == 'skipped'
    # the completion is the outcome now: repeated, it changes nothing; contradicted, 409
    assert report(hub, ids[0], status='done', result={'key': 'AURORA-1640'})['status'] == 'done'
    for status, result in (('done', {'key': 'AURORA-1641'}), ('done', {}),
                           ('confirmed_by_state', {'key': 'AURORA-1640'}), ('failed', None)):
        with pytest.raises(ConflictError):
            report(hub, ids[0], status=status, result=result)
    assert queue.command(hub, ids[0])['result'] == {'key': 'AURORA-1640'}


def test_read_your_writes_refreshes_the_issue_once_its_key_arrives(hub):
    made = make_batch(hub, ensure('new:5'), comment('new:5', depends_on=1))
    command_id = made['commands'][0]['id']
    claim(hub)
    report(hub, command_id, status='done', result=None)
    assert _followup_keys(hub) == []                      # no key known: nothing to refresh
    report(hub, command_id, status='done', result={'key': 'AURORA-1640'})
    assert _followup_keys(hub) == [['AURORA-1640']]
    report(hub, command_id, status='done', result={'key': 'AURORA-1640'})
    assert _followup_keys(hub) == [['AURORA-1640']]       # once per batch


def test_confirmed_by_state_without_key_is_never_completed(hub):
    made = make_batch(hub, ensure('new:5'), comment('new:5', depends_on=1))
    ids = [item['id'] for item in made['commands']]
    claim(hub)
    report(hub, ids[0], status='confirmed_by_state', result={})
    assert claim(hub)['command'] is None                # what waits for new:5 is skipped
    assert queue.command(hub, ids[1])['status'] == 'skipped'
    with pytest.raises(ConflictError):
        report(hub, ids[0], status='confirmed_by_state', result={'key': 'AURORA-1640'})


def test_an_ensure_issue_that_updates_a_key_needs_no_result_key(hub):
    made = make_batch(hub, {'type': 'ensure_issue', 'params': {
        'issue_type': 'task', 'summary': 'Новое имя', 'key': 'AURORA-7'}},
        comment('AURORA-7', depends_on=1))
    claim(hub)
    report(hub, made['commands'][0]['id'], status='done', result={})
    assert claim(hub)['command']['id'] == made['commands'][1]['id']


def test_fetch_attachment_done_without_sha256_is_still_422_and_stays_claimed(hub):
    hub.db.execute_sql("INSERT INTO issue_attachment (attachment_id, key) VALUES ('31337', 'AURORA-1')")
    made = make_batch(hub, {'type': 'fetch_attachment', 'params': {'attachment_id': '31337'}})
    command_id = claim(hub)['command']['id']
    with pytest.raises(ValidationError) as refused:
        report(hub, command_id, status='done', result={'size': 5})
    assert list(refused.value.fields) == ['result.sha256']
    assert queue.command(hub, made['commands'][0]['id'])['status'] == 'claimed'


def _followup_keys(hub) -> list[list[str]]:
    return [queue.batch(hub, item['id'])['commands'][0]['params']['keys']
            for item in reversed(queue.batches(hub)['items'])
            if item['title'] == 'Обновление после записи']


def test_ensure_issue_failed_or_confirmed_by_state_need_no_key(hub):
    make_batch(hub, ensure('new:5'), ensure('new:6'))
    assert report(hub, claim(hub)['command']['id'], status='failed', error='нет прав')['status'] \
        == 'failed'
    assert report(hub, claim(hub)['command']['id'], status='confirmed_by_state',
                  result={})['status'] == 'confirmed_by_state'


@pytest.mark.parametrize('status, result', [
    ('done', {'key': 'AURORA-1640'}), ('confirmed_by_state', {'key': 'AURORA-1640'}),
    ('confirmed_by_state', None), ('skipped', None), ('done', {'key': 'AURORA-1640', 'x': 1})])
def test_a_repeated_report_of_the_same_outcome_is_200_and_changes_nothing(hub, clock, status,
                                                                           result):
    command_id = make_batch(hub, ensure())['commands'][0]['id']
    claim(hub)
    report(hub, command_id, status=status, result=result, jira_calls=3)
    before = queue.command(hub, command_id)
    clock.advance(minutes=1)
    again = report(hub, command_id, status=status, result=result, jira_calls=3)
    assert again['late'] is False and again['status'] == status
    assert queue.command(hub, command_id) == before


@pytest.mark.parametrize('first, second', [
    (('done', {'key': 'AURORA-1640'}), ('done', {'key': 'AURORA-1641'})),
    (('done', {'key': 'AURORA-1640'}), ('failed', None)),
    (('done', {'key': 'AURORA-1640'}), ('confirmed_by_state', {'key': 'AURORA-1640'})),
    (('confirmed_by_state', None), ('done', {'key': 'AURORA-1640'})),
    (('skipped', None), ('done', {'key': 'AURORA-1640'})),
])
def test_a_report_contradicting_the_stored_outcome_is_409_and_changes_nothing(hub, clock, first,
                                                                               second):
    command_id = make_batch(hub, ensure('new:5'))['commands'][0]['id']
    claim(hub)
    report(hub, command_id, status=first[0], result=first[1])
    before = queue.command(hub, command_id)
    clock.advance(minutes=1)
    with pytest.raises(ConflictError) as refused:
        report(hub, command_id, status=second[0], result=second[1])
    assert f'#{command_id}' in refused.value.message and first[0] in refused.value.message
    assert queue.command(hub, command_id) == before
