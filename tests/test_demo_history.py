"""The demo's fake Jira tells a plausible scrum story (issue 21): sprints around today, issues that
walk through the board's columns and the sprints, some added or taken out mid-sprint, so that the
reports of ``sdlc-hub serve --demo`` look like a real team's. Deterministic by seed and moment."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hublib import history, mirror, queue, reads, reports
from hublib.reconstruction import sprint_ids
from hublib.timeutil import to_utc
from hubweb.demo import DEMO_ISSUES, DEMO_SEED, prepare_demo
from hubweb.demo.fake_jira import SCRUM_BOARD, SCRUM_LABEL, FakeJira

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)  # a Tuesday


def scrum_jira(now: datetime = NOW) -> FakeJira:
    return FakeJira(DEMO_ISSUES, seed=DEMO_SEED, scrum_history=now)


def scrum_sprints(jira: FakeJira) -> list[dict]:
    return next(board for board in jira.boards() if board['board_id'] == SCRUM_BOARD)['sprints']


def test_the_scrum_history_is_deterministic_by_seed_and_moment():
    one, two = scrum_jira(), scrum_jira()
    assert [one.issue(key) for key in one.all_keys()] == [two.issue(key) for key in two.all_keys()]
    assert [one.history(key) for key in one.all_keys()] == [two.history(key) for key in two.all_keys()]
    assert one.boards() == two.boards()
    assert FakeJira(DEMO_ISSUES, seed=DEMO_SEED + 1, scrum_history=NOW).issue('AURORA-3') != \
        one.issue('AURORA-3')


def test_without_a_moment_the_fake_jira_is_what_it_was():
    assert FakeJira(50, seed=3).history('AURORA-3') == FakeJira(50, seed=3).history('AURORA-3')
    assert len(scrum_sprints(FakeJira(50, seed=3))) == 4
    assert len(FakeJira(50, seed=3, changes_per_issue=3).history('AURORA-3')) == 3


def test_sprints_are_two_weeks_six_closed_one_active_holding_now_one_future():
    sprints = scrum_sprints(scrum_jira())
    assert [s['state'] for s in sprints] == ['closed'] * 6 + ['active', 'future']
    active = sprints[6]
    assert active['start_date'] <= '2026-12-01' and active['end_date'] >= '2026-12-01'
    assert active['start_date'] == '2026-11-23T10:00:00.000+0300'  # the Monday a week before
    assert sprints[7]['start_date'] is None and sprints[7]['complete_date'] is None
    assert all(s['complete_date'] for s in sprints[:6])
    # a Sunday still falls in the active sprint's second week
    assert scrum_sprints(scrum_jira(datetime(2026, 12, 6, 12, 0, tzinfo=timezone.utc)))[6] == active


def test_scrum_issues_end_where_their_history_leads():
    jira = scrum_jira()
    scrum = [key for key in jira.all_keys() if jira.is_scrum(jira.number(key))]
    assert len(scrum) > 60
    for key in scrum:
        issue, items = jira.issue(key), jira.history(key)
        statuses = [item for item in items if item['field_id'] == 'status']
        sprints = [item for item in items if item['field_name'] == 'Sprint']
        assert SCRUM_LABEL in issue['labels']
        assert issue['status'] == (statuses[-1]['to_string'] if statuses else 'Открыта')
        assert set(issue['sprint_ids']) == (sprint_ids(sprints[-1]['to_value']) if sprints else set())
        moments = [to_utc(item['created']) for item in items]
        assert moments == sorted(moments) and to_utc(issue['created']) <= moments[0] if moments \
            else True
        for item in statuses:  # forward through the board, or reopened from done
            assert (item['from_string'], item['to_string']) in {
                ('Открыта', 'В работе'), ('В работе', 'На проверке'), ('На проверке', 'Готово'),
                ('Готово', 'В работе'), ('В работе', 'Готово')}
    other = [key for key in jira.all_keys() if not jira.is_scrum(jira.number(key))]
    assert all(jira.issue(key)['sprint_ids'] == [] for key in other)


@pytest.fixture
def demo_hub(hub, clock):
    """The demo's hub, its first refresh pushed through hublib (the pages the agent pushes)."""
    clock.set(NOW.isoformat())
    prepare_demo(hub)
    command = queue.claim_command(hub, agent='jira', agent_version='t', settings_version=None,
                                  last_jira_call_at=None)['command']
    jira = scrum_jira()
    keys = jira.search(command['params']['jql'])
    mirror.ingest_state(hub, 'jira', command['id'], jira.issues(keys))
    history.ingest_history(hub, 'jira', command['id'],
                           [item for key in keys for item in jira.history(key)])
    mirror.ingest_boards(hub, 'jira', command['id'], jira.boards())
    return hub


def test_the_demo_sprint_report_looks_like_a_real_sprint(demo_hub):
    report = reports.sprint_report(demo_hub, 'AWPCA', 107, tz='Europe/Moscow')
    assert report['sprint']['state'] == 'active'
    assert len(report['committed']) >= 5 and report['added'] and report['removed']
    assert report['completed'] and report['not_completed']
    burndown = report['burndown']
    assert len(burndown) == 9  # Monday 11-23 to Tuesday 12-01
    assert burndown[-1]['remaining_points'] < report['points']['committed']
    weekend = [day for day in burndown if day['date'] in ('2026-11-28', '2026-11-29')]
    assert weekend[0]['remaining_points'] == weekend[1]['remaining_points']  # nobody works


def test_the_demo_has_six_closed_sprints_of_velocity_and_a_flow_through_every_column(demo_hub):
    items = reports.velocity(demo_hub, 'AWPCA')['items']
    assert [item['sprint_id'] for item in items] == [101, 102, 103, 104, 105, 106]
    assert all(item['completed_issues'] > 0 and item['committed_points'] > 0 for item in items)
    flow = reports.project_flow(demo_hub, 'AWPCA', tz='Europe/Moscow')
    assert all(count > 0 for count in flow['days'][-1]['counts'])
    assert flow['days'][-1]['counts'][-1] > flow['days'][0]['counts'][-1]  # done grows
    cycle = reports.cycle_time(demo_hub, 'AWPCA')
    assert cycle['summary']['count'] > 20 and 1 < cycle['summary']['cycle_days']['p50'] < 10


def test_the_kanban_projects_flow_ends_where_its_board_is(demo_hub):
    """ORION's cumulative flow, rebuilt from the history, holds on its last day what the board
    holds now (issue 30: a flat 96 «В работе» against 33 on the board before every issue's history
    ended in its current status)."""
    flow = reports.project_flow(demo_hub, 'ORION', tz='Europe/Moscow')
    board = reads.board_of(demo_hub, 'ORION')
    columns = {status: index for index, column in enumerate(board['columns'])
               for status in column['statuses']}
    now = [0] * len(flow['columns'])
    for key, status in demo_hub.db.execute_sql(
            "SELECT i.key, i.status FROM issue i JOIN issue_member m ON m.key = i.key "
            "WHERE m.label = 'ORION' AND m.neighbor = 0").fetchall():
        now[columns[status]] += 1
    assert sum(now) > 50
    assert flow['days'][-1]['counts'] == now and flow['days'][-1]['unmapped'] == 0
    assert len({tuple(day['counts']) for day in flow['days']}) > 1  # it moves, it is not flat
