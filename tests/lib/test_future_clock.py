"""A clock that was years ahead leaves entries dated in the future. Beyond a day ahead of the hub
clock they are not believed: a backup named 2036… is rotated first (not kept forever as «the
newest»), and an agent last seen in 2036 is not «online» for ten years."""
from __future__ import annotations

import os

from hublib import backups, queue, settings


def test_backups_dated_beyond_a_day_ahead_are_rotated_first(hub, clock):
    settings.update_settings(hub, {'backup_keep': 2})
    clock.set('2036-11-30T10:00:00+00:00')  # the clock ran ten years ahead ...
    backups.backup(hub)
    clock.set('2026-11-30T10:00:00+00:00')  # ... and was put right
    for _ in range(3):
        clock.advance(days=1)
        backups.backup(hub)
    assert sorted(os.listdir(hub.backups_dir)) == ['20261202-100000.sqlite',
                                                   '20261203-100000.sqlite']


def test_a_backup_within_a_day_ahead_still_counts_as_newest(hub, clock):
    settings.update_settings(hub, {'backup_keep': 2})
    clock.set('2026-12-01T09:00:00+00:00')  # a few hours ahead: an ordinary clock skew
    backups.backup(hub)
    clock.set('2026-11-30T10:00:00+00:00')
    backups.backup(hub)
    backups.backup(hub)
    assert sorted(os.listdir(hub.backups_dir)) == ['20261130-100000-1.sqlite',
                                                   '20261201-090000.sqlite']


def test_an_agent_last_seen_beyond_a_day_ahead_is_not_online(hub, clock):
    clock.set('2036-11-30T10:00:00+00:00')
    queue.claim_command(hub, agent='jira')
    clock.set('2026-11-30T10:00:00+00:00')
    jira = next(item for item in queue.agents(hub)['items'] if item['agent'] == 'jira')
    assert (jira['last_seen_at'], jira['online']) == ('2036-11-30T10:00:00+00:00', False)


def test_an_agent_last_seen_a_little_ahead_is_online(hub, clock):
    clock.set('2026-11-30T10:30:00+00:00')
    queue.claim_command(hub, agent='jira')
    clock.set('2026-11-30T10:00:00+00:00')
    jira = next(item for item in queue.agents(hub)['items'] if item['agent'] == 'jira')
    assert jira['online'] is True
