"""Times an agent sends that the hub cannot read (``to_utc`` gives None: ``garbage``, ``""``,
``2026-02-30T…``) are no malformed value (seed 001 «Журнал изменений задач»: «неразбираемое —
NULL в приведённой колонке»): the page is accepted, the text stored as sent, the normalised column
(``at``, ``created_at``) NULL, such a history row stays out of the change feed, and it is never
silent — ``unparsed_times`` in every ingest answer and one WARNING a request naming the first item
and field. A time of the wrong JSON type stays a refusal naming it."""
from __future__ import annotations

import logging

import pytest

from hublib import history, mirror, reads
from hublib.errors import ValidationError

GOOD = '2026-10-22T09:00:00.000+0300'
BAD_TIMES = ['garbage', '2026-02-30T10:00:00.000+0300', '2026-10-22T09:00:00.000+9999',
             '2026-10-22T09:00:00+99:99', '2026-10-22', '', '22.10.2026 09:00']
WRONG_TYPES = [5, 1.5, True, ['2026-10-22'], {'at': GOOD}]


def issue(key: str, **fields) -> dict:
    return {'key': key, 'summary': key, 'updated': GOOD, 'created': GOOD, **fields}


def change(history_id: str, **fields) -> dict:
    return {'history_id': history_id, 'seq': 0, 'key': 'AURORA-1', 'created': GOOD,
            'field_id': 'status', 'to_string': 'Готово', **fields}


def rows(hub, sql: str) -> list[tuple]:
    return [tuple(row) for row in hub.db.execute_sql(sql).fetchall()]


def warnings_of(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records
            if record.name == 'hublib.ingest' and record.levelno == logging.WARNING]


@pytest.mark.parametrize('bad', BAD_TIMES)
def test_state_page_stores_an_unreadable_time_as_sent_with_a_null_hub_time(hub, claimed_refresh,
                                                                           bad):
    command_id = claimed_refresh(hub)
    answer = mirror.ingest_state(hub, 'jira', command_id, [
        issue('AURORA-1'),
        issue('AURORA-2', updated=bad, created=bad,
              comments=[{'id': '1', 'created': GOOD}, {'id': '2', 'created': bad, 'updated': bad}],
              attachments=[{'id': '7', 'created': bad}])])
    assert answer == {'issues': 2, 'links': 0, 'unparsed_times': 5}
    assert rows(hub, "SELECT jira_updated, created FROM issue WHERE key = 'AURORA-2'") == [(bad, bad)]
    assert rows(hub, 'SELECT comment_id, created, updated, created_at FROM issue_comment '
                     'ORDER BY comment_id') == [('1', GOOD, None, '2026-10-22T06:00:00+00:00'),
                                                ('2', bad, bad, None)]
    assert rows(hub, 'SELECT created, created_at FROM issue_attachment') == [(bad, None)]
    card = reads.issue_card(hub, 'AURORA-2')
    assert (card['jira_updated'], card['created']) == (bad, bad)
    assert [c['created_at'] for c in card['comments'] if c['comment_id'] == '2'] == [None]


@pytest.mark.parametrize('bad', BAD_TIMES)
def test_history_row_with_an_unreadable_time_is_stored_and_stays_out_of_the_feed(hub, bad):
    items = [change(str(5000 + n)) for n in range(5)]
    items[3]['created'] = bad
    assert history.ingest_history(hub, 'jira', None, items) == {
        'inserted': 5, 'ignored': 0, 'unparsed_times': 1}
    assert rows(hub, "SELECT created, at FROM issue_change WHERE history_id = '5003'") == [
        (bad, None)]
    fed = [item['history_id'] for item in reads.change_feed(hub)['items']]
    assert fed == ['5000', '5001', '5002', '5004']
    assert '5003' not in [item['history_id']
                          for item in reads.issue_changes(hub, 'AURORA-1')['items']]
    # sent again: ignored like any stored row, and counted again (it is in this page too)
    assert history.ingest_history(hub, 'jira', None, items) == {
        'inserted': 0, 'ignored': 5, 'unparsed_times': 1}


@pytest.mark.parametrize('bad', BAD_TIMES)
@pytest.mark.parametrize('name', ['start_date', 'end_date', 'complete_date'])
def test_boards_page_stores_an_unreadable_sprint_time_as_sent(hub, bad, name):
    boards = [{'board_id': 1, 'type': 'scrum', 'sprints': [
        {'id': 1, 'name': 'Спринт 1', 'start_date': GOOD},
        {'id': 2, 'name': 'Спринт 2', name: bad}]}]
    assert mirror.ingest_boards(hub, 'jira', None, boards) == {
        'boards': 1, 'sprints': 2, 'unparsed_times': 1}
    assert rows(hub, f'SELECT {name} FROM jira_sprint WHERE sprint_id = 2') == [(bad,)]


