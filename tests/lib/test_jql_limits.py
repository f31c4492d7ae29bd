"""Every JQL query has a bounded cost (issue 31, contract §20): sort keys, nesting, clause count,
dates and numbers out of range are refused with a 422 naming the position before any SQL runs;
ORDER BY a choice binds no parameter per value; OR-ed history and text clauses are one clause;
a query sure to outrun the read deadline is refused up front."""
from __future__ import annotations

import itertools
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from hublib import ValidationError, jql, mirror, reads, search, settings
from tests.support.jql_mirror import ALL, build_mirror


@pytest.fixture
def mirrored(hub, claimed_refresh):
    return build_mirror(hub, claimed_refresh(hub))


def found(hub, query: str, **options) -> list[str]:
    return [item['key'] for item in reads.issues(hub, jql=query, limit=1000, **options)['items']]


def refusal(call, **arguments) -> str:
    with pytest.raises(ValidationError) as caught:
        call(**arguments)
    assert list(caught.value.fields) == ['jql'], caught.value.fields
    return caught.value.fields['jql'][0]


# Every way a query is read: pages in each kind of order, a slice, relevance, count, facets, CSV.
ENTRY_POINTS = {
    'page': lambda hub, q: reads.issues(hub, jql=q, limit=2),
    'page in an order': lambda hub, q: reads.issues(
        hub, jql=f'{q} ORDER BY priority DESC, updated', limit=2),
    'slice in an order': lambda hub, q: reads.issues(hub, jql=f'{q} ORDER BY created',
                                                     project='AWPCA', limit=2),
    'relevance': lambda hub, q: reads.issues(hub, jql=f'{q} AND text ~ склад*', limit=2),
    'relevance in a slice': lambda hub, q: reads.issues(hub, jql=f'{q} AND text ~ склад*',
                                                        project='AWPCA', limit=2),
    'count': lambda hub, q: reads.issue_count(hub, jql=q),
    'count of a slice': lambda hub, q: reads.issue_count(hub, jql=q, project='AWPCA'),
    'facets': lambda hub, q: reads.issue_facets(hub, jql=q),
    'facets of a slice': lambda hub, q: reads.issue_facets(hub, jql=q, project='AWPCA'),
    'csv': lambda hub, q: list(reads.issues_csv(hub, jql=q)),
    'csv of a slice in an order': lambda hub, q: list(reads.issues_csv(
        hub, jql=f'{q} ORDER BY status DESC', project='AWPCA')),
}

# The heaviest clause of every kind the compiler knows (the most SQL it writes for one clause).
HEAVIEST = [
    'key < AURORA-5', 'issue NOT IN linkedIssues(AURORA-1, "Blocks")', 'project IN (AURORA, ORBIT)',
    'hubProject IN (AWPCA, ORION)', 'NOT hubProject = AWPCA', 'summary !~ "склад* отчёт"',
    'NOT text ~ склад*', 'summary IS EMPTY', 'status NOT IN (Готово, EMPTY)',
    'statusCategory != Done', 'NOT resolution = Unresolved', 'priority IN (Высокий, EMPTY)',
    'issuetype != Задача', 'assignee NOT IN (ivanov, EMPTY)', 'reporter IS NOT EMPTY',
    'labels NOT IN (срочно, "x\\"y", EMPTY)', 'created != startOfMonth(-1)',
    'updated >= "2026-11-30 08:59"', 'due != "2026-11-30"', '"planned start" < startOfWeek(8d)',
    '"Epic Link" NOT IN (AURORA-5, EMPTY)', 'sprint NOT IN (10, "Спринт 11", EMPTY)',
    'sprint IN openSprints()', '"Story Points" != 3', 'note IS EMPTY',
    'status WAS NOT IN (Готово, EMPTY) BY ivanov DURING (startOfMonth(-1), endOfMonth(-1))',
    'NOT status WAS Готово DURING ("2026-11-01", "2026-11-20")',
    'assignee WAS IN (ivanov, EMPTY)',
    'NOT priority CHANGED FROM Средний TO Низкий BY sidorova AFTER -30d BEFORE now()',
    'status CHANGED FROM Открыта TO "В работе" BY petrov',
]


