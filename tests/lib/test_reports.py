"""Reports from the change history (contract §17) on hand-built histories: every reconstruction
rule, the sprint report, cumulative flow, cycle time, velocity and their refusals.

The mirror is ``tests/support/reports.py`` (its docstring tabulates what each issue proves)."""
from __future__ import annotations

import pytest

from hublib import ConflictError, NotFoundError, ValidationError, history, reports
from hublib.reconstruction import Columns, sprint_ids, timelines
from tests.support import reports as world


@pytest.fixture
def mirrored(hub, clock):
    clock.set(world.NOW)
    world.build(hub)
    return hub


def line(hub, key: str, sprints: bool = True):
    with hub.read():
        return timelines(hub, [key], sprints=sprints)[key]


# --- reconstruction --------------------------------------------------------------------------------

def test_status_before_the_first_change_is_the_from_string_of_that_change(mirrored):
    issue = line(mirrored, 'AURORA-1')
    assert issue.status_at('2026-11-17T09:59:59+00:00') == 'Открыта'  # current status is Готово
    assert issue.status_at('2026-11-17T10:00:00+00:00') == 'В работе'  # at ≤ t applies
    assert issue.status_at('2026-11-20T09:59:59+00:00') == 'В работе'
    assert issue.status_at('2030-01-01T00:00:00+00:00') == 'Готово'


def test_an_issue_without_status_changes_has_its_current_status_at_every_moment(mirrored):
    issue = line(mirrored, 'AURORA-2')
    assert issue.status_at('2000-01-01T00:00:00+00:00') == issue.status_at(world.NOW) == 'Открыта'


def test_sprints_without_sprint_changes_fall_back_to_issue_sprint(mirrored):
    assert line(mirrored, 'AURORA-1').sprints_at('2000-01-01T00:00:00+00:00') == {102}


def test_sprints_follow_changes_by_the_configured_field_id_whatever_the_field_name(mirrored):
    issue = line(mirrored, 'AURORA-2')  # field «Спринт», field_id = field_ids.sprint
    assert issue.sprints_at('2026-11-10T09:59:59+00:00') == set()
    assert issue.sprints_at('2026-11-10T10:00:00+00:00') == {102}
    # its «Sprint goal» change (another field id, another name) is not a sprint change
    assert issue.sprints_at(world.NOW) == {102}


def test_sprints_follow_changes_named_sprint_in_any_case(mirrored):
    issue = line(mirrored, 'AURORA-3')  # field_id customfield_99999, field name «sprint»
    assert issue.sprints_at('2026-11-18T11:59:59+00:00') == set()
    assert issue.sprints_at('2026-11-18T12:00:00+00:00') == {102}


def test_a_change_of_the_plain_field_sprint_without_field_id_is_a_sprint_change(mirrored):
    # Jira Server's changelog item «Sprint» without a fieldId; AURORA-9 is only in 103 now, so the
    # sprint report finds it in 102 by this change alone
    history.ingest_history(mirrored, 'jira', None, [
        world.sprint('AURORA-9', '2026-11-19T10:00:00Z', '103', '102, 103', field_id=None,
                     field_name='Sprint')])
    issue = line(mirrored, 'AURORA-9')
    assert issue.sprints_at('2026-11-19T09:59:59+00:00') == {103}
    assert issue.sprints_at('2026-11-19T10:00:00+00:00') == {102, 103}
    report = reports.sprint_report(mirrored, 'AWPCA', 102)
    assert 'AURORA-9' in report['added'] and 'AURORA-9' in report['not_completed']


def test_without_field_ids_sprint_only_the_name_sprint_marks_a_sprint_change(mirrored):
    from hublib import settings
    settings.update_settings(mirrored, {'field_ids': {'sprint': None}})
    assert line(mirrored, 'AURORA-2').sprints_at('2026-11-01T00:00:00+00:00') == {102}  # fallback
    assert line(mirrored, 'AURORA-3').sprints_at('2026-11-18T11:59:59+00:00') == set()


@pytest.mark.parametrize('value, ids', [
    ('101, 102', {101, 102}), (' 101 ,102 ', {101, 102}), ('', set()), (None, set()),
    ('102,102', {102}), ('101, abc', {101})])
def test_sprint_values_are_comma_separated_ids_with_spaces_ignored(value, ids):
    assert sprint_ids(value) == ids


