"""Retry of a batch's failed commands (contract §9.4b): «Повтор: <title>» with copies of the
failed commands and of the skipped ones that needed them, ``depends_on`` remapped, ``retry_of``."""
from __future__ import annotations

import pytest

from hublib import batches, notes, queue
from hublib.errors import ConflictError, NotFoundError, ValidationError
from tests.support.queue import claim, comment, ensure, link, make_batch, report, run_queue


@pytest.fixture
def hub(hub, queue_settings):
    return queue_settings(hub)


def shape(batch):
    """(type, params, depends_on as the seq of the new batch) of each command."""
    seq_of = {command['id']: command['seq'] for command in batch['commands']}
    return [(command['type'], command['params'], seq_of.get(command['depends_on']))
            for command in batch['commands']]


def test_retry_copies_failed_commands_and_their_skipped_dependants_with_depends_on_remapped(hub):
    original = make_batch(
        hub,
        comment('AURORA-1'),                                   # 1 done
        ensure('new:1'),                                       # 2 failed
        comment('new:1', depends_on=2),                        # 3 skipped (depends on 2)
        comment('AURORA-2', depends_on=3),                     # 4 skipped (on 3, transitively)
        comment('AURORA-3'),                                   # 5 failed
        comment('AURORA-4', depends_on=1),                     # 6 done (its dependency done)
        link('new:1', 'AURORA-9'),                             # 7 skipped: temp key unresolved
        title='Завести задачи')
    run_queue(hub, {2: ('failed', None), 5: ('failed', None)})
    statuses = [command['status'] for command in queue.batch(hub, original['id'])['commands']]
    # the follow-up «Обновление после записи» is a batch of its own; this one is finished
    assert statuses == ['done', 'failed', 'skipped', 'skipped', 'failed', 'done', 'skipped']
    retry = batches.retry_batch(hub, original['id'], author='petrov')
    assert retry['title'] == 'Повтор: Завести задачи'
    assert (retry['author'], retry['project'], retry['retry_of']) == ('petrov', None, original['id'])
    assert retry['status'] == 'queued'
    assert shape(retry) == [
        ('ensure_issue', {'issue_type': 'task', 'summary': 'Новая задача', 'temp_key': 'new:1'}, None),
        ('add_comment', {'key': 'new:1', 'body': 'текст'}, 1),
        ('add_comment', {'key': 'AURORA-2', 'body': 'текст'}, 2),
        ('add_comment', {'key': 'AURORA-3', 'body': 'текст'}, None),
        ('ensure_link', {'source_key': 'new:1', 'target_key': 'AURORA-9', 'link_type': 'blocks'}, None),
    ]
    assert queue.batch(hub, retry['id'])['retry_of'] == original['id']
    listed = {item['id']: item['retry_of'] for item in queue.batches(hub)['items']}
    assert listed[retry['id']] == original['id'] and listed[original['id']] is None


def test_a_temp_key_whose_creator_is_done_is_replaced_by_its_key_in_the_copy(hub):
    original = make_batch(hub, ensure('new:1'), comment('new:1', depends_on=1),
                          link('new:1', 'AURORA-9', depends_on=2))
    run_queue(hub, {1: ('done', {'key': 'AURORA-50'}), 2: ('failed', None)})
    retry = batches.retry_batch(hub, original['id'], author=None)
    assert shape(retry) == [
        ('add_comment', {'key': 'AURORA-50', 'body': 'текст'}, None),
        ('ensure_link', {'source_key': 'AURORA-50', 'target_key': 'AURORA-9', 'link_type': 'blocks'}, 1),
    ]


