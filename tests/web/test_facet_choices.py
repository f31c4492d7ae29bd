"""``GET /issues/facets?chosen=…`` (docs/web-ui.md): the values chosen in each list go with the
query in one request; each list counts within the query and the other lists' choices. The
counting itself is proved in tests/lib/test_facet_choices.py; here, the HTTP road and its document."""
from __future__ import annotations

import json

from tests.support.jql_mirror import build_mirror

import pytest


@pytest.fixture
def mirrored(hub, claimed_refresh):
    return build_mirror(hub, claimed_refresh(hub))


def facets(client, headers, **params):
    return client.simulate_get('/issues/facets', headers=headers, params=params)


def test_one_request_answers_every_list_with_the_other_lists_choices(mirrored, client,
                                                                    client_headers):
    chosen = {'status': ['в работе', 'Открыта'], 'assignee': ['IVANOV']}
    answer = facets(client, client_headers, jql='project = AURORA',
                    chosen=json.dumps(chosen, ensure_ascii=False))
    assert answer.status_code == 200, answer.json
    # assignees of the issues «В работе» or «Открыта» (AURORA-1, 2, 5): not sidorova's «Снято»
    assert answer.json['assignee'] == [{'value': 'ivanov', 'count': 2},
                                       {'value': 'Petrov', 'count': 1}]
    # statuses of ivanov's issues (AURORA-1, 5), not narrowed by the status choice itself
    assert answer.json['status'] == [{'value': 'В работе', 'count': 1},
                                     {'value': 'Открыта', 'count': 1}]
    # the other lists within both choices: AURORA-1 and AURORA-5
    assert answer.json['issue_type'] == [{'value': 'Задача', 'count': 1}, {'value': 'Эпик', 'count': 1}]
    unchosen = facets(client, client_headers, jql='project = AURORA').json
    assert answer.json['labels'] != unchosen['labels']


def test_a_bad_choice_is_a_422_naming_it(mirrored, client, client_headers):
    answer = facets(client, client_headers, chosen='{"status": "В работе"}')
    assert answer.status_code == 422
    assert answer.json['fields'] == {'chosen.status': ['ожидается список значений']}
    answer = facets(client, client_headers, chosen='status=В работе')
    assert answer.status_code == 422
    assert list(answer.json['fields']) == ['chosen']
    # the count and the list do not take it
    assert client.simulate_get('/issues/count', headers=client_headers,
                               params={'chosen': '{}'}).status_code == 422


def test_the_document_describes_chosen_as_json_of_lists_of_values(client):
    operation = client.simulate_get('/openapi.json').json['paths']['/issues/facets']['get']
    parameters = {parameter['name']: parameter for parameter in operation['parameters']}
    chosen = parameters['chosen']
    assert chosen['in'] == 'query' and 'schema' not in chosen
    assert 'без своего' in chosen['description']
    value = chosen['content']['application/json']['schema']
    assert value['type'] == 'object' and value['additionalProperties'] is False
    assert sorted(value['properties']) == sorted(['status', 'assignee', 'issue_type', 'priority',
                                                  'labels'])
    assert value['properties']['status'] == {'type': 'array', 'maxItems': 1000,
                                             'items': {'type': 'string', 'nullable': True}}
    # the other parameters stay plain
    assert parameters['jql']['schema']['type'] == 'string' and 'content' not in parameters['jql']
