"""``/issues/aurora-1``, ``/issues/aurora-1/changes``, ``/notes/aurora-1`` find ``AURORA-1``
(the rule: ``tests/lib/test_key_case.py``); the document's note key pattern says so."""
from __future__ import annotations

from hublib import mirror


def test_http_reads_and_notes_take_a_key_in_any_case(hub, client, client_headers, claimed_refresh):
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [{'key': 'AURORA-1', 'summary': 'x'}])
    card = client.simulate_get('/issues/aurora-1', headers=client_headers)
    assert card.status_code == 200 and card.json['key'] == 'AURORA-1'
    assert client.simulate_get('/issues/aurora-1/changes', headers=client_headers).status_code == 200
    put = client.simulate_put('/notes/aurora-1', headers=client_headers,
                              json={'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    assert put.status_code == 200 and put.json['key'] == 'AURORA-1'
    assert client.simulate_get('/notes/AURORA-1', headers=client_headers).json['work_kind'] \
        == 'Аналитика'
    pattern = client.simulate_get('/openapi.json').json['paths']['/notes/{key}']['put'][
        'parameters'][0]['schema']['pattern']
    assert pattern == '^(?:[A-Za-z][A-Za-z0-9_]*-[0-9]+|new:[0-9]+)$'
