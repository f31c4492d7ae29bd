"""A project's board and sprints (hublib.reads.project_board, project_sprints): what they list and
in which order, checked against the rule written plainly over the model tables, on a mirror with
every case the hand-built reads must keep (sprints in every state and of another board, a key in
two sprints, neighbours in a sprint, statuses in no column or none, equal and missing ranks)."""
from __future__ import annotations

import random

import pytest

from tests.support.timing import query_plans
from hublib import mirror, projects, reads, settings
from hublib.models import Issue, IssueMember, IssueSprint, JiraSprint
from hublib.slices import natural_key

COLUMNS = [{'name': 'Открыта', 'statuses': ['Открыта']},
           {'name': 'В работе', 'statuses': ['В работе', 'На проверке']},
           {'name': 'Готово', 'statuses': ['Готово', 'Снято', 'Открыта']}]  # Открыта: first column wins
SPRINTS = [  # on board 7, listed by start date, undated last, then by id
    {'id': 13, 'name': 'Будущий', 'state': 'future'},
    {'id': 12, 'name': 'Текущий', 'state': 'active', 'start_date': '2026-11-15T10:00:00.000+0300'},
    {'id': 11, 'name': 'Прошлый', 'state': 'closed', 'start_date': '2026-11-01T10:00:00.000+0300'},
    {'id': 15, 'name': 'Давний', 'state': 'closed', 'start_date': '2026-10-01T10:00:00.000+0300'},
    {'id': 16, 'name': 'Пустой', 'state': 'future'}]
OTHER_BOARD_SPRINT = 14


@pytest.fixture
def board_mirror(hub, claimed_refresh):
    settings.update_settings(hub, {'project_key': 'AURORA'})
    projects.create_project(hub, 'AWPCA', 'АРМ КА', board_id=7)
    projects.create_project(hub, 'STOCKS', 'Запасы')
    mirror.ingest_boards(hub, 'jira', None, [
        {'board_id': 7, 'type': 'scrum', 'columns': COLUMNS, 'sprints': SPRINTS},
        {'board_id': 8, 'type': 'scrum', 'columns': [], 'sprints': [
            {'id': OTHER_BOARD_SPRINT, 'name': 'Чужой', 'state': 'active'}]}])
    rng = random.Random(23)
    issues = []
    for number in range(1, 161):
        own = number % 5 != 0
        issue = {'key': f'AURORA-{number}', 'labels': ['AWPCA'] if own else ['STOCKS'],
                 'summary': f'Задача {number}',
                 'status': rng.choice(['Открыта', 'В работе', 'На проверке', 'Готово', 'Снято',
                                       'Нигде', None]),
                 # few distinct ranks: ties fall back to the natural key order
                 'rank': rng.choice([None, '0|i0001:', '0|i0002:', '0|i0003:', f'0|h{number:04}:']),
                 'sprint_ids': rng.sample([11, 12, 13, OTHER_BOARD_SPRINT, 15], rng.choice([0, 1, 1, 2]))}
        if not own:  # a neighbour of AWPCA, in sprints too: never on AWPCA's board
            issue['links'] = [{'type': 'Relates', 'direction': 'outward', 'key': f'AURORA-{number - 1}'}]
        issues.append(issue)
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), issues)
    return hub


def own_issues_by_rule(hub, sprint=None):
    """(key, status) of AWPCA's own issues in board order: rank (missing last), natural key."""
    own = {key for key, in IssueMember.select(IssueMember.key).where(
        (IssueMember.label == 'AWPCA') & (IssueMember.neighbor == 0)).tuples().execute(hub.db)}
    if sprint is not None:
        own &= {key for key, in IssueSprint.select(IssueSprint.key).where(
            IssueSprint.sprint_id == sprint).tuples().execute(hub.db)}
    rows = Issue.select(Issue.key, Issue.status, Issue.rank).where(Issue.key.in_(sorted(own)))
    ordered = sorted(rows.tuples().execute(hub.db),
                     key=lambda row: (row[2] is None, row[2] or '', natural_key(row[0])))
    return [(key, status) for key, status, _ in ordered]


