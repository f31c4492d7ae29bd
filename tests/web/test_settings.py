"""Settings over HTTP (spec «Настройки», contract §6): every scenario with an HTTP face."""
from __future__ import annotations

import pytest
from falcon import testing

from hublib import open_hub, settings
from tests.support.legacy import create_legacy_database
from hubweb import create_app

AGENT_KEYS = {'project_key', 'field_ids', 'issue_types', 'priority_map', 'link_types', 'pacing',
              'settings_version', 'base_jql', 'projects'}
NEVER_TO_AGENT = {'relay_dir', 'closed_statuses', 'tokens', 'backup_keep', 'auto_refresh_minutes',
                  'status_labels', 'transitions_map', 'schema_version'}
BASE_JQL_MESSAGE = 'базовая JQL собирается из проектов'


def version(client, client_headers) -> int:
    return client.simulate_get('/settings', headers=client_headers).json['settings_version']


@pytest.fixture
def legacy_client(data_dir, clock):
    """Open a legacy database built from the frozen DDL; yields a TestClient factory."""
    hubs = []

    def build(schema_version: int, stored: dict):
        data_dir.mkdir(parents=True, exist_ok=True)
        create_legacy_database(data_dir / 'hub.sqlite', schema_version, settings=stored)
        hub = open_hub(data_dir, clock=clock)
        hubs.append(hub)
        tokens = settings.tokens(hub)
        return (testing.TestClient(create_app(hub)),
                {'Authorization': f'Bearer {tokens["client"]}'},
                {'Authorization': f'Bearer {tokens["agent"]}'})
    yield build
    for hub in hubs:
        hub.close()


def test_get_settings_hides_tokens_and_schema_version(client, client_headers):
    body = client.simulate_get('/settings', headers=client_headers).json
    assert 'tokens' not in body and 'schema_version' not in body
    assert body['settings_version'] == 1
    assert body['base_jql'] is None
    assert body['relay_dir'] is None
    assert body['backup_keep'] == 14 and body['auto_refresh_minutes'] == 0
    assert body['pacing'] == {'interval_ms': 500, 'pause_on_rate_limit_seconds': 60}


def test_scenario_settings_change_raises_version(client, client_headers, agent_headers):
    before = version(client, client_headers)
    response = client.simulate_put('/settings', headers=client_headers,
                                   json={'pacing': {'interval_ms': 800}})
    assert response.status_code == 200
    assert response.json['settings_version'] == before + 1
    assert response.json['pacing'] == {'interval_ms': 800, 'pause_on_rate_limit_seconds': 60}
    agent = client.simulate_get('/agent/settings', params={'agent': 'jira'}, headers=agent_headers)
    assert agent.json['settings_version'] == before + 1
    assert agent.json['pacing']['interval_ms'] == 800


def test_scenario_settings_change_raises_version_and_claim_hands_it_out(
        client, client_headers, agent_headers):
    before = version(client, client_headers)
    client.simulate_put('/settings', headers=client_headers, json={'pacing': {'interval_ms': 900}})
    claim = client.simulate_post('/agent/claim', headers=agent_headers,
                                 json={'agent': 'jira', 'agent_version': '15',
                                       'settings_version': before, 'last_jira_call_at': None})
    assert claim.status_code == 200, claim.text
    assert claim.json['settings_version'] == before + 1


def test_version_bumps_once_per_changing_put_and_never_for_a_no_op(client, client_headers):
    start = version(client, client_headers)
    change = {'backup_keep': 7, 'auto_refresh_minutes': 15, 'closed_statuses': ['Готово']}
    assert client.simulate_put('/settings', headers=client_headers,
                               json=change).json['settings_version'] == start + 1
    # the same values again: nothing changed, no bump
    assert client.simulate_put('/settings', headers=client_headers,
                               json=change).json['settings_version'] == start + 1
    assert client.simulate_put('/settings', headers=client_headers,
                               json={}).json['settings_version'] == start + 1
    # one key of three changed: one bump
    change['backup_keep'] = 8
    assert client.simulate_put('/settings', headers=client_headers,
                               json=change).json['settings_version'] == start + 2
    assert version(client, client_headers) == start + 2


