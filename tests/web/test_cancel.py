"""``POST /batches/{id}/cancel`` of a finished batch: 409 «пакет уже завершён», nothing changed
(contract §15a); the rule itself: ``tests/lib/test_cancel.py``."""
from __future__ import annotations

from hublib import queue, settings

from .test_errors import assert_error_shape


def test_cancel_of_a_finished_batch_is_409(hub, client, client_headers):
    settings.update_settings(hub, {'project_key': 'AURORA'})
    made = queue.create_batch(hub, title='t', commands=[
        {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'текст'}}])
    command = queue.claim_command(hub, agent='jira')['command']
    queue.report_command(hub, command['id'], agent='jira', status='done')
    before = client.simulate_get(f'/batches/{made["id"]}', headers=client_headers).json
    response = client.simulate_post(f'/batches/{made["id"]}/cancel', headers=client_headers)
    body = assert_error_shape(response, 409)
    assert body['description'] == 'пакет уже завершён'
    assert client.simulate_get(f'/batches/{made["id"]}', headers=client_headers).json == before
