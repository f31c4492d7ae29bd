"""Facet lists counted with the other lists' choices (``reads.issue_facets(chosen=…)``,
docs/web-ui.md): each list counts the issues of the query that match every other list's choice,
never its own, all from one scan. The reference is what JQL itself answers: the list's facets of
the query AND-ed with the other lists' ``field IN (…)`` terms."""
from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from hublib import ValidationError, mirror, projects, reads, settings

# status, assignee, issue type, priority, labels: spellings that differ in case, empty as '' and
# as none, an issue in two labels
ROWS = [
    ('В работе', 'ivanov', 'Задача', 'Высокий', ['AWPCA']),
    ('в работе', 'Ivanov', 'задача', 'высокий', ['AWPCA', 'срочно']),
    ('На проверке', 'petrov', 'Ошибка', 'Низкий', ['AWPCA']),
    ('На проверке', None, 'Задача', None, []),
    ('Открыта', '', 'Задача', '', ['Срочно']),
    ('Открыта', 'petrov', 'Ошибка', 'Высокий', ['AWPCA']),
    ('Готово', 'sidorova', 'Задача', 'Низкий', ['ORION']),
    (None, 'sidorova', 'Эпик', 'Высокий', ['AWPCA', 'ORION']),
    ('', 'ivanov', 'Ошибка', None, []),
    ('В работе', 'sidorova', 'Задача', 'Низкий', ['AWPCA']),
    ('Готово', 'ivanov', 'Задача', 'Высокий', ['срочно']),
]
LISTS = ('status', 'assignee', 'issue_type', 'priority', 'labels')
JQL_FIELD = {'status': 'status', 'assignee': 'assignee', 'issue_type': 'issuetype',
             'priority': 'priority', 'labels': 'labels'}


@pytest.fixture
def faceted(hub, claimed_refresh):
    settings.update_settings(hub, {'project_key': 'AURORA'})
    projects.create_project(hub, 'AWPCA', 'АРМ КА')
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [
        {'key': f'AURORA-{number}', 'summary': f'Задача {number}', 'status': status,
         'assignee': assignee, 'issue_type': issue_type, 'priority': priority, 'labels': labels,
         'created': '2026-11-01T00:00:00Z', 'updated': '2026-11-02T00:00:00Z'}
        for number, (status, assignee, issue_type, priority, labels) in enumerate(ROWS, 1)])
    return hub


def term(name: str, values: list) -> str:
    listed = ', '.join('EMPTY' if value is None else json.dumps(value, ensure_ascii=False)
                       for value in values)
    return f'{JQL_FIELD[name]} IN ({listed})'


def by_jql(hub, base: str, chosen: dict, **scope) -> dict:
    """Each list as JQL answers it: the query with every other list's choice as an IN term."""
    answer = {}
    for name in LISTS:
        terms = [f'({base})'] if base else []
        terms += [term(other, values) for other, values in chosen.items() if other != name and values]
        answer[name] = reads.issue_facets(hub, jql=' AND '.join(terms) or None, **scope)[name]
    return answer


def test_the_assignee_list_counts_only_the_chosen_statuses_and_the_status_list_all(faceted):
    chosen = {'status': ['На проверке', 'В работе']}
    facets = reads.issue_facets(faceted, chosen=chosen)
    # «В работе» in any case (3 issues) and «На проверке» (2): their assignees only
    assert facets['assignee'] == [{'value': 'Ivanov', 'count': 1}, {'value': 'ivanov', 'count': 1},
                                  {'value': 'petrov', 'count': 1}, {'value': 'sidorova', 'count': 1},
                                  {'value': None, 'count': 1}]
    assert sum(entry['count'] for entry in facets['assignee']) == 5
    # the status list is not narrowed by its own choice: a second status can still be added
    assert facets['status'] == reads.issue_facets(faceted)['status']
    assert facets == by_jql(faceted, '', chosen)


def test_each_list_counts_within_the_query_and_the_other_lists_choices(faceted):
    chosen = {'status': ['в работе', 'Готово'], 'assignee': ['IVANOV', None], 'labels': ['AWPCA']}
    base = 'issuetype != Эпик'
    facets = reads.issue_facets(faceted, jql=base, chosen=chosen)
    assert facets == by_jql(faceted, base, chosen)
    # status within ivanov/unassigned and AWPCA: AURORA-1, 2 (В работе, в работе)
    assert facets['status'] == [{'value': 'В работе', 'count': 1}, {'value': 'в работе', 'count': 1}]
    # assignee within the two statuses and AWPCA: ivanov, Ivanov, sidorova (AURORA-10)
    assert {entry['value'] for entry in facets['assignee']} == {'ivanov', 'Ivanov', 'sidorova'}


