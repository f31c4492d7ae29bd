"""Hub + agent + fake Jira, end to end: the hub served by waitress on 127.0.0.1, the agent in this
process (a clock that moves only when it sleeps), the fake Jira REST server speaking Cloud's or
Data Center's dialect. A full refresh fills the mirror exactly; a batch lands in Jira once and the
next refresh shows it; a delivery whose report is lost is done again without a second write."""
from __future__ import annotations

import hashlib

import pytest

from hublib import projects, queue, settings
from hubweb.demo.jira_rest import person_in_mirror
from hubweb.jira_agent import Agent
from tests.agent.conftest import SteppingClock, configure, make_agent
from tests.agent.mirror import expected, neighbours_of, rows, stored

DEPLOYMENTS = ('Cloud', 'Server')


def refresh(hub, **params) -> dict:
    batch = queue.create_batch(hub, title='Загрузка', author='test',
                               commands=[{'type': 'refresh', 'params': params}])
    return batch['commands'][0]


def command(hub, command_id: int) -> dict:
    return queue.command(hub, command_id)


@pytest.fixture
def world(hub, hub_url, jira_site, request):
    """(hub, fake Jira model, its app, the agent) for the deployment the test is parametrized with."""
    configure(hub)
    deployment = request.param
    clock = SteppingClock()
    model, app, server = jira_site(deployment, issues=60, clock=lambda: clock.elapsed,
                                   comment_limit=1, changelog_limit=1)
    agent = make_agent(hub, hub_url, server.url, deployment, clock=clock)
    return hub, model, app, agent


@pytest.mark.parametrize('world', DEPLOYMENTS, indirect=True)
def test_a_full_refresh_fills_the_mirror_exactly(world):
    hub, model, app, agent = world
    full = refresh(hub, jql=projects.base_jql(hub))
    agent.run(once=True)
    own = model.search(projects.base_jql(hub))
    neighbours = neighbours_of(model, own)
    assert len(own) > 30 and neighbours
    mirror = stored(hub)
    wanted = expected(model, own, neighbours, cloud=app.cloud)
    assert set(mirror['issues']) == set(wanted['issues'])
    for key, row in wanted['issues'].items():
        assert mirror['issues'][key] == row, key
    for table in ('links', 'comments', 'attachments', 'sprints_of_issues', 'history', 'boards',
                  'sprints'):
        assert mirror[table] == wanted[table], table
    # the search cut comments and changelogs short (one each): the agent paged the rest
    long_comments = [key for key in own if len(model.issue(key)['comments']) > 1]
    assert long_comments and all(app.calls(f'/rest/api/2/issue/{key}/comment')
                                 for key in long_comments)
    if app.cloud:  # Cloud's search gave one history: the rest came from the changelog pages
        long_histories = [key for key in own if len({item['history_id']
                                                     for item in model.history(key)}) > 1]
        assert long_histories and all(app.calls(f'/rest/api/2/issue/{key}/changelog')
                                      for key in long_histories)
    done = command(hub, full['id'])
    assert done['status'] == 'done'
    assert done['result'] == {'issues': len(own) + len(neighbours),
                              'links': sum(len(model.issue(key)['links'])
                                           for key in own + neighbours),
                              'history': {'issues': len(own) + len(neighbours),
                                          'changes': len(wanted['history']), 'incomplete': []}}
    assert rows(hub, 'SELECT label, board_type FROM jira_project ORDER BY label') == [
        ('AWPCA', 'scrum'), ('ORION', 'kanban')]
    assert rows(hub, 'SELECT history_at IS NOT NULL FROM sync_run WHERE command_id = ?',
                (full['id'],)) == [(1,)]


@pytest.mark.parametrize('world', DEPLOYMENTS, indirect=True)
def test_jira_calls_are_exact_and_rate_limits_are_counted(world):
    hub, model, app, agent = world
    agent.connect()
    before = len(app.requests)
    app.storm(2, retry_after='3')
    full = refresh(hub, jql=projects.base_jql(hub))
    agent.run(once=True)
    done = command(hub, full['id'])
    assert done['jira_calls'] == len(app.requests) - before
    assert done['rate_limited'] == 2
    # the next delivery carries the hub's pause, waited before any request
    second = refresh(hub, keys=['AURORA-2'])
    agent.clock.slept.clear()
    agent.run(once=True)
    assert command(hub, second['id'])['pause_seconds'] == 60
    assert agent.clock.slept[0] == 60
    status = [item for item in queue.agents(hub)['items'] if item['agent'] == 'jira'][0]
    assert status['agent_version'] == agent.version and status['last_call_at']


