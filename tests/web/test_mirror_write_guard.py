"""Only the agent's ingest writes the mirror (spec «Зеркало задачи», «Журнал изменений задач»,
«Доски, спринты…»): every non-agent route of the app, and every read of hublib's interface API,
leaves the mirror tables byte-identical."""
from __future__ import annotations

import hashlib
import inspect

import pytest

from hublib import files, models, notes, projects, reads, reports, settings
from hubweb.app import feature_routes

BASE_JQL = 'project = AURORA AND labels in ("AWPCA")'
METHODS = ('get', 'post', 'put', 'patch', 'delete')
PATH_VALUES = {'key': 'AURORA-1', 'label': 'AWPCA', 'id': '1', 'sha256': '0' * 64,
               'attachment_id': '2', 'command_id': '1', 'batch_id': '1', 'agent': 'jira',
               'run_id': '1', 'sprint_id': '101'}
# Plausible bodies for the interfaces' writes, by route template; other routes get {}.
BODIES = {
    '/projects': {'label': 'NEWPRJ', 'name': 'Новый', 'board_id': 4216},
    '/settings': {'pacing': {'interval_ms': 100}, 'closed_statuses': ['Готово']},
    '/batches': {'title': 'Всё подряд', 'author': 'ivanov', 'project': 'AWPCA', 'commands': [
        {'type': 'refresh', 'params': {'jql': BASE_JQL}},
        {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'summary': 'Новая',
                                            'temp_key': 'new:1'}},
        {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'текст'}},
        {'type': 'transition', 'params': {'key': 'AURORA-1', 'status': 'Готово'}},
        {'type': 'fetch_attachment', 'params': {'attachment_id': '2'}}]},
    '/notes/{key}': {'work_kind': 'Аналитика', 'owner_note': 'спросить ИБ', 'updated_by': 'ivanov'},
}


def snapshot(hub) -> dict[str, list]:
    return {table: [tuple(row) for row in hub.db.execute_sql(
        f'SELECT * FROM {table} ORDER BY rowid').fetchall()] for table in models.MIRROR_TABLES}


@pytest.fixture
def mirrored(hub, client, agent_headers, claimed_refresh):
    settings.update_settings(hub, {'project_key': 'AURORA',
                                   'issue_types': {'task': {'name': 'Задача', 'id': None},
                                                   'epic': {'name': 'Эпик', 'id': None}}})
    projects.create_project(hub, 'AWPCA', 'АРМ КА', board_id=4216)
    command = claimed_refresh(hub, {'jql': BASE_JQL})
    issue = {'key': 'AURORA-1', 'summary': 'Задача', 'status': 'В работе', 'labels': ['AWPCA'],
             'links': [{'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-2'}],
             'comments': [{'id': '101', 'body': 'текст', 'created': '2026-10-22T09:00:00Z'}],
             'attachments': [{'id': '2', 'filename': 'a.pdf', 'size': 3}], 'sprint_ids': [101]}
    for path, body in (
            ('/agent/state', {'agent': 'jira', 'command_id': command, 'issues': [
                issue, {'key': 'AURORA-2', 'labels': ['AWPCA'], 'neighbor': True}]}),
            ('/agent/history', {'agent': 'jira', 'items': [
                {'history_id': '5001', 'seq': 0, 'key': 'AURORA-1', 'field_id': 'status',
                 'created': '2026-10-22T09:00:00Z'}]}),
            ('/agent/boards', {'agent': 'jira', 'boards': [
                {'board_id': 4216, 'type': 'scrum', 'columns': [{'name': 'Готово',
                                                                 'statuses': ['Готово']}],
                 'sprints': [{'id': 101, 'name': 'Спринт 1', 'state': 'active',
                              'start_date': '2026-10-20T09:00:00.000+0300'}]}]})):
        response = client.simulate_post(path, headers=agent_headers, json=body)
        assert response.status_code == 200, response.json
    content = b'%PDF'
    digest = hashlib.sha256(content).hexdigest()
    (hub.files_dir / digest).write_bytes(content)
    files.record_download(hub, '2', digest, len(content))
    before = snapshot(hub)
    assert all(before[table] for table in models.MIRROR_TABLES)
    return before


# The only error answers the calls below may get, per (method, route), first call then second;
# every other call must succeed (< 400), so a stale body or path cannot pass vacuously.
EXPECTED_ERRORS = {
    ('POST', '/projects'): (201, 409),  # the second call creates the same label again
    ('GET', '/notes/{key}'): (404, 404),  # read before PUT /notes/{key} creates the note
    # the first batch's unfinished ensure_issue still owns temp key new:1 (contract §9.4b)
    ('POST', '/batches'): (201, 422),
    ('POST', '/batches/{batch_id}/retry'): (409, 409),  # batch 1 (the refresh) is running
    # (attachment 2 is downloaded by the fixture, so its content answers 200)
}


