"""Idempotency keys (contract §9.4b): one write per key and request, the same answer again, in
the database for 24 hours per role."""
from __future__ import annotations

import json
import threading

import pytest

from hublib import batches, idempotency, notes, open_hub, queue
from hublib.errors import ValidationError
from tests.support.queue import claim, comment, make_batch, report

BODY = {'title': 'Комментарий', 'author': 'ivanov',
        'commands': [{'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'один раз'}}]}


@pytest.fixture
def hub(hub, queue_settings):
    return queue_settings(hub)


def batch_count(hub) -> int:
    return hub.db.execute_sql('SELECT count(*) FROM batch').fetchone()[0]


def remembered(hub) -> int:
    return hub.db.execute_sql('SELECT count(*) FROM idempotent_request').fetchone()[0]


def add_attachment(hub, attachment_id='31337'):
    with hub.write():
        hub.db.execute_sql(
            'INSERT INTO issue_attachment (attachment_id, key, filename, size, created_at) '
            "VALUES (?, 'AURORA-1', 'a.txt', 5, ?)", (attachment_id, hub.now()))


def test_the_same_key_twice_queues_one_batch_and_answers_the_same_status_and_body(hub, clock):
    first = idempotency.queue_batch(hub, BODY, key='k-1')
    clock.advance(minutes=5)
    again = idempotency.queue_batch(hub, json.loads(json.dumps(BODY)), key='k-1')
    assert (first.status, first.replayed) == (201, False)
    assert (again.status, again.replayed) == (201, True)
    assert again.body == first.body
    assert batch_count(hub) == 1


def test_without_a_key_every_request_is_done(hub):
    idempotency.queue_batch(hub, BODY)
    idempotency.queue_batch(hub, BODY)
    assert batch_count(hub) == 2 and remembered(hub) == 0


def test_the_key_survives_a_restart(data_dir, clock, queue_settings):
    hub = queue_settings(open_hub(data_dir, clock=clock))
    first = idempotency.queue_batch(hub, BODY, key='restart')
    hub.close()
    reopened = open_hub(data_dir, clock=clock)
    try:
        again = idempotency.queue_batch(reopened, BODY, key='restart')
        assert (again.status, again.body, again.replayed) == (201, first.body, True)
        assert batch_count(reopened) == 1
    finally:
        reopened.close()


def test_keys_in_another_order_are_the_same_request(hub):
    idempotency.queue_batch(hub, BODY, key='order')
    again = idempotency.queue_batch(hub, dict(reversed(list(BODY.items()))), key='order')
    assert again.replayed and batch_count(hub) == 1


@pytest.mark.parametrize('other', [
    lambda hub: idempotency.queue_batch(hub, {**BODY, 'title': 'Другой'}, key='same'),
    lambda hub: idempotency.put_note(hub, 'AURORA-1', {'updated_by': 'x'}, key='same'),
    lambda hub: idempotency.cancel_batch(hub, 1, key='same'),
], ids=['other body', 'other path', 'other method and path'])
def test_the_same_key_with_another_request_is_422_and_does_nothing(hub, other):
    idempotency.queue_batch(hub, BODY, key='same')
    with pytest.raises(ValidationError) as refused:
        other(hub)
    assert refused.value.fields == {'Idempotency-Key': [idempotency.REUSED_MESSAGE]}
    assert batch_count(hub) == 1
    assert queue.batch(hub, 1)['cancelled_at'] is None
    assert hub.db.execute_sql('SELECT count(*) FROM issue_note').fetchone()[0] == 0


def test_a_refused_request_leaves_its_key_free(hub):
    wrong = {**BODY, 'commands': [{'type': 'add_comment', 'params': {'key': 'AURORA-1'}}]}
    with pytest.raises(ValidationError) as refused:
        idempotency.queue_batch(hub, wrong, key='form-1')
    assert 'commands[0].params.body' in refused.value.fields
    assert remembered(hub) == 0
    corrected = idempotency.queue_batch(hub, BODY, key='form-1')
    assert corrected.status == 201 and not corrected.replayed


def test_keys_are_per_role(hub):
    idempotency.queue_batch(hub, BODY, key='shared', role='client')
    other_role = idempotency.queue_batch(hub, BODY, key='shared', role='agent')
    assert not other_role.replayed and batch_count(hub) == 2


def test_a_dry_run_neither_checks_nor_takes_the_key(hub):
    preview = idempotency.queue_batch(hub, {**BODY, 'dry_run': True}, key='dry')
    assert (preview.status, preview.body['dry_run'], preview.body['id']) == (200, True, None)
    assert remembered(hub) == 0 and batch_count(hub) == 0
    assert idempotency.queue_batch(hub, BODY, key='dry').status == 201
    with pytest.raises(ValidationError):
        idempotency.queue_batch(hub, {**BODY, 'dry_run': True}, key=' ')


def test_a_key_expires_after_24_hours(hub, clock):
    first = idempotency.queue_batch(hub, BODY, key='day')
    clock.advance(hours=23, minutes=59)
    assert idempotency.queue_batch(hub, BODY, key='day').body == first.body
    clock.advance(minutes=2)
    later = idempotency.queue_batch(hub, BODY, key='day')
    assert not later.replayed and later.body['id'] != first.body['id']
    assert remembered(hub) == 1


def test_expired_keys_are_swept_by_later_writes_a_bounded_number_at_a_time(hub, clock):
    count = idempotency.SWEEP_LIMIT + 20
    with hub.write():
        for number in range(count):
            hub.db.execute_sql(
                'INSERT INTO idempotent_request (role, key, method, path, body_hash, status, '
                "response, created_at) VALUES ('client', ?, 'POST', '/batches', '', 201, '{}', ?)",
                (f'old-{number}', hub.now()))
    clock.advance(hours=25)
    idempotency.put_note(hub, 'AURORA-1', {'updated_by': 'x'}, key='sweeper-1')
    assert remembered(hub) == count - idempotency.SWEEP_LIMIT + 1
    idempotency.put_note(hub, 'AURORA-1', {'updated_by': 'x'}, key='sweeper-2')
    assert remembered(hub) == 2


@pytest.mark.parametrize('key', ['', ' ', ' lead', 'trail ', 'x' * 201, 'ключ', 'a\nb', 'tab\t',
                                 5, ['k']])
def test_a_key_that_is_not_1_to_200_printable_ascii_is_422_naming_it(hub, key):
    with pytest.raises(ValidationError) as refused:
        idempotency.queue_batch(hub, BODY, key=key)
    assert list(refused.value.fields) == ['Idempotency-Key']
    with pytest.raises(ValidationError) as named:
        idempotency.queue_batch(hub, BODY, key=key, field='idempotency_key')
    assert list(named.value.fields) == ['idempotency_key']
    assert batch_count(hub) == 0


@pytest.mark.parametrize('key', ['a', 'x' * 200, 'inner space', '!~{}"\\', 'b64+/=='])
def test_printable_ascii_keys_are_accepted(hub, key):
    assert idempotency.queue_batch(hub, BODY, key=key).status == 201
    assert idempotency.queue_batch(hub, BODY, key=key).replayed


def test_put_note_with_a_key_is_done_once(hub, clock):
    first = idempotency.put_note(hub, 'new:1', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'},
                                 key='note-1')
    notes.put_note(hub, 'new:1', {'work_kind': 'Разработка', 'updated_by': 'petrov'})
    clock.advance(minutes=1)
    again = idempotency.put_note(hub, 'new:1', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'},
                                 key='note-1')
    assert (again.status, again.body) == (200, first.body)
    assert notes.note(hub, 'new:1')['work_kind'] == 'Разработка'  # not written a second time


def test_cancel_with_a_key_answers_the_first_cancel_again(hub):
    batch = make_batch(hub, comment(), comment('AURORA-2'))
    first = idempotency.cancel_batch(hub, batch['id'], key='cancel-1')
    again = idempotency.cancel_batch(hub, batch['id'], key='cancel-1')
    assert (first.status, again.status, again.body) == (200, 200, first.body)
    assert first.body['status'] == 'cancelled'


def test_fetch_with_a_key_queues_one_download_and_answers_202_again(hub):
    add_attachment(hub)
    first = idempotency.fetch_attachment(hub, '31337', None, key='fetch-1')
    command = claim(hub)['command']
    report(hub, command['id'], status='failed', error='Jira: 500')  # a plain retry would queue anew
    again = idempotency.fetch_attachment(hub, '31337', {}, key='fetch-1')
    assert (first.status, first.body['state']) == (202, 'fetching')
    assert (again.status, again.body, again.replayed) == (202, first.body, True)
    assert batch_count(hub) == 1
    assert idempotency.fetch_attachment(hub, '31337', None).status == 202  # no key: done again


def test_retry_with_a_key_queues_one_retry(hub):
    batch = make_batch(hub, comment())
    report(hub, claim(hub)['command']['id'], status='failed', error='x')
    first = idempotency.retry_batch(hub, batch['id'], {'author': 'ivanov'}, key='retry-1')
    again = idempotency.retry_batch(hub, batch['id'], {'author': 'ivanov'}, key='retry-1')
    assert (first.status, again.body) == (201, first.body)
    assert first.body['retry_of'] == batch['id']
    assert len([item for item in queue.batches(hub)['items'] if item['retry_of']]) == 1


def test_concurrent_requests_with_one_key_queue_exactly_one_batch(hub):
    threads_count = 8
    barrier = threading.Barrier(threads_count)
    answers, errors = [], []

    def send():
        barrier.wait()
        try:
            answers.append(idempotency.queue_batch(hub, BODY, key='together'))
        except Exception as error:  # noqa: BLE001 — reported below
            errors.append(error)
        finally:
            hub.close()

    threads = [threading.Thread(target=send) for _ in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert batch_count(hub) == 1
    assert len(answers) == threads_count
    assert all(answer.body == answers[0].body for answer in answers)
    assert answers[0].body['id'] == batches.batches(hub)['items'][0]['id']
    assert sorted(answer.replayed for answer in answers) == [False] + [True] * (threads_count - 1)


@pytest.mark.parametrize('first, second', [('aurora-1', 'AURORA-1'), ('AURORA-1', 'Aurora-1')])
def test_one_note_under_two_spellings_of_its_key_is_one_request(hub, clock, first, second):
    """Issue 30: the request's identity is the canonical key (``lookup_key``), as the note's is;
    the second spelling is a replay, not a false 422 «ключ уже использован»."""
    body = {'work_kind': 'Аналитика', 'updated_by': 'ivanov'}
    answer = idempotency.put_note(hub, first, body, key='note-case')
    clock.advance(minutes=1)
    again = idempotency.put_note(hub, second, body, key='note-case')
    assert (again.status, again.body, again.replayed) == (200, answer.body, True)
    assert answer.body['key'] == 'AURORA-1'
    with pytest.raises(ValidationError):  # another note under the same key is still refused
        idempotency.put_note(hub, 'AURORA-2', body, key='note-case')
