"""The agent's mapping of Jira's JSON to the hub's shapes (docs/agent.md «Что и как переносится»),
checked field by field on answers recorded in the shapes of Atlassian's documentation."""
from __future__ import annotations

import pytest

from hubweb.jira_agent import mapping
from tests.agent.fixtures import SETTINGS, recorded


def cloud_issue(number: int = 0) -> dict:
    return recorded('cloud_search_jql')['issues'][number]


def dc_issue(number: int = 0) -> dict:
    return recorded('dc_search')['issues'][number]


def test_a_cloud_issue_maps_to_the_hub_issue_field_by_field():
    issue = mapping.issue_of(cloud_issue(), SETTINGS, cloud=True)
    assert issue == {
        'key': 'AURORA-17', 'id': '10017', 'issue_type': 'Задача',
        'summary': 'Выгрузка отчёта по складам',
        'description': 'h2. Что сделать\n* выгрузить остатки\n* {code}select 1{code}',
        'status': 'На проверке', 'priority': 'Высокий',
        'assignee': 'ivanov@aurora.example',     # Cloud: the e-mail when Jira shows it
        'reporter': 'Анна Сидорова',             # … else the display name
        'duedate': '2026-11-30', 'planned_start': '2026-10-05', 'planned_end': None,
        'epic_key': 'AURORA-1',                  # the parent, whose type is the epic's
        'labels': ['AWPCA', 'склад'], 'rank': '0|i0001b:', 'story_points': 5.0,
        'updated': '2026-10-22T13:05:11.000+0300', 'created': '2026-10-01T10:00:00.000+0300',
        'neighbor': False,
        'links': [{'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-18'},
                  {'type': 'Relates', 'direction': 'inward', 'key': 'ORBIT-4'}],
        'comments': [{'id': '10101', 'author': 'Анна Сидорова',
                      'created': '2026-10-22T13:05:11.000+0300',
                      'updated': '2026-10-22T13:06:00.000+0300', 'body': 'Готово к *ревью*'}],
        'attachments': [{'id': '20007', 'filename': 'остатки.csv', 'size': 23,
                         'mime_type': 'text/csv', 'author': 'ivanov@aurora.example',
                         'created': '2026-10-20T09:15:00.000+0300'}],
        'sprint': 'Спринт 2',                    # the active one
        'sprint_ids': [101, 102],
    }


def test_a_data_center_issue_maps_names_sprint_texts_and_the_epic_link_field():
    issue = mapping.issue_of(dc_issue(), SETTINGS, cloud=False)
    assert (issue['assignee'], issue['reporter']) == ('ivanov', 'sidorova')  # the user's name
    assert issue['comments'][0]['author'] == 'sidorova'
    assert issue['attachments'][0]['author'] == 'ivanov'
    assert issue['epic_key'] == 'AURORA-1'       # field_ids.epic_link holds a key
    assert (issue['sprint'], issue['sprint_ids']) == ('Спринт 2', [101, 102])
    assert issue['links'] == [{'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-18'}]
    assert issue['story_points'] == 5.0 and issue['rank'] == '0|i0001b:'


def test_an_issue_without_optional_values_maps_them_to_null_and_empty():
    issue = mapping.issue_of(cloud_issue(1), SETTINGS, cloud=True)
    assert (issue['priority'], issue['assignee'], issue['description'], issue['duedate']) == \
        (None, None, None, None)
    assert (issue['labels'], issue['comments'], issue['attachments']) == ([], [], [])
    assert (issue['sprint'], issue['sprint_ids'], issue['epic_key']) == (None, [], None)
    assert issue['links'] == [{'type': 'Blocks', 'direction': 'inward', 'key': 'AURORA-17'}]


def test_a_parent_that_is_no_epic_is_no_epic_key():
    subtask = recorded('cloud_search_jql_2')['issues'][0]
    assert subtask['fields']['parent']['key'] == 'AURORA-17'
    assert mapping.issue_of(subtask, SETTINGS, cloud=True)['epic_key'] is None


def test_custom_fields_follow_field_ids_and_are_left_out_when_not_configured():
    settings = {**SETTINGS, 'field_ids': {'sprint': None, 'story_points': 'customfield_10026'}}
    issue = mapping.issue_of(cloud_issue(), settings, cloud=True)
    assert issue['story_points'] == 5.0
    assert (issue['planned_start'], issue['rank'], issue['sprint']) == (None, None, None)
    assert 'sprint_ids' not in issue  # unknown, so the hub keeps what it has
    assert mapping.search_fields(settings)[-1:] == ['customfield_10026']
    assert 'customfield_10020' in mapping.search_fields(SETTINGS)


@pytest.mark.parametrize('text, expected', [
    ('com.atlassian.greenhopper.service.sprint.Sprint@5b0e8f1c[id=101,rapidViewId=4216,state=CLOSED,'
     'name=Спринт 1,startDate=2026-09-01T09:00:00.000+03:00,completeDate=<null>,sequence=101,'
     'goal=Каркас, затем зеркало]', {'id': 101, 'name': 'Спринт 1', 'state': 'closed'}),
    ('com.atlassian.greenhopper.service.sprint.Sprint@2c7b84de[rapidViewId=4216,state=ACTIVE,'
     'name=Sprint 4 - release, part 2,sequence=102,id=102]',
     {'id': 102, 'name': 'Sprint 4 - release, part 2', 'state': 'active'}),
    ({'id': 7, 'name': 'S', 'state': 'future', 'boardId': 1}, {'id': 7, 'name': 'S', 'state': 'future'}),
    ('не спринт', None), (42, None), ({'name': 'без id'}, None),
])
def test_a_sprint_is_read_from_either_shape(text, expected):
    assert mapping.sprint_of(text) == expected


