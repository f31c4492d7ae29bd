"""The change feed's statements are built once per set of filters and direction
(``reads._change_statement``); every value, and the project's membership, is read at run time."""
from __future__ import annotations

import itertools

import pytest

from hublib import history, mirror, projects, reads, settings
from tests.support.paging import every_item


@pytest.fixture
def fed(hub, claimed_refresh):
    settings.update_settings(hub, {'project_key': 'AURORA'})
    projects.create_project(hub, 'AWPCA', 'АРМ КА')
    projects.create_project(hub, 'STOCKS', 'Запасы')
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [
        {'key': 'AURORA-1', 'labels': ['AWPCA']}, {'key': 'AURORA-2', 'labels': ['STOCKS']}])
    history.ingest_history(hub, 'jira', None, [
        {'history_id': str(100 + n), 'seq': s, 'key': f'AURORA-{1 + n % 2}',
         'field': 'status' if s == 0 else 'assignee', 'created': f'2026-10-2{n}T09:00:00Z'}
        for n in range(6) for s in range(2)])
    return hub


def rows(page):
    return [(row['key'], row['history_id'], row['seq']) for row in page['items']]


def expected(hub, **filters):
    """The rows a filter set should give, from the whole feed filtered here."""
    every = reads.change_feed(hub, limit=1000)['items']
    members = {'AWPCA': {'AURORA-1'}, 'STOCKS': {'AURORA-2'}}
    kept = [row for row in every
            if ('project' not in filters or row['key'] in members[filters['project']])
            and ('key' not in filters or row['key'] == filters['key'])
            and ('field' not in filters or row['field'] == filters['field'])
            and ('since' not in filters or row['at'] >= filters['since'])]
    return [(row['key'], row['history_id'], row['seq']) for row in kept]


@pytest.mark.parametrize('names', [
    names for size in range(4)
    for names in itertools.combinations(('project', 'key', 'field', 'since'), size)])
def test_each_filter_set_gets_its_own_statement_with_this_calls_values(fed, names):
    for values in ({'project': 'AWPCA', 'key': 'AURORA-1', 'field': 'status',
                    'since': '2026-10-22T00:00:00+00:00'},
                   {'project': 'STOCKS', 'key': 'AURORA-2', 'field': 'assignee',
                    'since': '2026-10-23T00:00:00+00:00'}):
        filters = {name: values[name] for name in names}
        assert rows(reads.change_feed(fed, limit=1000, **filters)) == expected(fed, **filters)


def test_a_cached_project_statement_follows_a_changed_membership(fed, claimed_refresh):
    assert {key for key, _, _ in rows(reads.change_feed(fed, project='AWPCA'))} == {'AURORA-1'}
    mirror.ingest_state(fed, 'jira', claimed_refresh(fed), [{'key': 'AURORA-2', 'labels': ['AWPCA']}])
    assert {key for key, _, _ in rows(reads.change_feed(fed, project='AWPCA'))} == {
        'AURORA-1', 'AURORA-2'}


def test_pages_of_both_directions_with_a_cursor_share_no_statement(fed):
    def walk(order):
        return rows({'items': every_item(reads.change_feed, fed, pages=10, order=order,
                                         limit=5)})
    assert walk('desc') == walk('asc')[::-1] and len(walk('asc')) == 12