def nested(leaf: str, groups: int) -> str:
    """``leaf`` at the bottom of ``groups`` nested groups alternating AND and OR (the SQL nests
    one level for each), another clause beside it at each level so nothing merges."""
    query = 'key = AURORA-1'
    for level in range(groups):
        query = f'({leaf} {"OR" if level % 2 else "AND"} {query})'
    return query


@pytest.mark.parametrize('leaf', HEAVIEST)
def test_the_deepest_query_allowed_is_answered_everywhere(mirrored, leaf):
    own = 1 + leaf.count('NOT ') - leaf.count(' NOT ')  # a leading NOT is a level too
    query = nested(leaf, jql.MAX_DEPTH - own)  # the inner clauses at depth MAX_DEPTH
    for name, read in ENTRY_POINTS.items():
        read(mirrored, query)  # no 500: SQLite's parser takes it


def test_one_level_deeper_is_refused_before_any_sql(mirrored):
    statements: list[str] = []
    mirrored.db.connection().set_trace_callback(statements.append)
    try:
        query = nested('labels = x', jql.MAX_DEPTH)
        deepest = [at for at, char in enumerate(query, 1) if char == '('][-1] + 1
        for name, read in ENTRY_POINTS.items():
            message = refusal(lambda: read(mirrored, query))
            assert message == f'слишком глубокая вложенность (больше 16), позиция {deepest}'
    finally:
        mirrored.db.connection().set_trace_callback(None)
    assert not [sql for sql in statements if 'FROM issue i' in sql]


@pytest.mark.parametrize('query, answered', [
    # issue 31: 19 NOTs were a 500 («parser stack overflow»); NOT pushed down leaves one clause
    ('NOT ' * 15 + 'labels = срочно', ['AURORA-2', 'AURORA-5', 'AURORA-10', 'AURORA-11']),
    ('NOT ' * 14 + 'labels = срочно', ['AURORA-1']),
    ('(' * 15 + 'labels = срочно' + ')' * 15, ['AURORA-1']),
])
def test_not_and_parentheses_within_the_depth_are_answered(mirrored, query, answered):
    for read in ENTRY_POINTS.values():
        read(mirrored, query)
    assert found(mirrored, query) == answered


@pytest.mark.parametrize('query, position', [
    ('NOT ' * 19 + 'labels = x', 65), ('(' * 17 + 'key = A-1' + ')' * 17, 17)])
def test_deeper_than_the_depth_is_refused_naming_the_position(mirrored, query, position):
    assert refusal(reads.issues, hub=mirrored, jql=query) == (
        f'слишком глубокая вложенность (больше 16), позиция {position}')


def test_the_clause_count_limit(mirrored):
    # 300 clauses of the heaviest kinds, nothing merging: answered; the 301st refused
    kinds = itertools.cycle(['status WAS "{}" DURING ("2026-11-01", "2026-11-20")',
                             'labels = "{}"', 'summary ~ "{}"', 'sprint != "{}"'])
    terms = [next(kinds).format(f'x{n}') for n in range(jql.MAX_CLAUSES - 1)]  # + text ~
    for joiner in (' OR ', ' AND '):
        for read in ENTRY_POINTS.values():
            read(mirrored, joiner.join(terms))
    query = ' OR '.join(terms + ['key = A-1', 'key = A-2'])
    assert refusal(reads.issues, hub=mirrored, jql=query) == (
        f'слишком много условий (больше 300), позиция {query.rindex("key = A-2") + 1}')


