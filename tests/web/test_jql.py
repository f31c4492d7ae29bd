"""Offline JQL over HTTP (contract §16, §15a): GET /issues?jql=&tz=, /issues/count, /issues/facets,
the streamed /issues.csv, and a property test: any query from the grammar answers or is a 422."""
from __future__ import annotations

import csv
import io

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from hublib import reads, settings
from hubweb import create_app
from tests.support.jql_mirror import ALL, build_mirror

from falcon import testing


@pytest.fixture
def mirrored(hub, claimed_refresh):
    return build_mirror(hub, claimed_refresh(hub))


def get(client, headers, path, **params):
    return client.simulate_get(path, headers=headers, params=params)


def test_issues_with_jql_and_tz(mirrored, client, client_headers):
    response = get(client, client_headers, '/issues', jql='created = "2026-11-01"',
                   tz='Europe/Moscow')
    assert response.status_code == 200, response.json
    assert [item['key'] for item in response.json['items']] == ['AURORA-1', 'AURORA-5']


def test_the_same_query_gives_the_same_keys_over_http_and_hublib(mirrored, client, client_headers):
    query = 'project = AURORA AND status != Готово ORDER BY priority DESC, updated DESC'
    over_http = [item['key'] for item in get(client, client_headers, '/issues', jql=query,
                                             limit='1000').json['items']]
    assert over_http == [item['key'] for item in reads.issues(mirrored, jql=query,
                                                              limit=1000)['items']]


@pytest.mark.parametrize('params, message', [
    ({'jql': 'asignee = ivanov'}, 'неизвестное поле "asignee", позиция 1'),
    ({'jql': 'assignee = currentUser()'}, 'функция currentUser() недоступна в зеркале, позиция 12'),
])
def test_refusal_is_422_naming_token_and_position(mirrored, client, client_headers, params,
                                                  message):
    for path in ('/issues', '/issues/count', '/issues/facets', '/issues.csv'):
        response = get(client, client_headers, path, **params)
        assert response.status_code == 422, (path, response.text)
        assert response.json['fields'] == {'jql': [message]}
        assert message in response.json['description']


@pytest.mark.parametrize('path', ['/issues', '/issues/count', '/issues/facets', '/issues.csv'])
def test_bad_tz_is_422_naming_tz(mirrored, client, client_headers, path):
    response = get(client, client_headers, path, jql='status = a', tz='Mars/Base')
    assert response.status_code == 422
    assert list(response.json['fields']) == ['tz']


def test_count(mirrored, client, client_headers):
    assert get(client, client_headers, '/issues/count').json == {'count': len(ALL)}
    assert get(client, client_headers, '/issues/count', jql='status = "в работе"').json == {
        'count': 2}
    assert get(client, client_headers, '/issues/count', jql='text ~ склад*',
               project='AWPCA').json == {'count': 3}


@pytest.mark.parametrize('jql', [None, 'ORDER BY status DESC'])
def test_the_count_of_a_whole_slice_is_its_list_with_neighbours(mirrored, client, client_headers,
                                                                jql):
    params = {'project': 'AWPCA', **({'jql': jql} if jql else {})}
    listed = get(client, client_headers, '/issues', limit='1000', **params).json['items']
    assert any(item['neighbor'] for item in listed) and not all(item['neighbor'] for item in listed)
    assert get(client, client_headers, '/issues/count', **params).json == {'count': len(listed)}


def test_bounded_ranking_says_ranked_within_over_http(mirrored, client, client_headers,
                                                      monkeypatch):
    """Issue 24: over HTTP the page carries ``ranked_within`` (documented in the OpenAPI
    IssueList) when the matches pass the window, and the cursor still walks every match."""
    from hublib import search
    exact = get(client, client_headers, '/issues', jql='text ~ склад*', limit='100').json
    assert 'ranked_within' not in exact and len(exact['items']) >= 3
    monkeypatch.setattr(search, 'RANK_WINDOW', 2)
    seen, cursor = [], None
    while True:
        page = get(client, client_headers, '/issues', jql='text ~ склад*', limit='1',
                   **({'cursor': cursor} if cursor else {})).json
        assert page['ranked_within'] == 2
        seen += [item['key'] for item in page['items']]
        cursor = page['next_cursor']
        if cursor is None:
            break
    assert sorted(seen) == sorted(item['key'] for item in exact['items'])
    listed = client.simulate_get('/openapi.json').json['components']['schemas']['IssueList']
    assert listed['properties']['ranked_within']['type'] == 'integer'


