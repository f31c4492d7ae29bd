"""Interfaces' reads at the library level (hublib.reads): parameters, cursors, search, slices."""
from __future__ import annotations

import pytest

from tests.support.timing import query_plans
from hublib import NotFoundError, ValidationError, history, mirror, paging, projects, reads, settings
from tests.support.hubs import project_slice
from tests.support.paging import every_item


@pytest.fixture
def mirrored(hub, claimed_refresh):
    settings.update_settings(hub, {'project_key': 'AURORA'})
    projects.create_project(hub, 'AWPCA', 'АРМ КА')
    projects.create_project(hub, 'STOCKS_DRRK', 'Запасы')
    command_id = claimed_refresh(hub)
    mirror.ingest_state(hub, 'jira', command_id, [
        {'key': 'AURORA-1', 'labels': ['STOCKS_DRRK'], 'epic_key': 'AURORA-9',
         'summary': 'Сверка ОСТАТКОВ', 'updated': '2026-10-22T09:00:00.000+0300',
         'links': [{'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-2'}]},
        {'key': 'AURORA-2', 'labels': ['AWPCA'], 'summary': 'Отчёт', 'assignee': 'ivanov',
         'updated': '2026-10-23T09:00:00.000+0300'},
        {'key': 'AURORA-3', 'labels': ['AWPCA'], 'summary': 'Выгрузка'},
        {'key': 'AURORA-9', 'labels': ['AWPCA'], 'summary': 'Эпик остатков'},
        {'key': 'AURORA-10', 'labels': ['STOCKS_DRRK'], 'summary': 'Ещё',
         'links': [{'type': 'Relates', 'direction': 'inward', 'key': 'AURORA-3'}]},
    ])
    return hub


def keys(result):
    return [item['key'] for item in result['items']]


def test_scenario_own_and_neighbors(mirrored):
    result = reads.issues(mirrored, project='STOCKS_DRRK')
    assert [(i['key'], i['neighbor']) for i in result['items']] == [
        ('AURORA-1', False), ('AURORA-2', True), ('AURORA-3', True), ('AURORA-9', True),
        ('AURORA-10', False)]


def test_inward_link_makes_a_neighbor_too(mirrored):
    assert keys(reads.issues(mirrored, project='STOCKS_DRRK', neighbor=True)) == [
        'AURORA-2', 'AURORA-3', 'AURORA-9']


@pytest.mark.parametrize('q, expected', [
    ('остатков', ['AURORA-1', 'AURORA-9']),
    ('ОТЧЁТ', ['AURORA-2']),
    ('aurora-10', ['AURORA-10']),
    ('нет такого', []),
])
def test_search_is_case_insensitive_in_cyrillic(mirrored, q, expected):
    assert keys(reads.issues(mirrored, q=q)) == expected


def test_updated_since_compares_in_utc(mirrored):
    assert keys(reads.issues(mirrored, updated_since='2026-10-22T06:00:00+00:00')) == [
        'AURORA-1', 'AURORA-2']
    assert keys(reads.issues(mirrored, updated_since='2026-10-22T09:00:00+03:01')) == ['AURORA-1', 'AURORA-2']
    assert keys(reads.issues(mirrored, updated_since='2026-10-22T06:00:01Z')) == ['AURORA-2']


def test_labels_and_notes_are_the_rows_own_values(mirrored):
    """Label lists are parsed once per distinct text: every answer still gets lists of its own."""
    mirrored.db.execute_sql("UPDATE issue SET labels = 'не JSON' WHERE key = 'AURORA-3'")
    mirrored.db.execute_sql("INSERT INTO issue_note (key, work_kind, updated_by) "
                            "VALUES ('AURORA-2', 'analysis', 'ivanov')")
    first = {item['key']: item for item in reads.issues(mirrored)['items']}
    assert first['AURORA-2']['labels'] == first['AURORA-9']['labels'] == ['AWPCA']
    assert first['AURORA-3']['labels'] == []
    assert first['AURORA-2']['note'] == {
        'key': 'AURORA-2', 'work_kind': 'analysis', 'done_text': None, 'rest_text': None,
        'owner_note': None, 'updated_at': None, 'updated_by': 'ivanov'}
    assert first['AURORA-9']['note'] is None
    first['AURORA-2']['labels'].append('чужая')
    assert first['AURORA-9']['labels'] == ['AWPCA']
    assert reads.issue_card(mirrored, 'AURORA-2')['labels'] == ['AWPCA']


