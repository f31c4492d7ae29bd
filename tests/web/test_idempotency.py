"""HTTP: the ``Idempotency-Key`` header on the writes that take it (contract §9.4b), the temp key
endpoint, retry and ``dry_run`` in ``POST /batches``."""
from __future__ import annotations

import json

import pytest

from hublib import idempotency
from tests.support.queue import claim, comment, ensure, make_batch, report, run_queue

BATCH = {'title': 'Завести задачи', 'author': 'ivanov', 'project': 'AWPCA', 'commands': [
    {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'summary': 'Новая', 'temp_key': 'new:1'}},
    {'type': 'add_comment', 'depends_on': 1, 'params': {'key': 'new:1', 'body': 'текст'}}]}


@pytest.fixture
def hub(hub, queue_settings):
    return queue_settings(hub)


@pytest.fixture
def attachment(hub):
    with hub.write():
        hub.db.execute_sql(
            'INSERT INTO issue_attachment (attachment_id, key, filename, size, created_at) '
            "VALUES ('31337', 'AURORA-1', 'a.txt', 5, ?)", (hub.now(),))
    return '31337'


def keyed(headers, key):
    return {**headers, 'Idempotency-Key': key}


def count(hub, table):
    return hub.db.execute_sql(f'SELECT count(*) FROM {table}').fetchone()[0]


# (name, request maker: (client, headers, hub) -> response, the status of the first answer)
def _post_batch(client, headers, hub, body=BATCH):
    return client.simulate_post('/batches', json=body, headers=headers)


def _put_note(client, headers, hub, text='Аналитика'):
    return client.simulate_put('/notes/new:1', json={'work_kind': text, 'updated_by': 'ivanov'},
                               headers=headers)


def _cancel(client, headers, hub):
    return client.simulate_post('/batches/1/cancel', headers=headers)


def _fetch(client, headers, hub):
    return client.simulate_post('/attachments/31337/fetch', headers=headers)


def _retry(client, headers, hub):
    return client.simulate_post('/batches/1/retry', json={'author': 'ivanov'}, headers=headers)


ENDPOINTS = {'POST /batches': (_post_batch, 201), 'PUT /notes/{key}': (_put_note, 200),
             'POST /batches/{id}/cancel': (_cancel, 200),
             'POST /attachments/{id}/fetch': (_fetch, 202),
             'POST /batches/{id}/retry': (_retry, 201)}


def prepare(hub, name):
    """What each write needs to exist first: a batch to cancel, a failed one to retry."""
    if name == 'POST /batches/{id}/cancel':
        make_batch(hub, comment())
    if name == 'POST /batches/{id}/retry':
        make_batch(hub, comment())
        run_queue(hub, {1: ('failed', None)})


def state(hub):
    """Everything a write could have changed."""
    return {table: hub.db.execute_sql(f'SELECT * FROM {table} ORDER BY 1').fetchall()
            for table in ('batch', 'command', 'issue_note')}


@pytest.mark.parametrize('name', ENDPOINTS)
def test_each_write_with_the_same_key_twice_is_done_once_with_the_same_status_and_body(
        name, hub, client, client_headers, clock, attachment):
    send, status = ENDPOINTS[name]
    prepare(hub, name)
    first = send(client, keyed(client_headers, 'one-click'), hub)
    assert first.status_code == status, first.json
    assert first.headers.get('Idempotent-Replayed') is None
    after_first = state(hub)
    clock.advance(minutes=3)
    again = send(client, keyed(client_headers, 'one-click'), hub)
    assert (again.status_code, again.json) == (status, first.json)
    assert again.headers['Idempotent-Replayed'] == 'true'
    assert state(hub) == after_first


@pytest.mark.parametrize('name', ENDPOINTS)
@pytest.mark.parametrize('key', ['', ' ', 'x' * 201, 'ключ'.encode().decode('latin-1')])
def test_each_write_refuses_a_malformed_key_naming_the_header(name, key, hub, client,
                                                              client_headers, attachment):
    send, _ = ENDPOINTS[name]
    prepare(hub, name)
    before = state(hub)
    answer = send(client, keyed(client_headers, key), hub)
    assert answer.status_code == 422
    assert list(answer.json['fields']) == ['Idempotency-Key']
    assert state(hub) == before


