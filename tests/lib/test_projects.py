"""Projects (spec «Проекты», contract §7): creation rules, base JQL, own issues and neighbours."""
from __future__ import annotations


import pytest

from hublib import (ConflictError, NotFoundError, ValidationError, projects, settings,
                    slices)
from tests.support.hubs import project_slice


@pytest.fixture
def aurora(hub):
    settings.update_settings(hub, {'project_key': 'AURORA'})
    return hub


def project_rows(hub) -> list[tuple]:
    return hub.db.execute_sql('SELECT label, name FROM project ORDER BY label').fetchall()


def test_create_project_returns_it_with_its_board(aurora, clock):
    project = projects.create_project(aurora, 'AWPCA', '  АРМ КА  ', board_id=4216)
    assert project == {'label': 'AWPCA', 'name': 'АРМ КА', 'created_at': '2026-11-30T10:00:00+00:00',
                       'board_id': 4216, 'board_type': None, 'own_count': 0, 'neighbor_count': 0}
    assert aurora.db.execute_sql('SELECT label, board_id, board_type FROM jira_project').fetchall() \
        == [('AWPCA', 4216, None)]
    assert projects.project(aurora, 'AWPCA') == project


def test_scenario_base_jql_of_two_projects(aurora, clock):
    projects.create_project(aurora, 'AWPCA', 'АРМ КА')
    clock.advance(minutes=10)
    projects.create_project(aurora, 'STOCKS_DRRK', 'Акции')
    assert projects.base_jql(aurora) == 'project = AURORA AND labels in ("AWPCA", "STOCKS_DRRK")'
    assert projects.project_labels(aurora) == ['AWPCA', 'STOCKS_DRRK']


def test_base_jql_in_creation_order(aurora, clock):
    projects.create_project(aurora, 'ZETA', 'Первый')
    clock.advance(seconds=1)
    projects.create_project(aurora, 'ALPHA', 'Второй')
    assert projects.base_jql(aurora) == 'project = AURORA AND labels in ("ZETA", "ALPHA")'
    assert [p['label'] for p in projects.projects(aurora)] == ['ZETA', 'ALPHA']


def test_base_jql_same_time_then_label(aurora):
    projects.create_project(aurora, 'b', 'B')
    projects.create_project(aurora, 'A', 'A')
    assert projects.base_jql(aurora) == 'project = AURORA AND labels in ("A", "b")'


def test_no_base_jql_without_projects_or_project_key(hub):
    assert projects.base_jql(hub) is None
    projects.create_project(hub, 'AWPCA', 'АРМ КА')
    assert projects.base_jql(hub) is None  # no project_key yet
    settings.update_settings(hub, {'project_key': 'AURORA'})
    assert projects.base_jql(hub) == 'project = AURORA AND labels in ("AWPCA")'


def test_scenario_label_is_a_jql_reserved_word(aurora):
    projects.create_project(aurora, 'EMPTY', 'Пустой')
    assert projects.base_jql(aurora) == 'project = AURORA AND labels in ("EMPTY")'


def issue(key, labels, epic_key=None, links=()):
    return {'key': key, 'summary': key, 'labels': labels, 'epic_key': epic_key,
            'links': [{'type': kind, 'direction': 'outward', 'key': target}
                      for kind, target in links]}


def test_scenario_own_and_neighbours(aurora, ingest):
    projects.create_project(aurora, 'AWPCA', 'АРМ КА')
    projects.create_project(aurora, 'STOCKS_DRRK', 'Акции')
    ingest(aurora, issue('AURORA-1', ['STOCKS_DRRK'], epic_key='AURORA-9',
                         links=[('Blocks', 'AURORA-2')]),
           issue('AURORA-9', ['AWPCA']), issue('AURORA-2', ['AWPCA']), issue('AURORA-3', ['AWPCA']))
    assert project_slice(aurora, 'STOCKS_DRRK') == {
        'AURORA-1': False, 'AURORA-2': True, 'AURORA-9': True}
    # Relative to AWPCA the same link makes AURORA-1 the neighbour.
    assert project_slice(aurora, 'AWPCA') == {
        'AURORA-9': False, 'AURORA-2': False, 'AURORA-3': False, 'AURORA-1': True}
    assert slices.counts(aurora, 'STOCKS_DRRK') == {'own_count': 1, 'neighbor_count': 2}
    counts = {p['label']: (p['own_count'], p['neighbor_count']) for p in projects.projects(aurora)}
    assert counts == {'AWPCA': (3, 1), 'STOCKS_DRRK': (1, 2)}


def test_slice_follows_inward_links_and_ignores_missing_issues(aurora, ingest):
    projects.create_project(aurora, 'P', 'P')
    ingest(aurora, issue('AURORA-1', ['P'], epic_key='AURORA-99',  # epic not mirrored
                         links=[('Blocks', 'AURORA-404')]),
           issue('AURORA-5', [], links=[('Relates', 'AURORA-1')]),
           issue('AURORA-6', ['p']),  # a label is matched exactly, case included
           issue('AURORA-7', ['PP']))
    assert project_slice(aurora, 'P') == {'AURORA-1': False, 'AURORA-5': True}


