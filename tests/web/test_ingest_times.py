"""Unreadable Jira times over HTTP: the page is taken (200) and its answer says how many times
the hub could not read (``unparsed_times``); a time of the wrong JSON type is a 422 naming it
(the library rules: ``tests/lib/test_ingest_times.py``)."""
from __future__ import annotations

import pytest

from .test_errors import assert_error_shape

GOOD = '2026-10-22T09:00:00.000+0300'
BAD = '2026-02-30T09:00:00.000+0300'


def history_items(**item) -> list[dict]:
    items = [{'history_id': str(n), 'seq': 0, 'key': 'AURORA-1', 'created': GOOD, 'author': None,
              'field_id': 'status', 'field_name': 'Status', 'from_value': None,
              'from_string': None, 'to_value': None, 'to_string': 'Готово'} for n in range(5)]
    items[3].update(item)
    return items


@pytest.mark.parametrize('shape', ['typed', 'general'])
def test_history_page_with_an_unreadable_time_is_taken_and_counted(client, agent_headers, hub,
                                                                   shape):
    items = history_items(created=BAD)
    if shape == 'general':  # a numeric history id: not the agent's usual shape, the general way
        items[0]['history_id'] = 0
    response = client.simulate_post('/agent/history', headers=agent_headers,
                                    json={'agent': 'jira', 'items': items})
    assert response.status_code == 200, response.text
    assert response.json == {'inserted': 5, 'ignored': 0, 'unparsed_times': 1}
    assert hub.db.execute_sql("SELECT created, at FROM issue_change WHERE history_id = '3'") \
        .fetchall() == [(BAD, None)]


@pytest.mark.parametrize('wrong', [5, {'at': GOOD}, ['x']])
def test_history_time_of_the_wrong_type_is_422_naming_the_item(client, agent_headers, hub, wrong):
    response = client.simulate_post('/agent/history', headers=agent_headers,
                                    json={'agent': 'jira', 'items': history_items(created=wrong)})
    body = assert_error_shape(response, 422)
    assert list(body['fields']) == ['items[3].created']
    assert hub.db.execute_sql('SELECT count(*) FROM issue_change').fetchone()[0] == 0


def test_state_and_boards_answers_count_unreadable_times(client, agent_headers, hub,
                                                         claimed_refresh):
    command_id = claimed_refresh(hub)
    state = client.simulate_post('/agent/state', headers=agent_headers, json={
        'agent': 'jira', 'command_id': command_id, 'issues': [
            {'key': 'AURORA-1', 'updated': 'garbage', 'created': GOOD,
             'comments': [{'id': '1', 'created': ''}]}]})
    assert state.status_code == 200, state.text
    assert state.json == {'issues': 1, 'links': 0, 'unparsed_times': 2}
    boards = client.simulate_post('/agent/boards', headers=agent_headers, json={
        'agent': 'jira', 'command_id': command_id, 'boards': [
            {'board_id': 1, 'sprints': [{'id': 1, 'start_date': GOOD, 'end_date': BAD}]}]})
    assert boards.status_code == 200, boards.text
    assert boards.json == {'boards': 1, 'sprints': 1, 'unparsed_times': 1}
    wrong = client.simulate_post('/agent/boards', headers=agent_headers, json={
        'agent': 'jira', 'boards': [{'board_id': 1, 'sprints': [{'id': 1, 'start_date': 7}]}]})
    assert list(assert_error_shape(wrong, 422)['fields']) == ['boards[0].sprints[0].start_date']


def test_the_openapi_answers_publish_unparsed_times(client):
    schemas = client.simulate_get('/openapi.json').json['components']['schemas']
    for name in ('StateResult', 'HistoryResult', 'BoardsResult'):
        assert 'unparsed_times' in schemas[name]['required'], name
        assert schemas[name]['properties']['unparsed_times']['type'] == 'integer'