def test_an_issue_exists_from_its_created_moment_and_without_created_always(mirrored):
    assert not line(mirrored, 'AURORA-7').exists_at('2026-11-20T09:59:59+00:00')
    assert line(mirrored, 'AURORA-7').exists_at('2026-11-20T10:00:00+00:00')
    assert line(mirrored, 'FLOW-2').exists_at('1900-01-01T00:00:00+00:00')


def test_done_is_the_last_board_column_or_closed_statuses_without_a_board():
    board = Columns.of(world.COLUMNS, ['Закрыта'])
    assert board.done == {'Готово', 'Снято'} and board.first == {'Открыта'}
    assert board.column_of['На проверке'] == 1
    no_board = Columns.of([], ['Закрыта'])
    assert no_board.done == {'Закрыта'} and no_board.first == set() and no_board.names == ()


def test_changes_at_the_same_second_apply_in_feed_order(mirrored):
    history.ingest_history(mirrored, 'jira', None, [
        world.status('AURORA-9', '2026-11-22T10:00:00Z', 'Открыта', 'В работе'),
        world.status('AURORA-9', '2026-11-22T10:00:00Z', 'В работе', 'На проверке')])
    assert line(mirrored, 'AURORA-9').status_at('2026-11-22T10:00:00+00:00') == 'На проверке'


# --- the sprint report ---------------------------------------------------------------------------

def test_sprint_report_lists_committed_added_removed_completed_and_not_completed(mirrored):
    report = reports.sprint_report(mirrored, 'AWPCA', 102)
    assert report['sprint'] == {'sprint_id': 102, 'name': 'Спринт 2', 'state': 'active',
                                'start_date': '2026-11-16T09:00:00.000+0300',
                                'end_date': '2026-11-27T18:00:00.000+0300',
                                'complete_date': None, 'goal': 'Отчёты'}
    assert (report['start'], report['end']) == ('2026-11-16T06:00:00+00:00', world.NOW)
    assert report['committed'] == ['AURORA-1', 'AURORA-2', 'AURORA-4', 'AURORA-5', 'AURORA-8']
    assert report['added'] == ['AURORA-3', 'AURORA-6', 'AURORA-7']
    assert report['removed'] == ['AURORA-4']
    assert report['completed'] == ['AURORA-1', 'AURORA-3', 'AURORA-8']
    assert report['not_completed'] == ['AURORA-2', 'AURORA-5', 'AURORA-6', 'AURORA-7']


def test_an_issue_added_mid_sprint_and_one_removed_mid_sprint(mirrored):
    report = reports.sprint_report(mirrored, 'AWPCA', 102)
    assert 'AURORA-3' in report['added'] and 'AURORA-3' not in report['committed']
    assert 'AURORA-4' in report['committed'] and 'AURORA-4' in report['removed']
    assert 'AURORA-4' not in report['completed'] + report['not_completed']


def test_an_issue_that_entered_twice_is_added_once(mirrored):
    assert reports.sprint_report(mirrored, 'AWPCA', 102)['added'].count('AURORA-6') == 1


def test_an_issue_created_during_the_sprint_straight_into_it_is_added_not_committed(mirrored):
    report = reports.sprint_report(mirrored, 'AWPCA', 102)
    assert 'AURORA-7' in report['added'] and 'AURORA-7' not in report['committed']


def test_done_then_reopened_is_not_completed_and_the_burndown_goes_back_up(mirrored):
    report = reports.sprint_report(mirrored, 'AWPCA', 102)
    assert 'AURORA-5' in report['not_completed']
    points = {day['date']: day['remaining_points'] for day in report['burndown']}
    assert points['2026-11-20'] == 8 and points['2026-11-21'] == 16  # AURORA-5's 8 points back


def test_null_story_points_count_zero_in_the_sums(mirrored):
    report = reports.sprint_report(mirrored, 'AWPCA', 102)
    assert report['points'] == {'committed': 19, 'added': 3, 'removed': 2, 'completed': 4,
                                'not_completed': 16}  # AURORA-3 (no points) is added, completed


