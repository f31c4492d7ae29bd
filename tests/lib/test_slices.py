"""Project slices kept by ingest (hublib.slices) and the natural order of keys (contract §10)."""
from __future__ import annotations

import random

import pytest

from hublib import reads, slices
from tests.support.hubs import project_slice


def link(target, kind='Blocks', direction='outward'):
    return {'type': kind, 'direction': direction, 'key': target}


@pytest.mark.parametrize('key, after', [('AURORA-2', 'AURORA-10'), ('A-9', 'AB-1'), ('A-1', 'A1-1'),
                                        ('Z_1-5', 'Z_1-40'), ('AURORA-01', 'AURORA-1')])
def test_natural_key_orders_project_then_number(key, after):
    assert slices.natural_key(key) < slices.natural_key(after)


def test_label_removed_takes_the_issue_and_its_neighbours_out(two, ingest):
    ingest(two, {'key': 'AURORA-1', 'labels': ['P'], 'links': [link('AURORA-2')]},
           {'key': 'AURORA-2', 'labels': []})
    assert project_slice(two, 'P') == {'AURORA-1': False, 'AURORA-2': True}
    ingest(two, {'key': 'AURORA-1', 'labels': ['Q']})  # links absent: kept
    assert project_slice(two, 'P') == {}
    assert project_slice(two, 'Q') == {'AURORA-1': False, 'AURORA-2': True}


def test_link_dropped_by_its_source_drops_the_neighbour(two, ingest):
    ingest(two, {'key': 'AURORA-1', 'labels': ['P'], 'links': [link('AURORA-2')]},
           {'key': 'AURORA-2', 'labels': []})
    ingest(two, {'key': 'AURORA-1', 'labels': ['P'], 'links': []})
    assert project_slice(two, 'P') == {'AURORA-1': False}


def test_neighbour_that_arrives_later_joins_the_slice(two, ingest):
    ingest(two, {'key': 'AURORA-1', 'labels': ['P'], 'epic_key': 'AURORA-9',
                 'links': [link('AURORA-2', direction='inward')]})
    assert project_slice(two, 'P') == {'AURORA-1': False}  # neither is mirrored yet
    ingest(two, {'key': 'AURORA-9', 'labels': []}, {'key': 'AURORA-2', 'labels': []})
    assert project_slice(two, 'P') == {'AURORA-1': False, 'AURORA-2': True,
                                                'AURORA-9': True}


def test_epic_moved_moves_the_neighbour(two, ingest):
    ingest(two, {'key': 'AURORA-1', 'labels': ['P'], 'epic_key': 'AURORA-8'},
           {'key': 'AURORA-8'}, {'key': 'AURORA-9'})
    ingest(two, {'key': 'AURORA-1', 'labels': ['P'], 'epic_key': 'AURORA-9'})
    assert project_slice(two, 'P') == {'AURORA-1': False, 'AURORA-9': True}


def test_own_issue_of_both_projects_is_own_in_each(two, ingest):
    ingest(two, {'key': 'AURORA-1', 'labels': ['P', 'Q'], 'links': [link('AURORA-2')]},
           {'key': 'AURORA-2', 'labels': ['Q']})
    assert project_slice(two, 'P') == {'AURORA-1': False, 'AURORA-2': True}
    assert project_slice(two, 'Q') == {'AURORA-1': False, 'AURORA-2': False}


def test_slices_after_random_pages_equal_a_rebuild_from_the_mirror(two, ingest):
    """Whatever order pages of labels, links and epics arrive in, the slices kept by ingest are
    the ones built from scratch from the final mirror."""
    rng = random.Random(20261130)
    keys = [f'AURORA-{n}' for n in range(1, 41)]
    for _ in range(25):
        page = []
        for key in rng.sample(keys, 8):
            issue = {'key': key, 'labels': rng.sample(['P', 'Q', 'X'], rng.randint(0, 2))}
            if rng.random() < 0.5:
                issue['epic_key'] = rng.choice(keys + ['AURORA-99'])
            if rng.random() < 0.7:
                issue['links'] = [link(rng.choice(keys), direction=rng.choice(['outward', 'inward']))
                                  for _ in range(rng.randint(0, 3))]
            page.append(issue)
        ingest(two, *page)
    kept = {label: project_slice(two, label) for label in ('P', 'Q')}
    kept_counts = {label: slices.counts(two, label) for label in ('P', 'Q')}
    with two.write():
        for label in ('P', 'Q'):
            slices.build_slice(two, label)
    assert {label: project_slice(two, label) for label in ('P', 'Q')} == kept
    assert kept['P'] and kept['Q']
    # the counts ingest kept by deltas are the counts of the rebuilt slices
    assert {label: slices.counts(two, label) for label in ('P', 'Q')} == kept_counts == {
        label: {'own_count': sum(not flag for flag in kept[label].values()),
                'neighbor_count': sum(kept[label].values())} for label in ('P', 'Q')}


def test_issue_lists_walk_keys_of_two_projects_in_natural_order(two, ingest):
    """Issue 10, point 5: AURORA-2 before AURORA-10, across cursor pages, numbers 1…101."""
    issues = [{'key': f'{project}-{n}', 'labels': ['P']} for project in ('BETA', 'AURORA')
              for n in range(101, 0, -1)]
    ingest(two, *issues[:100])
    ingest(two, *issues[100:])
    expected = [f'{project}-{n}' for project in ('AURORA', 'BETA') for n in range(1, 102)]
    for filters in ({}, {'project': 'P'}, {'project': 'P', 'neighbor': False}):
        seen, cursor = [], None
        for _ in range(30):
            page = reads.issues(two, limit=17, cursor=cursor, **filters)
            seen += [item['key'] for item in page['items']]
            cursor = page['next_cursor']
            if cursor is None:
                break
        assert seen == expected, filters