def work_batch(hub, cloud: bool) -> dict:
    """Two new issues (one assigned to petrov, named as the mirror names him), a link and a comment
    between them, a transition, an edit and a download."""
    return queue.create_batch(hub, title='Работа', author='test', project='AWPCA', commands=[
        {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'temp_key': 'new:1',
                                            'summary': 'Новая выгрузка', 'labels': ['AWPCA'],
                                            'priority': 'high', 'planned_start': '2026-12-10',
                                            'epic_key': 'AURORA-1',
                                            'assignee': person_in_mirror('petrov', cloud)}},
        {'type': 'ensure_issue', 'params': {'issue_type': 'bug', 'temp_key': 'new:2',
                                            'summary': 'Проверить выгрузку', 'labels': ['AWPCA']}},
        {'type': 'ensure_link', 'params': {'source_key': 'new:1', 'target_key': 'new:2',
                                           'link_type': 'blocks'}, 'depends_on': 2},
        {'type': 'add_comment', 'params': {'key': 'new:1', 'body': 'Создано агентом.'},
         'depends_on': 1},
        {'type': 'transition', 'params': {'key': 'AURORA-2', 'status': 'готово'}},
        {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'key': 'AURORA-3',
                                            'summary': 'Переименованная задача 3',
                                            'priority': 'low'}},
        {'type': 'fetch_attachment', 'params': {'attachment_id': '4'}},
    ])


def check_the_batch_landed_once(hub, model, app, batch, *, again: bool = False) -> dict:
    """``again``: every command was delivered twice (the transition then finds its status)."""
    commands = queue.batch(hub, batch['id'])['commands']
    statuses = ['done'] * 7
    if again:
        statuses[4] = 'confirmed_by_state'
    assert [item['status'] for item in commands] == statuses, [item['error'] for item in commands]
    first, second = commands[0]['result']['key'], commands[1]['result']['key']
    assert (first, second) == ('AURORA-61', 'AURORA-62')
    created = model.created_issues()
    assert sorted(created) == [first, second]
    assert created[first]['priority'] == 'Высокий'                  # priority_map, not «high»
    assert created[first]['planned_start'] == '2026-12-10'
    assert created[first]['epic_key'] == 'AURORA-1' and created[first]['assignee'] == 'petrov'
    assert created[second]['issue_type'] == 'Ошибка'
    assert {'type': 'Blocks', 'direction': 'outward', 'key': second} in model.issue(first)['links']
    assert [comment['body'] for comment in model.issue(first)['comments']] == ['Создано агентом.']
    assert model.issue('AURORA-2')['status'] == 'Готово'
    assert (model.issue('AURORA-3')['priority'], model.issue('AURORA-3')['summary']) == \
        ('Низкий', 'Переименованная задача 3')
    content = model.attachment('4')
    digest = hashlib.sha256(content).hexdigest()
    assert commands[6]['result'] == {'sha256': digest, 'size': len(content)}
    assert (hub.files_dir / digest).read_bytes() == content
    # every write once
    writes = [(request.method, request.path) for request in app.writes()]
    assert writes.count(('POST', '/rest/api/2/issue')) == 2
    assert writes.count(('POST', '/rest/api/2/issueLink')) == 1
    assert writes.count(('POST', f'/rest/api/2/issue/{first}/comment')) == 1
    assert writes.count(('POST', '/rest/api/2/issue/AURORA-2/transitions')) == 1
    # an edit sent again sets the same values: harmless, and Jira records no second change
    assert writes.count(('PUT', '/rest/api/2/issue/AURORA-3')) == (2 if again else 1)
    edits = [item for item in model.history('AURORA-3') if int(item['history_id']) >= 9_000_000_000]
    assert [(item['field_name'], item['to_string']) for item in edits] == [
        ('summary', 'Переименованная задача 3'), ('priority', 'Низкий')]
    for key in (first, second):
        assert model.property(f'issue/{key}', 'sdlc-hub') == {
            'command_id': commands[0 if key == first else 1]['id']}
    return {'first': first, 'second': second, 'commands': commands}


@pytest.mark.parametrize('world', DEPLOYMENTS, indirect=True)
def test_a_batch_lands_in_jira_once_and_the_next_refresh_shows_it(world):
    hub, model, app, agent = world
    refresh(hub, jql=projects.base_jql(hub))
    agent.run(once=True)
    batch = work_batch(hub, app.cloud)
    agent.run(once=True)
    landed = check_the_batch_landed_once(hub, model, app, batch)
    first, second = landed['first'], landed['second']
    # the hub's read-your-writes refresh ran: the mirror shows what the batch wrote
    followups = [item for item in queue.batches(hub)['items'] if item['title'] == 'Обновление после записи']
    assert [item['status'] for item in followups] == ['done']
    mirror = stored(hub)
    assert mirror['issues'][first][6] == 'Высокий' and mirror['issues'][first][19] == 0
    assert (first, second, 'Blocks') in mirror['links']
    assert any(row[0] == first and row[5] == 'Создано агентом.' for row in mirror['comments'])
    assert mirror['issues']['AURORA-2'][5] == 'Готово'
    assert mirror['issues']['AURORA-3'][6] == 'Низкий'
    assert rows(hub, 'SELECT file FROM attachment_file WHERE attachment_id = ?', ('4',)) == [
        (landed['commands'][6]['result']['sha256'],)]
    # nothing more to do: no second write
    writes = len(app.writes())
    agent.run(once=True)
    assert len(app.writes()) == writes