def test_burndown_is_the_state_at_the_end_of_each_day_and_at_end_on_the_last(mirrored):
    burndown = reports.sprint_report(mirrored, 'AWPCA', 102)['burndown']
    assert [(d['date'], d['remaining_issues'], d['remaining_points']) for d in burndown] == [
        ('2026-11-16', 4, 18), ('2026-11-17', 5, 19), ('2026-11-18', 4, 10), ('2026-11-19', 4, 9),
        ('2026-11-20', 4, 8), ('2026-11-21', 5, 16), ('2026-11-22', 5, 16), ('2026-11-23', 5, 16),
        ('2026-11-24', 4, 16), ('2026-11-25', 4, 16)]


def test_a_change_near_midnight_moves_the_burndown_day_with_tz_moscow(mirrored):
    # AURORA-2 (5 points) done 2026-11-22 21:30 UTC = 2026-11-23 00:30 in Moscow
    history.ingest_history(mirrored, 'jira', None, [
        world.status('AURORA-2', '2026-11-22T21:30:00Z', 'Открыта', 'Готово')])

    def remaining(tz):
        burndown = reports.sprint_report(mirrored, 'AWPCA', 102, tz=tz)['burndown']
        return {day['date']: day['remaining_points'] for day in burndown}
    utc, moscow = remaining(None), remaining('Europe/Moscow')
    assert (utc['2026-11-21'], utc['2026-11-22'], utc['2026-11-23']) == (16, 11, 11)
    assert (moscow['2026-11-21'], moscow['2026-11-22'], moscow['2026-11-23']) == (16, 16, 11)


def test_burndown_days_are_calendar_days_in_tz(mirrored):
    utc = reports.sprint_report(mirrored, 'AWPCA', 101)['burndown']
    moscow = reports.sprint_report(mirrored, 'AWPCA', 101, tz='Europe/Moscow')['burndown']
    assert (utc[0]['date'], utc[-1]['date']) == ('2026-11-02', '2026-11-13')
    assert (moscow[0]['date'], moscow[-1]['date']) == ('2026-11-02', '2026-11-13')
    # 102 starts 2026-11-16 06:00 UTC; in Samoa (UTC+13) that is already 11-16 19:00, in
    # Honolulu (UTC-10) still 11-15 20:00
    assert reports.sprint_report(mirrored, 'AWPCA', 102, tz='Pacific/Honolulu')['burndown'][0][
        'date'] == '2026-11-15'


def test_a_closed_sprint_ends_at_its_complete_date(mirrored):
    report = reports.sprint_report(mirrored, 'AWPCA', 101)
    assert report['end'] == '2026-11-13T16:00:00+00:00'
    # AURORA-4 entered 102 at 101's close and stays in 101 too: in 101 at its end, not done
    assert report['committed'] == report['not_completed'] == ['AURORA-4']


def test_the_sprint_report_covers_every_mirrored_issue_of_the_sprint(mirrored):
    assert 'AURORA-8' in reports.sprint_report(mirrored, 'AWPCA', 102)['completed']  # label ORION


@pytest.mark.parametrize('label, sprint_id, error', [
    ('NOPE', 102, NotFoundError), ('ORION', 102, NotFoundError),  # ORION's board has no sprints
    ('VEGA', 102, NotFoundError), ('AWPCA', 999, NotFoundError),
    ('AWPCA', 103, ConflictError), ('AWPCA', 104, ConflictError)])
def test_sprint_report_refusals(mirrored, label, sprint_id, error):
    with pytest.raises(error) as raised:
        reports.sprint_report(mirrored, label, sprint_id)
    if error is ConflictError:
        assert raised.value.message == 'спринт ещё не начат'


def test_a_bad_tz_is_refused_naming_tz(mirrored):
    with pytest.raises(ValidationError) as raised:
        reports.sprint_report(mirrored, 'AWPCA', 102, tz='Mars/Olympus')
    assert list(raised.value.fields) == ['tz']


# --- cumulative flow -------------------------------------------------------------------------------

def flow(hub, **kwargs):
    answer = reports.project_flow(hub, 'ORION', **kwargs)
    return [(day['date'], day['counts'], day['unmapped']) for day in answer['days']]