def test_random_trees_within_the_limits_answer_or_are_refused(mirrored):
    leaves = st.sampled_from(HEAVIEST + ['labels = срочно', 'status = Открыта', 'key = AURORA-2'])
    trees = st.recursive(leaves, lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from([' AND ', ' OR ']), inner).map(
            lambda parts: f'({"".join(parts)})'),
        inner.map(lambda q: f'NOT {q}')), max_leaves=40)

    @hsettings(max_examples=60, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(trees, st.sampled_from(list(ENTRY_POINTS)))
    def check(query, entry):
        try:
            ENTRY_POINTS[entry](mirrored, query)
        except ValidationError as error:
            assert 'позиция' in error.fields['jql'][0]
    check()


# --- ORDER BY: a field once, at most 10 ---------------------------------------------------------

@pytest.mark.parametrize('query, message', [
    ('ORDER BY due, duedate', 'поле "duedate" уже есть в ORDER BY: сортировать по полю можно '
                              'один раз, позиция 15'),
    ('status = a ORDER BY status DESC, priority, STATUS', 'поле "STATUS" уже есть в ORDER BY: '
                                                         'сортировать по полю можно один раз, '
                                                         'позиция 44'),
    ('ORDER BY ' + ', '.join(['due'] * 1990), 'поле "due" уже есть в ORDER BY: сортировать по '
                                              'полю можно один раз, позиция 15'),
    ('ORDER BY key, created, updated, priority, status, assignee, reporter, issuetype, due, '
     'summary, rank', 'в ORDER BY больше 10 полей, позиция 96'),
])
def test_order_by_names_a_field_once_and_at_most_ten(mirrored, query, message):
    assert refusal(reads.issues, hub=mirrored, jql=query) == message


def test_ten_sort_keys_page_through_every_issue(mirrored):
    query = ('ORDER BY status DESC, created, updated, priority, assignee, reporter, issuetype, '
             'due, summary, rank')
    whole = found(mirrored, query)
    assert sorted(whole) == sorted(ALL)
    keys, cursor = [], None
    while True:
        page = reads.issues(mirrored, jql=query, limit=2, cursor=cursor)
        keys += [item['key'] for item in page['items']]
        cursor = page['next_cursor']
        if cursor is None:
            break
    assert keys == whole


# --- dates and numbers out of range ---------------------------------------------------------------

@pytest.mark.parametrize('query, message', [
    ('created > now(-9999999d)', 'неверная дата "now(-9999999d)", позиция 11'),
    ('created > startOfDay(9999999d)', 'неверная дата "startOfDay(9999999d)", позиция 11'),
    ('created > startOfWeek(-300000w)', 'неверная дата "startOfWeek(-300000w)", позиция 11'),
    ('updated < endOfYear("+99999y")', 'неверная дата "endOfYear(+99999y)", позиция 11'),
    ('status CHANGED DURING (now(-9999999d), now())', 'неверная дата "now(-9999999d)", позиция 24'),
    ('status WAS a DURING ("2026-01-01", startOfMonth(99999999M))',
     'неверная дата "startOfMonth(99999999M)", позиция 36'),
    ('created > -' + '9' * 5000 + 'd', 'неверная дата "-' + '9' * 39 + '…", позиция 11'),
    ('created > startOfDay(-' + '9' * 30 + 'd)', 'неверное смещение "-' + '9' * 30 + 'd", '
                                                 'позиция 22'),
    ('key < AURORA-' + '9' * 5000, 'слишком большой номер задачи "AURORA-' + '9' * 33 + '…", '
                                   'позиция 7'),
    ('"Story Points" > ' + '9' * 5000, 'ожидается число, а не "' + '9' * 40 + '…", позиция 18'),
    ('sprint = ' + '9' * 5000, 'слишком большой номер спринта "' + '9' * 40 + '…", позиция 10'),
])
def test_dates_and_numbers_out_of_range_are_refused(mirrored, query, message):
    for read in ENTRY_POINTS.values():
        assert refusal(lambda: read(mirrored, query)) == message


FUNCTIONS = ['now', 'startOfDay', 'endOfDay', 'startOfWeek', 'endOfWeek', 'startOfMonth',
             'endOfMonth', 'startOfYear', 'endOfYear']


@st.composite
def increments(draw):
    sign = draw(st.sampled_from(['', '+', '-']))
    digits = draw(st.one_of(st.integers(0, 10 ** 6).map(str), st.text('0123456789', min_size=1,
                                                                      max_size=40),
                            st.integers(4000, 4500).map(lambda size: '9' * size)))
    unit = draw(st.sampled_from(['', 'y', 'M', 'w', 'd', 'h', 'm', 'x']))
    return sign + digits + unit


def test_date_functions_and_offsets_never_overflow(mirrored):
    """Any increment of any date function, any offset, in a comparison or a window: an answer
    or a 422 naming the position (never OverflowError or Python's int-conversion limit)."""
    @hsettings(max_examples=200, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(st.sampled_from(FUNCTIONS), increments(), increments(),
           st.sampled_from(['created > {}', 'due <= {}', 'status WAS a DURING ({}, {})',
                            'status CHANGED AFTER {}', 'updated = {}']))
    def check(function, increment, offset, shape):
        values = [f'{function}("{increment}")', f'"{offset}"']
        query = shape.format(*values)
        try:
            reads.issues(mirrored, jql=query, limit=1)
        except ValidationError as error:
            assert 'позиция' in error.fields['jql'][0]
    check()


def test_numbers_of_any_size_never_overflow(mirrored):
    @hsettings(max_examples=150, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(st.one_of(st.integers(-10 ** 30, 10 ** 30).map(str),
                     st.integers(1, 6000).map(lambda size: '9' * size),  # past int's 4,300 digits
                     st.text('0123456789', min_size=1, max_size=60),
                     st.floats(allow_nan=True, allow_infinity=True).map(str)),
           st.sampled_from(['"Story Points" >= {}', 'key < AURORA-{}', 'key >= AURORA-{}',
                            'sprint = {}', 'sprint IN ({}, 1)', 'issue IN linkedIssues(AURORA-{})',
                            'key = AURORA-{}', 'created > startOfDay({})']))
    def check(number, shape):
        try:
            reads.issues(mirrored, jql=shape.format(number), limit=1)
        except ValidationError as error:
            assert 'позиция' in error.fields['jql'][0]
    check()


# --- ORDER BY a choice: no parameter per value -----------------------------------------------------

@pytest.fixture
def many_people(hub, claimed_refresh):
    """300 issues of 150 assignees (mixed-case spellings), statuses, types and priorities."""
    people = [f'user{n:03d}' for n in range(150)]
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [
        {'key': f'AURORA-{n}', 'assignee': people[n % 150].upper() if n % 7 == 0 else
         people[n % 150], 'status': f'Статус {n % 90}', 'issue_type': f'Тип {n % 80}',
         'priority': f'P{n % 70}', 'reporter': people[(n * 7) % 150]}
        for n in range(1, 301)])
    return hub


@pytest.mark.parametrize('query', [
    'ORDER BY assignee', 'ORDER BY assignee DESC', 'ORDER BY status DESC', 'ORDER BY issuetype',
    'ORDER BY priority DESC', 'ORDER BY reporter', 'summary IS EMPTY ORDER BY assignee DESC',
    'ORDER BY assignee DESC, status'])
def test_a_choice_order_binds_no_parameter_per_value(many_people, query):
    """With SQLite allowed 40 variables, pages of a choice order over 150 assignees, 90
    statuses, 80 types and 70 priorities (it bound two per stored spelling: a 500 past SQLite's
    limit at ~16,000 people)."""
    whole = found(many_people, query)
    connection = many_people.db.connection()
    connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 40)
    try:
        keys, cursor = [], None
        while True:
            page = reads.issues(many_people, jql=query, limit=70, cursor=cursor)
            keys += [item['key'] for item in page['items']]
            cursor = page['next_cursor']
            if cursor is None:
                break
    finally:
        connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 32766)
    assert keys == whole and len(keys) == 300