def test_pages_cover_everything_once(mirrored):
    seen, cursor = [], None
    for _ in range(10):  # 5 issues, 2 a page: three pages; more means the cursor does not advance
        page = reads.issues(mirrored, limit=2, cursor=cursor)
        seen += keys(page)
        cursor = page['next_cursor']
        if cursor is None:
            break
    else:
        pytest.fail(f'paging did not end after 10 pages: {seen}')
    assert seen == ['AURORA-1', 'AURORA-2', 'AURORA-3', 'AURORA-9', 'AURORA-10']


@pytest.mark.parametrize('limit', [0, -1, 1001, 'many', True, 2.5])
def test_bad_limit(mirrored, limit):
    with pytest.raises(ValidationError) as caught:
        reads.issues(mirrored, limit=limit)
    assert list(caught.value.fields) == ['limit']


@pytest.mark.parametrize('cursor', ['x', paging.encode_cursor([1]), paging.encode_cursor(['a', 'b'])])
def test_bad_cursor(mirrored, cursor):
    with pytest.raises(ValidationError) as caught:
        reads.issues(mirrored, cursor=cursor)
    assert list(caught.value.fields) == ['cursor']


def test_unknown_project_and_issue(mirrored):
    with pytest.raises(NotFoundError):
        reads.issues(mirrored, project='NOPE')
    with pytest.raises(NotFoundError):
        reads.issue_card(mirrored, 'AURORA-404')
    with pytest.raises(NotFoundError):
        reads.project_board(mirrored, 'NOPE')


def test_card_links_both_ways(mirrored):
    card = reads.issue_card(mirrored, 'AURORA-3')
    assert card['links'] == {'outward': [{'type': 'Relates', 'key': 'AURORA-10', 'summary': 'Ещё',
                                          'status': None}], 'inward': []}
    assert card['comments'] == [] and card['attachments'] == [] and card['sprints'] == []
    assert card['note'] is None


def test_change_feed_skips_rows_without_time_and_pages_stably(mirrored):
    items = [{'history_id': str(7000 + n), 'seq': s, 'key': 'AURORA-1',
              'created': '2026-10-22T09:00:00Z' if n % 2 else '2026-10-22T08:00:00Z'}
             for n in range(10) for s in range(2)]
    items.append({'history_id': '9999', 'seq': 0, 'key': 'AURORA-1', 'created': None})
    history.ingest_history(mirrored, 'jira', None, items)
    seen, cursor = [], None
    for _ in range(20):  # 20 rows, 3 a page: seven pages; more means the cursor does not advance
        page = reads.change_feed(mirrored, limit=3, cursor=cursor)
        seen += [(c['at'], c['history_id'], c['seq']) for c in page['items']]
        cursor = page['next_cursor']
        if cursor is None:
            break
    else:
        pytest.fail(f'paging did not end after 20 pages: {len(seen)} rows')
    assert len(seen) == 20 and seen == sorted(seen)
    projects.create_project(mirrored, 'LONELY', 'Пустой')
    assert reads.change_feed(mirrored, project='LONELY')['items'] == []
    assert len(reads.change_feed(mirrored, project='STOCKS_DRRK')['items']) == 20
    assert len(reads.issue_changes(mirrored, 'AURORA-1', limit=1000)['items']) == 20


