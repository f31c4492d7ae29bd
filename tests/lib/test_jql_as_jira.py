"""JQL answers as Jira does (issue 30, contract §16): NOT is the negative operator, date functions
take the period's boundary before the increment, an explicit ORDER BY beats relevance, WAS takes a
one-value list, and of several problems the first in the text is named. (Priority order: in
test_jql.py, with the other orders.)"""
from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from hublib import ValidationError, jql, reads
from tests.support.jql_mirror import ALL, build_mirror


@pytest.fixture
def mirrored(hub, claimed_refresh):
    return build_mirror(hub, claimed_refresh(hub))


def found(hub, query: str, **options) -> list[str]:
    return [item['key'] for item in reads.issues(hub, jql=query, limit=1000, **options)['items']]


def refusal(hub, query: str) -> str:
    with pytest.raises(ValidationError) as caught:
        reads.issues(hub, jql=query)
    assert list(caught.value.fields) == ['jql']
    return caught.value.fields['jql'][0]


# --- NOT is the negative operator ---------------------------------------------------------------

@pytest.mark.parametrize('negated, plain, expected', [
    # Jira: «field != value is the same as NOT field = value»; neither matches an empty value
    ('NOT assignee = ivanov', 'assignee != ivanov', ['AURORA-2', 'AURORA-10', 'ORBIT-1']),
    ('NOT labels IN (AWPCA)', 'labels NOT IN (AWPCA)', ['AURORA-5', 'AURORA-10', 'AURORA-11']),
    ('NOT due < "2026-12-01"', 'due >= "2026-12-01"', ['AURORA-1']),
    ('NOT priority = Высокий', 'priority != Высокий', ['AURORA-2', 'AURORA-3', 'AURORA-11',
                                                        'ORBIT-1']),
    ('NOT "Epic Link" = AURORA-5', '"Epic Link" != AURORA-5', []),
    ('NOT created >= "2026-11-01"', 'created < "2026-11-01"', ['AURORA-1', 'AURORA-3',
                                                               'AURORA-10', 'ORBIT-1']),
    ('NOT "Story Points" > 3', '"Story Points" <= 3', ['AURORA-1', 'AURORA-3']),
    ('NOT sprint = 10', 'sprint != 10', ['AURORA-3']),
    ('NOT sprint IN openSprints()', 'sprint NOT IN openSprints()', ['AURORA-3']),
    ('NOT status IN (Готово, Снято)', 'status NOT IN (Готово, Снято)',
     ['AURORA-1', 'AURORA-2', 'AURORA-5', 'ORBIT-1']),
    ('NOT statusCategory = Done', 'statusCategory != Done',
     ['AURORA-1', 'AURORA-2', 'AURORA-5', 'ORBIT-1']),
    ('NOT key < AURORA-5', 'key >= AURORA-5', ['AURORA-5', 'AURORA-10', 'AURORA-11']),
    ('NOT project = ORBIT', 'project != ORBIT', ALL[:-1]),
    ('NOT issue IN linkedIssues(AURORA-2)', 'issue NOT IN linkedIssues(AURORA-2)',
     [k for k in ALL if k != 'AURORA-1']),
    ('NOT assignee IS EMPTY', 'assignee IS NOT EMPTY',
     ['AURORA-1', 'AURORA-2', 'AURORA-5', 'AURORA-10', 'ORBIT-1']),
    ('NOT note IS NOT EMPTY', 'note IS EMPTY', [k for k in ALL if k != 'AURORA-2']),
    ('NOT summary ~ склад*', 'summary !~ склад*',
     ['AURORA-1', 'AURORA-3', 'AURORA-10', 'AURORA-11', 'ORBIT-1']),
    ('NOT status WAS Открыта', 'status WAS NOT Открыта', ['AURORA-5', 'AURORA-10',
                                                          'AURORA-11']),
    ('NOT status WAS IN (Готово, Снято)', 'status WAS NOT IN (Готово, Снято)',
     ['AURORA-1', 'AURORA-2', 'AURORA-5', 'AURORA-11', 'ORBIT-1']),
    ('NOT NOT assignee = ivanov', 'assignee = ivanov', ['AURORA-1', 'AURORA-5']),
    # over a group NOT distributes by De Morgan's laws
    ('NOT (status = Открыта OR assignee = ivanov)', 'status != Открыта AND assignee != ivanov',
     ['AURORA-2', 'AURORA-10']),  # not AURORA-3: it has no assignee
    ('NOT (priority = Высокий AND labels = срочно)', 'priority != Высокий OR labels != срочно',
     ['AURORA-2', 'AURORA-3', 'AURORA-5', 'AURORA-10', 'AURORA-11', 'ORBIT-1']),
    ('NOT (assignee = ivanov AND NOT status = Открыта)', 'assignee != ivanov OR status = Открыта',
     ['AURORA-1', 'AURORA-2', 'AURORA-10', 'ORBIT-1']),
])
def test_not_is_the_negative_operator(mirrored, negated, plain, expected):
    assert found(mirrored, negated) == found(mirrored, plain) == expected