def test_a_choice_order_reads_a_bounded_number_of_statements(many_people):
    """A first page of 10 in assignee order reads the values once and a range per value it
    shows, not one statement per stored value (150 here)."""
    statements: list[str] = []
    connection = many_people.db.connection()
    connection.set_trace_callback(statements.append)
    try:
        page = reads.issues(many_people, jql='ORDER BY assignee DESC', limit=10)
    finally:
        connection.set_trace_callback(None)
    assert len(page['items']) == 10
    assert len([sql for sql in statements if sql.lstrip().upper().startswith(('SELECT', 'WITH'))]
               ) <= 10 + 5


# --- OR-ed history and text clauses are one clause; a hopeless query is refused ----------------

def test_or_of_was_of_one_field_is_one_was_in(mirrored):
    query = ' OR '.join(f'status WAS "x{n}"' for n in range(299)) + ' OR status WAS Готово'
    merged = jql.normalized(jql.parse(query).where)
    assert merged.operator == 'was in' and len(merged.values) == 300
    assert found(mirrored, query) == found(mirrored, 'status WAS Готово') == ['AURORA-3']
    assert found(mirrored, 'status WAS Готово OR status WAS Снято OR assignee WAS petrov') == \
        found(mirrored, 'status WAS IN (Готово, Снято) OR assignee WAS petrov')