class LosingAgent(Agent):
    """An agent whose first report of every command is lost on the way (the hub never sees it)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.lost: set[int] = set()

    def report(self, command, status, result, error):
        if command['id'] not in self.lost:
            self.lost.add(command['id'])
            return
        super().report(command, status, result, error)


def losing(agent: Agent, index_lag: float = 0.0) -> LosingAgent:
    return LosingAgent(agent.hub, agent.jira, clock=agent.clock, poll_interval=0.0,
                       index_lag=index_lag)


@pytest.mark.parametrize('world', DEPLOYMENTS, indirect=True)
def test_a_redelivered_batch_writes_nothing_twice(world):
    hub, model, app, agent = world
    refresh(hub, jql=projects.base_jql(hub))
    agent.run(once=True)
    batch = work_batch(hub, app.cloud)
    faulty = losing(agent)
    faulty.run(once=True)
    landed = check_the_batch_landed_once(hub, model, app, batch, again=True)
    assert all(item['deliveries'] == 2 for item in landed['commands'])
    assert landed['commands'][2]['result'] == {'created': False, 'link_type': 'Blocks'}
    comment_ids = [comment['id'] for comment in model.issue(landed['first'])['comments']]
    assert landed['commands'][3]['result'] == {'comment_id': comment_ids[0]}


def test_a_transition_delivered_again_to_where_the_issue_is_is_confirmed_by_state(hub, hub_url,
                                                                                   jira_site):
    configure(hub)
    model, app, server = jira_site('Server')
    agent = make_agent(hub, hub_url, server.url, 'Server')
    status = model.issue('AURORA-5')['status']
    target = next(name for name in model.transitions('AURORA-5'))
    batch = queue.create_batch(hub, title='Переход', author='test', commands=[
        {'type': 'transition', 'params': {'key': 'AURORA-5', 'status': target}}])
    losing(agent).run(once=True)
    item = queue.batch(hub, batch['id'])['commands'][0]
    assert (item['status'], item['result']) == ('confirmed_by_state', {'from': target, 'to': target})
    assert model.issue('AURORA-5')['status'] == target != status
    assert len(app.writes('/transitions')) == 1


def test_an_unreachable_status_fails_naming_it_and_the_reachable_ones(hub, hub_url, jira_site):
    configure(hub)
    model, app, server = jira_site('Server')
    agent = make_agent(hub, hub_url, server.url, 'Server')
    batch = queue.create_batch(hub, title='Переход', author='test', commands=[
        {'type': 'transition', 'params': {'key': 'AURORA-5', 'status': 'Отложена'}}])
    agent.run(once=True)
    item = queue.batch(hub, batch['id'])['commands'][0]
    current = model.issue('AURORA-5')['status']
    assert item['status'] == 'failed'
    assert item['error'].startswith(f'статус «Отложена» недостижим для AURORA-5 из «{current}»; '
                                    'доступны: ')
    assert all(f'«{name}»' in item['error'] for name in model.transitions('AURORA-5'))
    assert app.writes() == []


def test_search_index_lag_is_waited_for_before_creating_again(hub, hub_url, jira_site):
    configure(hub)
    clock = SteppingClock()
    model, app, server = jira_site('Cloud', clock=lambda: clock.elapsed)
    app.lag = 3.0  # a new issue reaches the search index 3 s after its creation
    batch = queue.create_batch(hub, title='Задача', author='test', commands=[
        {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'summary': 'Одна задача'}}])
    agent = make_agent(hub, hub_url, server.url, 'Cloud', clock=clock)
    losing(agent, index_lag=5.0).run(once=True)
    item = queue.batch(hub, batch['id'])['commands'][0]
    assert item['status'] == 'done' and list(model.created_issues()) == [item['result']['key']]
    assert 5.0 in clock.slept


def test_without_waiting_for_the_index_a_redelivery_would_create_twice(hub, hub_url, jira_site):
    """The control of the test above: the wait is what keeps the second issue out."""
    configure(hub)
    clock = SteppingClock()
    model, app, server = jira_site('Cloud', clock=lambda: clock.elapsed)
    app.lag = 3.0
    queue.create_batch(hub, title='Задача', author='test', commands=[
        {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'summary': 'Одна задача'}}])
    agent = make_agent(hub, hub_url, server.url, 'Cloud', clock=clock)
    losing(agent, index_lag=0.0).run(once=True)
    assert len(model.created_issues()) == 2


@pytest.mark.parametrize('world', DEPLOYMENTS, indirect=True)
def test_a_keys_refresh_keeps_neighbours_neighbours_and_notes_deleted_issues(world):
    hub, model, app, agent = world
    refresh(hub, jql=projects.base_jql(hub))
    agent.run(once=True)
    own = model.search(projects.base_jql(hub))
    neighbour = neighbours_of(model, own)[0]
    model.delete_issue('AURORA-8')
    item = refresh(hub, keys=[neighbour, 'AURORA-2', 'AURORA-8'])
    agent.run(once=True)
    done = command(hub, item['id'])
    assert done['status'] == 'done' and done['result']['missing'] == ['AURORA-8']
    flags = dict(rows(hub, 'SELECT key, neighbor FROM issue WHERE key IN (?, ?)',
                      (neighbour, own[0])))
    assert flags == {neighbour: 1, own[0]: 0}


@pytest.mark.parametrize('world', DEPLOYMENTS, indirect=True)
def test_a_link_deleted_in_jira_leaves_the_mirror_with_the_next_refresh(world):
    hub, model, app, agent = world
    refresh(hub, jql=projects.base_jql(hub))
    agent.run(once=True)
    assert ('AURORA-3', 'AURORA-4', 'Blocks') in stored(hub)['links']
    model.unlink('AURORA-3', 'AURORA-4', 'Blocks')
    refresh(hub, keys=['AURORA-3', 'AURORA-4'])
    agent.run(once=True)
    assert ('AURORA-3', 'AURORA-4', 'Blocks') not in stored(hub)['links']


def test_settings_changed_meanwhile_are_read_before_the_command(hub, hub_url, jira_site):
    configure(hub)
    model, app, server = jira_site('Server')
    agent = make_agent(hub, hub_url, server.url, 'Server')
    agent.connect()
    settings.update_settings(hub, {'link_types': {'blocks': 'Blocks', 'related': 'Relates'}})
    batch = queue.create_batch(hub, title='Связь', author='test', commands=[
        {'type': 'ensure_link', 'params': {'source_key': 'AURORA-10', 'target_key': 'AURORA-20',
                                           'link_type': 'related'}}])
    agent.run(once=True)
    item = queue.batch(hub, batch['id'])['commands'][0]
    assert (item['status'], item['result']) == ('done', {'created': True, 'link_type': 'Relates'})
    assert agent.settings_version == settings.client_settings(hub)['settings_version']


def test_a_user_without_a_visible_email_is_named_by_display_name_on_cloud(hub, hub_url, jira_site):
    configure(hub)
    model, app, server = jira_site('Cloud')
    agent = make_agent(hub, hub_url, server.url, 'Cloud')
    key = next(key for key in model.search('labels in ("AWPCA", "ORION")')
               if model.issue(key)['assignee'] == 'sidorova')
    refresh(hub, keys=[key])
    agent.run(once=True)
    assert rows(hub, 'SELECT assignee FROM issue WHERE key = ?', (key,)) == [('Анна Сидорова',)]


def test_an_issue_jira_does_not_have_fails_the_write_with_jiras_message(hub, hub_url, jira_site):
    configure(hub)
    model, app, server = jira_site('Server')
    agent = make_agent(hub, hub_url, server.url, 'Server')
    batch = queue.create_batch(hub, title='Комментарий', author='test', commands=[
        {'type': 'add_comment', 'params': {'key': 'AURORA-999', 'body': 'нет такой'}}])
    agent.run(once=True)
    item = queue.batch(hub, batch['id'])['commands'][0]
    assert item['status'] == 'failed' and 'Jira ответила 404' in item['error']


def test_a_jira_time_the_hub_cannot_read_is_sent_as_is_and_counted_in_the_result(hub, hub_url,
                                                                                 jira_site):
    configure(hub)
    model, app, server = jira_site('Server')
    model._fields['AURORA-3'] = {'updated': '2026-02-30T10:00:00.000+0300'}  # no such day
    item = refresh(hub, keys=['AURORA-3'])
    make_agent(hub, hub_url, server.url, 'Server').run(once=True)
    done = command(hub, item['id'])
    assert done['status'] == 'done' and done['result']['unparsed_times'] == 1
    assert rows(hub, "SELECT jira_updated FROM issue WHERE key = 'AURORA-3'") == [
        ('2026-02-30T10:00:00.000+0300',)]