def test_the_same_key_with_another_body_is_422_and_creates_nothing(hub, client, client_headers):
    assert _post_batch(client, keyed(client_headers, 'k'), hub).status_code == 201
    other = _post_batch(client, keyed(client_headers, 'k'), hub, {**BATCH, 'title': 'Другое'})
    assert other.status_code == 422
    assert other.json['fields'] == {'Idempotency-Key': [
        'ключ идемпотентности уже использован для другого запроса']}
    assert count(hub, 'batch') == 1
    assert _put_note(client, keyed(client_headers, 'k'), hub).status_code == 422
    assert count(hub, 'issue_note') == 0


def test_a_refused_write_leaves_the_key_for_the_corrected_one(hub, client, client_headers):
    wrong = {**BATCH, 'title': ' '}
    refused = _post_batch(client, keyed(client_headers, 'form'), hub, wrong)
    assert refused.status_code == 422 and 'title' in refused.json['fields']
    assert _post_batch(client, keyed(client_headers, 'form'), hub).status_code == 201


def test_the_http_and_the_library_road_share_a_key(hub, client, client_headers):
    """The MCP tools call hublib.idempotency with the request HTTP would send: one key, one batch."""
    answer = idempotency.queue_batch(hub, json.loads(json.dumps(BATCH)), key='shared')
    replay = _post_batch(client, keyed(client_headers, 'shared'), hub)
    assert (replay.status_code, replay.json) == (201, answer.body)
    cancelled = idempotency.cancel_batch(hub, answer.body['id'], key='cancel')
    assert client.simulate_post(f'/batches/{answer.body["id"]:03d}/cancel',
                                headers=keyed(client_headers, 'cancel')).json == cancelled.body
    assert count(hub, 'batch') == 1


def test_openapi_declares_the_header_on_the_keyed_writes(client):
    paths = client.simulate_get('/openapi.json').json['paths']
    keyed_operations = {(path, method) for path, item in paths.items()
                        for method, operation in item.items()
                        if any(parameter.get('in') == 'header'
                               and parameter['name'] == 'Idempotency-Key'
                               for parameter in operation.get('parameters', []))}
    assert keyed_operations == {
        ('/batches', 'post'), ('/notes/{key}', 'put'), ('/batches/{batch_id}/cancel', 'post'),
        ('/attachments/{attachment_id}/fetch', 'post'), ('/batches/{batch_id}/retry', 'post')}
    header = next(parameter for parameter in paths['/batches']['post']['parameters']
                  if parameter['in'] == 'header')
    assert header['schema'] == {'type': 'string', 'minLength': 1, 'maxLength': 200,
                                'pattern': idempotency.KEY_PATTERN}
    assert 'Idempotent-Replayed' in paths['/batches']['post']['responses']['201']['headers']


# --- temp keys ----------------------------------------------------------------------------------

def test_a_second_batch_with_a_taken_temp_key_is_422_naming_the_batch(hub, client, client_headers):
    first = _post_batch(client, client_headers, hub).json
    second = _post_batch(client, client_headers, hub)
    assert second.status_code == 422
    assert second.json['fields'] == {
        'commands[0].params.temp_key': [f'временный ключ new:1 уже занят пакетом {first["id"]}']}
    assert count(hub, 'batch') == 1


def test_get_temp_keys_next(hub, client, client_headers, agent_headers):
    assert client.simulate_get('/temp-keys/next', headers=client_headers).json == {
        'temp_key': 'new:1', 'temp_keys': ['new:1']}
    _post_batch(client, client_headers, hub)
    _put_note(client, client_headers, hub)  # new:1: owned and noted
    client.simulate_put('/notes/new:2', json={'owner_note': 'x', 'updated_by': 'y'},
                        headers=client_headers)
    answer = client.simulate_get('/temp-keys/next', params={'count': '2'}, headers=client_headers)
    assert answer.json == {'temp_key': 'new:3', 'temp_keys': ['new:3', 'new:4']}
    assert client.simulate_get('/temp-keys/next', params={'count': 'x'},
                               headers=client_headers).status_code == 422
    assert client.simulate_get('/temp-keys/next', params={'who': '1'},
                               headers=client_headers).status_code == 422
    assert client.simulate_get('/temp-keys/next', headers=agent_headers).status_code == 403


