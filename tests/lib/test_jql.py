"""Offline JQL (contract §16, issue 20) at the library level: the language, every field, operator
and function, dates and time zones, history predicates, ORDER BY with keyset pages, refusals."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from hublib import ValidationError, jql, mirror, reads, settings
from hublib.slices import natural_key
from hublib.timeutil import to_utc
from tests.support.jql_mirror import ALL, ISSUES, PRIORITIES, build_mirror
from tests.support.paging import every_item

@pytest.fixture
def mirrored(hub, claimed_refresh):
    return build_mirror(hub, claimed_refresh(hub))


def keys(result: dict) -> list[str]:
    return [item['key'] for item in result['items']]


def pages(hub, query: str, limit: int, **options) -> list[str]:
    """The keys of every page of ``query``, ``limit`` a page, cursor to cursor."""
    return [item['key'] for item in every_item(reads.issues, hub, pages=len(ALL) + 2,
                                               jql=query, limit=limit, **options)]


def found(hub, query: str, **options) -> list[str]:
    return keys(reads.issues(hub, jql=query, limit=1000, **options))


def refusal(hub, query: str, **options) -> str:
    with pytest.raises(ValidationError) as caught:
        reads.issues(hub, jql=query, **options)
    assert list(caught.value.fields) == ['jql'], caught.value.fields
    return caught.value.fields['jql'][0]


# --- every row of the field table ----------------------------------------------------------------

@pytest.mark.parametrize('query, expected', [
    # key, issue, issuekey: exact; < <= > >= in natural order within one project key
    ('key = AURORA-2', ['AURORA-2']),
    ('issue IN (AURORA-10, ORBIT-1)', ['AURORA-10', 'ORBIT-1']),
    ('issuekey != AURORA-2', [k for k in ALL if k != 'AURORA-2']),
    ('key NOT IN (AURORA-1, AURORA-2)', ['AURORA-3', 'AURORA-5', 'AURORA-10', 'AURORA-11',
                                         'ORBIT-1']),
    ('key = aurora-2', []),
    ('key > AURORA-3', ['AURORA-5', 'AURORA-10', 'AURORA-11']),
    ('key >= AURORA-3', ['AURORA-3', 'AURORA-5', 'AURORA-10', 'AURORA-11']),
    ('key < AURORA-10', ['AURORA-1', 'AURORA-2', 'AURORA-3', 'AURORA-5']),
    ('key <= AURORA-2', ['AURORA-1', 'AURORA-2']),
    # project: the key's prefix
    ('project = AURORA', ALL[:-1]),
    ('project = orbit', ['ORBIT-1']),
    ('project != AURORA', ['ORBIT-1']),
    ('project IN (ORBIT, NOPE)', ['ORBIT-1']),
    ('project NOT IN (ORBIT)', ALL[:-1]),
    # hubProject: the slice (own issues and neighbours)
    ('hubProject = ORION', ['AURORA-5']),
    ('hubProject IN (orion, AWPCA)', ['AURORA-1', 'AURORA-2', 'AURORA-5']),
    # summary, description, comment, text
    ('summary ~ склад*', ['AURORA-2', 'AURORA-5']),
    ('summary !~ склад*', ['AURORA-1', 'AURORA-3', 'AURORA-10', 'AURORA-11', 'ORBIT-1']),
    ('description ~ сверка', ['AURORA-1']),
    ('description ~ "\\"точная фраза\\""', ['AURORA-2']),
    ('description ~ "точная фраза"', ['AURORA-2', 'AURORA-5']),
    ('comment ~ ежиком', ['AURORA-1']),
    ('text ~ ЁЖИКОМ', ['AURORA-1']),
    ('summary IS EMPTY', ['AURORA-11']),
    ('description IS NOT EMPTY', ['AURORA-1', 'AURORA-2', 'AURORA-5']),
    # status
    ('status = "в работе"', ['AURORA-2', 'AURORA-5']),
    ('status != Открыта', ['AURORA-2', 'AURORA-3', 'AURORA-5', 'AURORA-10']),
    ('status IN (Готово, снято)', ['AURORA-3', 'AURORA-10']),
    ('status NOT IN (Готово, Снято)', ['AURORA-1', 'AURORA-2', 'AURORA-5', 'ORBIT-1']),
    ('status IS EMPTY', ['AURORA-11']),
    ('status IS NOT EMPTY', [k for k in ALL if k != 'AURORA-11']),
    # statusCategory, resolution
    ('statusCategory = Done', ['AURORA-3', 'AURORA-10']),
    ('statusCategory != done', ['AURORA-1', 'AURORA-2', 'AURORA-5', 'ORBIT-1']),
    ('resolution = Unresolved', ['AURORA-1', 'AURORA-2', 'AURORA-5', 'AURORA-11', 'ORBIT-1']),
    ('resolution IS EMPTY', ['AURORA-1', 'AURORA-2', 'AURORA-5', 'AURORA-11', 'ORBIT-1']),
    ('resolution IS NOT EMPTY', ['AURORA-3', 'AURORA-10']),
    # priority
    ('priority = высокий', ['AURORA-1', 'AURORA-10']),
    ('priority != Высокий', ['AURORA-2', 'AURORA-3', 'AURORA-11', 'ORBIT-1']),
    ('priority IN (Низкий, Средний)', ['AURORA-2', 'AURORA-3', 'ORBIT-1']),
    ('priority NOT IN (Низкий, Средний)', ['AURORA-1', 'AURORA-10', 'AURORA-11']),
    ('priority IS EMPTY', ['AURORA-5']),
    # issuetype, type
    ('issuetype = Задача', ['AURORA-1', 'AURORA-3', 'AURORA-10', 'AURORA-11', 'ORBIT-1']),
    ('type != Задача', ['AURORA-2', 'AURORA-5']),
    ('type IN (Ошибка, Эпик)', ['AURORA-2', 'AURORA-5']),
    ('issuetype NOT IN (Задача)', ['AURORA-2', 'AURORA-5']),
    # assignee, reporter ('' is empty too)
    ('assignee = PETROV', ['AURORA-2']),
    ('assignee != ivanov', ['AURORA-2', 'AURORA-10', 'ORBIT-1']),
    ('assignee IN (ivanov, orlov)', ['AURORA-1', 'AURORA-5', 'ORBIT-1']),
    ('assignee NOT IN (ivanov, orlov)', ['AURORA-2', 'AURORA-10']),
    ('assignee IS EMPTY', ['AURORA-3', 'AURORA-11']),
    ('assignee IN (ivanov, EMPTY)', ['AURORA-1', 'AURORA-3', 'AURORA-5', 'AURORA-11']),
    ('assignee = EMPTY', ['AURORA-3', 'AURORA-11']),
    ('reporter = sidorova', ['AURORA-3', 'AURORA-10']),
    ('reporter IS NOT EMPTY', [k for k in ALL if k != 'AURORA-11']),
    # labels, label: exact; != and NOT IN only non-empty lists
    ('labels = срочно', ['AURORA-1']),
    ('label = Срочно', ['AURORA-10']),
    ('labels != срочно', ['AURORA-2', 'AURORA-5', 'AURORA-10', 'AURORA-11']),
    ('labels IN (ORION, "x\\"y")', ['AURORA-5', 'AURORA-11']),
    ('labels NOT IN (AWPCA, ORION)', ['AURORA-10', 'AURORA-11']),
    ('labels IS EMPTY', ['AURORA-3', 'ORBIT-1']),
    ('labels IS NOT EMPTY', ['AURORA-1', 'AURORA-2', 'AURORA-5', 'AURORA-10', 'AURORA-11']),
    ('labels = "y"', []),
    # created, updated (UTC), createdDate, updatedDate
    ('created = "2026-10-31"', ['AURORA-1']),
    ('createdDate > "2026-11-27"', ['AURORA-2']),
    ('created >= "2026-11-01"', ['AURORA-2', 'AURORA-5']),
    ('created < "2026-01-01"', ['AURORA-10']),
    ('created <= "2026-01-01"', ['AURORA-10', 'ORBIT-1']),
    ('created != "2026-10-31"', ['AURORA-2', 'AURORA-3', 'AURORA-5', 'AURORA-10', 'ORBIT-1']),
    ('created IS EMPTY', ['AURORA-11']),
    ('updated >= -1d', ['AURORA-1', 'AURORA-2', 'AURORA-10']),
    ('updatedDate > "2026-11-30 08:59"', ['AURORA-1']),
    ('updated = "2026/11/29 12:00"', ['AURORA-2']),
    ('updated IS NOT EMPTY', [k for k in ALL if k != 'AURORA-11']),
    # due, duedate: dates
    ('due = "2026-12-01"', ['AURORA-1']),
    ('duedate <= "2026-11-30"', ['AURORA-3']),
    ('due > "2026-11-30"', ['AURORA-1']),
    ('due < "2026-12-01"', ['AURORA-3']),
    ('due >= "2026-11-30"', ['AURORA-1', 'AURORA-3']),
    ('due != "2026-11-30"', ['AURORA-1']),
    ('due IS EMPTY', ['AURORA-2', 'AURORA-5', 'AURORA-10', 'AURORA-11', 'ORBIT-1']),
    # planned start / end
    ('"planned start" = "2026-11-28"', ['AURORA-2']),
    ('plannedStart < "2026-11-28"', ['AURORA-1']),
    ('"Planned End" > "2026-06-01"', ['AURORA-1']),
    ('plannedEnd IS NOT EMPTY', ['AURORA-1', 'AURORA-10']),
    # Epic Link, epic, parent
    ('"Epic Link" = aurora-5', ['AURORA-1', 'AURORA-3']),
    ('epic != AURORA-5', []),
    ('parent IN (AURORA-5, AURORA-9)', ['AURORA-1', 'AURORA-3']),
    ('epic IS EMPTY', ['AURORA-2', 'AURORA-5', 'AURORA-10', 'AURORA-11', 'ORBIT-1']),
    # sprint: id, name, functions; != on a list field: non-empty lists only
    ('sprint = 10', ['AURORA-1', 'AURORA-2']),
    ('sprint = "спринт 11"', ['AURORA-2']),
    ('sprint in openSprints()', ['AURORA-1', 'AURORA-2']),
    ('sprint in closedSprints()', ['AURORA-3']),
    ('sprint IN futureSprints()', ['AURORA-2']),
    ('sprint != 10', ['AURORA-3']),
    ('sprint NOT IN (9, 11)', ['AURORA-1']),
    ('sprint IN (9, "Нет такого")', ['AURORA-3']),
    ('sprint IS EMPTY', ['AURORA-5', 'AURORA-10', 'AURORA-11', 'ORBIT-1']),
    ('sprint IS NOT EMPTY', ['AURORA-1', 'AURORA-2', 'AURORA-3']),
    # Story Points
    ('"Story Points" = 3', ['AURORA-1']),
    ('storyPoints >= 5', ['AURORA-2', 'AURORA-10']),
    ('storyPoints < 3', ['AURORA-3']),
    ('storyPoints != 3', ['AURORA-2', 'AURORA-3', 'AURORA-10']),
    ('"story points" IS EMPTY', ['AURORA-5', 'AURORA-11', 'ORBIT-1']),
    ('storyPoints <= 1.5', ['AURORA-3']),
    # note
    ('note IS NOT EMPTY', ['AURORA-2']),
    ('note IS EMPTY', [k for k in ALL if k != 'AURORA-2']),
    # issue IN linkedIssues(KEY[, type])
    ('issue IN linkedIssues(AURORA-2)', ['AURORA-1']),
    ('issue IN linkedIssues(AURORA-10)', ['AURORA-3']),
    ('issue IN linkedIssues(AURORA-3, "relates")', ['AURORA-10']),
    ('issue IN linkedIssues(AURORA-3, Blocks)', []),
    ('issue NOT IN linkedIssues(AURORA-1)', [k for k in ALL if k != 'AURORA-2']),
])
def test_field_table(mirrored, query, expected):
    result = found(mirrored, query)
    if '~' in query:  # ranked by relevance: the set is the point here
        result.sort(key=natural_key)
    assert result == expected


def test_created_day_is_the_day_of_the_time_zone(mirrored):
    """AURORA-1 was created 2026-10-31 21:30 UTC: 1 November 00:30 in Moscow."""
    assert found(mirrored, 'created = "2026-11-01"', tz='Europe/Moscow') == ['AURORA-1',
                                                                            'AURORA-5']
    assert found(mirrored, 'created = "2026-11-01"') == ['AURORA-5']
    assert found(mirrored, 'created = "2026-10-31"', tz='Europe/Moscow') == []
    assert found(mirrored, 'created < "2026-11-01"', tz='Europe/Moscow') == ['AURORA-3',
                                                                            'AURORA-10',
                                                                            'ORBIT-1']


def test_created_2026_11_30_with_moscow_time(hub, claimed_refresh):
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [
        {'key': 'A-1', 'created': '2026-11-29T20:59:59Z'},   # 23:59:59 on the 29th in Moscow
        {'key': 'A-2', 'created': '2026-11-29T21:00:00Z'},   # 00:00 on the 30th
        {'key': 'A-3', 'created': '2026-11-30T20:59:59Z'},   # 23:59:59 on the 30th
        {'key': 'A-4', 'created': '2026-11-30T21:00:00Z'}])  # 00:00 on 1 December
    assert found(hub, 'created = "2026-11-30"', tz='Europe/Moscow') == ['A-2', 'A-3']
    assert found(hub, 'created = "2026-11-30"') == ['A-3', 'A-4']
    assert found(hub, 'created >= "2026-11-30" AND created < "2026-12-01"',
                 tz='Europe/Moscow') == ['A-2', 'A-3']


@pytest.mark.parametrize('tz', ['Mars/Olympus', '../../etc/passwd', 'Europe/', '\x00'])
def test_bad_time_zone_names_tz(mirrored, tz):
    with pytest.raises(ValidationError) as caught:
        reads.issues(mirrored, jql='status = Открыта', tz=tz)
    assert list(caught.value.fields) == ['tz']


# --- relative dates and functions with an injected clock ---------------------------------------------

def clock_span(mirrored, text: str, tz: str = 'UTC') -> jql.Span:
    clock = jql.Clock(mirrored.clock(), jql.zone(tz))
    value = jql.parse(f'created = {text}').where.values[0]
    return clock.span(value)


NOW = datetime(2026, 11, 30, 10, 0, tzinfo=timezone.utc)  # the clock fixture: a Monday


@pytest.mark.parametrize('text, start', [
    ('-7d', NOW - timedelta(days=7)),
    ('-2w', NOW - timedelta(weeks=2)),
    ('-4h', NOW - timedelta(hours=4)),
    ('-30m', NOW - timedelta(minutes=30)),
    ('1d', NOW + timedelta(days=1)),
    ('"-1w 2d"', NOW - timedelta(days=9)),
    ('"-1w +2d"', NOW - timedelta(days=5)),
    ('now()', NOW),
    ('now(-1h)', NOW - timedelta(hours=1)),
    ('startOfDay()', datetime(2026, 11, 30, tzinfo=timezone.utc)),
    ('startOfDay(-1d)', datetime(2026, 11, 29, tzinfo=timezone.utc)),
    ('startOfDay(-1)', datetime(2026, 11, 29, tzinfo=timezone.utc)),
    ('endOfDay()', datetime(2026, 11, 30, 23, 59, 59, tzinfo=timezone.utc)),
    ('startOfWeek()', datetime(2026, 11, 30, tzinfo=timezone.utc)),
    ('startOfWeek(-1)', datetime(2026, 11, 23, tzinfo=timezone.utc)),
    ('endOfWeek()', datetime(2026, 12, 6, 23, 59, 59, tzinfo=timezone.utc)),
    ('startOfMonth()', datetime(2026, 11, 1, tzinfo=timezone.utc)),
    ('startOfMonth(1)', datetime(2026, 12, 1, tzinfo=timezone.utc)),
    ('endOfMonth()', datetime(2026, 11, 30, 23, 59, 59, tzinfo=timezone.utc)),
    ('startOfYear()', datetime(2026, 1, 1, tzinfo=timezone.utc)),
    ('endOfYear()', datetime(2026, 12, 31, 23, 59, 59, tzinfo=timezone.utc)),
    ('startOfYear(-1)', datetime(2025, 1, 1, tzinfo=timezone.utc)),
])
def test_relative_dates_and_functions(mirrored, text, start):
    assert clock_span(mirrored, text).start == start


def test_weeks_start_on_monday_in_the_request_zone(mirrored, clock):
    clock.set('2026-11-29T22:00:00+00:00')  # Sunday in UTC, Monday 01:00 in Moscow
    moscow = ZoneInfo('Europe/Moscow')
    assert clock_span(mirrored, 'startOfWeek()', 'Europe/Moscow').start == datetime(
        2026, 11, 30, tzinfo=moscow)
    assert clock_span(mirrored, 'startOfWeek()').start == datetime(
        2026, 11, 23, tzinfo=timezone.utc)
    assert clock_span(mirrored, 'startOfDay()', 'Europe/Moscow').start == datetime(
        2026, 11, 30, tzinfo=moscow)


def test_relative_dates_follow_the_clock(mirrored, clock):
    assert found(mirrored, 'updated >= -1d') == ['AURORA-1', 'AURORA-2', 'AURORA-10']
    clock.advance(hours=23)
    assert found(mirrored, 'updated >= -1d') == ['AURORA-1']
    assert found(mirrored, 'updated >= startOfDay(-1)') == ['AURORA-1']
    assert found(mirrored, 'created >= startOfMonth(-1) AND created < startOfMonth()') == [
        'AURORA-2', 'AURORA-5']


# --- history predicates over issue_change ---------------------------------------------------------

@pytest.mark.parametrize('query, expected', [
    ('status WAS "В работе"', ['AURORA-1', 'AURORA-2', 'AURORA-5', 'AURORA-10']),
    ('status WAS Открыта', ['AURORA-1', 'AURORA-2', 'AURORA-3', 'ORBIT-1']),
    ('status WAS NOT "в работе"', ['AURORA-3', 'AURORA-11', 'ORBIT-1']),
    ('status WAS IN (Готово, Снято)', ['AURORA-3', 'AURORA-10']),
    ('status WAS NOT IN (Готово, Снято, Открыта)', ['AURORA-5', 'AURORA-11']),
    # current value without any change row, inside a window
    ('status WAS "В работе" DURING ("2026-11-21", "2026-11-24")',
     ['AURORA-1', 'AURORA-5', 'AURORA-10']),
    ('status WAS Открыта BEFORE "2026-11-20"', ['AURORA-1', 'AURORA-3', 'ORBIT-1']),
    ('status WAS "в работе" ON "2026-11-28"', ['AURORA-2', 'AURORA-5', 'AURORA-10']),
    ('status WAS Открыта AFTER "2026-11-26"', ['AURORA-1', 'AURORA-2', 'ORBIT-1']),
    ('status WAS Готово BY sidorova', ['AURORA-3']),
    ('status WAS Готово BY ivanov', []),
    ('assignee WAS ivanov', ['AURORA-1', 'AURORA-2', 'AURORA-5']),
    ('priority WAS Средний', ['AURORA-2', 'AURORA-3', 'ORBIT-1']),
    ('status CHANGED', ['AURORA-1', 'AURORA-2', 'AURORA-3', 'AURORA-10']),
    ('status CHANGED FROM Открыта TO "В работе"', ['AURORA-1', 'AURORA-2']),
    ('status CHANGED BY ivanov', ['AURORA-1', 'AURORA-10']),
    ('status CHANGED AFTER "2026-11-26"', ['AURORA-2', 'AURORA-10']),
    ('status CHANGED AFTER -3d', ['AURORA-2', 'AURORA-10']),
    ('status CHANGED BEFORE "2026-11-01"', ['AURORA-3']),
    ('status CHANGED ON "2026-11-25"', ['AURORA-1']),
    ('status CHANGED DURING ("2026-11-20", "2026-11-25")', ['AURORA-1']),
    ('status CHANGED TO снято AFTER startOfDay(-1)', ['AURORA-10']),
    ('assignee CHANGED TO petrov', ['AURORA-2']),
    ('priority CHANGED FROM Средний', ['AURORA-3']),
    ('NOT status CHANGED', ['AURORA-5', 'AURORA-11', 'ORBIT-1']),
])
def test_history_predicates(mirrored, query, expected):
    assert found(mirrored, query) == expected


# --- grammar: precedence, case, empty query -------------------------------------------------------

@pytest.mark.parametrize('query, expected', [
    ('', ALL),
    ('ORDER BY key', ALL),
    ('status = Открыта OR status = Готово AND reporter = sidorova',
     ['AURORA-1', 'AURORA-3', 'ORBIT-1']),
    ('(status = Открыта OR status = Готово) AND reporter = sidorova', ['AURORA-3']),
    ('NOT status = Открыта AND priority = Высокий', ['AURORA-10']),
    ('NOT (status = Открыта AND priority = Высокий)', [k for k in ALL if k != 'AURORA-1']),
    ('status = Открыта and NOT project = ORBIT', ['AURORA-1']),
    ('STATUS = открыта Or Key = AURORA-2 order by KEY desc', ['ORBIT-1', 'AURORA-2',
                                                             'AURORA-1']),
    ("summary ~ 'сверка'", ['AURORA-1']),
    ('((((key = AURORA-1))))', ['AURORA-1']),
])
def test_precedence_and_case(mirrored, query, expected):
    assert found(mirrored, query) == expected


def test_old_filters_and_with_the_query(mirrored):
    assert found(mirrored, 'priority = Высокий', status='открыта') == ['AURORA-1']
    assert found(mirrored, 'type = Задача', project='AWPCA') == ['AURORA-1']
    assert found(mirrored, '', project='AWPCA', neighbor=True) == ['AURORA-5']
    assert found(mirrored, 'ORDER BY updated DESC', q='склад') == ['AURORA-2', 'AURORA-5']
    assert sorted(found(mirrored, 'status != Готово', text='склад*'), key=natural_key) == [
        'AURORA-1', 'AURORA-2', 'AURORA-5']


def test_tilde_ranks_by_relevance_and_order_by_wins(mirrored):
    ranked = reads.issues(mirrored, jql='text ~ склад*')
    assert keys(ranked)[0] in ('AURORA-2', 'AURORA-5') and all('snippet' in i for i in
                                                               ranked['items'])
    assert found(mirrored, 'text ~ склад* ORDER BY key DESC') == ['AURORA-5', 'AURORA-2',
                                                                  'AURORA-1']


# --- ORDER BY -----------------------------------------------------------------------------------------

def _utc(value):
    return to_utc(value) if value else None


def _priority(issue):
    value = issue.get('priority')
    if not value:
        return None
    names = [name.casefold() for name in PRIORITIES.values()]
    folded = value.casefold()
    # the map's first value ranks highest; a priority not in it below every named one
    return (len(names) - names.index(folded) if folded in names else 0, folded)


SORT_VALUES = {
    'key': None,
    'created': lambda i: _utc(i.get('created')),
    'updated': lambda i: _utc(i.get('updated')),
    'priority': _priority,
    'status': lambda i: (i.get('status') or '').casefold() or None,
    'assignee': lambda i: (i.get('assignee') or '').casefold() or None,
    'reporter': lambda i: (i.get('reporter') or '').casefold() or None,
    'issuetype': lambda i: (i.get('issue_type') or '').casefold() or None,
    'due': lambda i: i.get('duedate') or None,
    'summary': lambda i: (i.get('summary') or '').casefold() or None,
    'rank': lambda i: i.get('rank') or None,
    '"Story Points"': lambda i: i.get('story_points'),
    '"planned start"': lambda i: i.get('planned_start') or None,
    '"planned end"': lambda i: i.get('planned_end') or None,
}


def expected_order(field: str, descending: bool) -> list[str]:
    return expected_order_of(ALL, (field, descending))


def expected_order_of(keys: list[str], *terms: tuple[str, bool]) -> list[str]:
    """``keys`` ordered by ``terms`` ((field, descending), ...), each field's empty values last
    whatever the direction, ties in natural key order: stable sorts, the last term first."""
    ordered = sorted((issue for issue in ISSUES if issue['key'] in keys),
                     key=lambda issue: natural_key(issue['key']))
    for field, descending in reversed(terms):
        value = SORT_VALUES[field]
        if value is None:
            ordered.sort(key=lambda issue: natural_key(issue['key']), reverse=descending)
            continue
        filled = [issue for issue in ordered if value(issue) is not None]
        if field == 'priority':  # one rank (priorities outside the map) by name A→Z either way
            filled.sort(key=lambda issue: value(issue)[1])
            filled.sort(key=lambda issue: value(issue)[0], reverse=descending)
        else:
            filled.sort(key=value, reverse=descending)  # stable: ties keep the order so far
        ordered = filled + [issue for issue in ordered if value(issue) is None]
    return [issue['key'] for issue in ordered]


@pytest.mark.parametrize('descending', [False, True])
@pytest.mark.parametrize('field', list(SORT_VALUES))
def test_order_by_each_field_with_empty_values_last(mirrored, field, descending):
    query = f'ORDER BY {field} {"DESC" if descending else "ASC"}'
    assert found(mirrored, query) == expected_order(field, descending)


@pytest.mark.parametrize('field', list(SORT_VALUES))
@pytest.mark.parametrize('descending', [False, True])
def test_pages_of_any_order_concatenate_to_the_whole(mirrored, field, descending):
    query = f'ORDER BY {field} {"DESC" if descending else ""}'
    whole = found(mirrored, query)
    seen = pages(mirrored, query, limit=2)
    assert seen == whole


def test_order_by_two_fields_pages(mirrored):
    query = 'project = AURORA ORDER BY priority DESC, updated DESC'
    whole = found(mirrored, query)
    aurora = [key for key in ALL if key.startswith('AURORA-')]
    assert whole == expected_order_of(aurora, ('priority', True), ('updated', True))
    seen = pages(mirrored, query, limit=1)
    assert seen == whole


def test_priority_desc_puts_the_most_important_first_as_the_map_is_written(mirrored):
    """Jira's «My open issues» is ``… ORDER BY priority DESC``: the map's first value (Наивысший,
    then Высокий, …) first; «Неизвестный», in no map, below every named one; no priority last."""
    assert found(mirrored, 'ORDER BY priority DESC') == [
        'AURORA-1', 'AURORA-10', 'AURORA-2', 'ORBIT-1', 'AURORA-3', 'AURORA-11', 'AURORA-5']
    assert found(mirrored, 'ORDER BY priority ASC') == [
        'AURORA-11', 'AURORA-3', 'AURORA-2', 'ORBIT-1', 'AURORA-1', 'AURORA-10', 'AURORA-5']
    settings.update_settings(mirrored, {'priority_map': {
        'low': 'Низкий', 'medium': 'Средний', 'high': 'Высокий'}})
    assert list(settings.client_settings(mirrored)['priority_map']) == ['low', 'medium', 'high']
    assert found(mirrored, 'priority IS NOT EMPTY ORDER BY priority DESC') == [
        'AURORA-3', 'AURORA-2', 'ORBIT-1', 'AURORA-1', 'AURORA-10', 'AURORA-11']


def test_priorities_outside_the_map_rank_below_it_by_name(hub, claimed_refresh):
    settings.update_settings(hub, {'priority_map': {'high': 'Высокий', 'low': 'Низкий'}})
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [
        {'key': 'A-1', 'priority': 'Низкий'}, {'key': 'A-2', 'priority': 'Блокер'},
        {'key': 'A-3', 'priority': 'Высокий'}, {'key': 'A-4', 'priority': 'авария'},
        {'key': 'A-5', 'priority': None}, {'key': 'A-6', 'priority': 'Блокер'}])
    assert found(hub, 'ORDER BY priority DESC') == ['A-3', 'A-1', 'A-4', 'A-2', 'A-6', 'A-5']
    assert found(hub, 'ORDER BY priority') == ['A-4', 'A-2', 'A-6', 'A-1', 'A-3', 'A-5']


def test_reordering_priority_map_is_a_change(mirrored):
    version = settings.client_settings(mirrored)['settings_version']
    settings.update_settings(mirrored, {'priority_map': dict(reversed(PRIORITIES.items()))})
    assert settings.client_settings(mirrored)['settings_version'] == version + 1


def test_cursor_of_another_order_is_refused(mirrored):
    page = reads.issues(mirrored, jql='ORDER BY updated DESC', limit=1)
    with pytest.raises(ValidationError) as caught:
        reads.issues(mirrored, jql='ORDER BY updated DESC, priority', cursor=page['next_cursor'])
    assert list(caught.value.fields) == ['cursor']


# --- refusals: the token and its position ---------------------------------------------------------

@pytest.mark.parametrize('query, message', [
    ('asignee = ivanov', 'неизвестное поле "asignee", позиция 1'),
    ('status = a AND "Sprint Goal" = x', 'неизвестное поле "Sprint Goal", позиция 16'),
    ('assignee = currentUser()', 'функция currentUser() недоступна в зеркале, позиция 12'),
    ('assignee IN membersOf(team)', 'функция membersOf() недоступна в зеркале, позиция 13'),
    ('issue IN watchedIssues()', 'функция watchedIssues() недоступна в зеркале, позиция 10'),
    ('issue IN issueHistory()', 'функция issueHistory() недоступна в зеркале, позиция 10'),
    ('status ~ Открыта', 'оператор "~" не применим к полю status, позиция 8'),
    ('labels > x', 'оператор ">" не применим к полю labels, позиция 8'),
    ('reporter WAS x', 'оператор "WAS" не применим к полю reporter, позиция 10'),
    ('text !~ x', 'оператор "!~" не применим к полю text, позиция 6'),
    ('comment IS EMPTY', 'оператор "IS EMPTY" не применим к полю comment, позиция 9'),
    ('hubProject != AWPCA', 'оператор "!=" не применим к полю hubProject, позиция 12'),
    ('created > "2026-13-01"', 'неверная дата "2026-13-01", позиция 11'),
    ('created > tomorrow', 'неверная дата "tomorrow", позиция 11'),
    ('due = "2026-02-30"', 'неверная дата "2026-02-30", позиция 7'),
    ('(status = a', 'незакрытая скобка "(", позиция 1'),
    ('status IN (a, b', 'незакрытая скобка "(", позиция 11'),
    ('status = a)', 'лишняя скобка ")", позиция 11'),
    (')', 'лишняя скобка ")", позиция 1'),
    ('summary ~ "open', 'незакрытая кавычка ", позиция 11'),
    ("summary ~ 'open", "незакрытая кавычка ', позиция 11"),
    ('status = AND', '"AND" — ключевое слово: значение возьмите в кавычки, позиция 10'),
    ('status = a ORDER BY text', 'по полю "text" нельзя сортировать, позиция 21'),
    ('status = foo()', 'неизвестная функция foo(), позиция 10'),
    ('status = openSprints()', 'функция openSprints() не применима к полю status, позиция 10'),
    ('statusCategory = "In Progress"',
     'statusCategory сравнивается только с Done, а не с "In Progress", позиция 18'),
    ('resolution = Fixed', 'resolution сравнивается только с Unresolved, а не с "Fixed", позиция 14'),
    ('hubProject = NOPE', 'неизвестный проект хаба "NOPE", позиция 14'),
    ('"Story Points" > many', 'ожидается число, а не "many", позиция 18'),
    ('key < 12', 'ожидается ключ задачи, например AURORA-7, а не "12", позиция 7'),
    ('status', 'запрос оборвался: ожидается оператор после поля status, позиция 7'),
    ('status = a AND', 'запрос оборвался: ожидается поле, позиция 15'),
    ('status = a b', 'ожидается AND, OR или ORDER BY, а не "b", позиция 12'),
    ('status & a', 'неожиданный символ "&", позиция 8'),
    ('status IN (a,', 'незакрытая скобка "(", позиция 11'),
    ('created > startOfDay(', 'незакрытая скобка "(", позиция 21'),
    ('status CHANGED DURING ("2026-11-01", ', 'незакрытая скобка "(", позиция 23'),
    ('(status = a OR (key = A-1)', 'незакрытая скобка "(", позиция 1'),
    ('status CHANGED TO a', None),
])
def test_refusals_name_the_token_and_its_position(mirrored, query, message):
    if message is None:
        assert found(mirrored, query) == []
        return
    assert refusal(mirrored, query) == message


@pytest.mark.parametrize('query, message', [
    ('(' * 60 + 'key = A-1' + ')' * 60, 'слишком глубокая вложенность (больше 16), позиция 17'),
    ('NOT ' * 100 + 'key = A-1', 'слишком глубокая вложенность (больше 16), позиция 65'),
    (' AND '.join(['key = A-1'] * 400), 'слишком много условий (больше 300), позиция 4201'),
    ('created > -99999999999999d', 'неверная дата "-99999999999999d", позиция 11'),
    ('created > "9999-12-31"', 'неверная дата "9999-12-31", позиция 11'),
    ('created > startOfDay(-99999999)', 'неверное смещение "-99999999", позиция 22'),
    ('sprint = 99999999999999999999', 'слишком большой номер спринта "99999999999999999999", '
                                      'позиция 10'),
    ('"Story Points" = 1e999', 'ожидается число, а не "1e999", позиция 18'),
])
def test_hostile_queries_are_refused(mirrored, query, message):
    assert refusal(mirrored, query) == message
    assert refusal(mirrored, query, tz='Europe/Moscow') == message


def test_labels_written_with_escapes_are_found(mirrored):
    mirrored.db.execute_sql("UPDATE issue SET labels = ? WHERE key = 'AURORA-3'",
                            (json.dumps(['срочно']),))  # \u0441…: ensure_ascii, another tool
    assert found(mirrored, 'labels = срочно') == ['AURORA-1', 'AURORA-3']


def test_refusals_never_touch_the_database_state(mirrored):
    assert refusal(mirrored, 'status WAS a FROM b') == 'WAS не принимает FROM, позиция 14'


# --- the language alone ---------------------------------------------------------------------------

def test_parse_gives_a_tree_with_positions():
    query = jql.parse('assignee = ivanov AND (status IN (a, "b c") OR NOT labels = x) '
                      'ORDER BY updated DESC')
    first, rest = query.where.items
    assert (first.field.name, first.operator, first.values[0].text, first.position,
            first.operator_position) == ('assignee', '=', 'ivanov', 1, 10)
    assert isinstance(rest, jql.Or) and isinstance(rest.items[1], jql.Not)
    assert [(s.field.name, s.descending) for s in query.order] == [('updated', True)]


def test_supported_fields_text_lists_the_fields():
    for name in ('status', 'hubProject', 'sprint', 'WAS', 'CHANGED', 'currentUser()'):
        assert name in jql.SUPPORTED


@pytest.mark.parametrize('moment', [
    '2026-10-22T09:00:00.000+0300', '2026-10-22T09:00:00.123456-0530', '2026-10-22T09:00:00Z',
    '2026-10-22T09:00:00+03:00', '2026-10-22 09:00:00', '2026-10-22T09:00', '2026-02-28T23:59:59.999+1400',
    '2026-10-22t09:00:00z', '2026-01-01T00:30:00.000+0100'])
def test_sql_time_agrees_with_to_utc(hub, moment):
    (value,) = hub.db.execute_sql(f'SELECT {jql.utc_sql("v")} FROM (SELECT ? AS v)',
                                  (moment,)).fetchone()
    assert value == to_utc(moment).replace('T', ' ').replace('+00:00', '')


def test_sql_time_agrees_with_to_utc_on_jira_shapes(hub):
    from hypothesis import given, settings as hsettings, strategies as st

    @hsettings(max_examples=150, deadline=None)
    @given(st.datetimes(min_value=datetime(1971, 1, 2), max_value=datetime(2099, 12, 30)),
           st.integers(min_value=-14 * 60, max_value=14 * 60),
           st.sampled_from(['.000{sign}{hh:02d}{mm:02d}', '{sign}{hh:02d}:{mm:02d}', 'Z', '',
                            '.123456{sign}{hh:02d}{mm:02d}']),
           st.sampled_from(['T', ' ']))
    def check(moment, minutes, offset, separator):
        sign = '+' if minutes >= 0 else '-'
        hh, mm = divmod(abs(minutes), 60)
        text = (moment.strftime(f'%Y-%m-%d{separator}%H:%M:%S')
                + offset.format(sign=sign, hh=hh, mm=mm))
        (value,) = hub.db.execute_sql(f'SELECT {jql.utc_sql("v")} FROM (SELECT ? AS v)',
                                      (text,)).fetchone()
        assert value == to_utc(text).replace('T', ' ').replace('+00:00', '')
    check()


def test_json_of_results_is_plain(mirrored):
    json.dumps(reads.issues(mirrored, jql='ORDER BY priority DESC'))


# --- issue 24: the fast shapes answer what the slow ones did -------------------------------------

@pytest.mark.parametrize('query', [
    'ORDER BY created DESC', 'ORDER BY created', 'ORDER BY updated DESC', 'ORDER BY updated',
    'status != Готово ORDER BY created DESC, priority', 'ORDER BY updated, created DESC'])
def test_a_big_slice_walks_the_issue_index_in_the_same_order_as_its_sort(mirrored, monkeypatch,
                                                                         query):
    def neighbors() -> list[bool]:
        return [item['neighbor'] for item in reads.issues(
            mirrored, jql=query, project='AWPCA', limit=100)['items']]

    monkeypatch.setattr(reads, '_walk_index', lambda hub, label: False)
    sorted_slice, sorted_neighbors = found(mirrored, query, project='AWPCA'), neighbors()
    assert len(sorted_slice) >= 3 and True in sorted_neighbors
    assert pages(mirrored, query, 1, project='AWPCA') == sorted_slice
    monkeypatch.setattr(reads, '_walk_index', lambda hub, label: True)
    assert found(mirrored, query, project='AWPCA') == sorted_slice
    assert pages(mirrored, query, 1, project='AWPCA') == sorted_slice
    assert neighbors() == sorted_neighbors


def test_walking_the_index_is_chosen_for_a_slice_big_beside_the_mirror(mirrored, monkeypatch):
    size = reads.slices.counts(mirrored, 'AWPCA')
    members = size['own_count'] + size['neighbor_count']
    assert reads._walk_index(mirrored, 'AWPCA') == (members * members > 10 * len(ALL))
    monkeypatch.setattr(reads.slices, 'counts',
                        lambda hub, label: {'own_count': 10 * len(ALL), 'neighbor_count': 0})
    assert reads._walk_index(mirrored, 'AWPCA')
    monkeypatch.setattr(reads.slices, 'counts',
                        lambda hub, label: {'own_count': 1, 'neighbor_count': 0})
    assert not reads._walk_index(mirrored, 'AWPCA')


@pytest.mark.parametrize('query', [
    'status CHANGED', 'status CHANGED TO Готово', 'status CHANGED FROM Открыта BY ivanov',
    'assignee CHANGED', 'status WAS "В работе"', 'status WAS IN (Открыта, Готово)',
    'status WAS NOT Готово', 'priority WAS Высокий'])
def test_history_without_a_window_pages_through_the_same_issues(mirrored, query):
    whole = found(mirrored, query)
    assert pages(mirrored, query, 1) == whole
    assert pages(mirrored, query, 2, project='AWPCA') == found(mirrored, query, project='AWPCA')