@pytest.mark.parametrize('query, same_as', [
    ('status WAS NOT Открыта AND status WAS NOT Готово', 'status WAS NOT IN (Открыта, Готово)'),
    ('NOT (status WAS Открыта OR status WAS Готово)', 'status WAS NOT IN (Открыта, Готово)'),
    ('status = Открыта OR status = Готово OR status IN (Снято)',
     'status IN (Открыта, Готово, Снято)'),
    ('labels != срочно AND labels != AWPCA', 'labels NOT IN (срочно, AWPCA)'),
    ('status WAS Готово BY sidorova OR status WAS Открыта BY sidorova',
     'status WAS IN (Готово, Открыта) BY sidorova'),
    ('summary ~ сверка OR summary ~ отчёт', 'summary ~ сверка OR summary ~ "отчёт"'),
])
def test_clauses_one_list_says_are_merged_with_the_same_answer(mirrored, query, same_as):
    assert found(mirrored, query) == found(mirrored, same_as)
    merged = jql.normalized(jql.parse(query).where)
    assert isinstance(merged, jql.Clause)


def test_or_of_text_of_one_field_is_one_match(mirrored):
    query = ' OR '.join(['summary ~ склад*'] * 150 + ['summary ~ сверка'] * 150)
    clause = jql.normalized(jql.parse(query).where)
    assert isinstance(clause, jql.Clause) and len(clause.values) == 2
    statements: list[str] = []
    mirrored.db.connection().set_trace_callback(statements.append)
    try:
        result = found(mirrored, query)
    finally:
        mirrored.db.connection().set_trace_callback(None)
    assert sorted(result) == ['AURORA-1', 'AURORA-2', 'AURORA-5']
    assert sum(sql.count(' MATCH ') for sql in statements) <= 2  # the window and the snippets


def test_a_word_written_twice_is_searched_once():
    assert search.match_expression('а* б* а* б* а*') == '"а"* "б"*'
    assert search.match_any(['а*', 'а*', 'б']) == '("а"*) OR ("б")'


def deadline(hub, seconds: float) -> None:
    """Set the read deadline (docs/jql.md, «Limits»)."""
    settings.update_settings(hub, {'read_deadline_seconds': seconds})


@pytest.mark.parametrize('query, heavy', [
    (' OR '.join(f'status WAS "x{n}" BY u{n}' for n in range(299)),
     'условий по истории изменений: 299'),
    (' AND '.join(f'text ~ "{letter}*"' for letter in 'абвгдежзиклмнопрстуфхцчшщэюя'),
     'полнотекстовых условий: 2'),  # 28 (29 where the entry point adds its own text ~)
])
def test_a_query_sure_to_outrun_the_deadline_is_refused_up_front(mirrored, query, heavy):
    assert reads.issue_count(mirrored, jql=query)  # within the deadline on 7 issues: answered
    deadline(mirrored, 0.01)  # the shortest the setting takes
    # the estimate weighs the highest rowid: the 7 issues now weigh like 1,400
    mirrored.db.execute_sql("UPDATE issue SET rowid = 1400 WHERE key = 'ORBIT-1'")
    for read in ENTRY_POINTS.values():
        message = refusal(lambda: read(mirrored, query))
        assert message.startswith('запрос слишком тяжёлый: по оценке не меньше')
        assert heavy in message and message.endswith(', позиция 1')
    assert found(mirrored, 'status WAS Готово') == ['AURORA-3']  # one clause: answered


def test_the_estimate_grows_with_the_mirror(mirrored, monkeypatch):
    query = ' OR '.join(f'status WAS "x{n}" BY u{n}' for n in range(300))
    deadline(mirrored, 0.01)
    assert reads.issue_count(mirrored, jql=query) == {'count': 0}  # 300 × 4 µs × 7 issues
    mirrored.db.execute_sql("UPDATE issue SET rowid = 100000 WHERE key = 'ORBIT-1'")
    assert refusal(reads.issue_count, hub=mirrored, jql=query).startswith(
        'запрос слишком тяжёлый: по оценке не меньше 120 с на 100000 задачах зеркала при '
        'пределе чтения 0.01 с')
