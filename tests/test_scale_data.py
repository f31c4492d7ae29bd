"""The scale benchmark's mirror generator (tests/support/scale.py, issue 13), built tiny."""
from __future__ import annotations

import pytest

from hublib import history, mirror, open_hub, projects, reads
from tests.support.scale import (COMMON_WORD, PROJECTS, RARE_HITS, RARE_WORDS, ScaleJira,
                                 build_hub, state_rows)

ISSUES = 300


@pytest.fixture(scope='module')
def built(tmp_path_factory):
    jira = ScaleJira(ISSUES, seed=5)
    data_dir = tmp_path_factory.mktemp('scale') / 'hub'
    build_hub(data_dir, jira, workers=0)
    hub = open_hub(data_dir)
    yield jira, hub
    hub.close()


def keys(result: dict) -> list[str]:
    return [item['key'] for item in result['items']]


def test_every_project_has_a_slice_and_big_ones_have_neighbours(built):
    _, hub = built
    counts = {item['label']: (item['own_count'], item['neighbor_count'])
              for item in projects.projects(hub)}
    assert set(counts) == {project.label for project in PROJECTS}
    assert all(own > 0 for own, _ in counts.values()), counts
    assert counts['AWPCA'][0] > counts['ORION'][0] > counts['TINY'][0], counts
    assert counts['AWPCA'][1] > 0 and counts['ORION'][1] > 0, counts
    orbit_neighbours = hub.db.execute_sql(
        "SELECT count(*) FROM issue_member WHERE key LIKE 'ORBIT-%' AND neighbor = 1").fetchone()[0]
    assert orbit_neighbours > 0


def test_full_text_finds_the_rare_words_and_the_common_one(built):
    _, hub = built
    stride = ISSUES // RARE_HITS
    in_descriptions = {f'AURORA-{n}' for n in range(7, ISSUES + 1, stride)}
    in_comments = {f'AURORA-{n}' for n in range(11, ISSUES + 1, stride)}
    assert len(in_descriptions) == len(in_comments) == RARE_HITS
    assert set(keys(reads.issues(hub, text=RARE_WORDS[0]))) == in_descriptions
    assert set(keys(reads.issues(hub, text='ежевидный'))) == in_comments  # ё folded
    assert len(keys(reads.issues(hub, text=COMMON_WORD, limit=1000))) > ISSUES // 4


def test_issues_come_in_natural_order(built):
    jira, hub = built
    listed = keys(reads.issues(hub, limit=1000))
    assert listed == jira.keys()  # AURORA-1 … AURORA-300, then ORBIT-1 … ORBIT-6
    assert listed[:11] == [f'AURORA-{n}' for n in range(1, 12)]


def test_the_mirror_has_the_shape_of_the_brief(built):
    jira, hub = built
    count = lambda sql: hub.db.execute_sql(sql).fetchone()[0]  # noqa: E731
    assert count('SELECT count(*) FROM issue') == ISSUES + jira.orbit_count
    assert count('SELECT count(*) FROM issue_change') == ISSUES * 10
    assert 1.5 * ISSUES < count('SELECT count(*) FROM issue_link') < 2.5 * ISSUES
    assert 1.5 * ISSUES < count('SELECT count(*) FROM issue_comment') < 2.5 * ISSUES
    assert 0.2 * ISSUES < count('SELECT count(DISTINCT key) FROM issue_attachment') < 0.4 * ISSUES
    assert count("SELECT count(*) FROM issue WHERE issue_type = 'Эпик'") == ISSUES // 40
    assert count('SELECT count(*) FROM issue WHERE epic_key IS NOT NULL') > ISSUES // 2
    assert count('SELECT count(*) FROM issue_sprint') > 0
    assert count('SELECT count(*) FROM jira_sprint') > 100


def test_built_rows_are_what_ingest_writes(built, claimed_refresh):
    """Re-sending generated issues and history through hublib changes nothing but fetched_at."""
    jira, hub = built
    sent = ['AURORA-7', 'AURORA-11', 'AURORA-40', 'ORBIT-2']
    tables = ('issue', 'issue_link', 'issue_comment', 'issue_attachment', 'issue_sprint',
              'issue_change', 'issue_member')

    def stored():
        rows = {}
        for table in tables:
            column = 'source_key' if table == 'issue_link' else 'key'
            cursor = hub.db.execute_sql(f'SELECT * FROM {table} WHERE {column} IN (?, ?, ?, ?) '
                                        'ORDER BY 1, 2', sent)
            names = [c[0] for c in cursor.description]
            rows[table] = [{n: v for n, v in zip(names, row) if n != 'fetched_at'} for row in cursor]
        return rows

    before = stored()
    assert before['issue'] and before['issue_change'] and before['issue_member']
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [jira.issue(key) for key in sent])
    answer = history.ingest_history(hub, 'jira', None,
                                    [item for key in sent for item in jira.history(key)])
    assert answer['inserted'] == 0 and answer['ignored'] == 30
    assert stored() == before
    assert state_rows([jira.issue('AURORA-7')])['issue'][0][:3] == ('AURORA-7', '100007', 'Задача')


def test_revision_changes_status_and_adds_a_comment_and_history():
    jira = ScaleJira(50, seed=5)
    old, new = jira.issue('AURORA-12'), jira.issue('AURORA-12', revision=1)
    assert new['status'] != old['status'] and new['updated'] > old['updated']
    assert len(new['comments']) == len(old['comments']) + 1
    assert new['description'] == old['description']
    ids = {item['history_id'] for item in jira.history('AURORA-12')}
    assert ids.isdisjoint(item['history_id'] for item in jira.history('AURORA-12', revision=1))
    assert ScaleJira(50, seed=5).issue('AURORA-12') == old  # deterministic by seed
    assert ScaleJira(50, seed=6).issue('AURORA-12') != old
