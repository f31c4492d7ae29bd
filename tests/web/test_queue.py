"""HTTP: batches, commands, claim/report and agents (contract §9)."""
from __future__ import annotations

import pytest


@pytest.fixture
def hub(hub, queue_settings):
    return queue_settings(hub)


BATCH = {'title': 'Завести задачи', 'author': 'ivanov', 'project': 'AWPCA', 'commands': [
    {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'summary': 'Новая', 'temp_key': 'new:1'}},
    {'type': 'ensure_link', 'depends_on': 1,
     'params': {'source_key': 'new:1', 'target_key': 'AURORA-2', 'link_type': 'blocks'}}]}


def post_batch(client, client_headers, body=BATCH):
    return client.simulate_post('/batches', json=body, headers=client_headers)


def claim(client, agent_headers, agent='jira'):
    return client.simulate_post('/agent/claim', headers=agent_headers, json={
        'agent': agent, 'agent_version': '15', 'settings_version': 2,
        'last_jira_call_at': '2026-11-30T09:59:00+00:00'})


def report(client, agent_headers, command_id, **body):
    body = {'agent': 'jira', 'status': 'done', 'result': None, 'error': None, 'jira_calls': 1,
            'rate_limited': 0, **body}
    return client.simulate_post(f'/agent/commands/{command_id}/report', headers=agent_headers,
                                json=body)


def test_create_and_read_batch(client, client_headers):
    created = post_batch(client, client_headers)
    assert created.status_code == 201
    batch = created.json
    assert (batch['status'], batch['estimate_seconds'], batch['counts']['queued']) == ('queued', 2, 2)
    assert batch['commands'][1]['depends_on'] == batch['commands'][0]['id']
    got = client.simulate_get(f'/batches/{batch["id"]}', headers=client_headers)
    assert got.status_code == 200 and got.json == batch
    command = client.simulate_get(f'/commands/{batch["commands"][0]["id"]}', headers=client_headers)
    assert command.json == batch['commands'][0]
    listed = client.simulate_get('/batches', params={'status': 'queued', 'project': 'AWPCA'},
                                 headers=client_headers)
    assert listed.json['next_cursor'] is None
    assert [item['id'] for item in listed.json['items']] == [batch['id']]


def test_invalid_batch_is_422_naming_command_and_field(client, client_headers):
    body = {**BATCH, 'commands': [BATCH['commands'][0],
                                  {'type': 'ensure_issue', 'params': {'issue_type': 'bug'}}]}
    answer = post_batch(client, client_headers, body)
    assert answer.status_code == 422
    assert set(answer.json['fields']) == {'commands[1].params.issue_type',
                                         'commands[1].params.summary'}
    assert client.simulate_get('/batches', headers=client_headers).json['items'] == []


@pytest.mark.parametrize('method, path, expected', [
    ('GET', '/batches/999', 404), ('POST', '/batches/999/cancel', 404), ('GET', '/commands/999', 404),
    ('GET', '/commands/abc', 404), ('GET', '/batches?limit=0', 422), ('GET', '/batches?status=x', 422),
    ('GET', '/batches/abc', 404), ('GET', '/batches/0', 404), ('GET', '/batches/-1', 404),
    ('POST', '/batches/1.5/cancel', 404), ('GET', '/commands/99999999999999999999', 404),
    ('GET', '/commands/%D9%A1', 404), ('GET', '/batches?limit=abc', 422),
    ('GET', '/batches?limit=1001', 422), ('GET', '/batches?cursor=nope', 422),
])
def test_queue_errors(client, client_headers, method, path, expected):
    path, _, query = path.partition('?')
    answer = client.simulate_request(method, path, query_string=query, headers=client_headers)
    assert answer.status_code == expected
    assert 'title' in answer.json


def test_batch_body_must_be_object(client, client_headers):
    assert post_batch(client, client_headers, [1, 2]).status_code == 422


def test_unknown_batch_field_is_422_naming_it(client, client_headers):
    answer = post_batch(client, client_headers, {**BATCH, 'priority': 'high'})
    assert answer.status_code == 422 and list(answer.json['fields']) == ['priority']


def test_temp_key_no_earlier_command_creates_is_422(client, client_headers):
    body = {**BATCH, 'commands': [{'type': 'add_comment',
                                   'params': {'key': 'new:1', 'body': 'текст'}}]}
    answer = post_batch(client, client_headers, body)
    assert answer.status_code == 422
    assert list(answer.json['fields']) == ['commands[0].params.key']