def test_flow_counts_own_issues_that_exist_by_board_column_in_board_order(mirrored):
    answer = reports.project_flow(mirrored, 'ORION', since='2026-11-09', until='2026-11-13')
    assert answer['columns'] == ['Открыта', 'В работе', 'Готово']
    assert flow(mirrored, since='2026-11-09', until='2026-11-13') == [
        # FLOW-2 (no created) and AURORA-8 are done all along; FLOW-4 was «В работе» before its
        # first change; FLOW-1 exists from 11-10, FLOW-3 from 11-12
        ('2026-11-09', [0, 1, 2], 0),
        ('2026-11-10', [1, 0, 3], 0),
        ('2026-11-11', [1, 1, 2], 0),
        ('2026-11-12', [0, 2, 3], 0),
        ('2026-11-13', [0, 1, 3], 1)]  # FLOW-1 in «Заблокирована», a status in no column


def test_flow_moves_a_change_near_midnight_to_the_next_day_in_moscow(mirrored):
    # FLOW-3 done 2026-11-12 21:30 UTC = 2026-11-13 00:30 in Moscow
    assert flow(mirrored, since='2026-11-12', until='2026-11-12') == [('2026-11-12', [0, 2, 3], 0)]
    assert flow(mirrored, since='2026-11-12', until='2026-11-12', tz='Europe/Moscow') == [
        ('2026-11-12', [1, 2, 2], 0)]


def test_flow_follows_the_history_where_it_disagrees_with_the_current_status(mirrored):
    # AURORA-8 is «Готово» now, but its history (the rule's word) moved it to «В работе» on 11-03
    history.ingest_history(mirrored, 'jira', None, [
        world.status('AURORA-8', '2026-11-03T10:00:00Z', 'Готово', 'В работе')])
    assert flow(mirrored, since='2026-11-02', until='2026-11-03') == [
        ('2026-11-02', [0, 0, 2], 0), ('2026-11-03', [0, 1, 1], 0)]
    # long after that change, with nothing moving in the window: still «В работе»
    assert flow(mirrored, since='2026-11-20', until='2026-11-20') == [('2026-11-20', [0, 1, 3], 1)]


def test_a_status_in_no_column_is_unmapped_in_the_flow_and_not_done(mirrored):
    # FLOW-1 moved «В работе» → «Заблокирована» (on no column of ORION's board) on 11-13 10:00
    assert flow(mirrored, since='2026-11-12', until='2026-11-14') == [
        ('2026-11-12', [0, 2, 3], 0), ('2026-11-13', [0, 1, 3], 1), ('2026-11-14', [0, 0, 4], 1)]
    # not done: it has no cycle-time item; having left «Открыта», it did start
    assert 'FLOW-1' not in [item['key'] for item in reports.cycle_time(
        mirrored, 'ORION', since='2026-11-01', until='2026-11-20')['items']]
    # in a sprint report, an issue in a status of no column is not completed
    history.ingest_history(mirrored, 'jira', None, [
        world.status('AURORA-1', '2026-11-24T10:00:00Z', 'Готово', 'Заблокирована')])
    report = reports.sprint_report(mirrored, 'AWPCA', 102)
    assert 'AURORA-1' in report['not_completed'] and 'AURORA-1' not in report['completed']


def test_flow_without_a_board_counts_every_issue_unmapped(mirrored):
    answer = reports.project_flow(mirrored, 'VEGA', since='2026-10-31', until='2026-11-01')
    assert answer == {'columns': [], 'days': [{'date': '2026-10-31', 'counts': [], 'unmapped': 0},
                                              {'date': '2026-11-01', 'counts': [], 'unmapped': 1}]}


def test_flow_defaults_to_the_last_30_days_up_to_today_in_tz(mirrored, clock):
    days = reports.project_flow(mirrored, 'ORION')['days']
    assert (len(days), days[0]['date'], days[-1]['date']) == (30, '2026-10-27', '2026-11-25')
    clock.set('2026-11-25T22:00:00+00:00')  # already 11-26 in Moscow
    assert reports.project_flow(mirrored, 'ORION', tz='Europe/Moscow')['days'][-1]['date'] == \
        '2026-11-26'
    only_until = reports.project_flow(mirrored, 'ORION', until='2026-11-10')['days']
    assert (len(only_until), only_until[0]['date']) == (30, '2026-10-12')


@pytest.mark.parametrize('kwargs, field', [
    ({'since': '2025-01-01', 'until': '2026-01-03'}, 'since'),  # 367 days apart
    ({'since': '2026-11-10', 'until': '2026-11-09'}, 'since'),
    ({'since': '2026-02-30'}, 'since'), ({'until': '22.11.2026'}, 'until'),
    ({'since': '2026-11-10T10:00:00Z'}, 'since'), ({'tz': 'Europe/Nowhere'}, 'tz')])
