"""Role matrix and bearer-token rules (contract §13): every route × method × credential."""
from __future__ import annotations

import logging

import pytest

from hubweb.auth import required_role

OPEN = {'/health', '/openapi.json'}


def _call(client, method: str, path: str, headers: dict):
    body = {} if method in ('POST', 'PUT', 'PATCH') else None
    return client.simulate_request(method, path, headers=headers, json=body)


def test_role_matrix_covers_every_route_and_method(app_methods, client, tokens):
    credentials = {
        'none': {},
        'wrong': {'Authorization': 'Bearer not-the-token'},
        'client': {'Authorization': f'Bearer {tokens["client"]}'},
        'agent': {'Authorization': f'Bearer {tokens["agent"]}'},
    }
    failures = []
    assert len(app_methods) >= 8  # at least the endpoints of issue 3
    for template, method, path in app_methods:
        role = None if template in OPEN else ('agent' if template.startswith('/agent/') else 'client')
        for name, headers in credentials.items():
            status = _call(client, method, path, headers).status_code
            if role is None:
                ok = status < 400
            elif name in ('none', 'wrong'):
                ok = status == 401
            elif name == role:
                ok = status not in (401, 403) and status < 500
            else:
                ok = status == 403
            if not ok:
                failures.append(f'{method} {path} with {name} token -> {status}')
    assert failures == []


def test_role_is_decided_by_path():
    assert required_role('/health') is None
    assert required_role('/openapi.json') is None
    assert required_role('/agent/claim') == 'agent'
    assert required_role('/settings') == 'client'
    assert required_role('/agentish') == 'client'


@pytest.mark.parametrize('path', ['//agent/settings', '///agent/settings', '/agent/settings/'])
def test_client_token_cannot_reach_agent_route_through_odd_slashes(client, client_headers, path):
    # falcon routes '//agent/settings' to /agent/settings: auth must see the same path
    response = client.simulate_get(path, params={'agent': 'jira'}, headers=client_headers)
    assert response.status_code == 403


@pytest.mark.parametrize('path', ['//settings', '/settings/'])
def test_agent_token_cannot_reach_client_route_through_odd_slashes(client, agent_headers, path):
    assert client.simulate_get(path, headers=agent_headers).status_code == 403


@pytest.mark.parametrize('path', ['/health', '/openapi.json'])
def test_open_paths_need_no_token(client, path):
    assert client.simulate_get(path).status_code == 200


@pytest.mark.parametrize('name', ['token', 'access_token', 'api_key', 'Token'])
def test_token_in_query_string_is_refused(client, tokens, name):
    response = client.simulate_get('/settings', query_string=f'{name}={tokens["client"]}')
    assert response.status_code == 401
    assert 'Authorization' in response.json['description']


def test_token_in_query_string_is_refused_even_with_a_good_header(client, tokens, client_headers):
    response = client.simulate_get('/settings', query_string=f'token={tokens["client"]}',
                                   headers=client_headers)
    assert response.status_code == 401


@pytest.mark.parametrize('scheme', ['Bearer', 'bearer', 'BEARER', 'bEaReR'])
def test_bearer_scheme_is_case_insensitive(client, tokens, scheme):
    headers = {'Authorization': f'{scheme} {tokens["client"]}'}
    assert client.simulate_get('/settings', headers=headers).status_code == 200


@pytest.mark.parametrize('header', ['', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Token abc',
                                    'Bearer я', 'Bearer \x7f'])
def test_malformed_authorization_is_401(client, header):
    response = client.simulate_get('/settings', headers={'Authorization': header})
    assert response.status_code == 401
    assert set(response.json) == {'title', 'description'}


def test_token_of_one_role_is_not_a_prefix_match(client, tokens):
    headers = {'Authorization': f'Bearer {tokens["client"][:-1]}'}
    assert client.simulate_get('/settings', headers=headers).status_code == 401
    headers = {'Authorization': f'Bearer {tokens["client"]}x'}
    assert client.simulate_get('/settings', headers=headers).status_code == 401


def test_access_log_has_one_line_per_request_and_never_the_token(client, tokens, caplog):
    caplog.set_level(logging.DEBUG)
    client.simulate_get('/settings', headers={'Authorization': f'Bearer {tokens["client"]}'})
    client.simulate_get('/settings', query_string=f'token={tokens["agent"]}')
    client.simulate_get('/agent/settings', params={'agent': 'jira'},
                        headers={'Authorization': f'Bearer {tokens["client"]}'})
    access = [r.getMessage() for r in caplog.records if r.name == 'hubweb.access']
    assert len(access) == 3
    assert access[0].startswith('GET /settings 200 ')
    assert access[0].endswith(' ms')
    assert access[1].startswith('GET /settings 401 ')
    assert access[2].startswith('GET /agent/settings 403 ')
    text = caplog.text + ''.join(str(r.args) for r in caplog.records)
    assert tokens['client'] not in text
    assert tokens['agent'] not in text


@pytest.mark.parametrize('query', ['key={token}', 'q={token}&x=1', 'agent=jira&k={token}'])
def test_token_under_any_query_name_is_refused(client, tokens, client_headers, query):
    response = client.simulate_get('/settings', query_string=query.format(token=tokens['client']),
                                   headers=client_headers)
    assert response.status_code == 401


def test_401_carries_a_bearer_challenge(client):
    assert client.simulate_get('/settings').headers['www-authenticate'] == 'Bearer'


def test_access_log_line_cannot_be_forged_through_the_path(client, client_headers, caplog):
    caplog.set_level(logging.INFO, logger='hubweb.access')
    client.simulate_get('/projects/A%0AGET /settings 200 1.0 ms', headers=client_headers)
    client.simulate_get('/x' * 1000, headers=client_headers)
    lines = [r.getMessage() for r in caplog.records if r.name == 'hubweb.access']
    assert all('\n' not in line for line in lines)
    assert lines[0].startswith('GET /projects/A\\nGET')
    assert len(lines[1]) < 400
