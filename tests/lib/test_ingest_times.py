"""Times an agent sends that the hub cannot read (contract §3: ``to_utc`` gives None) are refused
at ingest: 422 naming the item and the field, nothing of the page written. Stored, they would
have no hub time (``at = NULL``) and never show up in a feed. null and absent stay allowed."""
from __future__ import annotations

import pytest

from hublib import history, mirror, reads
from hublib.errors import ValidationError

GOOD = '2026-10-22T09:00:00.000+0300'
BAD_TIMES = ['garbage', '2026-02-30T10:00:00.000+0300', '2026-10-22T09:00:00.000+9999',
             '2026-10-22T09:00:00+99:99', '2026-10-22', '', '22.10.2026 09:00']


def issue(key: str, **fields) -> dict:
    return {'key': key, 'summary': key, 'updated': GOOD, 'created': GOOD, **fields}


def change(history_id: str, **fields) -> dict:
    return {'history_id': history_id, 'seq': 0, 'key': 'AURORA-1', 'created': GOOD,
            'field_id': 'status', 'to_string': 'Готово', **fields}


@pytest.mark.parametrize('bad', BAD_TIMES)
@pytest.mark.parametrize('where, field', [
    (lambda bad: issue('AURORA-2', updated=bad), 'issues[1].updated'),
    (lambda bad: issue('AURORA-2', created=bad), 'issues[1].created'),
    (lambda bad: issue('AURORA-2', comments=[{'id': '1', 'created': GOOD}, {'id': '2', 'created': bad}]),
     'issues[1].comments[1].created'),
    (lambda bad: issue('AURORA-2', comments=[{'id': '1', 'updated': bad}]),
     'issues[1].comments[0].updated'),
    (lambda bad: issue('AURORA-2', attachments=[{'id': '7', 'created': bad}]),
     'issues[1].attachments[0].created'),
])
def test_state_page_with_an_unreadable_time_is_refused_naming_it(hub, claimed_refresh, bad,
                                                                  where, field):
    command_id = claimed_refresh(hub)
    with pytest.raises(ValidationError) as refused:
        mirror.ingest_state(hub, 'jira', command_id, [issue('AURORA-1'), where(bad)])
    assert list(refused.value.fields) == [field]
    assert reads.issues(hub)['items'] == []


@pytest.mark.parametrize('bad', BAD_TIMES)
def test_history_page_with_an_unreadable_time_is_refused_naming_it(hub, bad):
    items = [change(str(5000 + n)) for n in range(5)]
    items[3]['created'] = bad
    with pytest.raises(ValidationError) as refused:
        history.ingest_history(hub, 'jira', None, items)
    assert list(refused.value.fields) == ['items[3].created']
    assert hub.db.execute_sql('SELECT count(*) FROM issue_change').fetchone()[0] == 0


@pytest.mark.parametrize('bad', BAD_TIMES)
@pytest.mark.parametrize('name', ['start_date', 'end_date', 'complete_date'])
def test_boards_page_with_an_unreadable_sprint_time_is_refused_naming_it(hub, bad, name):
    boards = [{'board_id': 1, 'type': 'scrum', 'sprints': [
        {'id': 1, 'name': 'Спринт 1', 'start_date': GOOD},
        {'id': 2, 'name': 'Спринт 2', name: bad}]}]
    with pytest.raises(ValidationError) as refused:
        mirror.ingest_boards(hub, 'jira', None, boards)
    assert list(refused.value.fields) == [f'boards[0].sprints[1].{name}']
    assert hub.db.execute_sql('SELECT count(*) FROM jira_sprint').fetchone()[0] == 0


def test_null_and_absent_times_stay_allowed(hub, claimed_refresh):
    command_id = claimed_refresh(hub)
    assert mirror.ingest_state(hub, 'jira', command_id, [
        issue('AURORA-1', updated=None, created=None,
              comments=[{'id': '1', 'created': None, 'updated': None}],
              attachments=[{'id': '7', 'created': None}]),
        {'key': 'AURORA-2', 'comments': [{'id': '2'}], 'attachments': [{'id': '8'}]}]) \
        == {'issues': 2, 'links': 0}
    assert history.ingest_history(hub, 'jira', None, [change('1', created=None),
                                                      {'history_id': '2', 'seq': 0,
                                                       'key': 'AURORA-1'}]) \
        == {'inserted': 2, 'ignored': 0}
    assert mirror.ingest_boards(hub, 'jira', None, [{'board_id': 1, 'sprints': [
        {'id': 1, 'start_date': None, 'end_date': None, 'complete_date': None}, {'id': 2}]}]) \
        == {'boards': 1, 'sprints': 2}


@pytest.mark.parametrize('good', ['2026-10-22T09:00:00.000+0300', '2026-10-22T06:00:00Z',
                                  '2026-10-22 09:00:00+03:00', '2026-10-22T09:00:00.123456-05:00',
                                  '2026-10-22T09:00'])
def test_every_shape_of_contract_section_3_is_accepted(hub, good):
    assert history.ingest_history(hub, 'jira', None, [change('1', created=good)]) \
        == {'inserted': 1, 'ignored': 0}
