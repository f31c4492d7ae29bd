"""State and boards ingest at the library level (hublib.mirror); HTTP scenarios: tests/web/test_mirror.py."""
from __future__ import annotations

import json

import pytest

from hublib import ConflictError, NotFoundError, ValidationError, mirror, projects, settings


@pytest.fixture
def refresh(hub, claimed_refresh):
    settings.update_settings(hub, {'project_key': 'AURORA'})
    projects.create_project(hub, 'AWPCA', 'АРМ КА', board_id=4216)
    return claimed_refresh(hub)


def table(hub, sql):
    return [tuple(row) for row in hub.db.execute_sql(sql).fetchall()]


def test_minimal_issue_gets_defaults(hub, refresh):
    assert mirror.ingest_state(hub, 'jira', refresh, [{'key': 'AURORA-1'}]) == {
        'issues': 1, 'links': 0, 'unparsed_times': 0}
    assert table(hub, 'SELECT key, labels, neighbor, fetched_at, story_points FROM issue') == [
        ('AURORA-1', '[]', 0, '2026-11-30T10:00:00+00:00', None)]


def test_labels_stored_as_json_list(hub, refresh):
    mirror.ingest_state(hub, 'jira', refresh, [{'key': 'AURORA-1', 'labels': ['AWPCA', 'Срочно']}])
    assert json.loads(table(hub, 'SELECT labels FROM issue')[0][0]) == ['AWPCA', 'Срочно']


def test_same_issue_twice_in_a_page_last_wins(hub, refresh):
    mirror.ingest_state(hub, 'jira', refresh, [
        {'key': 'AURORA-1', 'summary': 'первая', 'comments': [{'id': '1', 'body': 'a'}]},
        {'key': 'AURORA-1', 'summary': 'вторая', 'comments': [{'id': 2, 'body': 'b'}]}])
    assert table(hub, 'SELECT summary FROM issue') == [('вторая',)]
    assert table(hub, 'SELECT comment_id, body FROM issue_comment ORDER BY comment_id') == [
        ('1', 'a'), ('2', 'b')]


def test_unparseable_comment_time_is_kept_with_null_created_at_and_null_gives_null(hub, refresh):
    assert mirror.ingest_state(hub, 'jira', refresh, [
        {'key': 'AURORA-1', 'comments': [{'id': '1', 'created': 'вчера'}]}])['unparsed_times'] == 1
    assert table(hub, 'SELECT created, created_at FROM issue_comment') == [('вчера', None)]
    mirror.ingest_state(hub, 'jira', refresh, [
        {'key': 'AURORA-1', 'comments': [{'id': '1', 'created': None}]}])
    assert table(hub, 'SELECT created, created_at FROM issue_comment') == [(None, None)]


def test_links_absent_keeps_links(hub, refresh):
    mirror.ingest_state(hub, 'jira', refresh, [{'key': 'AURORA-1', 'links': [
        {'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-2'}]}])
    mirror.ingest_state(hub, 'jira', refresh, [{'key': 'AURORA-1'}])
    assert table(hub, 'SELECT * FROM issue_link') == [('AURORA-1', 'AURORA-2', 'Blocks')]


def test_inward_link_does_not_revive_what_its_source_dropped_in_the_same_page(hub, refresh):
    mirror.ingest_state(hub, 'jira', refresh, [{'key': 'AURORA-1', 'links': [
        {'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-2'}]}])
    # AURORA-1 no longer blocks AURORA-2; AURORA-2, read a moment earlier, still says it does.
    mirror.ingest_state(hub, 'jira', refresh, [
        {'key': 'AURORA-2', 'links': [{'type': 'Blocks', 'direction': 'inward', 'key': 'AURORA-1'},
                                      {'type': 'Relates', 'direction': 'inward', 'key': 'AURORA-7'}]},
        {'key': 'AURORA-1', 'links': []}])
    assert table(hub, 'SELECT * FROM issue_link') == [('AURORA-7', 'AURORA-2', 'Relates')]


