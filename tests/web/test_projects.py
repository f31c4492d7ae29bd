"""Projects over HTTP (spec «Проекты», contract §7)."""
from __future__ import annotations

import pytest

from hublib import mirror

DUPLICATE = 'проект с такой меткой уже есть'


def create(client, headers, label, name='Проект', **extra):
    return client.simulate_post('/projects', headers=headers,
                                json={'label': label, 'name': name, **extra})


def labels(client, headers) -> list[str]:
    return [item['label'] for item in client.simulate_get('/projects', headers=headers).json['items']]




def test_create_project_returns_201_with_the_project(client, client_headers, clock):
    response = create(client, client_headers, 'AWPCA', '  АРМ КА  ', board_id=4216)
    assert response.status_code == 201
    assert response.json == {'label': 'AWPCA', 'name': 'АРМ КА', 'created_at': '2026-11-30T10:00:00+00:00',
                             'board_id': 4216, 'board_type': None, 'own_count': 0,
                             'neighbor_count': 0}
    assert client.simulate_get('/projects/AWPCA', headers=client_headers).json == response.json


def test_scenario_base_jql_from_two_projects(client, client_headers, clock):
    client.simulate_put('/settings', headers=client_headers, json={'project_key': 'AURORA'})
    create(client, client_headers, 'AWPCA')
    clock.advance(minutes=1)
    create(client, client_headers, 'STOCKS_DRRK')
    assert client.simulate_get('/settings', headers=client_headers).json['base_jql'] == \
        'project = AURORA AND labels in ("AWPCA", "STOCKS_DRRK")'


def test_scenario_label_is_a_reserved_jql_word(client, client_headers):
    client.simulate_put('/settings', headers=client_headers, json={'project_key': 'AURORA'})
    assert create(client, client_headers, 'EMPTY').status_code == 201
    assert client.simulate_get('/settings', headers=client_headers).json['base_jql'] == \
        'project = AURORA AND labels in ("EMPTY")'


@pytest.mark.parametrize('label', ['STOCKS DRRK', 'A\u00a0B', 'A\tB', 'A\u3000B'])
def test_scenario_label_with_space(client, client_headers, label):
    response = create(client, client_headers, label)
    assert response.status_code == 422
    assert list(response.json['fields']) == ['label']
    assert labels(client, client_headers) == []


@pytest.mark.parametrize('label', ['A\\B', 'A\nB', 'A\x00B', 'A\x7fB'])
def test_scenario_label_with_backslash_or_control_char(client, client_headers, label):
    response = create(client, client_headers, label)
    assert response.status_code == 422
    assert list(response.json['fields']) == ['label']
    assert labels(client, client_headers) == []


@pytest.mark.parametrize('label', ['', 'A,B', 'A"B', "A'B", 'A(B', 'A)B', 'A[B', 'A]B', 'A{B',
                                   'A}B', 'X' * 101, 5, None, ['A'], {'a': 1}, True])
def test_bad_label_is_422_naming_label(client, client_headers, label):
    response = create(client, client_headers, label)
    assert response.status_code == 422
    assert 'label' in response.json['fields']
    assert labels(client, client_headers) == []


def test_label_of_100_chars_and_unicode_is_fine(client, client_headers):
    assert create(client, client_headers, 'X' * 100).status_code == 201
    assert create(client, client_headers, 'АРМ_КА-2').status_code == 201


@pytest.mark.parametrize('name', ['', '   ', 'N' * 101, None, 5, ['x']])
def test_bad_name_is_422_naming_name(client, client_headers, name):
    response = create(client, client_headers, 'AWPCA', name)
    assert response.status_code == 422
    assert list(response.json['fields']) == ['name']


@pytest.mark.parametrize('board_id', [0, -1, 1.5, '4216', True, [1]])
def test_bad_board_id_is_422_naming_board_id(client, client_headers, board_id):
    response = create(client, client_headers, 'AWPCA', board_id=board_id)
    assert response.status_code == 422
    assert list(response.json['fields']) == ['board_id']


