"""History ingest at the library level (hublib.history); HTTP scenarios: tests/web/test_mirror.py."""
from __future__ import annotations

import pytest

from hublib import ValidationError, history, settings


def item(history_id='5001', seq=0, **fields):
    data = {'history_id': history_id, 'seq': seq, 'key': 'AURORA-1',
            'created': '2026-10-22T09:00:00.000+0300', 'field_id': 'status', 'field_name': 'Status'}
    data.update(fields)
    return data


def test_duplicates_inside_one_request_are_ignored(hub):
    assert history.ingest_history(hub, 'jira', None, [item(), item(), item(seq=1)]) == {
        'inserted': 2, 'ignored': 1, 'unparsed_times': 0}


def test_empty_request(hub):
    assert history.ingest_history(hub, 'jira', 17, []) == {'inserted': 0, 'ignored': 0, 'unparsed_times': 0}


def test_integer_history_id_is_stored_as_text(hub):
    history.ingest_history(hub, 'jira', None, [item(history_id=5001)])
    history.ingest_history(hub, 'jira', None, [item(history_id='5001')])
    assert hub.db.execute_sql('SELECT history_id, seq FROM issue_change').fetchall() == [('5001', 0)]


@pytest.mark.parametrize('field_id, field_name, expected', [
    ('status', 'Статус', 'status'),
    (None, 'summary', 'summary'),
    ('', 'labels', 'labels'),
    ('customfield_10200', 'Плановое начало', 'planned_start'),
    ('customfield_10201', 'Плановое окончание', 'planned_end'),
    ('customfield_10008', 'Epic Link', 'epic_link'),
    ('customfield_99999', 'Что-то', 'Что-то'),
    (None, 'Fix Version', 'Fix Version'),
    (None, None, None),
])
def test_logical_field(hub, field_id, field_name, expected):
    settings.update_settings(hub, {'field_ids': {'planned_start': 'customfield_10200',
                                                 'planned_end': 'customfield_10201',
                                                 'epic_link': 'customfield_10008'}})
    history.ingest_history(hub, 'jira', None, [item(field_id=field_id, field_name=field_name)])
    assert hub.db.execute_sql('SELECT field FROM issue_change').fetchone() == (expected,)


@pytest.mark.parametrize('created, at', [
    ('2026-10-22T09:00:00.000+0300', '2026-10-22T06:00:00+00:00'),
    ('2026-10-22T09:00:00+03:00', '2026-10-22T06:00:00+00:00'),
    ('2026-10-22T06:00:00Z', '2026-10-22T06:00:00+00:00'),
    ('2026-10-22T06:00:00', '2026-10-22T06:00:00+00:00'),
    (None, None),  # an unreadable time is refused: tests/lib/test_ingest_times.py
])
def test_at_is_utc(hub, created, at):
    history.ingest_history(hub, 'jira', None, [item(created=created)])
    assert hub.db.execute_sql('SELECT at, created FROM issue_change').fetchone() == (at, created)


@pytest.mark.parametrize('bad, field', [
    ({'history_id': None}, 'items[0].history_id'),
    ({'seq': -1}, 'items[0].seq'),
    ({'seq': True}, 'items[0].seq'),
    ({'key': ''}, 'items[0].key'),
    ({'to_string': 3}, 'items[0].to_string'),
])
def test_bad_items(hub, bad, field):
    with pytest.raises(ValidationError) as caught:
        history.ingest_history(hub, 'jira', None, [item(**bad)])
    assert field in caught.value.fields


def test_items_must_be_a_list(hub):
    with pytest.raises(ValidationError) as caught:
        history.ingest_history(hub, 'jira', None, {'history_id': '1'})
    assert 'items' in caught.value.fields