def test_facets_count_within_the_query(mirrored, client, client_headers):
    facets = get(client, client_headers, '/issues/facets', jql='project = AURORA').json
    assert facets['status'] == [
        {'value': 'В работе', 'count': 2}, {'value': 'Готово', 'count': 1},
        {'value': 'Открыта', 'count': 1}, {'value': 'Снято', 'count': 1},
        {'value': None, 'count': 1}]
    assert facets['issue_type'][:2] == [{'value': 'Задача', 'count': 3},
                                        {'value': 'Ошибка', 'count': 1}]
    assert {'value': 'задача', 'count': 1} in facets['issue_type']  # values as stored
    assert facets['labels'] == [
        {'value': 'AWPCA', 'count': 2}, {'value': 'ORION', 'count': 1},
        {'value': 'x"y', 'count': 1}, {'value': 'Срочно', 'count': 1},
        {'value': 'срочно', 'count': 1}]
    assert get(client, client_headers, '/issues/facets', jql='key = AURORA-1',
               project='AWPCA').json['assignee'] == [{'value': 'ivanov', 'count': 1}]


# --- CSV ------------------------------------------------------------------------------------------

def csv_rows(response) -> list[list[str]]:
    text = response.content.decode('utf-8')
    assert text.startswith('\ufeff')
    return list(csv.reader(io.StringIO(text[1:], newline='')))


def test_csv_headers_bom_quoting_cyrillic(mirrored, client, client_headers):
    response = get(client, client_headers, '/issues.csv', jql='key IN (AURORA-1, AURORA-3)')
    assert response.status_code == 200
    assert response.headers['content-type'] == 'text/csv; charset=utf-8'
    assert response.headers['content-disposition'] == 'attachment; filename="issues.csv"'
    assert response.content.startswith(b'\xef\xbb\xbf')
    rows = csv_rows(response)
    assert rows[0] == list(reads.DEFAULT_CSV_FIELDS)
    first = dict(zip(rows[0], rows[1]))
    assert first == {
        'key': 'AURORA-1', 'issue_type': 'Задача', 'summary': 'Сверка остатков',
        'status': 'Открыта', 'priority': 'Высокий', 'assignee': 'ivanov', 'reporter': 'petrov',
        'created': '2026-10-31T21:30:00+00:00', 'updated': '2026-11-30T09:00:00+00:00',
        'duedate': '2026-12-01', 'labels': 'AWPCA;срочно', 'sprint': 'Спринт 10',
        'story_points': '3', 'epic_key': 'AURORA-5'}
    third = dict(zip(rows[0], rows[2]))
    assert third['summary'] == 'Выгрузка, "кавычки"\nи перевод строки'
    assert third['assignee'] == '' and third['labels'] == ''
    assert '"Выгрузка, ""кавычки""\nи перевод строки"' in response.content.decode()
    assert response.content.decode().count('\r\n') == 3  # RFC 4180 line ends, one in the text


def test_csv_fields_and_unknown_field(mirrored, client, client_headers):
    response = get(client, client_headers, '/issues.csv', jql='key = AURORA-2',
                   fields='key,sprint,neighbor,description')
    assert csv_rows(response) == [['key', 'sprint', 'neighbor', 'description'],
                                  ['AURORA-2', 'Спринт 10;Спринт 11', 'false', 'Точная фраза тут']]
    bad = get(client, client_headers, '/issues.csv', fields='key,nope')
    assert bad.status_code == 422 and list(bad.json['fields']) == ['fields']
    assert 'nope' in bad.json['fields']['fields'][0]


def test_csv_has_every_row_in_query_order_across_pages(mirrored, client, client_headers,
                                                       monkeypatch):
    monkeypatch.setattr(reads, 'CSV_PAGE', 2)
    for query in ('', 'ORDER BY updated DESC', 'text ~ склад*', 'ORDER BY priority'):
        expected = [item['key'] for item in reads.issues(mirrored, jql=query, limit=1000)['items']]
        rows = csv_rows(get(client, client_headers, '/issues.csv', jql=query, fields='key'))
        assert [row[0] for row in rows[1:]] == expected, query


def test_csv_is_streamed_in_chunks(mirrored, monkeypatch):
    monkeypatch.setattr(reads, 'CSV_PAGE', 2)
    chunks = reads.issues_csv(mirrored, fields='key')
    assert next(chunks).startswith('\ufeffkey')
    assert len(list(chunks)) == 4  # 7 issues in pages of 2


def test_csv_refusal_comes_before_the_first_chunk(mirrored):
    with pytest.raises(Exception) as caught:
        reads.issues_csv(mirrored, jql='(')
    assert caught.value.fields == {'jql': ['незакрытая скобка "(", позиция 1']}