FILTERS = {'project': 'AWPCA', 'limit': '5'}


def interface_calls(hub) -> list[tuple[str, str, str, dict]]:
    """(method, route, path, the FILTERS the route's documented query takes) of every route."""
    calls = []
    for uri, resource in feature_routes(hub):
        if uri.startswith('/agent/'):
            continue
        path = uri
        for name, value in PATH_VALUES.items():
            path = path.replace('{' + name + '}', value)
        for method in METHODS:
            if hasattr(resource, f'on_{method}'):
                query = resource.DOC.get(method, {}).get('query')
                accepted = query().fields if query is not None else {}
                calls.append((method.upper(), uri, path,
                              {k: v for k, v in FILTERS.items() if k in accepted}))
    return calls


def test_no_interface_route_writes_the_mirror(hub, mirrored, client, client_headers):
    calls = interface_calls(hub)
    assert {('GET', '/issues'), ('GET', '/issues/{key}'), ('GET', '/changes'),
            ('GET', '/projects/{label}/board')} <= {(m, uri) for m, uri, _, _ in calls}
    assert set(EXPECTED_ERRORS) <= {(m, uri) for m, uri, _, _ in calls}
    assert any(filters for *_, filters in calls)
    for method, uri, path, filters in calls:
        first = client.simulate_request(method, path, headers=client_headers,
                                        json=BODIES.get(uri, {}) if method != 'GET' else None)
        # a second time with query filters where the route reads them
        second = client.simulate_request(method, path, headers=client_headers,
                                         params=filters,
                                         json=BODIES.get(uri, {}) if method != 'GET' else None)
        statuses = (first.status_code, second.status_code)
        if (method, uri) in EXPECTED_ERRORS:
            assert statuses == EXPECTED_ERRORS[method, uri], (method, uri, first.text, second.text)
        else:
            assert max(statuses) < 400, (method, uri, statuses, first.text, second.text)
        assert snapshot(hub) == mirrored, f'{method} {uri} changed the mirror'


def _plausible_args(function) -> dict:
    values = {'key': 'AURORA-1', 'label': 'AWPCA', 'attachment_id': '2', 'attachment_ids': ['2'],
              'project': 'AWPCA', 'limit': 5, 'run_id': 1, 'sprint_id': 101}
    parameters = list(inspect.signature(function).parameters.values())[1:]
    return {p.name: values[p.name] for p in parameters
            if p.name in values and (p.default is inspect.Parameter.empty
                                     or p.name in ('project', 'limit'))}


@pytest.mark.parametrize('module', [reads, projects, files, notes, reports])
def test_no_hublib_read_writes_the_mirror(hub, mirrored, module):
    read_names = [name for name, function in inspect.getmembers(module, inspect.isfunction)
                  if function.__module__ == module.__name__ and not name.startswith('_')
                  and (module in (reads, reports) or name in (
                      'project', 'projects', 'base_jql',
                      'attachment', 'attachment_states', 'note', 'get_note', 'notes'))]
    called = 0
    for name in read_names:
        function = getattr(module, name)
        parameters = list(inspect.signature(function).parameters)
        if not parameters or parameters[0] != 'hub':
            continue
        try:
            function(hub, **_plausible_args(function))
        except Exception as error:  # noqa: BLE001 — only the mirror's bytes matter here
            if not hasattr(error, 'title'):
                raise
        called += 1
        assert snapshot(hub) == mirrored, f'{module.__name__}.{name} changed the mirror'
    if module is reads:
        assert called >= 7
    if module is reports:
        assert called == 4


def test_no_hublib_interface_write_touches_the_mirror(hub, mirrored):
    from hublib import backups
    calls = [
        lambda: notes.put_note(hub, 'AURORA-1', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'}),
        lambda: notes.put_note(hub, 'new:1', {'owner_note': 'спросить', 'updated_by': 'ivanov'}),
        lambda: notes.merge_note(hub, 'new:1', 'AURORA-1'),
        lambda: projects.create_project(hub, 'OTHER', 'Другой', 4216),
        lambda: settings.update_settings(hub, {'closed_statuses': ['Готово']}),
        lambda: settings.ensure_defaults(hub),
        lambda: files.request_fetch(hub, '2', author='ivanov'),
        lambda: files.cleanup(hub),
        lambda: backups.backup(hub),
    ]
    for call in calls:
        call()  # each of them succeeds on this hub: none may be skipped by an error
        assert snapshot(hub) == mirrored
    assert len(list(hub.backups_dir.glob('*.sqlite'))) == 1
