"""Endpoints whose body is optional (``POST /attachments/{id}/fetch``, ``POST
/batches/{id}/cancel``): no body is fine; a body, when present, is validated like every other —
malformed JSON 400, not an object or an unknown field 422 — and nothing is done."""
from __future__ import annotations

import pytest

from hublib import queue, settings

from .test_attachments import add_attachment, fetch_commands
from .test_errors import assert_error_shape


@pytest.fixture
def batch_id(hub):
    settings.update_settings(hub, {'project_key': 'AURORA'})
    return queue.create_batch(hub, title='t', commands=[
        {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'текст'}}])['id']


def post(client, headers, path, body):
    if body is None:
        return client.simulate_post(path, headers=headers)
    return client.simulate_post(path, headers={**headers, 'Content-Type': 'application/json'},
                                body=body)


@pytest.mark.parametrize('body, status, field', [
    ('{bad', 400, None), ('null', 422, '_body'), ('[]', 422, '_body'), ('"x"', 422, '_body'),
    ('{"autor": "ivanov"}', 422, 'autor'), ('{"author": 5}', 422, 'author')])
def test_fetch_with_a_bad_body_is_refused_and_enqueues_nothing(client, client_headers, hub, body,
                                                               status, field):
    add_attachment(hub)
    response = post(client, client_headers, '/attachments/31337/fetch', body)
    answer = assert_error_shape(response, status)
    if field:
        assert list(answer['fields']) == [field]
    assert fetch_commands(hub) == []


@pytest.mark.parametrize('body', [None, '', '{}', '{"author": "ivanov"}', '{"author": null}'])
def test_fetch_without_a_body_or_with_a_good_one_enqueues(client, client_headers, hub, body):
    add_attachment(hub)
    assert post(client, client_headers, '/attachments/31337/fetch', body).status_code == 202


@pytest.mark.parametrize('body, status, field', [
    ('{bad', 400, None), ('null', 422, '_body'), ('[]', 422, '_body'),
    ('{"reason": "x"}', 422, 'reason')])
def test_cancel_with_a_bad_body_is_refused_and_cancels_nothing(client, client_headers, hub,
                                                               batch_id, body, status, field):
    response = post(client, client_headers, f'/batches/{batch_id}/cancel', body)
    answer = assert_error_shape(response, status)
    if field:
        assert list(answer['fields']) == [field]
    assert queue.batch(hub, batch_id)['status'] == 'queued'


@pytest.mark.parametrize('body', [None, '', '{}'])
def test_cancel_without_a_body_or_with_an_empty_object_cancels(client, client_headers, hub,
                                                               batch_id, body):
    response = post(client, client_headers, f'/batches/{batch_id}/cancel', body)
    assert response.status_code == 200 and response.json['status'] == 'cancelled'


def test_the_document_says_both_bodies_are_optional(client):
    paths = client.simulate_get('/openapi.json').json['paths']
    for path in ('/attachments/{attachment_id}/fetch', '/batches/{batch_id}/cancel'):
        assert paths[path]['post']['requestBody']['required'] is False, path


@pytest.mark.parametrize('body, status', [('{bad', 400), ('null', 422), ('[]', 422)])
def test_retry_with_a_bad_body_is_refused(client, client_headers, batch_id, body, status):
    response = post(client, client_headers, f'/batches/{batch_id}/retry', body)
    assert_error_shape(response, status)
