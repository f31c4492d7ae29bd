"""A field left out of an agent's body is «обязательное поле», whatever road it takes to hublib
(the message said «значение не может быть null» where the adapter passed the missing field on as
null, and «ожидается целое число» or «неизвестный модуль» where a hand check met it)."""
from __future__ import annotations

import pytest

from .test_errors import assert_error_shape

REQUIRED = ['обязательное поле']


@pytest.mark.parametrize('path, body, fields', [
    ('/agent/claim', {}, {'agent': REQUIRED}),
    ('/agent/commands/1/report', {'agent': 'jira'}, {'status': REQUIRED}),
    ('/agent/commands/1/report', {'status': 'done'}, {'agent': REQUIRED}),
    ('/agent/state', {}, {'agent': REQUIRED}),
    ('/agent/state', {'agent': 'jira', 'issues': []}, {'command_id': REQUIRED}),
    ('/agent/state', {'agent': 'jira', 'command_id': 1}, {'issues': REQUIRED}),
    ('/agent/history', {'agent': 'jira'}, {'items': REQUIRED}),
    ('/agent/history', {'items': []}, {'agent': REQUIRED}),
    ('/agent/boards', {}, {'agent': REQUIRED, 'boards': REQUIRED}),
])
def test_a_missing_field_is_named_as_required(client, agent_headers, path, body, fields):
    response = client.simulate_post(path, headers=agent_headers, json=body)
    assert assert_error_shape(response, 422)['fields'] == fields


@pytest.mark.parametrize('path, body, field, message', [
    ('/agent/claim', {'agent': 'nope'}, 'agent', 'ожидается одно из: jira, wiki'),
    ('/agent/state', {'agent': 'jira', 'command_id': 'x', 'issues': []}, 'command_id',
     'ожидается целое число'),
    ('/agent/history', {'agent': 'jira', 'items': 'x'}, 'items', 'ожидается список'),
])
def test_a_wrong_value_keeps_its_own_message(client, agent_headers, path, body, field, message):
    response = client.simulate_post(path, headers=agent_headers, json=body)
    assert assert_error_shape(response, 422)['fields'][field] == [message]
