"""Full-text search (contract §10 ``text=``, issue 13): FTS5 over summary, description and comments."""
from __future__ import annotations

import sqlite3

import pytest

from hublib import open_hub, projects, reads, search, settings
from tests.support.legacy import create_legacy_database


def keys(result: dict) -> list[str]:
    return [item['key'] for item in result['items']]


@pytest.fixture
def searchable(hub, ingest):
    settings.update_settings(hub, {'project_key': 'AURORA'})
    projects.create_project(hub, 'AWPCA', 'АРМ КА')
    projects.create_project(hub, 'ORION', 'Орион')
    ingest(hub,
           {'key': 'AURORA-1', 'labels': ['AWPCA'], 'summary': 'Ёлка для отдела',
            'description': 'Нарядить к празднику'},
           {'key': 'AURORA-2', 'labels': ['ORION'], 'summary': 'Отчёт по складу',
            'description': 'Посчитать ёлки на складе',
            'comments': [{'id': '1', 'body': 'Инвентаризация завершена'}]},
           {'key': 'AURORA-3', 'labels': ['ORION'], 'summary': 'Прочее',
            'description': 'Без слов о деревьях',
            'comments': [{'id': '2', 'body': 'ЕЖЕКВАРТАЛЬНЫЙ отчет отправлен'}]},
           {'key': 'AURORA-10', 'labels': ['AWPCA'], 'summary': 'Склад: приёмка',
            'links': [{'type': 'Relates', 'direction': 'outward', 'key': 'AURORA-2'}]})
    return hub


@pytest.mark.parametrize('text, expected', [
    ('елка', ['AURORA-1']),                 # ё in the text, е in the query
    ('ЁЛКА', ['AURORA-1']),                 # case and ё both folded
    ('ёлки', ['AURORA-2']),                 # a description hit
    ('инвентаризация', ['AURORA-2']),       # a word only in a comment
    ('склад*', ['AURORA-10', 'AURORA-2']),  # a prefix: "Склад:" in a summary, "складу", "складе"
    ('отчет отправлен', ['AURORA-3']),       # every word must match
    ('нет-такого-слова', []),
    ('!!!', []),                             # no word at all matches nothing
    ('"елка"', ['AURORA-1']),                # FTS5 syntax is read as plain words
    ('(елка) -', ['AURORA-1']),
])
def test_full_text_finds_words_in_summary_description_and_comments(searchable, text, expected):
    assert sorted(keys(reads.issues(searchable, text=text))) == sorted(expected)


def test_summary_hit_ranks_before_description_hit(searchable, ingest):
    ingest(searchable, {'key': 'AURORA-4', 'summary': 'Другое', 'description': 'ревизия склада'},
           {'key': 'AURORA-5', 'summary': 'Ревизия', 'description': 'другое'})
    assert keys(reads.issues(searchable, text='ревизия')) == ['AURORA-5', 'AURORA-4']


def test_items_carry_a_snippet_with_the_hit_marked(searchable):
    [item] = reads.issues(searchable, text='инвентаризация')['items']
    assert item['snippet'] == '[Инвентаризация] завершена'


def test_text_combines_with_project_and_other_filters(searchable):
    assert keys(reads.issues(searchable, text='склад*', project='AWPCA')) == ['AURORA-10', 'AURORA-2']
    by_project = reads.issues(searchable, text='склад*', project='ORION')['items']
    # AURORA-10 (AWPCA) links to AURORA-2 (ORION): a neighbour of ORION
    assert [(item['key'], item['neighbor']) for item in by_project] == [
        ('AURORA-10', True), ('AURORA-2', False)]
    assert keys(reads.issues(searchable, text='склад*', project='AWPCA', neighbor=True)) == [
        'AURORA-2']
    assert keys(reads.issues(searchable, text='склад*', q='приёмка')) == ['AURORA-10']


def test_relevance_pages_cover_every_hit_once(searchable, ingest):
    ingest(searchable, *({'key': f'AURORA-{n}', 'summary': f'Склад номер {n}'}
                         for n in range(20, 45)))
    seen, cursor = [], None
    for _ in range(30):
        page = reads.issues(searchable, text='склад*', limit=4, cursor=cursor)
        seen += keys(page)
        cursor = page['next_cursor']
        if cursor is None:
            break
    assert sorted(seen) == sorted(keys(reads.issues(searchable, text='склад*', limit=1000)))
    assert len(seen) == len(set(seen)) == 27