def test_flow_refusals_name_the_field(mirrored, kwargs, field):
    with pytest.raises(ValidationError) as raised:
        reports.project_flow(mirrored, 'ORION', **kwargs)
    assert list(raised.value.fields) == [field]


def test_a_span_of_366_days_is_allowed(mirrored):
    assert len(flow(mirrored, since='2025-01-01', until='2026-01-02')) == 367


def test_flow_of_an_unknown_project_is_404(mirrored):
    with pytest.raises(NotFoundError):
        reports.project_flow(mirrored, 'NOPE')


# --- cycle time ------------------------------------------------------------------------------------

def test_cycle_time_items_and_nearest_rank_summary(mirrored):
    answer = reports.cycle_time(mirrored, 'ORION', since='2026-11-01', until='2026-11-20')
    assert answer['items'] == [
        {'key': 'FLOW-3', 'created': '2026-11-12T12:00:00+00:00',
         'started': '2026-11-12T21:30:00+00:00', 'done': '2026-11-12T21:30:00+00:00',
         'lead_days': 0.4, 'cycle_days': 0.0},
        # created «В работе»: never left the first column, so no cycle time; its last entry into
        # a done status is 11-14 (Готово → Снято on 11-15 is no new entry)
        {'key': 'FLOW-4', 'created': '2026-11-05T00:00:00+00:00', 'started': None,
         'done': '2026-11-14T12:00:00+00:00', 'lead_days': 9.5, 'cycle_days': None}]
    assert answer['summary'] == {'count': 2, 'lead_days': {'p50': 0.4, 'p85': 9.5, 'p95': 9.5},
                                 'cycle_days': {'p50': 0.0, 'p85': 0.0, 'p95': 0.0}}


def test_cycle_time_window_is_since_inclusive_until_exclusive_in_tz(mirrored):
    def keys(**kwargs):
        return [item['key'] for item in reports.cycle_time(mirrored, 'ORION', **kwargs)['items']]
    # FLOW-3 done 11-12 21:30 UTC: day 11-12 in UTC, 11-13 in Moscow
    assert keys(since='2026-11-12', until='2026-11-13') == ['FLOW-3']
    assert keys(since='2026-11-12', until='2026-11-13', tz='Europe/Moscow') == []
    assert keys(since='2026-11-13', until='2026-11-14', tz='Europe/Moscow') == ['FLOW-3']
    assert keys(since='2026-11-12T21:30:00Z', until='2026-11-12T21:30:01Z') == ['FLOW-3']
    assert keys(since='2026-11-12T21:30:01Z', until='2026-11-13T00:00:00Z') == []
    # FLOW-4 was done on 11-10 too, but its last entry before until=11-20 is 11-14; with
    # until=11-11 it is the 11-10 one and it is not done at until (reopened 11-11 00:00)
    assert keys(since='2026-11-01', until='2026-11-11') == []
    assert keys(since='2026-11-01', until='2026-11-10T12:00:00Z') == ['FLOW-4']


def test_cycle_time_without_a_board_uses_closed_statuses_and_has_no_start(mirrored):
    answer = reports.cycle_time(mirrored, 'VEGA', since='2026-11-01', until='2026-11-05')
    assert answer['items'] == [{'key': 'VEGA-1', 'created': '2026-11-01T00:00:00+00:00',
                                'started': None, 'done': '2026-11-03T00:00:00+00:00',
                                'lead_days': 2.0, 'cycle_days': None}]
    assert answer['summary']['cycle_days'] == {'p50': None, 'p85': None, 'p95': None}


def test_cycle_time_defaults_to_the_last_90_days(mirrored, clock):
    assert reports.cycle_time(mirrored, 'ORION')['summary']['count'] == 2
    clock.set('2027-02-12T00:00:00+00:00')  # 90 days after 11-14 12:00 is 02-12 12:00
    assert [i['key'] for i in reports.cycle_time(mirrored, 'ORION')['items']] == ['FLOW-4']


@pytest.mark.parametrize('kwargs, field', [
    ({'since': '2025-01-01T00:00:00Z', 'until': '2026-01-02T00:00:01Z'}, 'since'),
    ({'since': '2026-11-10', 'until': '2026-11-09T23:00:00Z'}, 'since'),
    ({'since': 'вчера'}, 'since'), ({'until': '2026-13-01'}, 'until'), ({'tz': '+03:00'}, 'tz')])
