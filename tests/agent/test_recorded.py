"""The agent against nothing but recorded Jira answers (``fixtures/``, in the shapes of Atlassian's
documentation): a replay server that knows no JQL, no paging logic and no writes hands out the
recorded page for each request. A full refresh still fills the mirror exactly as the mapping table
says — pages by ``nextPageToken``, the changelog and comments the search cut short read page by
page, the neighbour read by key, the board named through its statuses."""
from __future__ import annotations

import urllib.parse

import orjson
import pytest

from hublib import projects, queue, settings
from hubweb.demo.jira_rest import Server
from hubweb.jira_agent import build_agent
from tests.agent.conftest import SteppingClock
from tests.agent.fixtures import SETTINGS, recorded
from tests.agent.mirror import rows

TOKEN = 'recorded-token'
USER = 'sdlc-agent@aurora.example'


class Replay:
    """A WSGI app answering each known request with its recorded answer; 404 otherwise."""

    def __init__(self, dialect: str = 'cloud'):
        self.dialect = dialect
        self.requests: list[tuple[str, str, dict]] = []

    def answer(self, method: str, path: str, params: dict):
        jql = params.get('jql', '')
        if method != 'GET':
            return 405, {'errorMessages': ['запись в записанную Jira']}
        if path == '/rest/api/2/serverInfo':
            return 200, recorded(f'serverinfo_{self.dialect}')
        if path == '/rest/api/2/myself':
            return 200, recorded(f'myself_{self.dialect}')
        if path == '/rest/api/2/search' and self.dialect == 'dc':
            return 200, recorded('dc_search')
        if path == '/rest/api/2/search/jql' and 'key in (ORBIT-4)' in jql:
            return 200, recorded('cloud_search_neighbours')
        if path == '/rest/api/2/search/jql' and jql.startswith('project = AURORA'):
            page = 'cloud_search_jql_2' if params.get('nextPageToken') == 'CAEaAggB' else 'cloud_search_jql'
            return 200, recorded(page)
        if path == '/rest/api/2/issue/AURORA-17/changelog':
            return 200, recorded('cloud_changelog_page')
        if path == '/rest/api/2/issue/AURORA-17/comment':
            return 200, recorded('cloud_comments_page')
        if path == '/rest/api/2/status':
            return 200, recorded('statuses')
        if path == '/rest/agile/1.0/board/4216':
            return 200, recorded('board_scrum')
        if path == '/rest/agile/1.0/board/4216/configuration':
            return 200, recorded('board_configuration')
        if path == '/rest/agile/1.0/board/4216/sprint':
            return 200, recorded('board_sprints')
        return 404, {'errorMessages': ['не записано']}

    def __call__(self, environ, start_response):
        method, path = environ['REQUEST_METHOD'], environ['PATH_INFO']
        params = dict(urllib.parse.parse_qsl(environ.get('QUERY_STRING') or ''))
        self.requests.append((method, path, params))
        status, body = self.answer(method, path, params)
        raw = orjson.dumps(body)
        start_response(f'{status} X', [('Content-Type', 'application/json'),
                                       ('Content-Length', str(len(raw)))])
        return [raw]


@pytest.fixture
def replay():
    servers = []

    def start(dialect: str):
        app = Replay(dialect)
        servers.append(Server(app))
        return app, servers[-1].url
    yield start
    for server in servers:
        server.close()