def test_a_retried_ensure_issue_takes_the_note_of_its_temp_key_to_the_new_issue(hub):
    original = make_batch(hub, ensure('new:1'))
    notes.put_note(hub, 'new:1', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    run_queue(hub, {1: ('failed', None)})
    retry = batches.retry_batch(hub, original['id'], author='ivanov')
    run_queue(hub, {1: ('done', {'key': 'AURORA-77'})})
    assert queue.batch(hub, retry['id'])['status'] == 'done'
    assert notes.note(hub, 'AURORA-77')['work_kind'] == 'Аналитика'


def test_a_failed_command_the_agent_reported_done_late_is_not_copied(hub):
    original = make_batch(hub, comment('AURORA-1'), comment('AURORA-2'))
    first = claim(hub)['command']
    queue.cancel_batch(hub, original['id'])  # 2 cancelled, 1 stays claimed
    report(hub, first['id'], status='failed', error='Jira: 500')
    assert batches.retry_commands(queue.batch(hub, original['id'])['commands']) == [
        {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'текст'}, 'depends_on': None}]
    assert report(hub, first['id'], status='done')['late'] is True  # Jira has it after all
    with pytest.raises(ConflictError) as refused:
        batches.retry_batch(hub, original['id'], author=None)
    assert 'нет неудавшихся команд' in refused.value.message


def test_what_also_needs_a_cancelled_command_is_not_copied_nor_what_needs_it():
    def command(id, status, type='add_comment', depends_on=None, **params):
        return {'id': id, 'seq': id, 'type': type, 'status': status, 'result': None,
                'params': params, 'depends_on': depends_on}
    commands = [
        command(1, 'failed', 'ensure_issue', issue_type='task', summary='s', temp_key='new:1'),
        command(2, 'cancelled', key='AURORA-2', body='x'),
        command(3, 'skipped', depends_on=2, key='new:1', body='x'),  # needs 1 and cancelled 2
        command(4, 'skipped', depends_on=3, key='AURORA-4', body='x'),
        command(5, 'skipped', depends_on=1, key='new:1', body='x'),
    ]
    assert batches.retry_commands(commands) == [
        {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'summary': 's',
                                            'temp_key': 'new:1'}, 'depends_on': None},
        {'type': 'add_comment', 'params': {'key': 'new:1', 'body': 'x'}, 'depends_on': 1}]


def test_retry_of_a_batch_without_failed_commands_is_409(hub):
    original = make_batch(hub, comment('AURORA-1'), comment('AURORA-2', depends_on=1))
    run_queue(hub, {})
    with pytest.raises(ConflictError) as refused:
        batches.retry_batch(hub, original['id'], author=None)
    assert 'нет неудавшихся команд' in refused.value.message


def test_retry_of_an_unfinished_batch_is_409_and_creates_nothing(hub):
    original = make_batch(hub, comment('AURORA-1'), comment('AURORA-2'))
    first = claim(hub)['command']
    report(hub, first['id'], status='failed', error='x')  # the second is still queued
    before = len(queue.batches(hub)['items'])
    with pytest.raises(ConflictError) as refused:
        batches.retry_batch(hub, original['id'], author=None)
    assert 'ещё выполняется' in refused.value.message
    assert len(queue.batches(hub)['items']) == before


def test_retry_of_a_missing_batch_is_404_and_author_is_checked(hub):
    with pytest.raises(NotFoundError):
        batches.retry_batch(hub, 999, author=None)
    with pytest.raises(ValidationError) as refused:
        batches.retry_batch(hub, 999, author='x' * 201)
    assert list(refused.value.fields) == ['author']


def test_retry_whose_temp_key_another_batch_took_meanwhile_is_409(hub):
    original = make_batch(hub, ensure('new:1'))
    run_queue(hub, {1: ('failed', None)})
    other = make_batch(hub, ensure('new:1'))
    with pytest.raises(ConflictError) as refused:
        batches.retry_batch(hub, original['id'], author=None)
    assert f'уже занят пакетом {other["id"]}' in refused.value.message


def test_a_long_title_is_cut_to_the_title_limit(hub):
    original = make_batch(hub, comment('AURORA-1'), title='Я' * batches.TITLE_MAX)
    run_queue(hub, {1: ('failed', None)})
    retry = batches.retry_batch(hub, original['id'], author=None)
    assert len(retry['title']) == batches.TITLE_MAX and retry['title'].startswith('Повтор: ЯЯ')


# --- one retry a batch (issue 30) -------------------------------------------------------------------