def test_a_whole_project_slice_counts_choices_from_its_kept_counts_the_same(faceted):
    chosen = {'priority': ['высокий'], 'issue_type': ['задача', None]}
    facets = reads.issue_facets(faceted, project='AWPCA', chosen=chosen)
    assert facets == by_jql(faceted, '', chosen, project='AWPCA')
    # the same with a condition, which scans instead of reading the kept counts
    assert reads.issue_facets(faceted, project='AWPCA', jql='key > AURORA-0', chosen=chosen) == facets


def test_no_choice_and_empty_lists_answer_as_the_plain_facets(faceted):
    plain = reads.issue_facets(faceted)
    assert reads.issue_facets(faceted, chosen={}) == plain
    assert reads.issue_facets(faceted, chosen={'status': [], 'labels': []}) == plain
    assert reads.issue_facets(faceted, chosen='{"status": []}') == plain


def test_an_empty_value_chooses_the_issues_without_one(faceted):
    facets = reads.issue_facets(faceted, chosen={'assignee': [None]})
    # AURORA-4 (none) and AURORA-5 ('') have no assignee
    assert facets['status'] == [{'value': 'На проверке', 'count': 1}, {'value': 'Открыта', 'count': 1}]
    assert reads.issue_facets(faceted, chosen={'assignee': ['']}) == facets
    assert reads.issue_facets(faceted, chosen={'labels': [None]})['status'] == by_jql(
        faceted, '', {'labels': [None]})['status']


SPELLINGS = {
    'status': ['В работе', 'в работе', 'На проверке', 'открыта', 'Готово', 'нет такого', None],
    'assignee': ['ivanov', 'PETROV', 'sidorova', None],
    'issue_type': ['задача', 'Ошибка', 'ЭПИК', None],
    'priority': ['Высокий', 'низкий', None],
    'labels': ['AWPCA', 'срочно', 'Срочно', 'ORION', None],
}


@hsettings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.fixed_dictionaries({}, optional={name: st.lists(st.sampled_from(values), max_size=3)
                                           for name, values in SPELLINGS.items()}),
       st.sampled_from(['', 'issuetype != Эпик', 'labels = AWPCA', 'key IN (AURORA-1, AURORA-3)']))
def test_any_choice_counts_as_jql_with_the_other_lists_terms(faceted, chosen, base):
    assert reads.issue_facets(faceted, jql=base or None, chosen=chosen) == by_jql(faceted, base, chosen)


NOT_AN_OBJECT = 'ожидается JSON-объект: {"status": ["В работе"], …}'


@pytest.mark.parametrize('chosen, field, message', [
    ('{"status": ', 'chosen', NOT_AN_OBJECT),
    ('["В работе"]', 'chosen', NOT_AN_OBJECT),
    ('[' * 100_000, 'chosen', NOT_AN_OBJECT),
    ({'stauts': ['В работе']}, 'chosen.stauts', 'неизвестный список: допустимы status, assignee, '
                                                'issue_type, priority, labels'),
    ({'status': 'В работе'}, 'chosen.status', 'ожидается список значений'),
    ({'status': [1]}, 'chosen.status', 'значения — строки или null (без значения)'),
    ({'status': ['x'] * 1001}, 'chosen.status', 'не больше 1000 значений'),
])
def test_a_bad_choice_is_refused_naming_the_list(faceted, chosen, field, message):
    with pytest.raises(ValidationError) as refused:
        reads.issue_facets(faceted, chosen=chosen)
    assert refused.value.fields == {field: [message]}


def test_lists_of_every_combination_of_two_choices_agree_with_jql(faceted):
    picks = {'status': ['На проверке'], 'assignee': ['ivanov', None], 'issue_type': ['Задача'],
             'priority': [None, 'Низкий'], 'labels': ['срочно']}
    for first, second in itertools.combinations(LISTS, 2):
        chosen = {first: picks[first], second: picks[second]}
        assert reads.issue_facets(faceted, chosen=chosen) == by_jql(faceted, '', chosen), chosen