def test_cycle_time_refusals_name_the_field(mirrored, kwargs, field):
    with pytest.raises(ValidationError) as raised:
        reports.cycle_time(mirrored, 'ORION', **kwargs)
    assert list(raised.value.fields) == [field]


@pytest.mark.parametrize('values, percent, expected', [
    ([], 50, None), ([7.0], 95, 7.0), ([4.0, 1.0, 3.0, 2.0], 50, 2.0),
    ([4.0, 1.0, 3.0, 2.0], 85, 4.0), ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0], 85, 9.0),
    ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0], 95, 10.0),
    ([15.0, 20.0, 35.0, 40.0, 50.0], 50, 35.0), ([15.0, 20.0, 35.0, 40.0, 50.0], 85, 50.0)])
def test_percentiles_are_by_nearest_rank(values, percent, expected):
    assert reports.nearest_rank(values, percent) == expected


# --- velocity --------------------------------------------------------------------------------------

def test_velocity_items_equal_the_sprint_reports_oldest_first(mirrored, claimed_refresh):
    from hublib import mirror
    command = claimed_refresh(mirrored)
    mirror.ingest_boards(mirrored, 'jira', command, [
        {'board_id': world.SCRUM, 'type': 'scrum', 'columns': world.COLUMNS,
         'sprints': [*world.SPRINTS, {**world.SPRINTS[1], 'state': 'closed',
                                      'complete_date': '2026-11-24T18:00:00.000+0300'}]}])
    items = reports.velocity(mirrored, 'AWPCA')['items']
    assert [item['sprint_id'] for item in items] == [101, 102]
    for item in items:
        report = reports.sprint_report(mirrored, 'AWPCA', item['sprint_id'])
        assert item == {'sprint_id': item['sprint_id'], 'name': report['sprint']['name'],
                        'committed_issues': len(report['committed']),
                        'completed_issues': len(report['completed']),
                        'committed_points': report['points']['committed'],
                        'completed_points': report['points']['completed']}
    assert reports.velocity(mirrored, 'AWPCA', sprints=1)['items'] == items[-1:]


def test_velocity_of_a_project_without_a_board_is_empty(mirrored):
    assert reports.velocity(mirrored, 'VEGA') == {'items': []}


@pytest.mark.parametrize('sprints', [0, 51, -1, 'x', 2.5, True])
def test_velocity_sprints_out_of_range_is_refused(mirrored, sprints):
    with pytest.raises(ValidationError) as raised:
        reports.velocity(mirrored, 'AWPCA', sprints=sprints)
    assert list(raised.value.fields) == ['sprints']


# --- the reads' plans ------------------------------------------------------------------------------

def _plan(hub, prepared) -> str:
    values = [param if name is None else 'x' for param, name in
              zip(prepared._params, prepared._names)]
    rows = hub.db.execute_sql('EXPLAIN QUERY PLAN ' + prepared.sql, values).fetchall()
    return '\n'.join(row[-1] for row in rows)


def test_history_reads_use_the_status_index_or_key_at_never_the_field_index_of_jql(mirrored):
    # offline JQL's (field, at, to_string, key) index would make these walk every status change
    # of the mirror (seconds to minutes at 2,000,000 change rows)
    from hublib import reconstruction
    indexes = {name for (name,) in mirrored.db.execute_sql(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'issue_change'")}
    assert {'issue_change_field_at', reconstruction.STATUS_INDEX} <= indexes  # built at open
    plan = _plan(mirrored, reconstruction._STATUS_AND_SPRINT_CHANGES)
    assert 'issue_change_key_at' in plan and 'issue_change_field_at' not in plan, plan
    for sql, values in ((reconstruction._STATUS_CHANGES, ('[]',)),
                        (reconstruction._OWN_AT, {'label': 'ORION', 'since': world.NOW, 'until': world.NOW})):
        rows = mirrored.db.execute_sql('EXPLAIN QUERY PLAN ' + sql, values).fetchall()
        plan = '\n'.join(row[-1] for row in rows)
        assert f'COVERING INDEX {reconstruction.STATUS_INDEX}' in plan, plan
        assert 'issue_change_field_at' not in plan and 'SCAN' not in plan.replace(
            'SCAN json_each', ''), plan