def test_a_second_retry_of_a_batch_is_409_naming_the_first_and_queues_nothing(hub):
    original = make_batch(hub, comment('AURORA-1'), title='Работа')
    run_queue(hub, {1: ('failed', None)})
    first = batches.retry_batch(hub, original['id'], author='ivanov')
    before = len(queue.batches(hub)['items'])
    with pytest.raises(ConflictError) as running:      # the retry is still queued
        batches.retry_batch(hub, original['id'], author='ivanov')
    assert f'пакетом #{first["id"]}' in running.value.message
    assert 'ещё выполняется' in running.value.message
    run_queue(hub)                                      # the retry ends done
    with pytest.raises(ConflictError) as done:
        batches.retry_batch(hub, original['id'], author='ivanov')
    assert f'уже повторён пакетом #{first["id"]}' in done.value.message
    assert len(queue.batches(hub)['items']) == before + 1  # only the retry's own follow-up
    assert queue.batch(hub, original['id'])['retried_by'] == first['id']
    assert queue.batch(hub, first['id'])['retried_by'] is None


def test_when_the_retry_itself_failed_a_retry_of_the_original_retries_the_retry(hub):
    original = make_batch(hub, comment('AURORA-1'), comment('AURORA-2'), title='Работа')
    run_queue(hub, {1: ('failed', None), 2: ('failed', None)})
    first = batches.retry_batch(hub, original['id'], author='ivanov')
    run_queue(hub, {2: ('failed', None)})               # AURORA-1 done now, AURORA-2 failed again
    second = batches.retry_batch(hub, original['id'], author='ivanov')
    assert second['retry_of'] == first['id']
    assert second['title'] == 'Повтор: Повтор: Работа'
    assert [c['params']['key'] for c in second['commands']] == ['AURORA-2']  # not AURORA-1 again
    assert queue.batch(hub, first['id'])['retried_by'] == second['id']
    with pytest.raises(ConflictError) as refused:      # the chain's last retry runs
        batches.retry_batch(hub, original['id'], author='ivanov')
    assert f'пакетом #{first["id"]} (последний повтор — #{second["id"]})' in refused.value.message
    with pytest.raises(ConflictError):
        batches.retry_batch(hub, first['id'], author='ivanov')


def test_the_representation_names_the_retry_in_lists_and_previews(hub):
    original = make_batch(hub, comment('AURORA-1'))
    run_queue(hub, {1: ('failed', None)})
    assert queue.batch(hub, original['id'])['retried_by'] is None
    retry = batches.retry_batch(hub, original['id'], author=None)
    listed = {item['id']: item for item in queue.batches(hub)['items']}
    assert listed[original['id']]['retried_by'] == retry['id']
    assert listed[original['id']]['counts']['failed'] == 1       # one row a batch, not a row a retry
    preview = queue.create_batch(hub, title='x', commands=[comment('AURORA-1')], dry_run=True)
    assert preview['retried_by'] is None


def test_skipped_for_want_of_a_key_that_arrived_later_are_retried(hub):
    original = make_batch(hub, ensure('new:5'), comment('new:5', depends_on=1),
                          comment('AURORA-2', depends_on=2))
    command_id = claim(hub)['command']['id']
    report(hub, command_id, status='done', result={})  # the agent lost the key
    assert queue.batch(hub, original['id'])['status'] == 'done'
    with pytest.raises(ConflictError):                 # nothing can run yet: the key is unknown
        batches.retry_batch(hub, original['id'], author=None)
    report(hub, command_id, status='done', result={'key': 'AURORA-1640'})
    retry = batches.retry_batch(hub, original['id'], author=None)
    assert shape(retry) == [('add_comment', {'key': 'AURORA-1640', 'body': 'текст'}, None),
                            ('add_comment', {'key': 'AURORA-2', 'body': 'текст'}, 1)]


def test_what_the_agent_reported_skipped_is_not_retried(hub):
    original = make_batch(hub, comment('AURORA-1'), comment('AURORA-2', depends_on=1))
    run_queue(hub, {1: ('skipped', None)})
    assert [c['status'] for c in queue.batch(hub, original['id'])['commands']] == [
        'skipped', 'skipped']
    with pytest.raises(ConflictError):
        batches.retry_batch(hub, original['id'], author=None)