def test_comment_deleted_in_jira_is_no_longer_found(searchable, ingest):
    ingest(searchable, {'key': 'AURORA-2', 'labels': ['ORION'], 'summary': 'Отчёт по складу',
                        'comments': []})
    assert keys(reads.issues(searchable, text='инвентаризация')) == []
    ingest(searchable, {'key': 'AURORA-2', 'summary': 'Отчёт по складу'})  # no comments key
    assert keys(reads.issues(searchable, text='инвентаризация')) == []
    assert keys(reads.issues(searchable, text='отчет')) == ['AURORA-2', 'AURORA-3']


def test_changed_summary_is_found_by_its_new_words_only(searchable, ingest):
    ingest(searchable, {'key': 'AURORA-1', 'summary': 'Гирлянда', 'labels': ['AWPCA']})
    assert keys(reads.issues(searchable, text='елка')) == []
    assert keys(reads.issues(searchable, text='гирлянда')) == ['AURORA-1']


def test_index_is_built_on_a_database_that_lacks_it(tmp_path, clock, caplog):
    """A v9 file of an earlier release has a mirror but no index: open builds it from the mirror."""
    data_dir = tmp_path / 'old'
    data_dir.mkdir()
    db_path = data_dir / 'hub.sqlite'
    create_legacy_database(db_path, 9, {'project_key': 'AURORA'})
    conn = sqlite3.connect(db_path)
    conn.execute("INSERT INTO issue (key, summary, description, labels) VALUES "
                 "('AURORA-7', 'Сверка остатков', 'ежемесячно', '[\"AWPCA\"]')")
    conn.execute("INSERT INTO issue_comment (key, comment_id, body) VALUES "
                 "('AURORA-7', '1', 'Ёжик в тумане')")
    conn.execute("INSERT INTO project (label, name, created_at) VALUES "
                 "('AWPCA', 'АРМ КА', '2026-01-01T00:00:00+00:00')")
    conn.execute("INSERT INTO jira_project (label) VALUES ('AWPCA')")
    conn.commit()
    conn.close()
    caplog.set_level('INFO', logger='hublib.startup')
    hub = open_hub(data_dir, clock=clock)
    try:
        # the server listens only after the build: its log says why it is not up yet
        assert 'строю по зеркалу разрезы проектов и полнотекстовый индекс' in caplog.text
        assert keys(reads.issues(hub, text='ежик')) == ['AURORA-7']
        assert keys(reads.issues(hub, text='остатк*', project='AWPCA')) == ['AURORA-7']
    finally:
        hub.close()
    caplog.clear()
    open_hub(data_dir, clock=clock).close()  # built once: the next open says nothing
    assert 'строю' not in caplog.text


def test_index_agrees_with_the_mirror_after_many_writes(searchable, ingest):
    for round_ in range(3):
        ingest(searchable, *({'key': f'AURORA-{n}', 'summary': f'версия {round_}',
                              'comments': [{'id': str(n), 'body': f'комментарий {round_}'}]}
                             for n in range(1, 6)))
    result = searchable.db.execute_sql(
        "INSERT INTO issue_fts (issue_fts, rank) VALUES ('integrity-check', 1)")
    assert result is not None  # raises on a corrupt index
    assert keys(reads.issues(searchable, text='версия 2', limit=10)) == [
        'AURORA-1', 'AURORA-2', 'AURORA-3', 'AURORA-4', 'AURORA-5']
    assert keys(reads.issues(searchable, text='версия 1')) == []


# --- bounded ranking (issue 24): bm25 within a window of the newest matches ----------------------

def walk(hub, cursor=None, **query) -> tuple[list[str], list[dict]]:
    """Every page of a search (from ``cursor``): the keys in page order and the pages."""
    seen, pages = [], []
    for _ in range(200):
        page = reads.issues(hub, cursor=cursor, **query)
        pages.append(page)
        seen += keys(page)
        cursor = page['next_cursor']
        if cursor is None:
            return seen, pages
    raise AssertionError('the cursor never ends')


@pytest.fixture
def many(hub, ingest):
    """30 issues holding "склад" with different weights (summary / description, repeated), ingested
    in three deliveries: AURORA-21…30 are the newest documents of the index. Ten of them are
    AWPCA's (AURORA-3, 6, … 30), and "сверка" narrows the word to AURORA-1…5."""
    settings.update_settings(hub, {'project_key': 'AURORA'})
    projects.create_project(hub, 'AWPCA', 'АРМ КА')
    for first in (1, 11, 21):
        ingest(hub, *({'key': f'AURORA-{n}', 'labels': ['AWPCA'] if n % 3 == 0 else [],
                       'summary': ('склад ' * (n % 4)) + f'задача {n}',
                       'description': 'про склад и прочее ' + 'слово ' * (n % 7)
                                      + ('сверка' if n <= 5 else '')}
                      for n in range(first, first + 10)))
    return hub