@pytest.mark.parametrize('negated, expected', [
    # fields without a negative operator: NOT is the complement of the clause
    ('NOT status CHANGED', ['AURORA-5', 'AURORA-11', 'ORBIT-1']),
    ('NOT status CHANGED BY ivanov', [k for k in ALL if k not in ('AURORA-1', 'AURORA-10')]),
    ('NOT text ~ ЁЖИКОМ', [k for k in ALL if k != 'AURORA-1']),
    ('NOT hubProject = ORION', [k for k in ALL if k != 'AURORA-5']),
    ('NOT resolution = Unresolved', ['AURORA-3', 'AURORA-10']),
])
def test_not_of_a_clause_without_a_negative_operator_is_its_complement(mirrored, negated,
                                                                       expected):
    assert found(mirrored, negated) == expected


def test_the_parse_tree_keeps_not_as_written_and_normalized_pushes_it_down():
    query = jql.parse('NOT (assignee = a OR labels IN (x)) AND NOT status CHANGED')
    assert isinstance(query.where.items[0], jql.Not)
    first, second, third = jql.normalized(query.where).items
    assert (first.operator, second.operator) == ('!=', 'not in')
    assert isinstance(third, jql.Not) and third.item.operator == 'changed'


# --- date functions: the period's boundary, then the increment ------------------------------------

UTC, MOSCOW = timezone.utc, ZoneInfo('Europe/Moscow')


@pytest.mark.parametrize('text, tz, moment', [
    # the clock: Monday 2026-11-30 10:00 UTC
    ('startOfMonth("+14d")', 'UTC', datetime(2026, 11, 15, tzinfo=UTC)),
    ('startOfWeek(8d)', 'UTC', datetime(2026, 12, 8, tzinfo=UTC)),  # Tuesday of next week
    ('endOfMonth(+2w)', 'UTC', datetime(2026, 12, 14, 23, 59, 59, tzinfo=UTC)),
    ('startOfMonth(-1)', 'UTC', datetime(2026, 10, 1, tzinfo=UTC)),
    ('startOfMonth(-1M)', 'UTC', datetime(2026, 10, 1, tzinfo=UTC)),
    ('startOfMonth("-1w 2d")', 'UTC', datetime(2026, 10, 23, tzinfo=UTC)),
    ('startOfYear("+1M")', 'UTC', datetime(2026, 2, 1, tzinfo=UTC)),
    ('startOfYear(1y)', 'UTC', datetime(2027, 1, 1, tzinfo=UTC)),
    ('endOfMonth("+1M")', 'UTC', datetime(2026, 12, 30, 23, 59, 59, tzinfo=UTC)),
    ('endOfWeek(-1d)', 'UTC', datetime(2026, 12, 5, 23, 59, 59, tzinfo=UTC)),
    ('startOfDay("+4h")', 'UTC', datetime(2026, 11, 30, 4, tzinfo=UTC)),
    ('startOfDay(-30m)', 'UTC', datetime(2026, 11, 29, 23, 30, tzinfo=UTC)),
    ('now(-1d)', 'UTC', datetime(2026, 11, 29, 10, tzinfo=UTC)),
    ('startOfMonth("+14d")', 'Europe/Moscow', datetime(2026, 11, 15, tzinfo=MOSCOW)),
    ('startOfWeek(8d)', 'Europe/Moscow', datetime(2026, 12, 8, tzinfo=MOSCOW)),
])
def test_a_date_function_takes_its_boundary_then_the_increment(mirrored, text, tz, moment):
    clock = jql.Clock(mirrored.clock(), jql.zone(tz))
    assert clock.span(jql.parse(f'created = {text}').where.values[0]).start == moment


def test_months_keep_the_day_where_the_month_has_it(mirrored, clock):
    clock.set('2026-01-31T10:00:00+00:00')
    span = jql.Clock(mirrored.clock(), jql.zone('UTC')).span(
        jql.parse('created = startOfDay("+1M")').where.values[0])
    assert span.start == datetime(2026, 2, 28, tzinfo=UTC)


