"""The OpenAPI document: valid OpenAPI 3, exactly the app's routes, every operation documented."""
from __future__ import annotations

import warnings

from falcon import testing
from openapi_spec_validator import validate

from hubweb.openapi import METHODS


def test_document_is_served_without_token_and_validates(client):
    response = client.simulate_get('/openapi.json')
    assert response.status_code == 200
    document = response.json
    assert document['openapi'].startswith('3.')
    validate(document)


def test_paths_equal_the_app_routes(client, app_methods):
    document = client.simulate_get('/openapi.json').json
    routed = {(template, method.lower()) for template, method, _ in app_methods}
    documented = {(path, method) for path, item in document['paths'].items()
                  for method in item if method in METHODS}
    assert documented == routed
    assert '/openapi.json' in document['paths'] and '/health' in document['paths']


def test_every_operation_has_summary_and_a_documented_2xx(client):
    document = client.simulate_get('/openapi.json').json
    missing = []
    for path, item in document['paths'].items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            if not operation.get('summary'):
                missing.append(f'{method} {path}: summary')
            if not any(code.startswith('2') for code in operation['responses']):
                missing.append(f'{method} {path}: 2xx')
    assert missing == []


def test_security_follows_the_role_of_the_path(client):
    paths = client.simulate_get('/openapi.json').json['paths']
    assert 'security' not in paths['/health']['get']
    assert 'security' not in paths['/openapi.json']['get']
    assert paths['/settings']['get']['security'] == [{'clientToken': []}]
    assert paths['/agent/settings']['get']['security'] == [{'agentToken': []}]
    assert '401' in paths['/settings']['put']['responses']
    assert '401' not in paths['/health']['get']['responses']


def test_path_parameters_and_query_are_documented(client):
    paths = client.simulate_get('/openapi.json').json['paths']
    params = paths['/projects/{label}']['get']['parameters']
    assert {'in': 'path', 'name': 'label', 'required': True,
            'schema': {'type': 'string'}} in params
    query = paths['/agent/settings']['get']['parameters']
    assert any(p['in'] == 'query' and p['name'] == 'agent' and p['required'] for p in query)
    assert paths['/projects']['post']['requestBody']['content']['application/json']['schema']


def document_warnings(hub) -> tuple[int, list[str]]:
    """Ask a new app for ``/openapi.json`` (the document is built at the first request, not with
    the app); the status and every warning raised meanwhile."""
    from hubweb import create_app
    client = testing.TestClient(create_app(hub))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        status = client.simulate_get('/openapi.json').status_code
    return status, [str(warning.message) for warning in caught]


def test_building_the_document_raises_no_warning(hub):
    # e.g. apispec's «Multiple schemas resolved to the name»
    assert document_warnings(hub) == (200, [])


def test_a_warning_while_building_the_document_is_seen(hub, monkeypatch):
    import hubweb.openapi
    build = hubweb.openapi.build_document

    def warning_build(*args, **kwargs):
        warnings.warn('Multiple schemas resolved to the name Example', UserWarning)
        return build(*args, **kwargs)

    monkeypatch.setattr(hubweb.openapi, 'build_document', warning_build)
    assert document_warnings(hub) == (200, ['Multiple schemas resolved to the name Example'])



def test_every_feature_module_is_registered(app_methods):
    # app.py imports the feature modules statically: a missing one fails at import, loudly
    from hubweb.app import FEATURES
    assert [module.__name__.rsplit('.', 1)[-1] for module in FEATURES] == [
        'health', 'settings', 'projects', 'mirror', 'queue', 'notes', 'attachments', 'reports']
    templates = {template for template, _, _ in app_methods}
    for expected in ('/health', '/settings', '/agent/settings', '/projects', '/projects/{label}',
                     '/agent/state', '/batches', '/openapi.json', '/projects/{label}/flow'):
        assert expected in templates


# --- issue 10, point 9: the agent protocol in the document ---------------------------------------

def component(document: dict, ref: dict) -> dict:
    return document['components']['schemas'][ref['$ref'].rsplit('/', 1)[1]]


def test_document_carries_the_params_and_result_schema_of_every_command_type(client, hub):
    from hublib import modules, settings
    settings.update_settings(hub, {'issue_types': {'task': {'name': 'Задача', 'id': '3'},
                                                   'epic': {'name': 'Эпик', 'id': None}},
                                   'link_types': {'blocks': 'Blocks'}})
    document = client.simulate_get('/openapi.json').json
    body = component(document, document['paths']['/batches']['post']['requestBody']['content']
                     ['application/json']['schema'])
    commands = body['properties']['commands']['items']
    assert commands['discriminator']['propertyName'] == 'type'
    by_type = {component(document, ref)['properties']['type']['enum'][0]: component(document, ref)
               for ref in commands['oneOf']}
    assert set(by_type) == set(modules.COMMAND_TYPES) == set(commands['discriminator']['mapping'])
    params = {name: component(document, schema['properties']['params'])
              for name, schema in by_type.items()}
    # the configured issue and link types are the document's (it follows the settings)
    assert sorted(params['ensure_issue']['properties']['issue_type']['enum']) == ['epic', 'task']
    assert params['ensure_link']['properties']['link_type']['enum'] == ['blocks']
    assert set(params['ensure_issue']['required']) == {'issue_type', 'summary'}
    assert len(params['refresh']['oneOf']) == 2  # exactly one of jql or keys
    results = {name: document['components']['schemas'][type(schema).__name__]
               for name, schema in modules.result_schemas().items()}
    assert 'key' in results['ensure_issue']['properties']
    assert {'sha256', 'size'} <= set(results['fetch_attachment']['properties'])
    assert 'history' in results['refresh']['properties']


def test_document_follows_a_settings_change(client, client_headers):
    before = client.simulate_get('/openapi.json').json
    client.simulate_put('/settings', headers=client_headers, json={
        'link_types': {'relates': 'Relates', 'blocks': 'Blocks'}})
    after = client.simulate_get('/openapi.json').json
    link = after['components']['schemas']['EnsureLinkParams']['properties']['link_type']
    assert sorted(link['enum']) == ['blocks', 'relates']
    assert before != after