def test_every_bad_field_is_named_at_once(client, client_headers):
    response = create(client, client_headers, 'A B', '', board_id=0)
    assert set(response.json['fields']) == {'label', 'name', 'board_id'}


@pytest.mark.parametrize('other', ['awpca', 'AWPCA', 'Awpca'])
def test_scenario_same_label_other_case(client, client_headers, other):
    assert create(client, client_headers, 'AWPCA').status_code == 201
    response = create(client, client_headers, other, 'Другой')
    assert response.status_code == 409
    assert response.json['description'] == DUPLICATE
    assert labels(client, client_headers) == ['AWPCA']


def test_a_project_body_is_validated_once(client, client_headers, monkeypatch):
    from hublib.projects import ProjectCreate
    loads = []
    original = ProjectCreate.load

    def counted(self, data, **kwargs):
        loads.append(dict(data))
        return original(self, data, **kwargs)

    monkeypatch.setattr(ProjectCreate, 'load', counted)
    assert create(client, client_headers, 'AWPCA', ' АРМ КА ').status_code == 201
    assert loads == [{'label': 'AWPCA', 'name': ' АРМ КА '}]  # the body as sent, once


def test_creating_a_project_does_not_bump_settings_version(client, client_headers):
    before = client.simulate_get('/settings', headers=client_headers).json['settings_version']
    create(client, client_headers, 'AWPCA')
    assert client.simulate_get('/settings', headers=client_headers).json['settings_version'] == before


def test_get_projects_orders_by_created_at_then_label(client, client_headers, clock):
    create(client, client_headers, 'ZETA')
    create(client, client_headers, 'ALPHA')
    clock.advance(minutes=5)
    create(client, client_headers, 'BETA')
    response = client.simulate_get('/projects', headers=client_headers)
    assert set(response.json) == {'items'}
    assert [p['label'] for p in response.json['items']] == ['ALPHA', 'ZETA', 'BETA']
    assert set(response.json['items'][0]) == {'label', 'name', 'created_at', 'board_id', 'board_type',
                                              'own_count', 'neighbor_count'}


def test_scenario_own_and_neighbors_counts(hub, client, client_headers, claimed_refresh):
    create(client, client_headers, 'AWPCA', 'АРМ КА')
    create(client, client_headers, 'STOCKS_DRRK', 'Склады')
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [
        {'key': 'AURORA-1', 'labels': ['STOCKS_DRRK'], 'epic_key': 'AURORA-9',
         'links': [{'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-2'}]},
        {'key': 'AURORA-2', 'labels': ['AWPCA']}, {'key': 'AURORA-3', 'labels': ['AWPCA']},
        {'key': 'AURORA-9', 'labels': ['AWPCA']}])
    stocks = client.simulate_get('/projects/STOCKS_DRRK', headers=client_headers).json
    assert (stocks['own_count'], stocks['neighbor_count']) == (1, 2)
    items = {p['label']: p for p in client.simulate_get('/projects', headers=client_headers).json['items']}
    assert (items['STOCKS_DRRK']['own_count'], items['STOCKS_DRRK']['neighbor_count']) == (1, 2)
    assert (items['AWPCA']['own_count'], items['AWPCA']['neighbor_count']) == (3, 1)


@pytest.mark.parametrize('label', ['NOPE', 'awpca', 'AWPCA%20', "x'; DROP TABLE project; --"])
def test_get_unknown_project_is_404(client, client_headers, label):
    create(client, client_headers, 'AWPCA')
    response = client.simulate_get(f'/projects/{label}', headers=client_headers)
    assert response.status_code == 404
    assert set(response.json) == {'title', 'description'}
    assert labels(client, client_headers) == ['AWPCA']


def test_project_with_cyrillic_label_is_reachable_by_its_url(client, client_headers):
    create(client, client_headers, 'СКЛАД')
    assert client.simulate_get('/projects/%D0%A1%D0%9A%D0%9B%D0%90%D0%94',
                               headers=client_headers).json['label'] == 'СКЛАД'