def test_the_sprint_is_the_active_one_else_the_last():
    assert mapping.current_sprint([{'id': 1, 'name': 'A', 'state': 'closed'},
                                   {'id': 2, 'name': 'B', 'state': 'active'},
                                   {'id': 3, 'name': 'C', 'state': 'future'}]) == 'B'
    assert mapping.current_sprint([{'id': 1, 'name': 'A', 'state': 'closed'},
                                   {'id': 2, 'name': 'B', 'state': 'closed'}]) == 'B'
    assert mapping.current_sprint([]) is None


def test_every_changelog_item_is_one_history_item_in_order():
    histories = recorded('cloud_changelog_page')['values']
    items = mapping.history_of('AURORA-17', histories, cloud=True)
    assert [(item['history_id'], item['seq']) for item in items] == [
        ('31001', 0), ('31001', 1), ('31002', 0), ('31002', 1), ('31003', 0)]
    assert items[1] == {'history_id': '31001', 'seq': 1, 'key': 'AURORA-17',
                        'created': '2026-10-03T10:00:00.000+0300', 'author': 'Анна Сидорова',
                        'field_id': 'assignee', 'field_name': 'assignee', 'from_value': None,
                        'from_string': None, 'to_value': '5b10a2844c20165700ede21g',
                        'to_string': 'Иван Иванов'}
    assert items[2]['field_id'] == 'customfield_10020' and items[2]['to_value'] == '101, 102'


def test_data_center_changelog_items_without_field_id_have_a_null_one():
    issue = dc_issue()
    histories, complete = mapping.changelog_of(issue)
    assert complete
    items = mapping.history_of(issue['key'], histories, cloud=False)
    assert [(item['field_id'], item['field_name'], item['author']) for item in items] == [
        (None, 'status', 'sidorova'), (None, 'Sprint', 'sidorova'), (None, 'status', 'ivanov')]


def test_cloud_search_changelog_cut_short_is_incomplete():
    histories, complete = mapping.changelog_of(cloud_issue())
    assert len(histories) == 1 and not complete          # total 3
    assert mapping.changelog_of(cloud_issue(1)) == ([], True)
    assert mapping.changelog_of({'key': 'X-1', 'fields': {}}) == ([], False)  # none sent


def test_comments_cut_short_are_known_as_such():
    comments, complete = mapping.comments_field(cloud_issue()['fields'])
    assert len(comments) == 1 and not complete          # total 2
    every = recorded('cloud_comments_page')['comments']
    issue = mapping.issue_of(cloud_issue(), SETTINGS, cloud=True, comments=every)
    assert [(comment['id'], comment['author']) for comment in issue['comments']] == [
        ('10101', 'Анна Сидорова'), ('10102', 'ivanov@aurora.example')]


def test_a_board_maps_type_columns_by_status_name_and_sprints():
    statuses = {status['id']: status['name'] for status in recorded('statuses')}
    board = mapping.board_of(4216, recorded('board_scrum'), recorded('board_configuration'),
                             statuses, recorded('board_sprints')['values'])
    assert board == {
        'board_id': 4216, 'type': 'scrum', 'kanban_backlog': None,
        'columns': [{'name': 'К выполнению', 'statuses': ['Открыта']},
                    {'name': 'В работе', 'statuses': ['В работе', 'На проверке']},
                    {'name': 'Готово', 'statuses': ['Готово', 'Снято']}],
        'sprints': [
            {'id': 101, 'name': 'Спринт 1', 'state': 'closed',
             'start_date': '2026-09-01T09:00:00.000+03:00', 'end_date': '2026-09-14T18:00:00.000+03:00',
             'complete_date': '2026-09-14T19:02:11.000+03:00', 'goal': 'Каркас, затем зеркало'},
            {'id': 102, 'name': 'Спринт 2', 'state': 'active',
             'start_date': '2026-09-15T09:00:00.000+03:00', 'end_date': '2026-09-28T18:00:00.000+03:00',
             'complete_date': None, 'goal': None},
            {'id': 103, 'name': 'Спринт 3', 'state': 'future', 'start_date': None, 'end_date': None,
             'complete_date': None, 'goal': None}]}


@pytest.mark.parametrize('board_type, first_column, backlog', [
    ('kanban', 'Backlog', True), ('kanban', 'Бэклог', True), ('kanban', 'К выполнению', False),
    ('scrum', 'Backlog', None), ('simple', 'Backlog', None)])
def test_a_kanban_board_has_a_backlog_when_its_first_column_is_jiras_backlog(board_type, first_column,
                                                                              backlog):
    configuration = {'columnConfig': {'columns': [{'name': first_column, 'statuses': [{'id': '1'}]}]}}
    board = mapping.board_of(9, {'type': board_type}, configuration, {'1': 'Открыта'}, [])
    assert board['kanban_backlog'] is backlog
    assert board['type'] == (board_type if board_type != 'simple' else None)


@pytest.mark.parametrize('user, cloud, expected', [
    ({'name': 'ivanov', 'displayName': 'Иван Иванов', 'emailAddress': 'i@x'}, False, 'ivanov'),
    ({'accountId': 'a1', 'displayName': 'Иван Иванов', 'emailAddress': 'i@x'}, True, 'i@x'),
    ({'accountId': 'a1', 'displayName': 'Иван Иванов'}, True, 'Иван Иванов'),
    ({'accountId': 'a1', 'displayName': 'Иван Иванов', 'emailAddress': ''}, True, 'Иван Иванов'),
    (None, True, None), (None, False, None)])
def test_a_person_is_named_as_the_mirror_names_people(user, cloud, expected):
    assert mapping.person(user, cloud) == expected
