"""A list item is the card's ISSUE_OUT whatever road made it: pages in key or JQL order make items
from row tuples by position (``reads._item``), relevance pages and the card from rows by column
name (``reads.issue_out``). The same fields, values and key order (so the same JSON bytes)."""
from __future__ import annotations

import threading

import orjson
import pytest

from hublib import ValidationError, mirror, projects, reads, settings
from hublib.validation import load

CARD_EXTRAS = ('links', 'comments', 'attachments', 'sprints')


@pytest.fixture
def mirrored(hub, claimed_refresh):
    settings.update_settings(hub, {'project_key': 'AURORA'})
    projects.create_project(hub, 'AWPCA', 'АРМ КА')
    command_id = claimed_refresh(hub)
    mirror.ingest_state(hub, 'jira', command_id, [
        {'key': 'AURORA-1', 'labels': ['AWPCA', 'срочно'], 'summary': 'Сверка остатков',
         'description': 'Строка\nвторая «кавычки» \t таб', 'story_points': 2.5,
         'assignee': 'ivanov', 'priority': 'High', 'duedate': '2026-12-01',
         'updated': '2026-10-22T09:00:00.000+0300',
         'links': [{'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-2'}]},
        {'key': 'AURORA-2', 'labels': [], 'summary': 'Отчёт остатков', 'story_points': 3,
         'updated': '2026-10-23T09:00:00.000+0300'},
        {'key': 'AURORA-10', 'labels': ['AWPCA'], 'summary': 'Выгрузка остатков'},
    ])
    hub.db.execute_sql("INSERT INTO issue_note (key, work_kind, done_text, updated_by) "
                       "VALUES ('AURORA-10', 'analysis', 'сделано', 'ivanov')")
    return hub


def card_item(hub, key: str) -> dict:
    card = reads.issue_card(hub, key)
    return {name: value for name, value in card.items() if name not in CARD_EXTRAS}


@pytest.mark.parametrize('arguments', [
    {},                                                   # natural key order of the mirror
    {'project': 'AWPCA'},                                 # the slice's order
    {'jql': 'ORDER BY updated DESC, priority'},           # a JQL order (sort values follow)
    {'jql': 'project = AURORA', 'project': 'AWPCA', 'limit': 1},  # pages in key order
    {'text': 'остатков'},                                 # relevance: rows by column name
])
def test_list_item_is_the_cards_issue_out_on_every_road(mirrored, arguments):
    items, cursor = [], None
    while True:
        found = reads.issues(mirrored, **arguments, cursor=cursor)
        items += found['items']
        cursor = found['next_cursor']
        if cursor is None:
            break
    assert len(items) == 3  # AURORA-2 is AWPCA's neighbour (linked from AURORA-1)
    for item in items:
        expected = card_item(mirrored, item['key'])
        if 'text' in arguments:
            expected['snippet'] = item['snippet']
        if arguments.get('project'):
            expected['neighbor'] = item['key'] == 'AURORA-2'  # relative to the project
        assert orjson.dumps(item) == orjson.dumps(expected)  # values and key order
    by_key = {item['key']: item for item in items}
    assert by_key['AURORA-10']['note'] == {
        'key': 'AURORA-10', 'work_kind': 'analysis', 'done_text': 'сделано', 'rest_text': None,
        'owner_note': None, 'updated_at': None, 'updated_by': 'ivanov'}
    if 'AURORA-1' in by_key:
        assert by_key['AURORA-1']['labels'] == ['AWPCA', 'срочно']
        assert by_key['AURORA-1']['note'] is None


def test_query_schema_instance_is_reused_per_thread_and_a_refusal_leaves_it_clean():
    with pytest.raises(ValidationError) as refused:
        load(reads.IssuesQuery, {'limit': 'много', 'stauts': 'x'})
    assert set(refused.value.fields) == {'limit', 'stauts'}
    assert load(reads.IssuesQuery, {'limit': '7'}) == {'limit': 7}
    seen = []
    thread = threading.Thread(target=lambda: seen.append(load(reads.IssuesQuery, {})))
    thread.start()
    thread.join()
    assert seen == [{'limit': 100}]
