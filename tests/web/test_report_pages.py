"""Cycle-time items over HTTP come in pages like every list (contract §20): ``limit`` and
``cursor`` in, ``next_cursor`` out, the summary over the whole window on every page."""
from __future__ import annotations

import pytest

from tests.support import reports as world

from .test_errors import assert_error_shape

PATH = '/projects/ORION/cycle-time'
WINDOW = {'since': '2026-11-01', 'until': '2026-11-20'}


@pytest.fixture
def mirrored(hub, clock):
    clock.set(world.NOW)
    world.build(hub)
    return hub


def test_cycle_time_pages_follow_next_cursor_with_the_whole_summary(mirrored, client,
                                                                    client_headers):
    whole = client.simulate_get(PATH, params=WINDOW, headers=client_headers).json
    first = client.simulate_get(PATH, params={**WINDOW, 'limit': '1'}, headers=client_headers).json
    second = client.simulate_get(PATH, params={**WINDOW, 'limit': '1',
                                               'cursor': first['next_cursor']},
                                 headers=client_headers).json
    assert whole['next_cursor'] is None and second['next_cursor'] is None
    assert first['items'] + second['items'] == whole['items'] and len(whole['items']) == 2
    assert first['summary'] == second['summary'] == whole['summary']


@pytest.mark.parametrize('query, field', [({'limit': '0'}, 'limit'), ({'limit': '1001'}, 'limit'),
                                          ({'cursor': '%%%'}, 'cursor')])
def test_bad_limit_or_cursor_is_422_naming_it(mirrored, client, client_headers, query, field):
    response = client.simulate_get(PATH, params=query, headers=client_headers)
    assert list(assert_error_shape(response, 422)['fields']) == [field]


def test_the_document_describes_the_paged_cycle_time(client):
    document = client.simulate_get('/openapi.json').json
    operation = document['paths']['/projects/{label}/cycle-time']['get']
    assert {'limit', 'cursor'} <= {parameter['name'] for parameter in operation['parameters']}
    assert 'next_cursor' in document['components']['schemas']['CycleTime']['properties']