def test_days_keep_the_wall_time_across_a_dst_change(mirrored, clock):
    berlin = ZoneInfo('Europe/Berlin')  # summer time from Sunday 2026-03-29
    clock.set('2026-03-25T10:00:00+00:00')
    span = jql.Clock(mirrored.clock(), berlin).span(
        jql.parse('created = startOfWeek(+7d)').where.values[0])
    assert span.start == datetime(2026, 3, 30, tzinfo=berlin)
    assert span.start.utcoffset().total_seconds() == 7200


def test_increments_in_a_query(mirrored):
    # AURORA-2 was created on 2026-11-27: after the 15th of this month, before next month
    assert found(mirrored, 'created >= startOfMonth("+14d") AND created < endOfMonth()') == [
        'AURORA-2']
    assert found(mirrored, 'created >= startOfMonth(-1) AND created < startOfMonth()') == [
        'AURORA-1', 'AURORA-3']


# --- an explicit ORDER BY wins over relevance ---------------------------------------------------

@pytest.mark.parametrize('order', ['ORDER BY key', 'ORDER BY key ASC'])
def test_text_search_with_order_by_key_is_in_key_order(mirrored, order):
    result = reads.issues(mirrored, jql=f'text ~ склад* {order}')
    assert [item['key'] for item in result['items']] == ['AURORA-1', 'AURORA-2', 'AURORA-5']
    assert 'ranked_within' not in result and not any('snippet' in i for i in result['items'])


def test_text_search_without_order_by_is_ranked(mirrored):
    assert all('snippet' in item for item in reads.issues(mirrored, jql='text ~ склад*')['items'])


# --- WAS with a one-value list -------------------------------------------------------------------

@pytest.mark.parametrize('listed, plain', [
    ('status WAS ("В работе")', 'status WAS "В работе"'),
    ('status WAS NOT (Открыта)', 'status WAS NOT Открыта'),
    ('status WAS (Открыта) BY ivanov', 'status WAS Открыта BY ivanov'),
])
def test_was_takes_a_parenthesised_single_value_as_jira_does(mirrored, listed, plain):
    assert found(mirrored, listed) == found(mirrored, plain) != []


@pytest.mark.parametrize('query, message', [
    ('status WAS ("a", "b")', 'оператор "WAS" сравнивает с одним значением, а не со списком: '
                              'для списка — WAS IN (…), позиция 12'),
    ('status = ("Открыта")', 'оператор "=" сравнивает с одним значением, а не со списком: '
                             'для списка — IN (…), позиция 10'),
    ('status != (a)', 'оператор "!=" сравнивает с одним значением, а не со списком: '
                      'для списка — NOT IN (…), позиция 11'),
    ('created > ("2026-11-30")', 'оператор ">" сравнивает с одним значением, а не со списком, '
                                 'позиция 11'),
])
def test_other_operators_refuse_a_list_pointing_to_in(mirrored, query, message):
    assert refusal(mirrored, query) == message


# --- of several problems, the first in the text ---------------------------------------------------

@pytest.mark.parametrize('query, message', [
    # a value the compiler refuses before a function the parser refuses
    ('due < "2026-13-01" AND issue IN watchedIssues()', 'неверная дата "2026-13-01", позиция 7'),
    ('"Story Points" > many AND asignee = x', 'ожидается число, а не "many", позиция 18'),
    ('hubProject = NOPE OR labels > x', 'неизвестный проект хаба "NOPE", позиция 14'),
    ('key < 12 ORDER BY text', 'ожидается ключ задачи, например AURORA-7, а не "12", позиция 7'),
    ('status WAS a BEFORE "2026-13-01" AND assignee IN membersOf(t)',
     'неверная дата "2026-13-01", позиция 21'),
    # a problem the parser recorded before a grammar error further on
    ('asignee = x AND (status = a', 'неизвестное поле "asignee", позиция 1'),
    ('issue IN votedIssues() AND status = ', 'функция votedIssues() недоступна в зеркале, '
                                             'позиция 10'),
    # and the other way round: the first problem, whoever finds it
    ('labels > x AND due < "2026-13-01"', 'оператор ">" не применим к полю labels, позиция 8'),
    ('created > tomorrow ORDER BY nope', 'неверная дата "tomorrow", позиция 11'),
    ('status = a ORDER BY nope, text', 'неизвестное поле "nope", позиция 21'),
])
def test_the_first_problem_in_the_text_is_named(mirrored, query, message):
    assert refusal(mirrored, query) == message
