"""JQL `resolution` and `statusCategory` (contract §16: Unresolved ⇔ status not in closed_statuses, by casefold)
read through the stored spellings of the status column: the same answers as the casefold of every
row, alone, with `sprint in openSprints()` and in a count."""
from __future__ import annotations

import pytest

from hublib import mirror, reads, settings

STATUSES = {'AURORA-1': 'Готово', 'AURORA-2': 'ГОТОВО', 'AURORA-3': 'снято', 'AURORA-4': 'В работе',
            'AURORA-5': None, 'AURORA-6': 'Открыта', 'AURORA-7': 'Готово '}  # trailing space: not closed


@pytest.fixture
def resolved_mirror(hub, claimed_refresh):
    settings.update_settings(hub, {'project_key': 'AURORA'})
    mirror.ingest_boards(hub, 'jira', None, [{'board_id': 7, 'type': 'scrum', 'columns': [], 'sprints': [
        {'id': 1, 'name': 'Идёт', 'state': 'active'}, {'id': 2, 'name': 'Был', 'state': 'closed'}]}])
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [
        {'key': key, 'summary': key, 'status': status, 'sprint_ids': [1] if int(key[7:]) % 2 else [2]}
        for key, status in STATUSES.items()])
    return hub


def closed(status):
    return status is not None and status.casefold() in {'готово', 'снято'}


@pytest.mark.parametrize('query, expected', [
    ('resolution = Unresolved', [key for key, status in STATUSES.items() if not closed(status)]),
    ('resolution IS EMPTY', [key for key, status in STATUSES.items() if not closed(status)]),
    ('resolution IS NOT EMPTY', [key for key, status in STATUSES.items() if closed(status)]),
    ('sprint in openSprints() AND resolution = Unresolved',
     [key for key, status in STATUSES.items() if int(key[7:]) % 2 and not closed(status)]),
])
def test_resolution_is_the_casefold_of_the_closed_statuses(resolved_mirror, query, expected):
    assert expected  # the fixture has both kinds everywhere it is asked
    assert [item['key'] for item in reads.issues(resolved_mirror, jql=query)['items']] == expected
    assert reads.issue_count(resolved_mirror, jql=query) == {'count': len(expected)}


def test_resolution_follows_the_closed_statuses_setting(resolved_mirror):
    settings.update_settings(resolved_mirror, {'closed_statuses': ['в работе']})
    assert [item['key'] for item in reads.issues(
        resolved_mirror, jql='resolution IS NOT EMPTY')['items']] == ['AURORA-4']


@pytest.mark.parametrize('query, expected', [
    ('statusCategory = Done', [key for key, status in STATUSES.items() if closed(status)]),
    ('statusCategory != Done', [key for key, status in STATUSES.items()
                                if status is not None and not closed(status)]),
])
def test_status_category_done_is_the_same_rule(resolved_mirror, query, expected):
    assert [item['key'] for item in reads.issues(resolved_mirror, jql=query)['items']] == expected
    assert reads.issue_count(resolved_mirror, jql=query) == {'count': len(expected)}
