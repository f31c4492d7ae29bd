"""What a report must say and may not contradict (contract §9.4, issue 18).

- ``ensure_issue`` reported ``done`` without ``result.key`` is a 422 naming ``result.key``: the
  command stays ``claimed``, its dependants are not skipped, and the agent's corrected report (with
  the key) is then accepted as the report.
- A report on a command already ``done``/``confirmed_by_state``/``skipped`` is idempotent when it
  repeats the stored outcome (same status, same result): 200, nothing changes. One that says
  something else (another status or another result) contradicts what the hub recorded: 409,
  nothing changes.
"""
from __future__ import annotations

import pytest

from hublib import notes, queue
from hublib.errors import ConflictError, ValidationError

from .test_claim_report import claim, comment, ensure, make_batch, report


@pytest.fixture
def hub(hub, queue_settings):
    return queue_settings(hub)


@pytest.mark.parametrize('result', [None, {}, {'key': None}])
def test_ensure_issue_done_without_key_is_422_and_the_command_stays_claimed(hub, result):
    notes.put_note(hub, 'new:5', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    made = make_batch(hub, ensure('new:5'), comment('new:5', depends_on=1))
    command_id = claim(hub)['command']['id']
    with pytest.raises(ValidationError) as refused:
        report(hub, command_id, status='done', result=result)
    assert list(refused.value.fields) == ['result.key']
    assert refused.value.fields['result.key'][0].startswith('обязательное поле')
    assert queue.command(hub, command_id)['status'] == 'claimed'
    assert queue.command(hub, made['commands'][1]['id'])['status'] == 'queued'
    # the corrected report is the report: the dependant gets the key, the note moves
    assert report(hub, command_id, result={'key': 'AURORA-1640'})['status'] == 'done'
    assert claim(hub)['command']['params']['key'] == 'AURORA-1640'
    assert notes.note(hub, 'AURORA-1640')['work_kind'] == 'Аналитика'


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
