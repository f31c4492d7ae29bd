"""The demo (issues 7, 30, 32): its generated Jira is deterministic, shaped like the hub's ingest and
consistent (every issue's history ends in its current values); it keeps what is written into it
across restarts and never hands a key out twice; ``start_demo`` serves it as Jira's REST API and
runs the real agent, which fills the hub and runs the demo's batch."""
from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest

from hublib import projects, queue, settings
from hubweb import create_app
from hubweb.demo import (DEMO_ISSUES, DEMO_JIRA_FILE, DEMO_PROJECTS, DEMO_SEED, demo_commands,
                         start_demo)
from hubweb.demo.fake_jira import (KANBAN_BOARD, OUTSIDE_LABEL, PRIORITIES, SCRUM_BOARD, FakeJira,
                                   JiraError)
from hubweb.demo.jira_rest import Server
from hubweb.jira_agent import PROTOCOL_VERSION

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)

# --- the generated Jira -------------------------------------------------------------------------


def test_fake_jira_is_deterministic_by_seed():
    assert FakeJira(50, seed=3).issue('AURORA-17') == FakeJira(50, seed=3).issue('AURORA-17')
    assert FakeJira(50, seed=3).history('AURORA-17') == FakeJira(50, seed=3).history('AURORA-17')
    assert FakeJira(50, seed=3).issue('AURORA-17') != FakeJira(50, seed=4).issue('AURORA-17')


def test_fake_jira_issue_has_the_state_shape_with_offsets():
    jira = FakeJira(100, seed=1)
    issue = jira.issue('AURORA-40')
    assert set(issue) == {'key', 'id', 'issue_type', 'summary', 'description', 'status', 'priority',
                          'assignee', 'reporter', 'duedate', 'planned_start', 'planned_end',
                          'epic_key', 'labels', 'sprint', 'rank', 'story_points', 'updated',
                          'created', 'links', 'comments', 'attachments', 'sprint_ids'}
    assert issue['labels'] == [OUTSIDE_LABEL]  # every 20th issue is outside every project
    assert issue['attachments'][0]['id'] == '40'
    assert issue['attachments'][0]['size'] == len(jira.attachment('40'))
    offsets = {jira.issue(f'AURORA-{n}')['updated'][-5:] for n in range(1, 11)}
    assert '+0300' in offsets and len(offsets) > 1
    assert {'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-4'} in jira.issue('AURORA-3')['links']
    assert {'type': 'Blocks', 'direction': 'inward', 'key': 'AURORA-3'} in jira.issue('AURORA-4')['links']
    items = jira.history('AURORA-5')
    assert [(item['history_id'], item['seq']) for item in items] == [('5000', 0), ('5000', 1), ('5001', 0)]
    assert all(item['created'][-5] in '+-' for item in items)
    epics = [key for key in jira.all_keys() if jira.issue(key)['issue_type'] == 'Эпик']
    assert epics == ['AURORA-1', 'AURORA-51']
    assert {jira.issue(key)['epic_key'] for key in jira.all_keys()} == {None, 'AURORA-1', 'AURORA-51'}


@pytest.mark.parametrize('scrum_history', [None, NOW], ids=['plain', 'scrum story'])
def test_every_issues_history_ends_in_its_current_status_assignee_priority_and_sprints(scrum_history):
    jira = FakeJira(DEMO_ISSUES, seed=DEMO_SEED, scrum_history=scrum_history, changes_per_issue=5)
    fields = {'status': 'status', 'assignee': 'assignee', 'priority': 'priority', 'Sprint': 'sprint_ids'}
    checked = 0
    for key in jira.all_keys():
        issue = jira.issue(key)
        chains: dict[str, list[dict]] = {}
        for item in jira.history(key):
            chains.setdefault(item['field_name'], []).append(item)
        for name, attribute in fields.items():
            chain = chains.get(name, [])
            for before, after in zip(chain, chain[1:]):  # each change starts where the last ended
                assert after['from_value'] == before['to_value'], (key, name)
            if not chain:
                continue
            last = chain[-1]
            current = issue[attribute]
            if name == 'Sprint':
                assert last['to_value'] == ', '.join(map(str, current)), key
            elif name == 'assignee':
                assert last['to_value'] == current, key
            else:
                assert last['to_string'] == current, (key, name)
            checked += 1
    assert checked > DEMO_ISSUES


def test_fake_jira_search_boards_and_writes():
    jira = FakeJira(60, seed=1, labels=('AWPCA', 'ORION', 'VEGA'))
    awpca = jira.search('project = AURORA AND labels in ("AWPCA")')
    assert awpca and all('AWPCA' in jira.issue(key)['labels'] for key in awpca)
    assert not any(OUTSIDE_LABEL in jira.issue(key)['labels'] for key in awpca)
    assert jira.search('key in (AURORA-2, AURORA-999)') == ['AURORA-2']
    boards = {board['board_id']: board for board in jira.boards()}
    assert boards[SCRUM_BOARD]['type'] == 'scrum' and len(boards[SCRUM_BOARD]['sprints']) == 4
    assert boards[KANBAN_BOARD]['type'] == 'kanban' and boards[KANBAN_BOARD]['kanban_backlog'] == 1
    key = jira.create_issue({'summary': 'Новая', 'labels': ['AWPCA'], 'priority': PRIORITIES[0]})
    assert key == 'AURORA-61' and key in jira.search('labels in ("AWPCA")')
    assert jira.link(key, 'AURORA-1', 'Blocks') and not jira.link(key, 'AURORA-1', 'Blocks')
    jira.add_comment(key, 'текст')
    assert [comment['body'] for comment in jira.issue(key)['comments']] == ['текст']
    before = jira.issue('AURORA-2')['status']
    target = jira.transitions('AURORA-2')[0]
    assert jira.transition('AURORA-2', target) == before and jira.issue('AURORA-2')['status'] == target
    assert jira.history('AURORA-2')[-1]['to_string'] == target
    with pytest.raises(JiraError):
        jira.transition('AURORA-2', target)  # no transition to the status it has
    with pytest.raises(JiraError):
        jira.issue('AURORA-1000')
    with pytest.raises(JiraError):
        jira.attachment('3')


