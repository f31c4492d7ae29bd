"""The read deadline over HTTP (contract §20): a read past ``read_deadline_seconds`` is a 503 with
``Retry-After`` and the hub's JSON error body in Russian; a fast one is untouched; the setting is
shown by ``GET /settings`` and checked by ``PUT /settings``; a read whose client has gone stops
on every route."""
from __future__ import annotations

import time

import pytest
from falcon import testing

from hublib import open_hub, settings
from hubweb import create_app
from hubweb.auth import required_role
from tests.support.slow_reads import build_slow_mirror, slow_jql

from .test_errors import assert_error_shape

GONE = {'waitress.client_disconnected': lambda: True}


@pytest.fixture(scope='module')
def slow_hub(tmp_path_factory):
    hub = open_hub(build_slow_mirror(tmp_path_factory.mktemp('slow') / 'hub'))
    yield hub
    hub.close()


@pytest.fixture
def slow(slow_hub):
    """A client of the slow mirror and its headers; the deadline back at its default after."""
    headers = {'Authorization': f'Bearer {settings.tokens(slow_hub)["client"]}'}
    yield testing.TestClient(create_app(slow_hub)), headers
    settings.update_settings(slow_hub, {'read_deadline_seconds': 10})


def test_a_read_past_the_deadline_is_503_with_retry_after_and_a_russian_body(slow, slow_hub):
    client, headers = slow
    settings.update_settings(slow_hub, {'read_deadline_seconds': 0.05})
    started = time.monotonic()
    response = client.simulate_get('/issues', params={'jql': slow_jql()}, headers=headers)
    assert time.monotonic() - started < 2
    body = assert_error_shape(response, 503)
    assert body['title'] == 'Запрос слишком долгий'
    assert body['description'].startswith('запрос выполнялся дольше 0.05 с и остановлен')
    assert int(response.headers['Retry-After']) > 0


def test_the_same_read_within_the_default_deadline_is_answered(slow):
    client, headers = slow
    response = client.simulate_get('/issues', params={'jql': slow_jql()}, headers=headers)
    assert response.status_code == 200 and response.json['items'] == []


def test_a_fast_read_is_unaffected_by_a_tiny_deadline(slow, slow_hub):
    client, headers = slow
    settings.update_settings(slow_hub, {'read_deadline_seconds': 0.05})
    for _ in range(5):
        response = client.simulate_get('/issues', params={'limit': 20}, headers=headers)
        assert response.status_code == 200 and len(response.json['items']) == 20
        assert client.simulate_get('/issues/AURORA-7', headers=headers).status_code == 200


def test_settings_show_and_check_read_deadline_seconds(client, client_headers):
    assert client.simulate_get('/settings', headers=client_headers).json[
        'read_deadline_seconds'] == 10
    for bad in (0, -1, 'десять', True, None, 10_000):
        response = client.simulate_put('/settings', headers=client_headers,
                                       json={'read_deadline_seconds': bad})
        assert list(assert_error_shape(response, 422)['fields']) == ['read_deadline_seconds']
    response = client.simulate_put('/settings', headers=client_headers,
                                   json={'read_deadline_seconds': 2.5})
    assert response.status_code == 200 and response.json['read_deadline_seconds'] == 2.5


def test_every_read_whose_client_has_gone_stops_with_the_hubs_error(hub, client, client_headers,
                                                                  agent_headers, app_methods):
    # SQLite asks the budget at every step here, so the first statement of each read finds its
    # client gone: every route that reads answers the hub's 503 (nobody hears it), never a 500
    hub.db.connection().set_progress_handler(hub.db.budget.over, 1)
    stopped = 0
    for template, method, path in app_methods:
        if method != 'GET':
            continue
        headers = agent_headers if path.startswith('/agent/') else client_headers
        normal = client.simulate_get(path, headers=headers)
        gone = client.simulate_get(path, headers=headers, extras=GONE)
        assert gone.status_code != 500, (path, gone.text)
        if normal.status_code == 200 and gone.status_code != 200:
            assert_error_shape(gone, 503)
            assert gone.json['title'] == 'Клиент отключился', path
            stopped += 1
        elif required_role(path) is not None and normal.status_code == 200:
            pytest.fail(f'{path}: read on although its client has gone')
    assert stopped >= 10