def test_change_feed_pages_newest_first_as_it_pages_oldest_first(mirrored):
    history.ingest_history(mirrored, 'jira', None, [
        {'history_id': str(7000 + n), 'seq': s, 'key': 'AURORA-1',
         'created': f'2026-10-22T0{n % 4}:00:00Z'} for n in range(7) for s in range(2)])

    def walk(order):  # 14 rows, 4 a page: four pages
        return [(c['at'], c['history_id'], c['seq']) for c in every_item(
            reads.change_feed, mirrored, pages=10, order=order, limit=4)]

    oldest_first = walk('asc')
    assert len(oldest_first) == 14 and oldest_first == sorted(oldest_first)
    assert walk('desc') == oldest_first[::-1]
    with pytest.raises(ValidationError) as caught:
        reads.change_feed(mirrored, order='newest')
    assert list(caught.value.fields) == ['order']


def test_change_feed_newest_first_walks_the_time_index_backwards(mirrored):
    plans = query_plans(mirrored.db.connection(), lambda: reads.change_feed(
        mirrored, order='desc', limit=10, cursor=paging.encode_cursor(['2026-10-22T09:00:00+00:00', 'x', 0])))
    (sql, plan), = plans
    # a range of the `at` index from the cursor down; only ties of one moment are sorted
    assert plan[0].startswith('SEARCH') and 'USING INDEX issue_change_at (at>? AND at<?)' in plan[0], plan
    assert not any('TEMP B-TREE FOR ORDER BY' in line for line in plan), plan


def test_board_cards_are_the_column_issues_with_their_card_fields(mirrored, claimed_refresh):
    mirror.ingest_boards(mirrored, 'jira', None, [{'board_id': 7, 'type': 'kanban', 'columns': [
        {'name': 'Открыта', 'statuses': ['Открыта']},
        {'name': 'Готово', 'statuses': ['Готово']}]}])
    with mirrored.write():
        mirrored.db.execute_sql("UPDATE jira_project SET board_id = 7 WHERE label = 'AWPCA'")
    mirror.ingest_state(mirrored, 'jira', claimed_refresh(mirrored), [
        {'key': 'AURORA-2', 'labels': ['AWPCA'], 'summary': 'Отчёт', 'assignee': 'ivanov',
         'status': 'Готово', 'priority': 'Высокий', 'issue_type': 'Ошибка'},
        {'key': 'AURORA-3', 'labels': ['AWPCA'], 'summary': 'Выгрузка', 'status': 'Открыта'},
        {'key': 'AURORA-9', 'labels': ['AWPCA'], 'summary': 'Эпик остатков', 'status': 'Нигде'}])
    board = reads.project_board(mirrored, 'AWPCA')
    assert [(c['issues'], c['cards']) for c in board['columns']] == [
        (['AURORA-3'], [{'key': 'AURORA-3', 'summary': 'Выгрузка', 'issue_type': None,
                         'priority': None, 'assignee': None, 'status': 'Открыта'}]),
        (['AURORA-2'], [{'key': 'AURORA-2', 'summary': 'Отчёт', 'issue_type': 'Ошибка',
                         'priority': 'Высокий', 'assignee': 'ivanov', 'status': 'Готово'}])]