# --- issue 31: hostile queries are a 422 on every path, before the first byte of a CSV -------------

JQL_PATHS = ('/issues', '/issues/count', '/issues/facets', '/issues.csv')


@pytest.mark.parametrize('jql, message', [
    ('NOT ' * 19 + 'labels = x', 'слишком глубокая вложенность (больше 16), позиция 65'),
    ('(' * 40 + 'labels = x' + ')' * 40, 'слишком глубокая вложенность (больше 16), позиция 17'),
    ('ORDER BY ' + ', '.join(['due'] * 1990),
     'поле "due" уже есть в ORDER BY: сортировать по полю можно один раз, позиция 15'),
    ('ORDER BY status, status', 'поле "status" уже есть в ORDER BY: сортировать по полю можно '
                                'один раз, позиция 18'),
    ('created > now(-9999999d)', 'неверная дата "now(-9999999d)", позиция 11'),
    ('key < AURORA-' + '9' * 5000, 'слишком большой номер задачи "AURORA-' + '9' * 33 + '…", '
                                   'позиция 7'),
])
def test_hostile_queries_are_refused_on_every_path(mirrored, client, client_headers, jql,
                                                   message):
    for path in JQL_PATHS:
        response = get(client, client_headers, path, jql=jql)
        assert response.status_code == 422, (path, response.status_code)
        assert response.json['fields'] == {'jql': [message]}, path


def test_a_query_at_the_depth_limit_is_answered_on_every_path(mirrored, client, client_headers):
    query = 'key = AURORA-1'
    for level in range(15):  # the innermost clauses at depth 16
        query = f'(status WAS Готово DURING ("2026-10-01", "2026-11-01") ' \
                f'{"OR" if level % 2 else "AND"} {query})'
    for path in JQL_PATHS:
        response = get(client, client_headers, path, jql=query, project='AWPCA')
        assert response.status_code == 200, (path, response.text[:300])
    rows = csv_rows(get(client, client_headers, '/issues.csv', jql=query + ' ORDER BY status'))
    assert rows[0] == list(reads.DEFAULT_CSV_FIELDS)


def test_a_query_sure_to_outrun_the_deadline_is_a_422_on_every_path(mirrored, client,
                                                                   client_headers):
    settings.update_settings(mirrored, {'read_deadline_seconds': 1})
    # the estimate weighs the highest rowid: the small mirror weighs like 10,000 issues
    mirrored.db.execute_sql("UPDATE issue SET rowid = 10000 WHERE rowid = (SELECT max(rowid) FROM issue)")
    query = ' OR '.join(f'status WAS "x{n}" BY u{n}' for n in range(300))
    for path in JQL_PATHS:
        response = get(client, client_headers, path, jql=query)
        assert response.status_code == 422, path
        assert response.json['fields']['jql'][0].startswith('запрос слишком тяжёлый: ')


def test_openapi_documents_the_jql_endpoints(client):
    document = client.simulate_get('/openapi.json').json
    csv_get = document['paths']['/issues.csv']['get']
    assert 'text/csv' in csv_get['responses']['200']['content']
    assert {p['name'] for p in csv_get['parameters']} >= {'jql', 'project', 'fields', 'tz'}
    assert '/issues/count' in document['paths'] and '/issues/facets' in document['paths']
    names = {p['name'] for p in document['paths']['/issues']['get']['parameters']}
    assert {'jql', 'tz'} <= names


# --- property: whatever the grammar makes answers or is refused; NOT (q) and q partition ---------

VALUES = st.sampled_from(['Открыта', '"В работе"', 'ivanov', 'AURORA-1', 'AWPCA', '3', '-7d',
                          '"2026-11-30"', 'EMPTY', 'openSprints()', 'startOfWeek()', "'x\\'y'",
                          'linkedIssues(AURORA-1)', 'Done', 'Unresolved', 'currentUser()', 'AND',
                          '"Спринт 10"', 'склад*', '10', 'now()', 'ORION'])
FIELDS = st.sampled_from(['key', 'project', 'hubProject', 'summary', 'description', 'comment',
                          'text', 'status', 'statusCategory', 'resolution', 'priority',
                          'issuetype', 'assignee', 'reporter', 'labels', 'created', 'updated',
                          'due', '"planned start"', '"Epic Link"', 'sprint', '"Story Points"',
                          'note', 'issue', 'asignee', 'rank'])
