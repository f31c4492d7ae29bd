"""Reports with a bounded cost (contract §20, «Capacity»): cycle-time items come in pages
(``limit``, ``cursor``) like every list while the summary stays over the whole window, and the
cycle time and the flow read their issues' timelines a chunk at a time without changing a
figure."""
from __future__ import annotations

import pytest

from hublib import open_hub, reports
from hublib.errors import ValidationError
from tests.support import reports as world
from tests.support.paging import every_item
from tests.support.scale import ScaleJira, build_hub

# The scale mirror's history ends in January 2027: a year of it holds done issues of every
# project.
WINDOW = {'since': '2026-01-20', 'until': '2027-01-20'}


@pytest.fixture(scope='module')
def scale(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp('scale') / 'hub'
    build_hub(data_dir, ScaleJira(3000), workers=0)
    hub = open_hub(data_dir)
    yield hub
    hub.close()


@pytest.fixture
def mirrored(hub, clock):
    clock.set(world.NOW)
    world.build(hub)
    return hub


def test_cycle_time_pages_walk_every_item_once_in_key_order(scale):
    whole = reports.cycle_time(scale, 'AWPCA', **WINDOW, limit=1000)
    assert whole['next_cursor'] is None and len(whole['items']) > 30
    walked = every_item(reports.cycle_time, scale, 'AWPCA', **WINDOW, limit=7, pages=100)
    assert walked == whole['items']


def test_every_cycle_time_page_has_the_summary_of_the_whole_window(scale):
    whole = reports.cycle_time(scale, 'AWPCA', **WINDOW, limit=1000)
    first = reports.cycle_time(scale, 'AWPCA', **WINDOW, limit=5)
    second = reports.cycle_time(scale, 'AWPCA', **WINDOW, limit=5, cursor=first['next_cursor'])
    assert len(first['items']) == len(second['items']) == 5
    assert first['summary'] == second['summary'] == whole['summary']
    assert whole['summary']['count'] == len(whole['items'])


def test_cycle_time_pages_by_default_500(scale):
    answer = reports.cycle_time(scale, 'AWPCA', **WINDOW)
    assert len(answer['items']) == min(500, answer['summary']['count'])


def test_a_small_window_is_one_page_without_a_cursor(mirrored):
    answer = reports.cycle_time(mirrored, 'ORION', since='2026-11-01', until='2026-11-20')
    assert [item['key'] for item in answer['items']] == ['FLOW-3', 'FLOW-4']
    assert answer['next_cursor'] is None
    first = reports.cycle_time(mirrored, 'ORION', since='2026-11-01', until='2026-11-20', limit=1)
    assert [item['key'] for item in first['items']] == ['FLOW-3'] and first['next_cursor']
    assert first['summary'] == answer['summary']


@pytest.mark.parametrize('arguments, field', [
    ({'limit': 0}, 'limit'), ({'limit': 1001}, 'limit'), ({'limit': 'много'}, 'limit'),
    ({'cursor': 'не курсор'}, 'cursor'), ({'cursor': 'WzFd'}, 'cursor')])  # WzFd: [1], no key
def test_bad_limits_and_cursors_are_refused_naming_them(mirrored, arguments, field):
    with pytest.raises(ValidationError) as raised:
        reports.cycle_time(mirrored, 'ORION', **arguments)
    assert list(raised.value.fields) == [field]


def test_reading_timelines_a_chunk_at_a_time_changes_no_figure(scale, monkeypatch):
    cycle = reports.cycle_time(scale, 'ORION', **WINDOW, limit=1000)
    flow = reports.project_flow(scale, 'ORION', **WINDOW)
    monkeypatch.setattr(reports, 'TIMELINE_CHUNK', 3)
    assert reports.cycle_time(scale, 'ORION', **WINDOW, limit=1000) == cycle
    assert reports.project_flow(scale, 'ORION', **WINDOW) == flow
