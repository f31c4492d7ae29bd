"""The error body of contract §13 on every error path: ``{title, description, fields?}``."""
from __future__ import annotations

import logging

import pytest
from falcon import testing

from hubweb import create_app
from hubweb.auth import JSON_BODY_LIMIT


def assert_error_shape(response, status: int) -> dict:
    assert response.status_code == status, response.text
    assert response.headers['content-type'].startswith('application/json')
    body = response.json
    assert set(body) <= {'title', 'description', 'fields'}
    assert isinstance(body['title'], str) and body['title']
    assert isinstance(body['description'], str) and body['description']
    if status == 422:
        assert isinstance(body['fields'], dict) and body['fields']
        assert all(isinstance(name, str) and isinstance(messages, list) and messages
                   and all(isinstance(m, str) and m for m in messages)
                   for name, messages in body['fields'].items())
    else:
        assert 'fields' not in body
    return body


@pytest.mark.parametrize('body', ['{bad', '{"a": 1', "{'a': 1}", '\xff'.encode('latin-1'),
                                  b'{"a": "\xff"}', '[1,]', r'{"label": "\ud800"}'])
def test_400_body_not_json(client, client_headers, body):
    response = client.simulate_post('/projects', headers=client_headers, body=body)
    body = assert_error_shape(response, 400)
    assert body['title'] == 'Неверный запрос'


def test_400_empty_body_where_a_handler_requires_one(client, client_headers):
    response = client.simulate_put('/settings', headers=client_headers, body='')
    assert response.status_code in (400, 422)
    assert_error_shape(response, response.status_code)


def test_401_without_token(client):
    assert_error_shape(client.simulate_get('/settings'), 401)


def test_403_wrong_role(client, agent_headers):
    body = assert_error_shape(client.simulate_get('/projects', headers=agent_headers), 403)
    assert body['title'] == 'Нет доступа'


def test_404_unknown_route(client, client_headers):
    body = assert_error_shape(client.simulate_get('/no/such/route', headers=client_headers), 404)
    assert body['title'] == 'Не найдено'


def test_404_unknown_project(client, client_headers):
    assert_error_shape(client.simulate_get('/projects/NOPE', headers=client_headers), 404)


def test_405_method_not_allowed(client, client_headers):
    body = assert_error_shape(client.simulate_delete('/projects', headers=client_headers), 405)
    assert body['title'] == 'Метод не поддерживается'


def test_409_duplicate_project(client, client_headers):
    client.simulate_post('/projects', headers=client_headers, json={'label': 'AWPCA', 'name': 'А'})
    response = client.simulate_post('/projects', headers=client_headers,
                                    json={'label': 'AWPCA', 'name': 'Б'})
    body = assert_error_shape(response, 409)
    assert body['description'] == 'проект с такой меткой уже есть'


@pytest.mark.parametrize('path, method', [('/projects', 'POST'), ('/settings', 'PUT'),
                                          ('/agent/state', 'POST')])
def test_413_body_over_32_mib(client, tokens, path, method):
    token = tokens['agent'] if path.startswith('/agent/') else tokens['client']
    headers = {'Authorization': f'Bearer {token}', 'Content-Length': str(JSON_BODY_LIMIT + 1)}
    response = client.simulate_request(method, path, headers=headers, body='{}')
    assert_error_shape(response, 413)


def test_exactly_32_mib_is_not_413(client, client_headers):
    headers = {**client_headers, 'Content-Length': str(JSON_BODY_LIMIT)}
    response = client.simulate_put('/settings', headers=headers, body='{}')
    assert response.status_code != 413


def test_415_unsupported_content_type(client, client_headers):
    response = client.simulate_post('/projects', body='label=A',
                                    headers={**client_headers, 'Content-Type': 'text/csv'})
    assert_error_shape(response, 415)


@pytest.mark.parametrize('raw, field', [
    ('{"label": "A B", "name": "x"}', 'label'),
    ('{"label": "A", "name": "  "}', 'name'),
    ('{"label": "A", "name": "x", "board_id": 0}', 'board_id'),
    ('{"name": "x"}', 'label'),
    ('{"label": "A", "name": "x", "extra": 1}', 'extra'),
    ('[]', '_body'),
    ('"text"', '_body'),
    ('null', '_body'),
    ('{"label": "A", "name": "x", "board_id": 9223372036854775808}', 'board_id'),
    ('{"label": "A", "name": "x", "board_id": 1e400}', '_body'),
])
def test_422_names_the_field(client, client_headers, raw, field):
    response = client.simulate_post('/projects', headers=client_headers, body=raw)
    assert field in assert_error_shape(response, 422)['fields']


def test_422_for_non_finite_and_huge_numbers(client, client_headers):
    for raw in ('{"backup_keep": 1e400}', '{"backup_keep": NaN}', '{"backup_keep": -Infinity}',
                '{"backup_keep": %s}' % ('9' * 5000)):
        response = client.simulate_put('/settings', headers=client_headers, body=raw)
        assert assert_error_shape(response, 422)['fields'] == {'_body': response.json['fields']['_body']}
    # a mere 64-bit overflow is JSON the parser reads; the field that stores it refuses it
    response = client.simulate_put('/settings', headers=client_headers,
                                   body='{"backup_keep": -9223372036854775809}')
    assert list(assert_error_shape(response, 422)['fields']) == ['backup_keep']