OPERATORS = st.sampled_from(['=', '!=', '>', '>=', '<', '<=', '~', '!~', 'IN', 'NOT IN',
                             'IS EMPTY', 'IS NOT EMPTY', 'WAS', 'WAS NOT', 'WAS IN', 'CHANGED',
                             'CHANGED FROM', 'CHANGED TO', 'CHANGED AFTER'])


@st.composite
def clauses(draw):
    field, operator = draw(FIELDS), draw(OPERATORS)
    if operator.startswith('IS'):
        return f'{field} {operator}'
    if operator in ('IN', 'NOT IN', 'WAS IN'):
        values = draw(st.lists(VALUES, min_size=1, max_size=3))
        return f'{field} {operator} ({", ".join(values)})'
    if operator == 'CHANGED':
        return f'{field} CHANGED'
    return f'{field} {operator} {draw(VALUES)}'


queries = st.recursive(
    clauses(),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(['AND', 'OR', 'and', 'Or']), inner).map(' '.join),
        inner.map(lambda q: f'NOT ({q})'),
        inner.map(lambda q: f'({q})')),
    max_leaves=4)
ORDERS = st.sampled_from(['', ' ORDER BY updated DESC', ' ORDER BY priority', ' ORDER BY key DESC',
                          ' order by summary asc, created'])
JUNK = st.text(alphabet='()"\',=!~<> aA1-ёЁ', max_size=12)


@pytest.fixture
def http(mirrored):
    client = testing.TestClient(create_app(mirrored))
    from hublib import settings
    token = settings.tokens(mirrored)['client']
    return client, {'Authorization': f'Bearer {token}'}


def test_random_queries_answer_or_are_refused_never_500(mirrored, http):
    client, headers = http

    @hsettings(max_examples=120, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture,
                                      HealthCheck.too_slow])
    @given(queries, ORDERS, JUNK, st.booleans())
    def check(query, order, junk, with_junk):
        text = query + order + (' ' + junk if with_junk else '')
        response = client.simulate_get('/issues', headers=headers, params={'jql': text})
        assert response.status_code in (200, 422), (text, response.status_code, response.text)
        if response.status_code == 422:
            assert set(response.json['fields']) <= {'jql'}
            assert 'позиция' in response.json['description']
    check()


def test_q_and_not_q_never_share_an_issue(mirrored, http):
    """NOT is the negative operator (contract §16): ``q`` and ``NOT (q)`` never both match, and
    an issue with an empty field may match neither (``assignee = x`` / ``NOT assignee = x``)."""
    client, headers = http

    @hsettings(max_examples=80, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture,
                                      HealthCheck.too_slow])
    @given(queries)
    def check(query):
        answers = [client.simulate_get('/issues', headers=headers,
                                       params={'jql': text, 'limit': '1000'})
                   for text in (query, f'NOT ({query})')]
        if any(answer.status_code == 422 for answer in answers):
            return
        inside, outside = ({item['key'] for item in answer.json['items']} for answer in answers)
        assert not inside & outside, query
    check()


# The negative of each operator as a person would write it: NOT (q) must answer what q with these
# and De Morgan's laws answers (a clause without one, CHANGED, stays under NOT).
NEGATIVE = {'=': '!=', '!=': '=', '>': '<=', '>=': '<', '<': '>=', '<=': '>', '~': '!~',
            '!~': '~', 'IN': 'NOT IN', 'NOT IN': 'IN', 'IS EMPTY': 'IS NOT EMPTY',
            'IS NOT EMPTY': 'IS EMPTY', 'WAS': 'WAS NOT', 'WAS NOT': 'WAS', 'WAS IN': 'WAS NOT IN'}