def full_refresh(hub, hub_url: str, url: str, user: str | None) -> dict:
    settings.update_settings(hub, {name: value for name, value in SETTINGS.items()
                                   if name not in ('base_jql', 'projects')})
    projects.create_project(hub, 'AWPCA', 'Аврора', 4216)
    batch = queue.create_batch(hub, title='Загрузка', author='test', commands=[
        {'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}}])
    agent = build_agent(hub_url, settings.tokens(hub)['agent'], url, TOKEN, jira_user=user,
                        clock=SteppingClock(), poll_interval=0)
    agent.run(once=True)
    return queue.batch(hub, batch['id'])['commands'][0]


def test_a_full_refresh_from_recorded_cloud_answers_fills_the_mirror(hub, hub_url, replay):
    app, url = replay('cloud')
    item = full_refresh(hub, hub_url, url, USER)
    assert item['status'] == 'done', item['error']
    assert item['result'] == {'issues': 4, 'links': 4,
                              'history': {'issues': 4, 'changes': 6, 'incomplete': []}}
    assert item['jira_calls'] == len(app.requests) - 2  # all but serverInfo and myself
    assert rows(hub, 'SELECT key, neighbor, assignee, reporter, epic_key, sprint, story_points '
                     'FROM issue ORDER BY key') == [
        ('AURORA-17', 0, 'ivanov@aurora.example', 'Анна Сидорова', 'AURORA-1', 'Спринт 2', 5.0),
        ('AURORA-18', 0, None, 'ivanov@aurora.example', None, None, None),
        ('AURORA-19', 0, 'Анна Сидорова', None, None, 'Спринт 2', 1.0),
        ('ORBIT-4', 1, None, 'ivanov@aurora.example', None, None, None)]
    assert rows(hub, 'SELECT source_key, target_key, link_type FROM issue_link ORDER BY 1, 2') == [
        ('AURORA-17', 'AURORA-18', 'Blocks'), ('ORBIT-4', 'AURORA-17', 'Relates')]
    assert rows(hub, "SELECT comment_id, author FROM issue_comment WHERE key = 'AURORA-17' "
                     'ORDER BY 1') == [('10101', 'Анна Сидорова'), ('10102', 'ivanov@aurora.example')]
    assert rows(hub, 'SELECT history_id, seq, field, field_id FROM issue_change ORDER BY 1, 2') == [
        ('31001', 0, 'status', 'status'), ('31001', 1, 'assignee', 'assignee'),
        ('31002', 0, 'Sprint', 'customfield_10020'), ('31002', 1, 'planned_start', 'customfield_10015'),
        ('31003', 0, 'status', 'status'), ('31010', 0, 'Флажок', 'customfield_10021')]
    assert rows(hub, 'SELECT key, sprint_id FROM issue_sprint ORDER BY 1, 2') == [
        ('AURORA-17', 101), ('AURORA-17', 102), ('AURORA-19', 102)]
    assert rows(hub, 'SELECT board_id, type, columns FROM jira_board') == [
        (4216, 'scrum', '[{"name": "К выполнению", "statuses": ["Открыта"]}, {"name": "В работе", '
                        '"statuses": ["В работе", "На проверке"]}, {"name": "Готово", "statuses": '
                        '["Готово", "Снято"]}]')]
    assert rows(hub, 'SELECT sprint_id, state FROM jira_sprint ORDER BY 1') == [
        (101, 'closed'), (102, 'active'), (103, 'future')]
    searches = [params for method, path, params in app.requests if path.endswith('/search/jql')]
    assert all(params['fields'].startswith('summary,description,issuetype') for params in searches)
    assert searches[0]['expand'] == 'changelog' and 'nextPageToken' not in searches[0]


def test_a_full_refresh_from_recorded_data_center_answers_fills_the_mirror(hub, hub_url, replay):
    app, url = replay('dc')
    item = full_refresh(hub, hub_url, url, None)
    assert item['status'] == 'done', item['error']
    assert item['result'] == {'issues': 2, 'links': 2,
                              'history': {'issues': 2, 'changes': 3, 'incomplete': []}}
    assert rows(hub, 'SELECT key, neighbor, assignee, reporter, epic_key, sprint FROM issue '
                     'ORDER BY key') == [
        ('AURORA-17', 0, 'ivanov', 'sidorova', 'AURORA-1', 'Спринт 2'),
        ('AURORA-18', 0, None, 'ivanov', None, None)]
    assert rows(hub, 'SELECT history_id, seq, field, field_id, author FROM issue_change '
                     'ORDER BY 1, 2') == [
        ('31001', 0, 'status', None, 'sidorova'), ('31001', 1, 'Sprint', None, 'sidorova'),
        ('31003', 0, 'status', None, 'ivanov')]
    assert rows(hub, 'SELECT key, sprint_id FROM issue_sprint ORDER BY 1, 2') == [
        ('AURORA-17', 101), ('AURORA-17', 102)]
    searches = [params for method, path, params in app.requests if path == '/rest/api/2/search']
    assert [params['startAt'] for params in searches] == ['0']  # total 2: one page
