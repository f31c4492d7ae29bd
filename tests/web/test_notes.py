"""HTTP: service notes (contract §10)."""
from __future__ import annotations

import pytest


def test_put_then_get_note(client, client_headers, clock):
    assert client.simulate_get('/notes/AURORA-1', headers=client_headers).status_code == 404
    put = client.simulate_put('/notes/AURORA-1', headers=client_headers,
                              json={'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    assert put.status_code == 200
    assert put.json == {'key': 'AURORA-1', 'work_kind': 'Аналитика', 'done_text': None,
                        'rest_text': None, 'owner_note': None,
                        'updated_at': '2026-11-30T10:00:00+00:00', 'updated_by': 'ivanov'}
    clock.advance(minutes=2)
    client.simulate_put('/notes/AURORA-1', headers=client_headers,
                        json={'owner_note': 'спросить ИБ', 'updated_by': 'petrov'})
    got = client.simulate_get('/notes/AURORA-1', headers=client_headers).json
    assert (got['work_kind'], got['owner_note'], got['updated_by'], got['updated_at']) == \
        ('Аналитика', 'спросить ИБ', 'petrov', '2026-11-30T10:02:00+00:00')


def test_temp_key_note(client, client_headers):
    answer = client.simulate_put('/notes/new:5', headers=client_headers,
                                 json={'rest_text': 'остаток', 'updated_by': 'ivanov'})
    assert answer.status_code == 200 and answer.json['key'] == 'new:5'


@pytest.mark.parametrize('key, body, field', [
    ('aurora-x', {'updated_by': 'a'}, 'key'),  # aurora-1 is AURORA-1: tests/web/test_key_case.py
    ('AURORA-1', {'work_kind': 'x'}, 'updated_by'),
    ('AURORA-1', {'done_text': 'ж' * 20001, 'updated_by': 'a'}, 'done_text'),
    ('AURORA-1', ['x'], '_body'),
])
def test_invalid_note_is_422(client, client_headers, key, body, field):
    answer = client.simulate_put(f'/notes/{key}', headers=client_headers, json=body)
    assert answer.status_code == 422
    assert field in answer.json['fields']


def test_notes_need_client_token(client, agent_headers):
    assert client.simulate_get('/notes/AURORA-1').status_code == 401
    assert client.simulate_get('/notes/AURORA-1', headers=agent_headers).status_code == 403
