"""The report tools (contract §17, §14a) through the SDK's client: the same figures as the HTTP
API's report endpoints (one hublib call each), ``as_of`` beside them, and the same refusals (a
future sprint, a sprint not on the board, bad arguments named)."""
from __future__ import annotations

import pytest
from mcp import Client

from hublib import open_hub, syncjournal
from hubweb.mcp_server import create_mcp_server
from tests.support import reports as world

from .conftest import body
from .test_tools import HttpTwin

pytestmark = pytest.mark.anyio

# tool, arguments, the HTTP request of the same report (path, query)
SAME_FIGURES = [
    ('sprint_report', {'label': 'AWPCA', 'sprint_id': 102, 'tz': 'Europe/Moscow'},
     '/projects/AWPCA/sprints/102/report', {'tz': 'Europe/Moscow'}),
    ('sprint_report', {'label': 'AWPCA', 'sprint_id': 101}, '/projects/AWPCA/sprints/101/report',
     {}),
    ('project_flow', {'label': 'ORION', 'since': '2026-11-01', 'until': '2026-11-25',
                      'tz': 'Europe/Moscow'},
     '/projects/ORION/flow', {'since': '2026-11-01', 'until': '2026-11-25', 'tz': 'Europe/Moscow'}),
    ('project_flow', {'label': 'AWPCA'}, '/projects/AWPCA/flow', {}),
    ('cycle_time', {'label': 'ORION', 'since': '2026-11-01', 'until': '2026-11-20T00:00:00+03:00'},
     '/projects/ORION/cycle-time', {'since': '2026-11-01', 'until': '2026-11-20T00:00:00+03:00'}),
    ('cycle_time', {'label': 'ORION'}, '/projects/ORION/cycle-time', {}),
    ('velocity', {'label': 'AWPCA'}, '/projects/AWPCA/velocity', {}),
    ('velocity', {'label': 'AWPCA', 'sprints': 1}, '/projects/AWPCA/velocity', {'sprints': '1'}),
]


@pytest.fixture
def reported(hub, clock):
    """The reports' hand-built mirror (tests/support/reports.py), written the agent's way."""
    clock.set(world.NOW)
    world.build(hub)
    return hub


@pytest.fixture
async def client(reported, data_dir, clock):
    guarded = open_hub(data_dir, clock=clock, guard_mirror=True)
    try:
        async with Client(create_mcp_server(guarded)) as connected:
            yield connected
    finally:
        guarded.close()


@pytest.mark.parametrize('tool, arguments, path, query', SAME_FIGURES)
async def test_report_tools_give_the_http_apis_figures_and_as_of(client, reported, tool,
                                                                 arguments, path, query):
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    status, http = HttpTwin(reported)(path, **query)
    assert status == 200, http
    answer = dict(result.structured_content)
    as_of = answer.pop('as_of')
    assert answer == http
    assert as_of == syncjournal.mirror_as_of(reported) is not None


async def test_the_sprint_report_names_what_the_sprint_went_through(client):
    report = (await client.call_tool('sprint_report', {
        'label': 'AWPCA', 'sprint_id': 102, 'tz': 'Europe/Moscow'})).structured_content
    assert report['added'] == ['AURORA-3', 'AURORA-6', 'AURORA-7']
    assert report['points']['committed'] == 19


@pytest.mark.parametrize('tool, arguments, title, description', [
    ('sprint_report', {'label': 'AWPCA', 'sprint_id': 103}, 'Конфликт', 'спринт ещё не начат'),
    ('sprint_report', {'label': 'AWPCA', 'sprint_id': 999}, 'Не найдено', None),
    ('sprint_report', {'label': 'ORION', 'sprint_id': 102}, 'Не найдено', None),
    ('velocity', {'label': 'NOPE'}, 'Не найдено', None),
])
async def test_refusals_are_the_http_apis(client, tool, arguments, title, description):
    result = await client.call_tool(tool, arguments)
    assert result.is_error is True
    assert body(result)['title'] == title
    if description:
        assert body(result)['description'] == description


@pytest.mark.parametrize('tool, arguments, field', [
    ('sprint_report', {'label': 'AWPCA', 'sprint_id': True}, 'sprint_id'),
    ('sprint_report', {'label': 'AWPCA', 'sprint_id': '102'}, 'sprint_id'),
    ('sprint_report', {'label': 'AWPCA', 'sprint_id': 2 ** 63}, 'sprint_id'),
    ('sprint_report', {'label': 'AWPCA', 'sprint_id': 102, 'tz': 'Moscow'}, 'tz'),
    ('project_flow', {'label': 'ORION', 'since': '2025-01-01', 'until': '2026-01-03'}, 'since'),
    ('project_flow', {'label': 'ORION', 'until': 'сегодня'}, 'until'),
    ('cycle_time', {'label': 'ORION', 'until': '2026-11-01T25:00:00Z'}, 'until'),
    ('velocity', {'label': 'AWPCA', 'sprints': 0}, 'sprints'),
    ('velocity', {'label': 'AWPCA', 'sprints': 51}, 'sprints'),
    ('velocity', {'label': 'AWPCA', 'sprints': True}, 'sprints'),
    ('velocity', {'label': 'AWPCA', 'limit': 5}, 'limit'),
])
async def test_bad_arguments_are_refused_naming_them(client, tool, arguments, field):
    result = await client.call_tool(tool, arguments)
    assert result.is_error is True
    assert list(body(result)['fields']) == [field]


async def test_cycle_time_tool_pages_like_the_http_api(client, reported):
    first = await client.call_tool('cycle_time', {'label': 'ORION', 'since': '2026-11-01',
                                                  'until': '2026-11-20', 'limit': 1})
    assert not first.is_error, first.content
    rest = await client.call_tool('cycle_time', {'label': 'ORION', 'since': '2026-11-01',
                                                 'until': '2026-11-20', 'limit': 1,
                                                 'cursor': body(first)['next_cursor']})
    assert [item['key'] for item in body(first)['items'] + body(rest)['items']] == [
        'FLOW-3', 'FLOW-4']
    assert body(rest)['next_cursor'] is None
    assert body(first)['summary'] == body(rest)['summary'] and body(rest)['summary']['count'] == 2
