"""Temp keys name one future issue hub-wide (contract §9.4b, spec «Служебные заметки»): one
unfinished owner at a time, ``next_temp_key``, and notes that land on their own issue only."""
from __future__ import annotations

import pytest

from hublib import batches, notes, queue
from hublib.errors import NotFoundError, ValidationError
from tests.support.queue import claim, comment, ensure, make_batch, report


@pytest.fixture
def hub(hub, queue_settings):
    return queue_settings(hub)


def note(hub, key, **texts):
    return notes.put_note(hub, key, {'updated_by': 'ivanov', **texts})


def batch_count(hub):
    return hub.db.execute_sql('SELECT count(*) FROM batch').fetchone()[0]


def deliver(hub):
    """Claim until the next command is delivered; it."""
    return claim(hub)['command']


def test_two_batches_with_one_temp_key_second_refused_first_note_moves_to_its_own_issue(hub):
    first = make_batch(hub, ensure('new:1'), comment('new:1'), title='Первый')
    note(hub, 'new:1', work_kind='Аналитика', owner_note='первый пользователь')
    with pytest.raises(ValidationError) as refused:
        make_batch(hub, ensure('new:3'), ensure('new:1'), title='Второй')
    assert refused.value.fields == {
        'commands[1].params.temp_key': [f'временный ключ new:1 уже занят пакетом {first["id"]}']}
    assert batch_count(hub) == 1  # nothing created
    assert notes.note(hub, 'new:1')['owner_note'] == 'первый пользователь'  # intact
    delivered = deliver(hub)
    assert delivered['id'] == first['commands'][0]['id']
    report(hub, delivered['id'], result={'key': 'AURORA-1640'})
    moved = notes.note(hub, 'AURORA-1640')
    assert (moved['work_kind'], moved['owner_note']) == ('Аналитика', 'первый пользователь')
    with pytest.raises(NotFoundError):
        notes.note(hub, 'new:1')


def test_the_same_temp_key_is_refused_while_claimed_and_in_a_preview(hub):
    first = make_batch(hub, ensure('new:1'))
    deliver(hub)  # claimed: still unfinished
    with pytest.raises(ValidationError) as refused:
        make_batch(hub, ensure('new:1'))
    assert 'commands[0].params.temp_key' in refused.value.fields
    with pytest.raises(ValidationError) as previewed:
        batches.submit_batch(hub, {'title': 'x', 'commands': [ensure('new:1')]}, dry_run=True)
    assert previewed.value.fields == {
        'commands[0].params.temp_key': [f'временный ключ new:1 уже занят пакетом {first["id"]}']}


@pytest.mark.parametrize('ending', ['done', 'failed', 'cancelled'])
def test_after_the_owner_is_finished_the_temp_key_is_free_again(hub, ending):
    first = make_batch(hub, ensure('new:1'))
    if ending == 'cancelled':
        queue.cancel_batch(hub, first['id'])
    else:
        command = deliver(hub)
        report(hub, command['id'], status=ending,
               result={'key': 'AURORA-7'} if ending == 'done' else None)
    second = make_batch(hub, ensure('new:1'), comment('new:1'))
    assert second['commands'][0]['params']['temp_key'] == 'new:1'


def test_a_batch_of_only_other_commands_never_conflicts_and_other_keys_are_free(hub):
    make_batch(hub, ensure('new:1'))
    make_batch(hub, ensure('new:2'), ensure('new:3'), comment('AURORA-1'))
    make_batch(hub, ensure())  # no temp key at all


def test_next_skips_keys_with_notes_and_keys_owned_by_unfinished_commands(hub):
    assert batches.next_temp_key(hub) == {'temp_key': 'new:1', 'temp_keys': ['new:1']}
    make_batch(hub, ensure('new:1'))
    note(hub, 'new:2', work_kind='план')
    make_batch(hub, ensure('new:4'))
    assert batches.next_temp_key(hub)['temp_key'] == 'new:3'
    assert batches.next_temp_key(hub, count=3)['temp_keys'] == ['new:3', 'new:5', 'new:6']
    note(hub, 'new:3', owner_note='x')
    assert batches.next_temp_key(hub)['temp_key'] == 'new:5'


def test_next_hands_out_a_key_again_once_its_owner_is_done_and_the_note_moved(hub):
    make_batch(hub, ensure('new:1'))
    note(hub, 'new:1', work_kind='Аналитика')
    assert batches.next_temp_key(hub)['temp_key'] == 'new:2'
    command = deliver(hub)
    report(hub, command['id'], result={'key': 'AURORA-5'})
    assert batches.next_temp_key(hub)['temp_key'] == 'new:1'


def test_next_keeps_a_key_whose_failed_owner_left_its_note(hub):
    make_batch(hub, ensure('new:1'))
    note(hub, 'new:1', work_kind='Аналитика')
    report(hub, deliver(hub)['id'], status='failed', error='Jira: 500')
    assert batches.next_temp_key(hub)['temp_key'] == 'new:2'


@pytest.mark.parametrize('count', [0, 101, 'два'])
def test_next_count_is_checked(hub, count):
    with pytest.raises(ValidationError) as refused:
        batches.next_temp_key(hub, count=count)
    assert list(refused.value.fields) == ['count']


def test_late_done_of_an_old_owner_leaves_the_note_of_the_new_owner(hub):
    """The hub failed the first owner (delivery limit), a retry took the temp key, and the note
    under it is the retry's; the first command's late «done» must not carry it off."""
    first = make_batch(hub, ensure('new:1'))
    command = deliver(hub)
    queue.cancel_batch(hub, first['id'])  # claimed stays claimed
    report(hub, command['id'], status='failed', error='Jira: 500')
    second = make_batch(hub, ensure('new:1'))
    note(hub, 'new:1', owner_note='для новой задачи')
    late = report(hub, command['id'], status='done', result={'key': 'AURORA-10'})
    assert late['late'] is True
    assert notes.note(hub, 'new:1')['owner_note'] == 'для новой задачи'
    with pytest.raises(NotFoundError):
        notes.note(hub, 'AURORA-10')
    retried = deliver(hub)
    assert retried['id'] == second['commands'][0]['id']
    report(hub, retried['id'], result={'key': 'AURORA-11'})
    assert notes.note(hub, 'AURORA-11')['owner_note'] == 'для новой задачи'


def test_late_done_with_no_newer_owner_still_moves_the_note(hub):
    """Spec «Служебные заметки»: the note moves on a late «done» too, when nothing took the key."""
    first = make_batch(hub, ensure('new:1'))
    command = deliver(hub)
    queue.cancel_batch(hub, first['id'])
    report(hub, command['id'], status='failed', error='Jira: 500')
    note(hub, 'new:1', owner_note='спросить ИБ')
    report(hub, command['id'], status='done', result={'key': 'AURORA-12'})
    assert notes.note(hub, 'AURORA-12')['owner_note'] == 'спросить ИБ'