def test_board_of_one_sprint_and_cards_for_the_first_of_a_long_column(mirrored, claimed_refresh):
    mirror.ingest_boards(mirrored, 'jira', None, [{'board_id': 7, 'type': 'scrum', 'columns': [
        {'name': 'Открыта', 'statuses': ['Открыта']}, {'name': 'Готово', 'statuses': ['Готово']}],
        'sprints': [{'id': 11, 'name': 'Спринт', 'state': 'active'}]}])
    with mirrored.write():
        mirrored.db.execute_sql("UPDATE jira_project SET board_id = 7 WHERE label = 'AWPCA'")
    count = reads.CARDS_PER_COLUMN + 5
    mirror.ingest_state(mirrored, 'jira', claimed_refresh(mirrored), [
        {'key': f'AURORA-{100 + n}', 'labels': ['AWPCA'], 'summary': f'№{n}', 'status': 'Открыта',
         'sprint_ids': [11] if n % 50 == 0 else []} for n in range(count)])
    column = reads.project_board(mirrored, 'AWPCA')['columns'][0]
    assert len(column['issues']) == count  # the fixture's own issues have no status: not shown
    assert [card['key'] for card in column['cards']] == column['issues'][:reads.CARDS_PER_COLUMN]
    sprint = reads.project_board(mirrored, 'AWPCA', sprint=11)['columns']
    assert [c['issues'] for c in sprint] == [['AURORA-100', 'AURORA-150', 'AURORA-200',
                                              'AURORA-250', 'AURORA-300'], []]
    assert [c['summary'] for c in sprint[0]['cards']] == ['№0', '№50', '№100', '№150', '№200']
    assert reads.project_board(mirrored, 'AWPCA', sprint=99)['columns'][0]['issues'] == []
    with pytest.raises(ValidationError) as caught:
        reads.project_board(mirrored, 'AWPCA', sprint=0)
    assert list(caught.value.fields) == ['sprint']


def test_sync_runs(mirrored):
    runs = reads.sync_runs(mirrored)
    assert runs['next_cursor'] is None
    assert [(r['kind'], r['query'], r['issues_count'], r['links_count']) for r in runs['items']] == [
        ('keys', 'AURORA-1', 5, 2)]


@pytest.mark.parametrize('label', ['AWPCA', 'STOCKS_DRRK'])
def test_slice_pages_and_feed_follow_the_slice(mirrored, claimed_refresh, label):
    # more shapes: an epic of an own issue linked both ways, a missing epic, a dangling link
    mirror.ingest_state(mirrored, 'jira', claimed_refresh(mirrored), [
        {'key': 'AURORA-20', 'labels': ['STOCKS_DRRK', 'X'], 'epic_key': 'AURORA-3'},
        {'key': 'AURORA-21', 'labels': [], 'epic_key': 'AURORA-77'},
        {'key': 'AURORA-22', 'labels': [], 'links': [
            {'type': 'Relates', 'direction': 'outward', 'key': 'AURORA-20'}]},
        {'key': 'AURORA-2', 'labels': ['AWPCA'], 'links': [
            {'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-404'}]}])
    expected = project_slice(mirrored, label)
    page = reads.issues(mirrored, project=label, limit=1000)
    assert {item['key']: item['neighbor'] for item in page['items']} == expected
    assert len(page['items']) == len(expected)
    for neighbor in (True, False):
        page = reads.issues(mirrored, project=label, neighbor=neighbor, limit=2)
        assert all(expected[item['key']] is neighbor for item in page['items'])
    history.ingest_history(mirrored, 'jira', None, [
        {'history_id': str(n), 'seq': 0, 'key': key, 'created': '2026-10-22T09:00:00Z'}
        for n, key in enumerate(['AURORA-1', 'AURORA-2', 'AURORA-3', 'AURORA-9', 'AURORA-10',
                                 'AURORA-20', 'AURORA-21', 'AURORA-22', 'AURORA-404'])])
    feed = reads.change_feed(mirrored, project=label)
    assert {item['key'] for item in feed['items']} == set(expected)


def test_facets_count_issues_once_per_label_and_an_empty_text_as_no_value(mirrored):
    with mirrored.write():
        mirrored.db.execute_sql("UPDATE issue SET labels = '[\"AWPCA\", \"AWPCA\", \"x\"]', assignee = '' "
                                "WHERE key = 'AURORA-2'")
        mirrored.db.execute_sql("UPDATE issue SET labels = 'не JSON' WHERE key = 'AURORA-3'")
    facets = reads.issue_facets(mirrored, jql='key in (AURORA-2, AURORA-3, AURORA-9)')
    assert facets['labels'] == [{'value': 'AWPCA', 'count': 2}, {'value': 'x', 'count': 1}]
    assert facets['assignee'] == [{'value': None, 'count': 3}]