def test_unknown_command_is_not_found_and_nothing_written(hub, refresh):
    with pytest.raises(NotFoundError):
        mirror.ingest_state(hub, 'jira', refresh + 100, [{'key': 'AURORA-1'}])
    assert table(hub, 'SELECT count(*) FROM issue') == [(0,)]


def test_finished_refresh_is_conflict(hub, refresh):
    with hub.write():
        hub.db.execute_sql("UPDATE command SET status = 'done' WHERE id = ?", (refresh,))
    with pytest.raises(ConflictError):
        mirror.ingest_state(hub, 'jira', refresh, [{'key': 'AURORA-1'}])


def test_every_bad_issue_is_named(hub, refresh):
    with pytest.raises(ValidationError) as caught:
        mirror.ingest_state(hub, 'jira', refresh, [
            {'key': 'AURORA-1'}, {'key': 'bad key'}, {'key': 'AURORA-3', 'labels': [1]},
            {'key': 'AURORA-4', 'comments': 'нет'}])
    assert set(caught.value.fields) == {'issues[1].key', 'issues[2].labels[0]', 'issues[3].comments'}
    assert table(hub, 'SELECT count(*) FROM issue') == [(0,)]


def test_counters_accumulate_over_pages(hub, refresh):
    link = {'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-99'}
    mirror.ingest_state(hub, 'jira', refresh, [{'key': f'AURORA-{n}', 'links': [link, link]}
                                               for n in range(1, 4)])
    mirror.ingest_state(hub, 'jira', refresh, [{'key': 'AURORA-10', 'links': [link]}])
    assert table(hub, 'SELECT issues_count, links_count FROM sync_run') == [(4, 7)]


def test_boards_upsert_and_keep_sprints_when_absent(hub):
    board = {'board_id': 4216, 'type': 'kanban', 'kanban_backlog': True, 'columns': None,
             'sprints': [{'id': 1, 'name': 'С1', 'state': 'active'}]}
    assert mirror.ingest_boards(hub, 'jira', None, [board]) == {'boards': 1, 'sprints': 1, 'unparsed_times': 0}
    mirror.ingest_boards(hub, 'jira', 5, [{'board_id': 4216, 'type': 'scrum'}])
    assert table(hub, 'SELECT board_id, type, columns, kanban_backlog FROM jira_board') == [
        (4216, 'scrum', None, None)]
    assert table(hub, 'SELECT sprint_id, board_id, name FROM jira_sprint') == [(1, 4216, 'С1')]


def test_board_type_only_for_projects_on_that_board(hub):
    projects.create_project(hub, 'AWPCA', 'АРМ КА', board_id=4216)
    projects.create_project(hub, 'SFM', 'Другой', board_id=77)
    mirror.ingest_boards(hub, 'jira', None, [{'board_id': 4216, 'type': 'scrum'}])
    assert table(hub, 'SELECT label, board_type FROM jira_project ORDER BY label') == [
        ('AWPCA', 'scrum'), ('SFM', None)]


@pytest.mark.parametrize('command_id', ['17', 1.5, True])
def test_boards_command_id_type(hub, command_id):
    with pytest.raises(ValidationError) as caught:
        mirror.ingest_boards(hub, 'jira', command_id, [])
    assert 'command_id' in caught.value.fields


@pytest.mark.parametrize('issue, field', [
    ({'key': 'AURORA-1', 'sprint_ids': [2 ** 64]}, 'issues[0].sprint_ids[0]'),
    ({'key': 'AURORA-1', 'story_points': 10 ** 400}, 'issues[0].story_points'),
    ({'key': 'AURORA-1', 'story_points': float('nan')}, 'issues[0].story_points'),
    ({'key': 'AURORA-1', 'attachments': [{'id': '1', 'size': 2 ** 63}]},
     'issues[0].attachments[0].size'),
])
def test_numbers_beyond_sqlite_are_validation_errors(hub, refresh, issue, field):
    with pytest.raises(ValidationError) as caught:
        mirror.ingest_state(hub, 'jira', refresh, [issue])
    assert field in caught.value.fields
