"""``GET /sync-runs`` rows stay small (``query`` cut to 200 characters, ``query_truncated``);
``GET /sync-runs/{id}`` gives one run with the whole query; a refresh of more than 10,000 keys is a
422; the document says so (``maxItems``, the new path)."""
from __future__ import annotations

from hublib import queue, settings

from .test_errors import assert_error_shape


def test_sync_run_list_is_small_and_the_single_run_is_whole(hub, client, client_headers):
    settings.update_settings(hub, {'project_key': 'AURORA'})
    jql = 'project = AURORA AND summary ~ "' + 'ж' * 500 + '"'
    queue.create_batch(hub, title='t', commands=[{'type': 'refresh', 'params': {'jql': jql}}])
    command = queue.claim_command(hub, agent='jira')['command']
    [run] = client.simulate_get('/sync-runs', headers=client_headers).json['items']
    assert (run['query'], run['query_truncated']) == (jql[:200], True)
    single = client.simulate_get(f'/sync-runs/{run["id"]}', headers=client_headers)
    assert single.status_code == 200
    assert (single.json['query'], single.json['command_id']) == (jql, command['id'])
    assert_error_shape(client.simulate_get('/sync-runs/999', headers=client_headers), 404)
    assert_error_shape(client.simulate_get('/sync-runs/abc', headers=client_headers), 404)


def test_refresh_of_too_many_keys_is_422_and_documented(client, client_headers):
    keys = [f'AURORA-{n}' for n in range(1, 10002)]
    response = client.simulate_post('/batches', headers=client_headers, json={
        'title': 't', 'commands': [{'type': 'refresh', 'params': {'keys': keys}}]})
    assert list(assert_error_shape(response, 422)['fields']) == ['commands[0].params.keys']
    document = client.simulate_get('/openapi.json').json
    refresh = document['components']['schemas']['RefreshParams']
    assert refresh['properties']['keys']['maxItems'] == 10000
    assert '/sync-runs/{run_id}' in document['paths']
    assert 'query_truncated' in document['components']['schemas']['SyncRun']['properties']
