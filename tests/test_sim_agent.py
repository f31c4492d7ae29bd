"""The simulated agent and its fake Jira (issue 7): the generated Jira is deterministic and shaped
like contract §8; the agent drives the real HTTP protocol against a waitress server on 127.0.0.1,
with and without injected faults; the demo fills a hub."""
from __future__ import annotations

import hashlib
import threading
import time

import pytest
from waitress.server import create_server

from hublib import projects, settings
from hubweb import create_app
from hubweb.demo import DEMO_PROJECTS, demo_commands, start_demo
from hubweb.demo.agent import Faults, SimAgent
from hubweb.demo.fake_jira import KANBAN_BOARD, OUTSIDE_LABEL, SCRUM_BOARD, FakeJira, JiraError

# --- the fake Jira --------------------------------------------------------------------------------


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


def test_fake_jira_search_boards_and_writes():
    jira = FakeJira(60, seed=1, labels=('AWPCA', 'ORION', 'VEGA'))
    awpca = jira.search('project = AURORA AND labels in ("AWPCA")')
    assert awpca and all('AWPCA' in jira.issue(key)['labels'] for key in awpca)
    assert not any(OUTSIDE_LABEL in jira.issue(key)['labels'] for key in awpca)
    assert jira.search('key in (AURORA-2, AURORA-999)') == ['AURORA-2']
    boards = {board['board_id']: board for board in jira.boards()}
    assert boards[SCRUM_BOARD]['type'] == 'scrum' and len(boards[SCRUM_BOARD]['sprints']) == 4
    assert boards[KANBAN_BOARD]['type'] == 'kanban' and boards[KANBAN_BOARD]['kanban_backlog'] == 1
    key = jira.ensure_issue({'summary': 'Новая', 'labels': ['AWPCA']}, token=('issue', 5))
    assert key == 'AURORA-61'
    assert jira.ensure_issue({'summary': 'Новая'}, token=('issue', 5)) == key  # redelivery
    assert key in jira.search('labels in ("AWPCA")')
    jira.ensure_link(key, 'AURORA-1', 'Blocks')
    assert not jira.ensure_link(key, 'AURORA-1', 'Blocks')
    assert jira.add_comment(key, 'текст', token=9) == jira.add_comment(key, 'текст', token=9)
    assert len(jira.issue(key)['comments']) == 1
    assert jira.transition('AURORA-2', 'Готово') and jira.issue('AURORA-2')['status'] == 'Готово'
    assert jira.history('AURORA-2')[-1]['to_string'] == 'Готово'
    with pytest.raises(JiraError):
        jira.issue('AURORA-1000')
    with pytest.raises(JiraError):
        jira.attachment('3')


# --- against a real server ------------------------------------------------------------------------

@pytest.fixture
def server(hub):
    """A waitress server on 127.0.0.1 over the test's hub, in a thread."""
    app = create_app(hub)
    srv = create_server(app, host='127.0.0.1', port=0, threads=4)
    closing = threading.Event()

    def run():
        try:
            srv.run()
        except OSError:
            if not closing.is_set():  # closing the socket under run() ends it with EBADF
                raise

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    yield f'http://127.0.0.1:{srv.effective_port}'
    closing.set()
    srv.close()
    thread.join(timeout=5)


def configure(hub):
    settings.update_settings(hub, {
        'project_key': 'AURORA',
        'issue_types': {'task': {'name': 'Задача', 'id': '1'}, 'epic': {'name': 'Эпик', 'id': '2'}},
        'link_types': {'blocks': 'Blocks'},
        'pacing': {'interval_ms': 1, 'pause_on_rate_limit_seconds': 60}})
    projects.create_project(hub, 'AWPCA', 'Аврора', SCRUM_BOARD)
    projects.create_project(hub, 'ORION', 'Орион', KANBAN_BOARD)


def rows(hub, sql, params=()):
    return hub.db.execute_sql(sql, params).fetchall()


def queue_module():
    from hublib import queue
    return queue