def test_the_demo_jira_keeps_its_writes_across_a_restart_and_never_reuses_a_key(tmp_path):
    state = tmp_path / DEMO_JIRA_FILE
    jira = FakeJira(40, seed=DEMO_SEED, scrum_history=NOW, state_file=state)
    created = jira.create_issue({'summary': 'Первая', 'labels': ['AWPCA']})
    comment = jira.add_comment('AURORA-1', 'Комментарий демо')
    target = jira.transitions('AURORA-2')[0]
    jira.transition('AURORA-2', target)
    jira.set_property(f'issue/{created}', 'sdlc-hub', {'command_id': 3})
    # a restart on another day: the same Jira, as it was left
    again = FakeJira(40, seed=DEMO_SEED, scrum_history=datetime(2027, 1, 15, tzinfo=timezone.utc),
                     state_file=state)
    assert again.scrum_history == NOW
    assert again.issue(created)['summary'] == 'Первая'
    assert comment in again.issue('AURORA-1')['comments']
    assert again.issue('AURORA-2')['status'] == target
    assert again.property(f'issue/{created}', 'sdlc-hub') == {'command_id': 3}
    assert again.create_issue({'summary': 'Вторая'}) == 'AURORA-42' != created
    assert [jira.issue(key) for key in ('AURORA-5', 'AURORA-17')] == \
        [again.issue(key) for key in ('AURORA-5', 'AURORA-17')]


# --- the demo ---------------------------------------------------------------------------------------

@pytest.fixture
def server(hub):
    """A waitress server on 127.0.0.1 over the test's hub, in a thread; no pacing between Jira
    requests (the demo's own default of 500 ms makes its batch take half a minute)."""
    settings.update_settings(hub, {'pacing': {'interval_ms': 0, 'pause_on_rate_limit_seconds': 60}})
    served = Server(create_app(hub))
    yield served.url
    served.close()


def wait_for_batches(hub, count: int, seconds: float = 60) -> list[dict]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        listed = queue.batches(hub)['items']
        if len(listed) >= count and all(item['status'] == 'done' for item in listed):
            return listed
        time.sleep(0.2)
    raise AssertionError(f'the demo did not finish: {queue.batches(hub)["items"]}')


def test_start_demo_fills_the_mirror_and_runs_a_batch_through_the_real_agent(hub, server):
    demo = start_demo(hub, server, settings.tokens(hub)['agent'], issues=120, write_latency=0.0)
    try:
        listed = wait_for_batches(hub, 3)
        # the full load, the work batch and the hub's refresh of what the work batch wrote
        assert [(item['title'], item['status']) for item in listed] == [
            ('Обновление после записи', 'done'), ('Демо: завести задачи', 'done'),
            ('Демо: полная загрузка', 'done')]
        rows = hub.db.execute_sql('SELECT count(*) FROM issue WHERE neighbor = 0').fetchall()
        assert rows[0][0] > 50
        assert [p['label'] for p in projects.projects(hub)] == [label for label, _, _ in DEMO_PROJECTS]
        work = queue.batch(hub, listed[1]['id'])
        assert len(work['commands']) == len(demo_commands())
        assert all(command['status'] == 'done' for command in work['commands'])
        created = work['commands'][0]['result']['key']
        assert created == 'AURORA-121'
        # the priority went through priority_map: Jira and the mirror hold «Высокий», not «high»
        assert demo.jira.issue(created)['priority'] == 'Высокий'
        assert hub.db.execute_sql('SELECT priority FROM issue WHERE key = ?',
                                  (created,)).fetchall() == [('Высокий',)]
        jira_status = [item for item in queue.agents(hub)['items'] if item['agent'] == 'jira'][0]
        assert jira_status['online'] and jira_status['agent_version'].startswith(PROTOCOL_VERSION)
        assert (hub.data_dir / DEMO_JIRA_FILE).is_file()
    finally:
        demo.stop()


def test_a_restarted_demo_serves_the_jira_it_left_and_never_reuses_a_key(hub, server):
    token = settings.tokens(hub)['agent']
    demo = start_demo(hub, server, token, issues=80, write_latency=0.0)
    try:
        wait_for_batches(hub, 3)
    finally:
        demo.stop()
    transitioned = demo.jira.issue('AURORA-2')['status']
    demo = start_demo(hub, server, token, issues=80, write_latency=0.0)
    try:
        assert demo.jira.issue('AURORA-2')['status'] == transitioned == 'В работе'
        assert sorted(demo.jira.created_issues()) == ['AURORA-81', 'AURORA-82']
        queue.create_batch(hub, title='Ещё одна', author='test', commands=[
            {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'summary': 'Третья'}}])
        listed = wait_for_batches(hub, 5)
        newest = queue.batch(hub, listed[1]['id'])['commands'][0]
        assert newest['result']['key'] == 'AURORA-83'
    finally:
        demo.stop()