def test_fetch_of_an_attachment_not_in_the_mirror_is_422_naming_the_field(client, client_headers):
    body = {**BATCH, 'commands': [{'type': 'fetch_attachment', 'params': {'attachment_id': '7'}}]}
    answer = post_batch(client, client_headers, body)
    assert answer.status_code == 422
    assert list(answer.json['fields']) == ['commands[0].params.attachment_id']
    assert client.simulate_get('/batches', headers=client_headers).json['items'] == []


def test_claim_report_cycle_and_cancel(client, client_headers, agent_headers):
    batch = post_batch(client, client_headers).json
    first = claim(client, agent_headers).json
    assert first['settings_version'] == 2
    delivery = first['command']
    assert (delivery['id'], delivery['deliveries'], delivery['pause_seconds']) == \
        (batch['commands'][0]['id'], 1, 0)
    done = report(client, agent_headers, delivery['id'], result={'key': 'AURORA-1640'})
    assert done.status_code == 200 and done.json['late'] is False and done.json['status'] == 'done'
    link = claim(client, agent_headers).json['command']
    assert link['params']['source_key'] == 'AURORA-1640'
    cancelled = client.simulate_post(f'/batches/{batch["id"]}/cancel', headers=client_headers)
    assert cancelled.status_code == 200 and cancelled.json['status'] == 'running'
    report(client, agent_headers, link['id'])
    final = client.simulate_get(f'/batches/{batch["id"]}', headers=client_headers).json
    assert final['status'] == 'cancelled' and final['counts']['done'] == 2
    # read your writes (contract §9.4a): the hub's refresh of what the batch wrote comes next
    refresh = claim(client, agent_headers).json['command']
    assert (refresh['type'], refresh['params']) == ('refresh', {'keys': ['AURORA-2', 'AURORA-1640']})
    followup = client.simulate_get(f'/batches/{refresh["batch_id"]}', headers=client_headers).json
    assert (followup['title'], followup['author'], followup['project']) == (
        'Обновление после записи', 'hub', 'AWPCA')


def test_report_errors(client, client_headers, agent_headers):
    batch = post_batch(client, client_headers).json
    command_id = batch['commands'][0]['id']
    assert report(client, agent_headers, 999).status_code == 404
    assert report(client, agent_headers, 'abc').status_code == 404
    assert report(client, agent_headers, command_id).status_code == 409  # queued
    claim(client, agent_headers)
    bad = report(client, agent_headers, command_id, status='queued')
    assert bad.status_code == 422 and 'status' in bad.json['fields']
    assert claim(client, agent_headers).json['command']['deliveries'] == 2


def test_claim_validation_and_roles(client, client_headers, agent_headers):
    answer = client.simulate_post('/agent/claim', headers=agent_headers, json={'agent': 'x'})
    assert answer.status_code == 422 and 'agent' in answer.json['fields']
    assert client.simulate_post('/agent/claim', headers=client_headers,
                                json={'agent': 'jira'}).status_code == 403
    assert client.simulate_get('/agents', headers=agent_headers).status_code == 403
    assert client.simulate_post('/batches', headers=agent_headers, json=BATCH).status_code == 403


def test_scenario_agents_status_separately(client, client_headers, agent_headers, clock):
    """«Статусы агентов раздельно» over HTTP."""
    claim(client, agent_headers)
    clock.advance(minutes=1)
    items = client.simulate_get('/agents', headers=client_headers).json['items']
    by_agent = {item['agent']: item for item in items}
    assert by_agent['jira']['online'] is True
    assert by_agent['jira']['last_seen_at'] == '2026-11-30T10:00:00+00:00'
    assert by_agent['jira']['last_call_at'] == '2026-11-30T09:59:00+00:00'
    assert by_agent['wiki']['online'] is False and by_agent['wiki']['last_seen_at'] is None
    clock.advance(minutes=5)
    items = client.simulate_get('/agents', headers=client_headers).json['items']
    assert [item['online'] for item in items] == [False, False]


def test_queue_endpoints_in_openapi(client):
    paths = client.simulate_get('/openapi.json').json['paths']
    for path in ('/batches', '/batches/{batch_id}', '/batches/{batch_id}/cancel',
                 '/commands/{command_id}', '/agent/claim', '/agent/commands/{command_id}/report',
                 '/agents'):
        assert path in paths