@pytest.fixture
def window(monkeypatch):
    def set_to(size: int) -> None:
        monkeypatch.setattr(search, 'RANK_WINDOW', size)
    return set_to


def test_bounded_ranking_equals_the_exact_one_when_the_matches_fit_the_window(many, window):
    window(1000)
    exact = reads.issues(many, text='склад', limit=1000)
    assert len(exact['items']) == 30 and 'ranked_within' not in exact
    window(30)  # exactly the number of matches: one window holds them all
    first = reads.issues(many, text='склад', limit=10)
    assert keys(first) == keys(exact)[:10]
    assert 'ranked_within' not in first
    assert walk(many, text='склад', limit=7)[0] == keys(exact)


def test_ranking_within_the_newest_matches_says_ranked_within(many, window):
    window(1000)
    exact = keys(reads.issues(many, text='склад', limit=1000))
    window(10)
    first = reads.issues(many, text='склад', limit=5)
    assert first['ranked_within'] == 10
    newest = [key for key in exact if int(key.split('-')[1]) > 20]  # by relevance, as exact
    assert keys(first) == newest[:5]
    order, pages = walk(many, text='склад', limit=5)
    assert all(page['ranked_within'] == 10 for page in pages)
    # window after window, newest first; relevance order within each
    assert order == newest + [key for key in exact if 10 < int(key.split('-')[1]) <= 20] \
        + [key for key in exact if int(key.split('-')[1]) <= 10]


@pytest.mark.parametrize('size, limit', [(10, 1), (10, 3), (10, 10), (10, 11), (7, 4), (4, 25),
                                         (1, 2), (29, 28)])
def test_bounded_ranking_cursor_reaches_every_match_exactly_once(many, window, size, limit):
    window(size)
    order, pages = walk(many, text='склад', limit=limit)
    assert len(order) == len(set(order)) == 30
    assert all(len(page['items']) == limit for page in pages[:-1])
    assert all(page['ranked_within'] == size for page in pages)


def test_jql_text_tilde_shares_the_bounded_ranking(many, window):
    window(1000)
    exact = keys(reads.issues(many, jql='text ~ склад', limit=1000))
    assert exact == keys(reads.issues(many, text='склад', limit=1000))
    window(10)
    first = reads.issues(many, jql='text ~ склад', limit=4)
    assert first['ranked_within'] == 10
    assert keys(first) == keys(reads.issues(many, text='склад', limit=4))
    order, _ = walk(many, jql='text ~ склад', limit=6)
    assert sorted(order) == sorted(exact) and len(order) == 30
    summary = walk(many, jql='summary ~ склад', limit=4)[0]  # AURORA-n with n % 4 != 0
    assert sorted(summary) == sorted(f'AURORA-{n}' for n in range(1, 31) if n % 4)


@pytest.mark.parametrize('query', [
    {'text': 'склад', 'project': 'AWPCA'},              # 10 matches of 30 in the slice
    {'text': 'склад сверка'},                           # a second word: AURORA-1…5
    {'jql': 'text ~ склад AND key <= AURORA-9'},        # another clause
    {'jql': 'text ~ склад AND description ~ сверка'},   # a second ~ joins the ranked match
])
def test_common_word_narrowed_under_the_window_stays_exact(many, window, query):
    window(1000)
    exact = reads.issues(many, limit=1000, **query)
    assert 0 < len(exact['items']) <= 10
    window(10)
    narrowed = reads.issues(many, limit=1000, **query)
    assert keys(narrowed) == keys(exact)
    assert 'ranked_within' not in narrowed
    assert [item['snippet'] for item in narrowed['items']] == [
        item['snippet'] for item in exact['items']]


def test_bounded_pages_keep_their_windows_when_new_issues_arrive(many, window, ingest):
    window(10)
    first = reads.issues(many, text='склад', limit=10)
    ingest(many, *({'key': f'AURORA-{n}', 'summary': 'склад склад склад'} for n in (31, 32)))
    rest, _ = walk(many, first['next_cursor'], text='склад', limit=10)
    # the new documents are newer than the first window: this walk does not meet them (a new
    # walk starts with them); the older windows come whole (relevance values may move with the
    # index's statistics: a cursor is exact while the mirror is unchanged, contract §16)
    assert not {'AURORA-31', 'AURORA-32'} & set(rest)
    assert set(rest) >= {f'AURORA-{n}' for n in range(1, 21)}
    assert set(keys(reads.issues(many, text='склад', limit=2))) == {'AURORA-31', 'AURORA-32'}