@pytest.mark.parametrize('relay_dir', ['rshb/jira-bridge', '', 'relay', 42, ['/x'], {'a': 1}, True])
def test_scenario_wrong_relay_dir(client, client_headers, relay_dir):
    before = client.simulate_get('/settings', headers=client_headers).json
    response = client.simulate_put('/settings', headers=client_headers,
                                   json={'relay_dir': relay_dir, 'backup_keep': 3})
    assert response.status_code == 422
    assert list(response.json['fields']) == ['relay_dir']
    after = client.simulate_get('/settings', headers=client_headers).json
    assert after == before  # nothing written, not even the valid backup_keep


@pytest.mark.parametrize('relay_dir', ['/srv/relay', 'C:\\relay', '\\\\server\\share\\relay', None])
def test_absolute_relay_dir_or_null_is_accepted(client, client_headers, relay_dir):
    response = client.simulate_put('/settings', headers=client_headers, json={'relay_dir': relay_dir})
    assert response.status_code == 200
    assert response.json['relay_dir'] == relay_dir


@pytest.mark.parametrize('key', ['base_jql', 'board_id'])
def test_scenario_writing_base_jql(client, client_headers, key):
    before = version(client, client_headers)
    value = 'project = AURORA' if key == 'base_jql' else 4216
    response = client.simulate_put('/settings', headers=client_headers, json={key: value})
    assert response.status_code == 422
    assert response.json['description'] == BASE_JQL_MESSAGE
    assert response.json['fields'] == {key: [BASE_JQL_MESSAGE]}
    assert version(client, client_headers) == before


@pytest.mark.parametrize('key, value', [('settings_version', 99), ('schema_version', 10),
                                        ('tokens', {'agent': 'a', 'client': 'c'}),
                                        ('no_such_key', 1), ('closed_statuses', 'Готово'),
                                        ('closed_statuses', [1, 2]), ('backup_keep', 0),
                                        ('backup_keep', True), ('auto_refresh_minutes', -1),
                                        ('pacing', {'interval_ms': -5}), ('pacing', []),
                                        ('project_key', 'aurora'), ('field_ids', {'x': 'y'})])
def test_bad_or_read_only_key_is_422_and_nothing_written(client, client_headers, tokens, key, value):
    before = client.simulate_get('/settings', headers=client_headers).json
    response = client.simulate_put('/settings', headers=client_headers, json={key: value})
    assert response.status_code == 422
    assert key in response.json['fields']
    assert client.simulate_get('/settings', headers=client_headers).json == before
    assert client.simulate_get('/settings', headers=client_headers).status_code == 200  # tokens kept


@pytest.mark.parametrize('raw', ['[]', '"x"', '1', 'null', '[{"backup_keep": 3}]'])
def test_put_body_must_be_an_object(client, client_headers, raw):
    response = client.simulate_put('/settings', headers=client_headers, body=raw)
    assert response.status_code == 422
    assert '_body' in response.json['fields']


def test_scenario_closed_statuses_default(legacy_client):
    # a v8 file predates closed_statuses: opening the hub adds the default
    client, client_headers, agent_headers = legacy_client(8, {'settings_version': 5,
                                                              'project_key': 'AURORA'})
    body = client.simulate_get('/settings', headers=client_headers).json
    assert body['closed_statuses'] == ['Готово', 'Снято']
    assert body['settings_version'] == 5
    agent = client.simulate_get('/agent/settings', params={'agent': 'jira'}, headers=agent_headers)
    assert 'closed_statuses' not in agent.json