_CHOICE = ['=', '!=', 'IN', 'NOT IN', 'IS EMPTY', 'IS NOT EMPTY']
_HISTORY = ['WAS', 'WAS NOT', 'WAS IN', 'CHANGED']
_ORDERED = ['=', '!=', '<', '<=', '>', '>=', 'IS EMPTY', 'IS NOT EMPTY']
# Fields with the operators they take and values the mirror has (and some it has not).
CASES = {
    'assignee': (_CHOICE + _HISTORY, ['ivanov', 'Petrov', 'orlov', 'nobody', 'EMPTY']),
    'status': (_CHOICE + _HISTORY, ['Открыта', '"В работе"', 'Готово', 'EMPTY']),
    'priority': (_CHOICE + _HISTORY, ['Высокий', 'Средний', 'Неизвестный', 'EMPTY']),
    'reporter': (_CHOICE, ['petrov', 'sidorova']),
    'issuetype': (_CHOICE[:4], ['Задача', 'Ошибка']),
    'project': (_CHOICE[:4], ['AURORA', 'ORBIT']),
    '"Epic Link"': (_CHOICE, ['AURORA-5']),
    'labels': (_CHOICE, ['AWPCA', 'срочно', 'ORION', 'EMPTY']),
    'sprint': (_CHOICE, ['10', '"Спринт 11"', '9', 'EMPTY']),
    'due': (_ORDERED, ['"2026-11-30"', '"2026-12-01"']),
    'created': (_ORDERED, ['"2026-11-01"', '-7d', 'startOfMonth()', 'startOfYear(-1)']),
    'updated': (_ORDERED, ['-1d', '"2026-11-29"']),
    '"Story Points"': (_ORDERED, ['3', '5']),
    'key': (['=', '!=', '<', '<=', '>', '>=', 'IN', 'NOT IN'], ['AURORA-3', 'AURORA-10']),
    'summary': (['~', '!~', 'IS EMPTY', 'IS NOT EMPTY'], ['склад*', 'сверка', 'задача']),
    'description': (['~', '!~', 'IS EMPTY', 'IS NOT EMPTY'], ['фраза', 'сверка']),
    'statusCategory': (['=', '!='], ['Done']),
    'note': (['IS EMPTY', 'IS NOT EMPTY'], ['']),
}
FUNCTION_CASES = [('sprint', ['IN', 'NOT IN'], ['openSprints()', 'closedSprints()']),
                  ('issue', ['IN', 'NOT IN'], ['linkedIssues(AURORA-1)', 'linkedIssues(AURORA-3)'])]


@st.composite
def leaves(draw):
    """A clause the hub answers: a field, an operator it takes, a value of the mirror (or not)."""
    if draw(st.integers(0, 9)) == 0:
        field, operators, pool = draw(st.sampled_from(FUNCTION_CASES))
        return ('clause', field, draw(st.sampled_from(operators)), draw(st.sampled_from(pool)))
    field = draw(st.sampled_from(sorted(CASES)))
    operators, pool = CASES[field]
    operator = draw(st.sampled_from(operators))
    if operator.startswith('IS') or operator == 'CHANGED':
        return ('clause', field, operator, '')
    if operator in ('IN', 'NOT IN', 'WAS IN'):
        values = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))
        return ('clause', field, operator, f'({", ".join(values)})')
    value = draw(st.sampled_from([value for value in pool if value != 'EMPTY'] or pool))
    return ('clause', field, operator, value)


trees = st.recursive(
    leaves(),
    lambda inner: st.one_of(st.tuples(st.sampled_from(['and', 'or']), inner, inner),
                            st.tuples(st.just('not'), inner)),
    max_leaves=4)


def written(tree) -> str:
    if tree[0] == 'clause':
        return ' '.join(part for part in tree[1:] if part)
    if tree[0] == 'not':
        return f'NOT ({written(tree[1])})'
    return f'({written(tree[1])} {tree[0].upper()} {written(tree[2])})'


def negated(tree) -> str:
    """``NOT (tree)`` written without NOT over a group: De Morgan, then negative operators."""
    if tree[0] == 'clause':
        _, field, operator, value = tree
        if operator not in NEGATIVE:
            return f'NOT ({written(tree)})'
        return ' '.join(part for part in (field, NEGATIVE[operator], value) if part)
    if tree[0] == 'not':
        return written(tree[1])
    other = 'OR' if tree[0] == 'and' else 'AND'
    return f'({negated(tree[1])} {other} {negated(tree[2])})'


def test_not_is_de_morgan_and_the_negative_operators(mirrored, http):
    """``NOT (q)`` answers what ``q`` rewritten by hand by De Morgan's laws and each clause's
    negative operator answers (``NOT assignee = x`` ⇔ ``assignee != x``, ``NOT due < d`` ⇔
    ``due >= d``, ``NOT (a OR b)`` ⇔ ``NOT a AND NOT b``), whatever the fields and operators."""
    client, headers = http

    @hsettings(max_examples=150, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture,
                                      HealthCheck.too_slow])
    @given(trees)
    def check(tree):
        answers = [client.simulate_get('/issues', headers=headers,
                                       params={'jql': text, 'limit': '1000'})
                   for text in (f'NOT ({written(tree)})', negated(tree))]
        assert [answer.status_code for answer in answers] == [200, 200], written(tree)
        assert ([item['key'] for item in answers[0].json['items']]
                == [item['key'] for item in answers[1].json['items']]), written(tree)
    check()