def test_a_note_key_in_any_case_is_one_request_over_http(client, client_headers, hub):
    """Issue 30: ``PUT /notes/aurora-1`` then ``/notes/AURORA-1`` under one key is a replay of the
    first answer (one note), not a false 422."""
    body = {'work_kind': 'Аналитика', 'updated_by': 'ivanov'}
    first = client.simulate_put('/notes/aurora-1', json=body, headers=keyed(client_headers, 'n-1'))
    again = client.simulate_put('/notes/AURORA-1', json=body, headers=keyed(client_headers, 'n-1'))
    assert (first.status_code, again.status_code) == (200, 200), again.json
    assert again.json == first.json and again.headers.get('idempotent-replayed') == 'true'
    assert count(hub, 'idempotent_request') == 1


# --- retry ----------------------------------------------------------------------------------------

def test_retry_over_http(hub, client, client_headers):
    original = make_batch(hub, ensure('new:1'), comment('new:1', depends_on=1), comment('AURORA-2'),
                          title='Работа')
    run_queue(hub, {1: ('failed', None)})
    created = client.simulate_post(f'/batches/{original["id"]}/retry', json={'author': 'petrov'},
                                   headers=client_headers)
    assert created.status_code == 201, created.json
    retry = created.json
    assert (retry['title'], retry['author'], retry['retry_of']) == (
        'Повтор: Работа', 'petrov', original['id'])
    assert [command['type'] for command in retry['commands']] == ['ensure_issue', 'add_comment']
    assert retry['commands'][1]['depends_on'] == retry['commands'][0]['id']
    got = client.simulate_get(f'/batches/{retry["id"]}', headers=client_headers).json
    assert got == retry
    # a batch is retried once: a second retry is a 409 naming the first, while it runs ...
    again = client.simulate_post(f'/batches/{original["id"]}/retry', headers=client_headers)
    assert again.status_code == 409
    assert f'уже повторён пакетом #{retry["id"]}, и повтор ещё выполняется' in \
        again.json['description']
    assert client.simulate_get(f'/batches/{original["id"]}',
                               headers=client_headers).json['retried_by'] == retry['id']
    run_queue(hub, {1: ('failed', None)})
    # ... and when the retry failed too, the request retries the retry (an empty body is fine:
    # the author is optional)
    second = client.simulate_post(f'/batches/{original["id"]}/retry', headers=client_headers)
    assert second.status_code == 201, second.json
    assert second.json['retry_of'] == retry['id']


def test_retry_is_409_when_nothing_failed_or_still_running_and_404_for_no_batch(
        hub, client, client_headers):
    done = make_batch(hub, comment())
    run_queue(hub)
    running = make_batch(hub, comment(), comment('AURORA-2'))
    report(hub, claim(hub)['command']['id'], status='failed', error='x')
    for batch_id, status in ((done['id'], 409), (running['id'], 409), (999, 404), ('x', 404)):
        answer = client.simulate_post(f'/batches/{batch_id}/retry', json={},
                                      headers=client_headers)
        assert answer.status_code == status, (batch_id, answer.json)
    assert client.simulate_post(f'/batches/{done["id"]}/retry', json={'who': 1},
                                headers=client_headers).status_code == 422


# --- dry run ----------------------------------------------------------------------------------------

def test_dry_run_answers_200_with_the_preview_and_stores_nothing(hub, client, client_headers):
    before = state(hub)
    answer = _post_batch(client, keyed(client_headers, 'preview'), hub,
                         {**BATCH, 'dry_run': True})
    assert answer.status_code == 200, answer.json
    preview = answer.json
    assert (preview['dry_run'], preview['id'], preview['status'], preview['retry_of']) == (
        True, None, 'queued', None)
    assert [command['depends_on'] for command in preview['commands']] == [None, 1]
    assert state(hub) == before and count(hub, 'idempotent_request') == 0
    refused = _post_batch(client, client_headers, hub, {**BATCH, 'dry_run': 'yes'})
    assert refused.status_code == 422 and list(refused.json['fields']) == ['dry_run']
    real = _post_batch(client, client_headers, hub, {**BATCH, 'dry_run': False})
    assert real.status_code == 201 and 'dry_run' not in real.json


def test_dry_run_shows_the_errors_a_real_post_would_give(hub, client, client_headers):
    _post_batch(client, client_headers, hub)
    answer = _post_batch(client, client_headers, hub, {**BATCH, 'dry_run': True})
    assert answer.status_code == 422
    assert list(answer.json['fields']) == ['commands[0].params.temp_key']
