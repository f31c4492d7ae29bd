"""Nothing twice over MCP (contract §9.4b, §14a): ``next_temp_key``, ``retry_batch`` and
``idempotency_key`` on the writes — a key shared with the HTTP API's ``Idempotency-Key`` of the
client role."""
from __future__ import annotations

import pytest

from hublib import queue

from .conftest import body
from .test_tools import FAILED_BATCH, NEW_BATCH, HttpTwin

pytestmark = pytest.mark.anyio


@pytest.fixture
def http(filled):
    return HttpTwin(filled)


def batch_count(hub) -> int:
    return len(queue.batches(hub, limit=1000)['items'])


async def test_next_temp_key_is_get_temp_keys_next(client, http):
    result = (await client.call_tool('next_temp_key', {})).structured_content
    assert result == http('/temp-keys/next')[1]
    assert result['temp_key'] == 'new:1'


async def test_retry_batch_queues_the_failed_commands_again(client, http):
    result = await client.call_tool('retry_batch', {'batch_id': FAILED_BATCH, 'author': 'ivanov'})
    assert not result.is_error, result.content
    batch = result.structured_content
    assert batch == http(f'/batches/{batch["id"]}')[1]
    assert batch['retry_of'] == FAILED_BATCH and batch['title'] == 'Повтор: Переход'
    assert [command['type'] for command in batch['commands']] == ['transition']
    nothing = await client.call_tool('retry_batch', {'batch_id': 2, 'author': 'ivanov'})
    assert nothing.is_error and body(nothing)['title'] == 'Конфликт'
    twice = await client.call_tool('retry_batch', {'batch_id': FAILED_BATCH, 'author': 'ivanov'})
    assert twice.is_error and body(twice)['title'] == 'Конфликт'
    assert f'уже повторён пакетом #{batch["id"]}' in body(twice)['description']
    assert http(f'/batches/{FAILED_BATCH}')[1]['retried_by'] == batch['id']


async def test_a_retried_queue_batch_with_its_key_queues_one_batch(client, filled):
    before = batch_count(filled)
    first = await client.call_tool('queue_batch', {**NEW_BATCH, 'idempotency_key': 'assist-1'})
    again = await client.call_tool('queue_batch', {**NEW_BATCH, 'idempotency_key': 'assist-1'})
    assert first.structured_content == again.structured_content
    assert first.structured_content['dry_run'] is False
    assert batch_count(filled) == before + 1
    other = await client.call_tool('queue_batch', {**NEW_BATCH, 'title': 'Другой',
                                                   'idempotency_key': 'assist-1'})
    assert body(other)['fields'] == {
        'idempotency_key': ['ключ идемпотентности уже использован для другого запроса']}
    assert batch_count(filled) == before + 1


async def test_a_key_is_shared_with_the_http_api(client, http, filled):
    response = http.client.simulate_post('/batches', json=NEW_BATCH, headers={
        **http.headers, 'Idempotency-Key': 'shared-key'})
    assert response.status_code == 201
    sent = response.json
    count = batch_count(filled)
    replay = await client.call_tool('queue_batch', {**NEW_BATCH,
                                                    'idempotency_key': 'shared-key'})
    assert replay.structured_content == {**sent, 'dry_run': False}
    assert batch_count(filled) == count


@pytest.mark.parametrize('tool, arguments', [
    ('put_note', {'key': 'AURORA-3', 'updated_by': 'ivanov', 'owner_note': 'проверить'}),
    ('cancel_batch', {'batch_id': None}),  # a batch queued here (a finished one is a 409)
    ('fetch_attachment', {'attachment_id': '2'}),
    ('retry_batch', {'batch_id': FAILED_BATCH, 'author': 'ivanov'}),
])
async def test_every_keyed_write_answers_the_same_twice(client, filled, tool, arguments):
    if arguments.get('batch_id', 0) is None:
        arguments = {'batch_id': queue.create_batch(filled, **NEW_BATCH)['id']}
    first = await client.call_tool(tool, {**arguments, 'idempotency_key': 'k-1'})
    assert not first.is_error, first.content
    before = batch_count(filled)
    again = await client.call_tool(tool, {**arguments, 'idempotency_key': 'k-1'})
    assert again.structured_content == first.structured_content
    assert batch_count(filled) == before


@pytest.mark.parametrize('key', ['', ' k', 'ключ', 'x' * 201])
async def test_a_malformed_key_is_refused_naming_the_argument(client, key):
    result = await client.call_tool('put_note', {'key': 'AURORA-3', 'updated_by': 'ivanov',
                                                 'idempotency_key': key})
    assert result.is_error is True
    assert list(body(result)['fields']) == ['idempotency_key']
