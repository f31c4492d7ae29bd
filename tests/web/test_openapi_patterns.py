"""The document is as strict as the server where a document can say it: a ``cursor`` is an
opaque URL-safe token (base64url without padding: its alphabet is the pattern), the name in
``PUT /agent/files/{sha256}`` is 64 lower-case hex digits; and the server refuses what the
patterns refuse."""
from __future__ import annotations

import re

import pytest

from .test_errors import assert_error_shape

CURSOR_PATTERN = '^[A-Za-z0-9_-]*$'


def test_every_cursor_parameter_declares_the_token_alphabet(client):
    paths = client.simulate_get('/openapi.json').json['paths']
    cursors = [(path, method, parameter['schema']) for path, item in paths.items()
               for method, operation in item.items() if isinstance(operation, dict)
               for parameter in operation.get('parameters', []) if parameter['name'] == 'cursor']
    assert len(cursors) >= 5  # issues, changes, issue changes, sync runs, batches
    assert all(schema.get('pattern') == CURSOR_PATTERN for _, _, schema in cursors), cursors


def test_cursors_the_server_issues_fit_the_pattern(client, client_headers, hub):
    from hublib import queue, settings
    settings.update_settings(hub, {'project_key': 'AURORA'})
    for number in range(3):
        queue.create_batch(hub, title=f'b{number}', commands=[
            {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'текст'}}])
    page = client.simulate_get('/batches', headers=client_headers, params={'limit': 1}).json
    assert re.fullmatch(CURSOR_PATTERN[1:-1], page['next_cursor'])


@pytest.mark.parametrize('path', ['/batches', '/sync-runs', '/changes', '/issues'])
@pytest.mark.parametrize('cursor', ['a/b', 'abc=', 'ж', 'a b'])
def test_a_cursor_outside_the_alphabet_is_422_naming_it(client, client_headers, path, cursor):
    response = client.simulate_get(path, headers=client_headers, params={'cursor': cursor})
    assert list(assert_error_shape(response, 422)['fields']) == ['cursor']


def test_the_file_name_of_an_upload_is_64_lower_case_hex_digits(client):
    put = client.simulate_get('/openapi.json').json['paths']['/agent/files/{sha256}']['put']
    [name] = [p for p in put['parameters'] if p['name'] == 'sha256']
    assert name['schema'] == {'type': 'string', 'pattern': '^[0-9a-f]{64}$'}