def test_422_for_nesting_too_deep(client, client_headers):
    for raw in ('[' * 50 + ']' * 50, '[' * 100_000 + ']' * 100_000,
                '{"pacing": ' + '{"a": ' * 40 + '1' + '}' * 40 + '}'):
        response = client.simulate_put('/settings', headers=client_headers, body=raw)
        assert '_body' in assert_error_shape(response, 422)['fields']


def test_422_messages_are_russian(client, client_headers):
    response = client.simulate_post('/projects', headers=client_headers, json={'extra': 1})
    fields = assert_error_shape(response, 422)['fields']
    assert fields == {'label': ['обязательное поле'], 'name': ['обязательное поле'],
                      'extra': ['неизвестное поле']}


class Broken:
    def on_get(self, req, resp):
        raise RuntimeError('no such table: SELECT secret FROM setting in /srv/hub-data/hub.sqlite')


def test_500_is_generic_and_logged_with_traceback(hub, client_headers, caplog):
    app = create_app(hub)  # a test-only app with one broken resource
    app.add_route('/broken', Broken())
    caplog.set_level(logging.INFO)
    response = testing.TestClient(app).simulate_get('/broken', headers=client_headers)
    body = assert_error_shape(response, 500)
    assert body == {'title': 'Внутренняя ошибка',
                    'description': 'Внутренняя ошибка хаба; подробности в журнале сервера.'}
    for leak in ('SELECT', 'setting', '/srv', 'hub.sqlite', 'RuntimeError', 'Traceback'):
        assert leak not in response.text
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert errors and errors[0].exc_info and errors[0].exc_info[0] is RuntimeError
    assert 'Traceback' in caplog.text and 'SELECT secret' in caplog.text
    access = [r.getMessage() for r in caplog.records if r.name == 'hubweb.access']
    assert access and access[0].startswith('GET /broken 500 ')


def test_hub_field_messages_are_russian_for_every_common_field():
    import re

    from hublib import fields, validators
    from hublib.errors import ValidationError
    from hublib.validation import Schema, load

    class Inner(Schema):
        x = fields.Integer(required=True)

    class Probe(Schema):
        text = fields.String()
        number = fields.Integer()
        ratio = fields.Float()
        flag = fields.Boolean()
        items = fields.List(fields.String())
        mapping = fields.Dict()
        inner = fields.Nested(Inner)
        choice = fields.String(validate=validators.OneOf(['a', 'b']))
        short = fields.String(validate=validators.Length(max=2))
        small = fields.Integer(validate=validators.Range(min=1, max=3))
        strict = fields.String(required=True, allow_none=False)

    bad = {'text': 1, 'number': 'x', 'ratio': 'x', 'flag': 'x', 'items': 'x', 'mapping': 1,
           'inner': 1, 'choice': 'c', 'short': 'abc', 'small': 9, 'strict': None, 'unknown': 1}
    with pytest.raises(ValidationError) as error:
        load(Probe, bad)
    fields_ = error.value.fields
    assert set(fields_) == set(bad)
    for name, messages in fields_.items():
        for message in messages:
            assert re.search('[а-яё]', message), (name, message)


def test_query_errors_are_russian_and_repeated_names_refused(client, agent_headers):
    response = client.simulate_get('/agent/settings', query_string='agent=jira&agent=jira',
                                   headers=agent_headers)
    assert assert_error_shape(response, 422)['fields'] == {'agent': ['параметр указан несколько раз']}


# --- issue 10, point 6: the HTTP edges a curl user meets first -----------------------------------

@pytest.mark.parametrize('method, path', [('POST', '/projects'), ('PUT', '/settings'),
                                          ('POST', '/batches'), ('PUT', '/notes/AURORA-1')])
@pytest.mark.parametrize('content_type', ['application/x-www-form-urlencoded',
                                          'multipart/form-data; boundary=x'])
def test_form_body_is_415_like_any_non_json_type(client, client_headers, method, path,
                                                 content_type):
    response = client.simulate_request(method, path, body='label=A&name=B',
                                       headers={**client_headers, 'Content-Type': content_type})
    body = assert_error_shape(response, 415)
    assert body['description'] == 'ожидается тело application/json'


def test_form_body_to_the_agent_is_415_and_writes_nothing(client, agent_headers, hub):
    response = client.simulate_post('/agent/state', body='agent=jira&command_id=1',
                                    headers={**agent_headers,
                                             'Content-Type': 'application/x-www-form-urlencoded'})
    assert_error_shape(response, 415)
    assert hub.db.execute_sql('SELECT count(*) FROM issue').fetchone() == (0,)


@pytest.mark.parametrize('path, query, name', [
    ('/issues', 'stauts=Готово', 'stauts'),
    ('/issues', 'status=Готово&limt=5', 'limt'),
    ('/changes', 'sinse=2026-01-01T00:00:00Z', 'sinse'),
    ('/sync-runs', 'page=2', 'page'),
    ('/issues/AURORA-1/changes', 'project=AWPCA', 'project'),
])
def test_unknown_query_parameter_is_422_naming_it(client, client_headers, path, query, name):
    response = client.simulate_get(path, query_string=query, headers=client_headers)
    body = assert_error_shape(response, 422)
    assert body['fields'] == {name: ['неизвестное поле']}


def test_unknown_query_parameter_of_the_agent_is_422(client, agent_headers):
    response = client.simulate_get('/agent/settings', query_string='agent=jira&module=jira',
                                   headers=agent_headers)
    assert assert_error_shape(response, 422)['fields'] == {'module': ['неизвестное поле']}