def test_one_warning_a_request_names_the_first_item_and_field(hub, claimed_refresh, caplog):
    caplog.set_level(logging.WARNING, logger='hublib.ingest')
    command_id = claimed_refresh(hub)
    mirror.ingest_state(hub, 'jira', command_id, [
        issue('AURORA-1'), issue('AURORA-2', comments=[{'id': '1', 'updated': 'вчера'}]),
        issue('AURORA-3', created='garbage')])
    history.ingest_history(hub, 'jira', None, [change('1'), change('2', created=''),
                                               change('3', created='garbage')])
    mirror.ingest_boards(hub, 'jira', None, [{'board_id': 1, 'sprints': [
        {'id': 1, 'start_date': GOOD}, {'id': 2, 'end_date': '2026-02-30T10:00:00Z'}]}])
    state, changes, boards = warnings_of(caplog)
    assert 'агент jira' in state and ' 2 ' in state
    assert "issues[1].comments[0].updated = 'вчера'" in state
    assert ' 2 ' in changes and "items[1].created = ''" in changes
    assert ' 1 ' in boards and 'boards[0].sprints[1].end_date' in boards


def test_a_page_whose_times_all_read_answers_zero_and_logs_nothing(hub, claimed_refresh, caplog):
    caplog.set_level(logging.WARNING, logger='hublib.ingest')
    command_id = claimed_refresh(hub)
    assert mirror.ingest_state(hub, 'jira', command_id, [issue('AURORA-1')])['unparsed_times'] == 0
    assert history.ingest_history(hub, 'jira', None, [change('1')])['unparsed_times'] == 0
    assert history.ingest_history(hub, 'jira', None, [])['unparsed_times'] == 0
    assert mirror.ingest_boards(hub, 'jira', None, [{'board_id': 1}])['unparsed_times'] == 0
    assert warnings_of(caplog) == []


@pytest.mark.parametrize('wrong', WRONG_TYPES)
@pytest.mark.parametrize('where, field', [
    (lambda wrong: issue('AURORA-2', updated=wrong), 'issues[1].updated'),
    (lambda wrong: issue('AURORA-2', created=wrong), 'issues[1].created'),
    (lambda wrong: issue('AURORA-2', comments=[{'id': '1', 'created': wrong}]),
     'issues[1].comments[0].created'),
    (lambda wrong: issue('AURORA-2', attachments=[{'id': '7', 'created': wrong}]),
     'issues[1].attachments[0].created'),
])
def test_a_state_time_of_the_wrong_json_type_is_refused_naming_it(hub, claimed_refresh, wrong,
                                                                  where, field):
    command_id = claimed_refresh(hub)
    with pytest.raises(ValidationError) as refused:
        mirror.ingest_state(hub, 'jira', command_id, [issue('AURORA-1'), where(wrong)])
    assert list(refused.value.fields) == [field]
    assert reads.issues(hub)['items'] == []


@pytest.mark.parametrize('wrong', WRONG_TYPES)
def test_a_history_time_of_the_wrong_json_type_is_refused_naming_it(hub, wrong):
    items = [change(str(5000 + n)) for n in range(5)]
    items[3]['created'] = wrong
    with pytest.raises(ValidationError) as refused:
        history.ingest_history(hub, 'jira', None, items)
    assert list(refused.value.fields) == ['items[3].created']
    assert rows(hub, 'SELECT count(*) FROM issue_change') == [(0,)]


@pytest.mark.parametrize('wrong', WRONG_TYPES)
def test_a_sprint_time_of_the_wrong_json_type_is_refused_naming_it(hub, wrong):
    with pytest.raises(ValidationError) as refused:
        mirror.ingest_boards(hub, 'jira', None, [{'board_id': 1, 'sprints': [
            {'id': 1, 'start_date': GOOD}, {'id': 2, 'start_date': wrong}]}])
    assert list(refused.value.fields) == ['boards[0].sprints[1].start_date']
    assert rows(hub, 'SELECT count(*) FROM jira_sprint') == [(0,)]


def test_null_and_absent_times_stay_allowed_and_are_not_counted(hub, claimed_refresh):
    command_id = claimed_refresh(hub)
    assert mirror.ingest_state(hub, 'jira', command_id, [
        issue('AURORA-1', updated=None, created=None,
              comments=[{'id': '1', 'created': None, 'updated': None}],
              attachments=[{'id': '7', 'created': None}]),
        {'key': 'AURORA-2', 'comments': [{'id': '2'}], 'attachments': [{'id': '8'}]}]) \
        == {'issues': 2, 'links': 0, 'unparsed_times': 0}
    assert history.ingest_history(hub, 'jira', None, [change('1', created=None),
                                                      {'history_id': '2', 'seq': 0,
                                                       'key': 'AURORA-1'}]) \
        == {'inserted': 2, 'ignored': 0, 'unparsed_times': 0}
    assert mirror.ingest_boards(hub, 'jira', None, [{'board_id': 1, 'sprints': [
        {'id': 1, 'start_date': None, 'end_date': None, 'complete_date': None}, {'id': 2}]}]) \
        == {'boards': 1, 'sprints': 2, 'unparsed_times': 0}


@pytest.mark.parametrize('good', ['2026-10-22T09:00:00.000+0300', '2026-10-22T06:00:00Z',
                                  '2026-10-22 09:00:00+03:00', '2026-10-22T09:00:00.123456-05:00',
                                  '2026-10-22T09:00'])
def test_every_shape_of_contract_section_3_is_read(hub, good):
    assert history.ingest_history(hub, 'jira', None, [change('1', created=good)]) \
        == {'inserted': 1, 'ignored': 0, 'unparsed_times': 0}
    assert rows(hub, 'SELECT at IS NOT NULL FROM issue_change') == [(1,)]