def board_by_rule(hub, sprint=None):
    column_of = {}
    for index, column in enumerate(COLUMNS):
        for status in column['statuses']:
            column_of.setdefault(status, index)
    columns = [[] for _ in COLUMNS]
    for key, status in own_issues_by_rule(hub, sprint):
        if status in column_of:
            columns[column_of[status]].append(key)
    return columns


@pytest.mark.parametrize('sprint', [None, 11, 12, 13, 15, 16, OTHER_BOARD_SPRINT, 99])
def test_board_columns_hold_own_issues_by_first_matching_column_in_rank_then_natural_order(
        board_mirror, sprint):
    board = reads.project_board(board_mirror, 'AWPCA', sprint=sprint)
    expected = board_by_rule(board_mirror, sprint)
    assert [column['issues'] for column in board['columns']] == expected
    assert [[card['key'] for card in column['cards']] for column in board['columns']] == expected
    assert board['done_statuses'] == ['Готово', 'Снято', 'Открыта']
    if sprint is None:  # the fixture exercises what the order must survive
        own = own_issues_by_rule(board_mirror)
        assert {status for _, status in own} >= {'Нигде', None, 'Открыта', 'Снято'}
        shown = {key for column in expected for key in column}
        assert {key for key, status in own if status in ('Нигде', None)}.isdisjoint(shown)


def test_board_cards_carry_the_card_fields_of_their_issue(board_mirror):
    board = reads.project_board(board_mirror, 'AWPCA', sprint=12)
    cards = [card for column in board['columns'] for card in column['cards']]
    assert cards
    stored = {row['key']: row for row in Issue.select(*(getattr(Issue, name) for name in reads.CARD_FIELDS))
              .where(Issue.key.in_([card['key'] for card in cards])).dicts().execute(board_mirror.db)}
    assert cards == [stored[card['key']] for card in cards]


def test_sprints_list_each_sprint_of_the_board_with_its_own_issues_in_natural_order(board_mirror):
    sprints = reads.project_sprints(board_mirror, 'AWPCA')['items']
    assert [sprint['sprint_id'] for sprint in sprints] == [15, 11, 12, 13, 16]
    done = set(COLUMNS[-1]['statuses'])
    statuses = dict(Issue.select(Issue.key, Issue.status).tuples().execute(board_mirror.db))
    in_two = []
    for sprint in sprints:
        expected = sorted((key for key, _ in own_issues_by_rule(board_mirror, sprint['sprint_id'])),
                          key=natural_key)
        assert sprint['issues'] == expected, sprint['sprint_id']
        assert sprint['issues_count'] == len(expected)
        assert sprint['done_count'] == sum(statuses[key] in done for key in expected)
        in_two.append(set(expected))
    assert sprints[-1]['issues'] == [] and sprints[-1]['done_count'] == 0  # a sprint with no issues
    assert any(a & b for i, a in enumerate(in_two) for b in in_two[i + 1:])  # a key in two sprints
    assert {column for column in sprints[0]} == {
        'sprint_id', 'board_id', 'name', 'state', 'start_date', 'end_date', 'complete_date', 'goal',
        'issues', 'issues_count', 'done_count'}


def test_a_project_without_a_board_has_no_columns_and_no_sprints(board_mirror):
    assert reads.project_sprints(board_mirror, 'STOCKS') == {'items': []}
    board = reads.project_board(board_mirror, 'STOCKS')
    assert (board['board_id'], board['columns'], board['done_statuses']) == (None, [], [])


def test_a_sprint_board_reads_the_sprint_members_from_the_covering_sprint_index(board_mirror):
    plans = query_plans(board_mirror.db.connection(),
                        lambda: reads.project_board(board_mirror, 'AWPCA', sprint=12))
    members = [plan for sql, plan in plans if 'json_group_array' in sql and 'issue_sprint' in sql]
    assert len(members) == 1, plans
    assert any('COVERING INDEX issue_sprint_sprint_key (sprint_id=?)' in line
               for line in members[0]), members