def test_own_issue_linked_to_own_issue_stays_own(aurora, ingest):
    projects.create_project(aurora, 'P', 'P')
    ingest(aurora, issue('AURORA-1', ['P'], epic_key='AURORA-2'),
           issue('AURORA-2', ['P', 'Q'], links=[('Blocks', 'AURORA-1')]))
    assert project_slice(aurora, 'P') == {'AURORA-1': False, 'AURORA-2': False}


def test_project_created_after_the_mirror_gets_its_slice(aurora, ingest):
    ingest(aurora, issue('AURORA-1', ['P'], links=[('Blocks', 'AURORA-2')]), issue('AURORA-2', []),
           issue('AURORA-3', []))
    projects.create_project(aurora, 'P', 'P')
    assert project_slice(aurora, 'P') == {'AURORA-1': False, 'AURORA-2': True}


BAD_LABELS = [
    pytest.param('STOCKS DRRK', id='space'),
    pytest.param('A\\B', id='backslash'),
    pytest.param('A\nB', id='newline'),
    pytest.param('A\tB', id='tab'),
    pytest.param('A\x00B', id='nul'),
    pytest.param('A\x7fB', id='del'),
    pytest.param('A\u00a0B', id='nbsp'),
    pytest.param('A\u2003B', id='em-space'),
    pytest.param('', id='empty'),
    pytest.param('X' * 101, id='101-chars'),
    pytest.param(None, id='none'),
    pytest.param(5, id='int'),
    pytest.param(['A'], id='list'),
] + [pytest.param(f'A{ch}B', id=f'char-{ch}') for ch in ',"\'()[]{}']


@pytest.mark.parametrize('label', BAD_LABELS)
def test_scenario_bad_label_is_refused(aurora, label):
    with pytest.raises(ValidationError) as raised:
        projects.create_project(aurora, label, 'Название')
    assert set(raised.value.fields) == {'label'}
    assert project_rows(aurora) == []
    assert aurora.db.execute_sql('SELECT count(*) FROM jira_project').fetchone() == (0,)


@pytest.mark.parametrize('label', ['A', 'X' * 100, 'sfm_kedr', 'STOCKS-DRRK', 'АРМ_КА', 'a.b:c', 'EMPTY'])
def test_good_label_is_accepted(aurora, label):
    projects.create_project(aurora, label, 'Название')
    assert project_rows(aurora) == [(label, 'Название')]


def test_scenario_same_label_other_case(aurora):
    projects.create_project(aurora, 'AWPCA', 'АРМ КА')
    with pytest.raises(ConflictError) as raised:
        projects.create_project(aurora, 'awpca', 'Другой')
    assert raised.value.message == 'проект с такой меткой уже есть'
    with pytest.raises(ConflictError):
        projects.create_project(aurora, 'AWPCA', 'АРМ КА')
    assert project_rows(aurora) == [('AWPCA', 'АРМ КА')]


def test_case_insensitive_uniqueness_covers_cyrillic(aurora):
    projects.create_project(aurora, 'Проект', 'П')
    with pytest.raises(ConflictError):
        projects.create_project(aurora, 'ПРОЕКТ', 'П')


@pytest.mark.parametrize('name', ['', '   ', '\t\n', 'Я' * 101, None, 5])
def test_bad_name_is_refused(aurora, name):
    with pytest.raises(ValidationError) as raised:
        projects.create_project(aurora, 'AWPCA', name)
    assert set(raised.value.fields) == {'name'}
    assert project_rows(aurora) == []


@pytest.mark.parametrize('name, stored', [('АРМ КА', 'АРМ КА'), ('  x  ', 'x'),
                                          (' ' + 'Я' * 100 + ' ', 'Я' * 100)])
def test_name_is_stripped(aurora, name, stored):
    assert projects.create_project(aurora, 'AWPCA', name)['name'] == stored


@pytest.mark.parametrize('board_id', [0, -1, True, False, '5', 1.5, 5.0, [5]])
def test_bad_board_id_is_refused(aurora, board_id):
    with pytest.raises(ValidationError) as raised:
        projects.create_project(aurora, 'AWPCA', 'АРМ КА', board_id)
    assert set(raised.value.fields) == {'board_id'}
    assert project_rows(aurora) == []


@pytest.mark.parametrize('board_id', [None, 1, 4216])
def test_good_board_id_is_accepted(aurora, board_id):
    assert projects.create_project(aurora, 'AWPCA', 'АРМ КА', board_id)['board_id'] == board_id


def test_every_bad_field_is_named_at_once(aurora):
    with pytest.raises(ValidationError) as raised:
        projects.create_project(aurora, 'A B', '', 0)
    assert set(raised.value.fields) == {'label', 'name', 'board_id'}


def test_unknown_project_is_not_found(hub):
    with pytest.raises(NotFoundError):
        projects.project(hub, 'NOPE')
