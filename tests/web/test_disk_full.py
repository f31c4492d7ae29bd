"""A full disk (issue 10, point 8) is an expected condition: 507 «на диске нет места» in the error
shape without ``fields``, one WARNING line and no traceback, no second rollback, nothing of the
request written, ``/health`` saying so until a write commits. The disk is "full" at SQLite's
``PRAGMA max_page_count`` (per connection: the falcon TestClient runs requests on this thread)."""
from __future__ import annotations

import logging

from hubweb.demo.fake_jira import FakeJira
from tests.support.hubs import fill_disk, free_disk

from .test_errors import assert_error_shape


def keys_in_mirror(hub) -> set[str]:
    from hublib import reads
    return {item['key'] for item in reads.issues(hub, limit=1000)['items']}


def test_state_page_on_a_full_disk_is_507_one_warning_nothing_written_then_writes_resume(
        hub, client, agent_headers, claimed_refresh, caplog):
    command_id = claimed_refresh(hub, {'jql': 'project = AURORA'})
    jira = FakeJira(300, seed=1)
    keys = jira.all_keys()
    first, second = jira.issues(keys[:50]), jira.issues(keys[50:150])

    def post(issues):
        return client.simulate_post('/agent/state', headers=agent_headers, json={
            'agent': 'jira', 'command_id': command_id, 'issues': issues})
    assert post(first).status_code == 200
    fill_disk(hub)
    connection = hub.db.connection()
    doomed_rollbacks = []  # a ROLLBACK sent when no transaction is open fails: the old bug
    connection.set_trace_callback(lambda sql: doomed_rollbacks.append(sql) if sql.startswith(
        'ROLLBACK') and not connection.in_transaction else None)
    caplog.clear()
    with caplog.at_level(logging.INFO):
        response = post(second)
    body = assert_error_shape(response, 507)
    assert body['title'] == 'Нет места на диске' and 'на диске нет места' in body['description']
    warnings = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert [(record.levelname, record.exc_info) for record in warnings] == [('WARNING', None)]
    assert 'POST /agent/state' in warnings[0].getMessage()
    assert 'Traceback' not in caplog.text and 'cannot rollback' not in caplog.text
    assert doomed_rollbacks == []
    assert not connection.in_transaction and not hub.db.in_transaction()
    assert hub.db.execute_sql('PRAGMA integrity_check').fetchone()[0] == 'ok'
    assert keys_in_mirror(hub) == set(keys[:50])  # the acknowledged page, nothing of the refused
    health = client.simulate_get('/health').json
    assert health == {'status': 'ok', 'schema_version': 9, 'storage': 'full',
                      'storage_full_since': hub.now()}
    assert post(second).status_code == 507  # still full: still refused, still nothing written
    connection.set_trace_callback(None)

    free_disk(hub)
    assert post(second).status_code == 200
    assert keys_in_mirror(hub) == set(keys[:150])
    assert client.simulate_get('/health').json == {'status': 'ok', 'schema_version': 9}


def test_a_note_on_a_full_disk_is_507_and_is_written_once_space_returns(hub, client, client_headers):
    fill_disk(hub)
    note = {'owner_note': 'заметка ' * 2000, 'updated_by': 'ivanov'}
    response = client.simulate_put('/notes/AURORA-1', headers=client_headers, json=note)
    assert_error_shape(response, 507)
    free_disk(hub)
    assert client.simulate_put('/notes/AURORA-1', headers=client_headers, json=note).status_code == 200