def test_scenario_creating_project_keeps_settings_version(client, client_headers):
    client.simulate_put('/settings', headers=client_headers, json={'project_key': 'AURORA'})
    client.simulate_post('/projects', headers=client_headers, json={'label': 'AWPCA', 'name': 'АРМ КА'})
    before = version(client, client_headers)
    response = client.simulate_post('/projects', headers=client_headers,
                                    json={'label': 'STOCKS_DRRK', 'name': 'Склады ДРРК'})
    assert response.status_code == 201
    body = client.simulate_get('/settings', headers=client_headers).json
    assert body['settings_version'] == before
    assert body['base_jql'] == 'project = AURORA AND labels in ("AWPCA", "STOCKS_DRRK")'


@pytest.mark.parametrize('scenario', ['no_status_keys', 'keys_returned_by_old_process'])
def test_scenario_no_status_keys(legacy_client, scenario):
    # «Ключей статуса по факту нет» / «Ключи вернул процесс прежней версии»: a v8 file where an
    # old process wrote the retired keys back; opening the hub removes them without a bump
    client, client_headers, agent_headers = legacy_client(
        8, {'settings_version': 7, 'status_labels': {}, 'transitions_map': {}})
    body = client.simulate_get('/settings', headers=client_headers).json
    assert 'status_labels' not in body and 'transitions_map' not in body
    assert body['settings_version'] == 7
    agent = client.simulate_get('/agent/settings', params={'agent': 'jira'}, headers=agent_headers)
    assert 'status_labels' not in agent.json and 'transitions_map' not in agent.json


def test_agent_settings_keys_exactly_per_contract(client, client_headers, agent_headers):
    client.simulate_put('/settings', headers=client_headers, json={
        'project_key': 'AURORA', 'relay_dir': '/srv/relay', 'auto_refresh_minutes': 5,
        'field_ids': {'epic_link': 'customfield_10100'},
        'issue_types': {'task': {'name': 'Задача', 'id': '1'}, 'epic': {'name': 'Эпик', 'id': None}},
        'priority_map': {'high': 'Высокий'}, 'link_types': {'blocks': 'Blocks'}})
    client.simulate_post('/projects', headers=client_headers,
                         json={'label': 'AWPCA', 'name': 'АРМ КА', 'board_id': 4216})
    client.simulate_post('/projects', headers=client_headers, json={'label': 'ORION', 'name': 'Орион'})
    response = client.simulate_get('/agent/settings', params={'agent': 'jira'}, headers=agent_headers)
    assert response.status_code == 200
    body = response.json
    assert set(body) == AGENT_KEYS
    assert not NEVER_TO_AGENT & set(body)
    assert body['base_jql'] == 'project = AURORA AND labels in ("AWPCA", "ORION")'
    assert body['projects'] == [
        {'label': 'AWPCA', 'name': 'АРМ КА', 'board_id': 4216, 'board_type': None},
        {'label': 'ORION', 'name': 'Орион', 'board_id': None, 'board_type': None}]
    assert body['field_ids'] == {'epic_link': 'customfield_10100'}


def test_agent_settings_pass_legacy_board_id_as_fallback(legacy_client):
    client, _, agent_headers = legacy_client(
        3, {'base_jql': 'project = AURORA AND labels = AWPCA', 'board_id': 4216,
            'settings_version': 3})
    body = client.simulate_get('/agent/settings', params={'agent': 'jira'},
                               headers=agent_headers).json
    assert set(body) == AGENT_KEYS | {'board_id'}
    assert body['board_id'] == 4216
    assert body['base_jql'] == 'project = AURORA AND labels in ("AWPCA")'


@pytest.mark.parametrize('query, field', [('', 'agent'), ('agent=jira&agent=wiki', 'agent'),
                                          ('agent=nope', 'agent'), ('agent=', 'agent')])
def test_agent_settings_query_errors_name_agent(client, agent_headers, query, field):
    response = client.simulate_get('/agent/settings', query_string=query, headers=agent_headers)
    assert response.status_code == 422
    assert field in response.json['fields']
