"""The report endpoints of contract §17 over HTTP: the same figures as hublib, the query strings
typed by hublib's schemas, the refusals (404, 409, 422 naming the field) and the documented shape."""
from __future__ import annotations

import pytest

from hublib import reports
from tests.support import reports as world


@pytest.fixture
def mirrored(hub, clock):
    clock.set(world.NOW)
    world.build(hub)
    return hub


def get(client, headers, path: str, status: int = 200, **query):
    result = client.simulate_get(path, headers=headers, params=query or None)
    assert result.status_code == status, result.json
    return result.json


def test_sprint_report_over_http_is_the_hublib_report(mirrored, client, client_headers):
    answer = get(client, client_headers, '/projects/AWPCA/sprints/102/report', tz='Europe/Moscow')
    assert answer == reports.sprint_report(mirrored, 'AWPCA', 102, tz='Europe/Moscow')
    assert answer['added'] == ['AURORA-3', 'AURORA-6', 'AURORA-7']
    assert answer['points']['committed'] == 19


def test_flow_cycle_time_and_velocity_over_http_are_the_hublib_reports(mirrored, client,
                                                                       client_headers):
    assert get(client, client_headers, '/projects/ORION/flow', since='2026-11-12',
               until='2026-11-12', tz='Europe/Moscow') == reports.project_flow(
        mirrored, 'ORION', since='2026-11-12', until='2026-11-12', tz='Europe/Moscow')
    assert get(client, client_headers, '/projects/ORION/cycle-time', since='2026-11-01',
               until='2026-11-20T00:00:00+03:00') == reports.cycle_time(
        mirrored, 'ORION', since='2026-11-01', until='2026-11-19T21:00:00Z')
    assert get(client, client_headers, '/projects/AWPCA/velocity', sprints='3') == \
        reports.velocity(mirrored, 'AWPCA', sprints=3)
    assert get(client, client_headers, '/projects/ORION/flow')['days'][-1]['date'] == '2026-11-25'


@pytest.mark.parametrize('path, status, title', [
    ('/projects/NOPE/sprints/102/report', 404, 'Не найдено'),
    ('/projects/AWPCA/sprints/999/report', 404, 'Не найдено'),
    ('/projects/AWPCA/sprints/x/report', 404, 'Не найдено'),
    ('/projects/AWPCA/sprints/0/report', 404, 'Не найдено'),
    ('/projects/ORION/sprints/102/report', 404, 'Не найдено'),
    ('/projects/AWPCA/sprints/103/report', 409, 'Конфликт'),
    ('/projects/AWPCA/sprints/104/report', 409, 'Конфликт'),
    ('/projects/NOPE/flow', 404, 'Не найдено'),
    ('/projects/NOPE/cycle-time', 404, 'Не найдено'),
    ('/projects/NOPE/velocity', 404, 'Не найдено'),
])
def test_unknown_projects_and_sprints_and_a_future_sprint_are_refused(mirrored, client,
                                                                      client_headers, path,
                                                                      status, title):
    answer = get(client, client_headers, path, status)
    assert answer['title'] == title
    if status == 409:
        assert answer['description'] == 'спринт ещё не начат'


@pytest.mark.parametrize('path, query, field', [
    ('/projects/AWPCA/sprints/102/report', {'tz': 'Moscow'}, 'tz'),
    ('/projects/AWPCA/sprints/102/report', {'tz': '../../etc/passwd'}, 'tz'),
    ('/projects/ORION/flow', {'tz': 'UTC+3'}, 'tz'),
    ('/projects/ORION/flow', {'since': '2025-01-01', 'until': '2026-01-03'}, 'since'),
    ('/projects/ORION/flow', {'since': '2026-11-30', 'until': '2026-11-01'}, 'since'),
    ('/projects/ORION/flow', {'since': '2026-11-31'}, 'since'),
    ('/projects/ORION/flow', {'until': 'сегодня'}, 'until'),
    ('/projects/ORION/cycle-time', {'since': '2025-11-01', 'until': '2026-11-03'}, 'since'),
    ('/projects/ORION/cycle-time', {'until': '2026-11-01T25:00:00Z'}, 'until'),
    ('/projects/ORION/cycle-time', {'tz': 'Europe/Moskva'}, 'tz'),
    ('/projects/AWPCA/velocity', {'sprints': '0'}, 'sprints'),
    ('/projects/AWPCA/velocity', {'sprints': '51'}, 'sprints'),
    ('/projects/AWPCA/velocity', {'sprints': 'шесть'}, 'sprints'),
    ('/projects/AWPCA/velocity', {'limit': '5'}, 'limit'),
])
def test_bad_query_values_are_422_naming_the_field(mirrored, client, client_headers, path, query,
                                                   field):
    answer = get(client, client_headers, path, 422, **query)
    assert list(answer['fields']) == [field]


def test_reports_need_the_client_token(mirrored, client, agent_headers):
    assert client.simulate_get('/projects/AWPCA/velocity').status_code == 401
    assert client.simulate_get('/projects/AWPCA/velocity', headers=agent_headers).status_code == 403


def test_the_document_describes_the_reports_and_their_queries(client):
    document = client.simulate_get('/openapi.json').json
    paths = document['paths']
    report = paths['/projects/{label}/sprints/{sprint_id}/report']['get']
    assert {'200', '404', '409', '422'} <= set(report['responses'])
    assert [p['name'] for p in report['parameters'] if p['in'] == 'query'] == ['tz']
    flow = paths['/projects/{label}/flow']['get']
    query = {p['name']: p['schema'] for p in flow['parameters'] if p['in'] == 'query'}
    assert query['since'] == {'type': 'string', 'format': 'date'}
    velocity = paths['/projects/{label}/velocity']['get']
    sprints = next(p for p in velocity['parameters'] if p['name'] == 'sprints')['schema']
    assert (sprints['minimum'], sprints['maximum']) == (1, 50)
    schemas = document['components']['schemas']
    assert set(schemas['SprintReport']['required']) == {
        'sprint', 'start', 'end', 'committed', 'added', 'removed', 'completed', 'not_completed',
        'points', 'burndown'}
    assert set(schemas['CycleTimeSummary']['properties']) == {'count', 'lead_days', 'cycle_days'}