def test_agent_refresh_fills_the_mirror_through_http(hub, server):
    configure(hub)
    queue = queue_module()
    jira = FakeJira(250, seed=2)
    batch = queue.create_batch(hub, title='Загрузка', author='test',
                               commands=[{'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}}])
    agent = SimAgent(server, settings.tokens(hub)['agent'], jira)
    agent.run(stop_when_idle=True, until=time.monotonic() + 60)
    wanted = jira.search(projects.base_jql(hub))
    own = {key for key, in rows(hub, 'SELECT key FROM issue WHERE neighbor = 0')}
    assert own == set(wanted)
    neighbours = {key for key, in rows(hub, 'SELECT key FROM issue WHERE neighbor = 1')}
    assert neighbours and all(jira.issue(key)['labels'] in ([OUTSIDE_LABEL], ['VEGA'])
                              for key in neighbours)
    command = queue.command(hub, batch['commands'][0]['id'])
    assert command['status'] == 'done' and command['jira_calls'] >= len(wanted) // 100
    run = rows(hub, 'SELECT issues_count, finished_at, history_at FROM sync_run WHERE command_id = ?',
               (command['id'],))[0]
    assert run[0] == len(own) + len(neighbours) and run[1] and run[2]
    changes = rows(hub, 'SELECT count(*) FROM issue_change')[0][0]
    assert changes == sum(len(jira.history(key)) for key in own | neighbours)
    assert rows(hub, 'SELECT board_id, type FROM jira_board ORDER BY board_id') == [
        (SCRUM_BOARD, 'scrum'), (KANBAN_BOARD, 'kanban')]
    assert rows(hub, 'SELECT label, board_type FROM jira_project ORDER BY label') == [
        ('AWPCA', 'scrum'), ('ORION', 'kanban')]
    assert rows(hub, 'SELECT count(*) FROM issue_comment')[0][0] > 0
    assert rows(hub, 'SELECT count(*) FROM issue_sprint')[0][0] > 0


def test_agent_executes_every_command_type(hub, server):
    configure(hub)
    queue = queue_module()
    jira = FakeJira(40, seed=5)
    token = settings.tokens(hub)['agent']
    queue.create_batch(hub, title='Загрузка', author='test',
                       commands=[{'type': 'refresh', 'params': {'keys': ['AURORA-4', 'AURORA-8']}}])
    SimAgent(server, token, jira).run(stop_when_idle=True, until=time.monotonic() + 30)
    work = queue.create_batch(hub, title='Работа', author='test', commands=[
        {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'temp_key': 'new:1',
                                            'summary': 'Новая задача'}},
        {'type': 'ensure_link', 'params': {'source_key': 'new:1', 'target_key': 'AURORA-4',
                                           'link_type': 'blocks'}, 'depends_on': 1},
        {'type': 'add_comment', 'params': {'key': 'AURORA-4', 'body': 'Привет'}},
        {'type': 'transition', 'params': {'key': 'AURORA-8', 'status': 'Готово'}},
        {'type': 'fetch_attachment', 'params': {'attachment_id': '8'}},
        {'type': 'add_comment', 'params': {'key': 'AURORA-999', 'body': 'нет такой'}},
    ])
    agent = SimAgent(server, token, jira)
    agent.run(stop_when_idle=True, until=time.monotonic() + 30)
    commands = queue.batch(hub, work['id'])['commands']
    assert [c['status'] for c in commands] == ['done'] * 5 + ['failed']
    new_key = commands[0]['result']['key']
    assert new_key == 'AURORA-41' and jira.issue(new_key)['summary'] == 'Новая задача'
    assert {'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-4'} in jira.issue(new_key)['links']
    assert commands[0]['jira_calls'] == 3
    content = jira.attachment('8')
    digest = hashlib.sha256(content).hexdigest()
    assert commands[4]['result'] == {'sha256': digest, 'size': len(content)}
    assert (hub.files_dir / digest).read_bytes() == content
    assert rows(hub, 'SELECT file, size FROM attachment_file WHERE attachment_id = ?', ('8',)) == [
        (digest, len(content))]
    assert 'AURORA-999' in commands[5]['error']


def test_agent_with_faults_ends_with_every_command_terminal(hub, server):
    configure(hub)
    queue = queue_module()
    jira = FakeJira(300, seed=11)
    token = settings.tokens(hub)['agent']
    commands = [{'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}}]
    commands += [{'type': 'add_comment', 'params': {'key': f'AURORA-{n}', 'body': f'к {n}'}}
                 for n in range(1, 41)]
    commands += [{'type': 'ensure_issue', 'params': {'issue_type': 'task', 'temp_key': f'new:{n}',
                                                     'summary': f'Новая {n}'}} for n in range(1, 11)]
    batch = queue.create_batch(hub, title='С отказами', author='test', commands=commands)
    # Seed 2: the refresh's first two deliveries end in a lost report or a crash, so the hub hands
    # it out a third time and it is reported done (the agent is single-threaded and seeded: the
    # same every run).
    agent = SimAgent(server, token, jira, seed=2, faults=Faults(
        lose_report=0.25, crash_before_report=0.1, duplicate_report=0.2, rate_limit=0.1))
    agent.run(stop_when_idle=True, until=time.monotonic() + 90)
    final = queue.batch(hub, batch['id'])
    assert final['status'] == 'done'
    statuses = [command['status'] for command in final['commands']]
    assert set(statuses) <= {'done', 'failed'}
    assert all(command['deliveries'] <= 3 for command in final['commands'])
    for command in final['commands']:
        if command['status'] == 'failed':
            assert command['error'] == 'агент не отчитался после 3 выдач'
    assert agent.stats['lost_reports'] and agent.stats['crashes'] and agent.stats['rate_limited']
    assert sum(command['rate_limited'] for command in final['commands']) > 0
    # Redelivered ensure_issue never creates a second issue in Jira.
    created = [command['result']['key'] for command in final['commands']
               if command['type'] == 'ensure_issue' and command['status'] == 'done']
    assert len(created) == len(set(created))
    assert len(jira._created) == 10
    # A redelivered refresh does not double its counters (spec «Довыдача refresh…»).
    refresh = final['commands'][0]
    assert (refresh['status'], refresh['deliveries'], refresh['error']) == ('done', 3, None)
    count = rows(hub, 'SELECT issues_count FROM sync_run WHERE command_id = ?', (refresh['id'],))[0][0]
    assert count == refresh['result']['issues'] > 0  # what its finishing delivery sent, once
    # The hub then refreshed what the batch wrote (contract §9.4a): one keys refresh.
    followups = [item for item in queue.batches(hub)['items'] if item['id'] != batch['id']]
    assert [(item['title'], item['status']) for item in followups] == [
        ('Обновление после записи', 'done')]


def test_start_demo_fills_the_mirror_and_runs_a_batch(hub, server):
    thread = start_demo(hub, server, settings.tokens(hub)['agent'], issues=120, command_delay=0.0)
    try:
        queue = queue_module()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            listed = queue.batches(hub)['items']
            if listed and all(item['status'] == 'done' for item in listed):
                break
            time.sleep(0.2)
        # the full load, the work batch and the hub's refresh of what the work batch wrote
        assert [(item['title'], item['status']) for item in listed] == [
            ('Обновление после записи', 'done'), ('Демо: завести задачи', 'done'),
            ('Демо: полная загрузка', 'done')]
        assert rows(hub, 'SELECT count(*) FROM issue WHERE neighbor = 0')[0][0] > 50
        assert [p['label'] for p in projects.projects(hub)] == [label for label, _, _ in DEMO_PROJECTS]
        work = queue.batch(hub, listed[1]['id'])
        assert len(work['commands']) == len(demo_commands())
        assert all(command['status'] == 'done' for command in work['commands'])
        jira_status = [item for item in queue.agents(hub)['items'] if item['agent'] == 'jira'][0]
        assert jira_status['online'] and jira_status['agent_version'] == 'sim-15'
    finally:
        thread.agent.stop()
        thread.join(timeout=10)
