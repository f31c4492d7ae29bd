"""Mirror through HTTP: agent ingest (contract §8.1–8.3) and interfaces' reads (§10).

Every Scenario of the spec sections «Зеркало задачи», «Журнал изменений задач», «Отметка журнала в
журнале синхронизаций», «Доски, спринты и членство задач», «Проекты» (slices) is a test here.
A refresh goes through the real queue protocol over HTTP: the client queues it with
``POST /batches``, the jira agent takes it with ``POST /agent/claim``, pushes ``/agent/state`` and
``/agent/history``, and reports it with ``POST /agent/commands/{id}/report``.
"""
from __future__ import annotations

import hashlib

import pytest

from hublib import projects, settings

BASE_JQL = 'project = AURORA AND labels in ("AWPCA")'


@pytest.fixture
def aurora(hub):
    settings.update_settings(hub, {'project_key': 'AURORA',
                                   'field_ids': {'planned_end': 'customfield_10201'}})
    projects.create_project(hub, 'AWPCA', 'АРМ КА', board_id=4216)
    return hub


class Protocol:
    """The queue's HTTP roads: a client queues a refresh, the jira agent claims and reports it."""

    def __init__(self, client, agent_headers, client_headers):
        self.client = client
        self.agent_headers = agent_headers
        self.client_headers = client_headers

    def queue_refresh(self, params: dict) -> int:
        """``POST /batches`` (client) with one refresh; the queued command's id."""
        response = self.client.simulate_post('/batches', headers=self.client_headers, json={
            'title': 'Обновление', 'author': 'test',
            'commands': [{'type': 'refresh', 'params': params}]})
        assert response.status_code == 201, response.json
        [command] = response.json['commands']
        assert (command['type'], command['params'], command['status']) == ('refresh', params,
                                                                            'queued')
        return command['id']

    def claim(self) -> dict | None:
        """``POST /agent/claim`` (agent); the delivered command or None."""
        response = self.client.simulate_post('/agent/claim', headers=self.agent_headers,
                                             json={'agent': 'jira'})
        assert response.status_code == 200, response.json
        return response.json['command']

    def claimed_refresh(self, params: dict) -> int:
        """A refresh queued and delivered for the first time (claim opens its sync_run)."""
        command_id = self.queue_refresh(params)
        delivered = self.claim()
        assert delivered is not None, 'the claim delivered nothing'
        assert (delivered['id'], delivered['type'], delivered['params'], delivered['deliveries']) \
            == (command_id, 'refresh', params, 1)
        return command_id

    def report(self, command_id: int, status: str = 'done', result: dict | None = None) -> dict:
        """``POST /agent/commands/{id}/report`` (agent) of a claimed command."""
        response = self.client.simulate_post(
            f'/agent/commands/{command_id}/report', headers=self.agent_headers,
            json={'agent': 'jira', 'status': status, 'result': result, 'error': None,
                  'jira_calls': 4, 'rate_limited': 0})
        assert response.status_code == 200, response.json
        assert (response.json['id'], response.json['status'], response.json['late']) == (
            command_id, status, False)
        return response.json

    def command(self, command_id: int) -> dict:
        response = self.client.simulate_get(f'/commands/{command_id}', headers=self.client_headers)
        assert response.status_code == 200, response.json
        return response.json


@pytest.fixture
def protocol(client, agent_headers, client_headers):
    return Protocol(client, agent_headers, client_headers)


def issue(key: str, **fields) -> dict:
    data = {'key': key, 'id': str(10000 + int(key.split('-')[1])), 'issue_type': 'Задача',
            'summary': f'Задача {key}', 'status': 'В работе', 'labels': ['AWPCA'],
            'updated': '2026-10-22T09:00:00.000+0300', 'created': '2026-10-01T10:00:00.000+0300',
            'links': []}
    data.update(fields)
    return data


def post_state(client, headers, command_id, issues, status=200):
    response = client.simulate_post('/agent/state', headers=headers, json={
        'agent': 'jira', 'command_id': command_id, 'issues': issues})
    assert response.status_code == status, response.json
    return response.json


def card(client, headers, key):
    response = client.simulate_get(f'/issues/{key}', headers=headers)
    assert response.status_code == 200, response.json
    return response.json


def rows(hub, sql, params=()):
    return [tuple(row) for row in hub.db.execute_sql(sql, params).fetchall()]


# --- «Зеркало задачи» --------------------------------------------------------------------------

def test_scenario_state_replaces_links(aurora, protocol, client, agent_headers, client_headers):
    hub = aurora
    command = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, command, [
        issue('AURORA-1', links=[{'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-7'}]),
        issue('AURORA-5', links=[{'type': 'Relates', 'direction': 'outward', 'key': 'AURORA-1'}]),
    ])
    result = post_state(client, agent_headers, command, [issue('AURORA-1', links=[
        {'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-2'},
        {'type': 'Cloners', 'direction': 'outward', 'key': 'AURORA-3'}])])
    assert result == {'issues': 1, 'links': 2, 'unparsed_times': 0}
    assert rows(hub, 'SELECT * FROM issue_link ORDER BY source_key, target_key') == [
        ('AURORA-1', 'AURORA-2', 'Blocks'), ('AURORA-1', 'AURORA-3', 'Cloners'),
        ('AURORA-5', 'AURORA-1', 'Relates')]
    got = card(client, client_headers, 'AURORA-1')['links']
    # each link carries the linked issue's summary and status; null when it is not mirrored
    assert got == {'outward': [{'type': 'Blocks', 'key': 'AURORA-2', 'summary': None, 'status': None},
                               {'type': 'Cloners', 'key': 'AURORA-3', 'summary': None, 'status': None}],
                   'inward': [{'type': 'Relates', 'key': 'AURORA-5', 'summary': 'Задача AURORA-5',
                               'status': 'В работе'}]}


def test_inward_link_inserted_only_when_missing(aurora, protocol, client, agent_headers):
    hub = aurora
    command = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, command, [issue('AURORA-1', links=[
        {'type': 'Blocks', 'direction': 'inward', 'key': 'AURORA-8'}])])
    assert rows(hub, 'SELECT * FROM issue_link') == [('AURORA-8', 'AURORA-1', 'Blocks')]
    # X's second state without the inward link: the row belongs to AURORA-8 and stays.
    post_state(client, agent_headers, command, [issue('AURORA-1', links=[])])
    assert rows(hub, 'SELECT * FROM issue_link') == [('AURORA-8', 'AURORA-1', 'Blocks')]
    post_state(client, agent_headers, command, [issue('AURORA-8', links=[])])
    assert rows(hub, 'SELECT * FROM issue_link') == []


def test_scenario_neighbor_issue(aurora, protocol, client, agent_headers, clock):
    hub = aurora
    first = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, first, [
        issue('AURORA-1', links=[{'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-50'}]),
        issue('AURORA-50', labels=['OTHER'], neighbor=True)])
    protocol.report(first)
    assert rows(hub, 'SELECT key, neighbor FROM issue ORDER BY key') == [
        ('AURORA-1', 0), ('AURORA-50', 1)]
    clock.advance(minutes=10)
    second = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, second, [issue('AURORA-1'), issue('AURORA-50')])
    protocol.report(second)
    assert rows(hub, 'SELECT key, neighbor FROM issue ORDER BY key') == [
        ('AURORA-1', 0), ('AURORA-50', 0)]


def test_full_run_marks_issues_it_did_not_write(aurora, protocol, client, agent_headers, clock):
    hub = aurora
    first = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, first, [issue('AURORA-1'), issue('AURORA-2')])
    protocol.report(first)
    clock.advance(minutes=10)
    keys_run = protocol.claimed_refresh({'keys': ['AURORA-2']})
    post_state(client, agent_headers, keys_run, [issue('AURORA-2')])
    protocol.report(keys_run)  # a keys refresh is never a full run: no marking
    assert rows(hub, 'SELECT key, neighbor FROM issue ORDER BY key') == [
        ('AURORA-1', 0), ('AURORA-2', 0)]
    clock.advance(minutes=10)
    full = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, full, [issue('AURORA-1')])
    protocol.report(full)
    assert rows(hub, 'SELECT key, neighbor FROM issue ORDER BY key') == [
        ('AURORA-1', 0), ('AURORA-2', 1)]


def test_scenario_empty_full_run(aurora, protocol, client, agent_headers, clock):
    hub = aurora
    first = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, first, [issue('AURORA-1'),
                                              issue('AURORA-50', neighbor=True)])
    protocol.report(first)
    clock.advance(minutes=10)
    # AURORA-1 was written before this run started: a marking run would make it a neighbour.
    empty = protocol.claimed_refresh({'jql': BASE_JQL})
    clock.advance(minutes=1)
    protocol.report(empty, 'done', {'history': {'issues': 0, 'changes': 0, 'incomplete': []}})
    assert rows(hub, 'SELECT key, neighbor FROM issue ORDER BY key') == [
        ('AURORA-1', 0), ('AURORA-50', 1)]
    assert rows(hub, 'SELECT issues_count, started_at, finished_at FROM sync_run '
                     'WHERE command_id = ?', (empty,)) == [
        (0, '2026-11-30T10:10:00+00:00', '2026-11-30T10:11:00+00:00')]


def comment(comment_id: str, body: str = 'текст') -> dict:
    return {'id': comment_id, 'author': 'ivanov', 'created': '2026-10-22T13:05:11.000+0300',
            'updated': '2026-10-22T13:05:11.000+0300', 'body': body}


def test_scenario_comment_deleted_in_jira(aurora, protocol, client, agent_headers, client_headers):
    hub = aurora
    command = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, command,
               [issue('AURORA-1', comments=[comment('101'), comment('102')])])
    post_state(client, agent_headers, command,
               [issue('AURORA-1', comments=[comment('102', 'исправлено')])])
    assert rows(hub, "SELECT comment_id, body, created, created_at FROM issue_comment "
                     "WHERE key = 'AURORA-1'") == [
        ('102', 'исправлено', '2026-10-22T13:05:11.000+0300', '2026-10-22T10:05:11+00:00')]
    assert [c['comment_id'] for c in card(client, client_headers, 'AURORA-1')['comments']] == ['102']


def test_scenario_state_from_agent_before_v10(aurora, protocol, client, agent_headers):
    hub = aurora
    command = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, command, [
        issue('AURORA-1', comments=[comment('101'), comment('102'), comment('103')])])
    v9 = issue('AURORA-1', summary='Новое название', status='Готово')
    post_state(client, agent_headers, command, [v9])
    assert rows(hub, "SELECT summary, status FROM issue WHERE key = 'AURORA-1'") == [
        ('Новое название', 'Готово')]
    assert rows(hub, "SELECT comment_id FROM issue_comment ORDER BY comment_id") == [
        ('101',), ('102',), ('103',)]


def attachment(attachment_id: str, filename: str, size: int = 100) -> dict:
    return {'id': attachment_id, 'filename': filename, 'size': size, 'mime_type': 'application/pdf',
            'author': 'ivanov', 'created': '2026-10-22T09:00:00.000+0300'}


def test_scenario_attachments_in_state(aurora, protocol, client, agent_headers, client_headers):
    hub = aurora
    command = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, command, [issue('AURORA-1', attachments=[
        attachment('1', 'a.pdf'), attachment('2', 'b.pdf')])])
    with hub.write():
        hub.db.execute_sql("INSERT INTO attachment_file VALUES ('1', ?, 100, ?)",
                           ('a' * 64, hub.now()))
    post_state(client, agent_headers, command, [issue('AURORA-1', attachments=[
        attachment('2', 'b-v2.pdf', 200), attachment('3', 'c.pdf')])])
    assert rows(hub, 'SELECT attachment_id, key, filename, size, created, created_at '
                     'FROM issue_attachment ORDER BY attachment_id') == [
        ('2', 'AURORA-1', 'b-v2.pdf', 200, '2026-10-22T09:00:00.000+0300',
         '2026-10-22T06:00:00+00:00'),
        ('3', 'AURORA-1', 'c.pdf', 100, '2026-10-22T09:00:00.000+0300',
         '2026-10-22T06:00:00+00:00')]
    assert rows(hub, 'SELECT attachment_id, file FROM attachment_file') == [('1', 'a' * 64)]
    got = card(client, client_headers, 'AURORA-1')['attachments']
    assert [(a['attachment_id'], a['filename'], a['state'], a['error']) for a in got] == [
        ('2', 'b-v2.pdf', 'none', None), ('3', 'c.pdf', 'none', None)]


def test_scenario_state_from_agent_before_v14(aurora, protocol, client, agent_headers):
    hub = aurora
    command = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, command, [issue('AURORA-1', attachments=[
        attachment('1', 'a.pdf'), attachment('2', 'b.pdf')])])
    post_state(client, agent_headers, command, [issue('AURORA-1', summary='v13')])
    assert rows(hub, "SELECT summary FROM issue WHERE key = 'AURORA-1'") == [('v13',)]
    assert rows(hub, 'SELECT attachment_id FROM issue_attachment ORDER BY attachment_id') == [
        ('1',), ('2',)]


def test_scenario_attachment_list_updated_keeps_ready(aurora, protocol, client, agent_headers,
                                                      client_headers):
    hub = aurora
    command = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, command, [issue('AURORA-1', attachments=[
        attachment('31337', 'a.pdf')])])
    content = b'%PDF-1.4 test'
    sha = hashlib.sha256(content).hexdigest()
    (hub.files_dir / sha).write_bytes(content)
    with hub.write():
        hub.db.execute_sql("INSERT INTO attachment_file VALUES ('31337', ?, ?, ?)",
                           (sha, len(content), hub.now()))
    assert card(client, client_headers, 'AURORA-1')['attachments'][0]['state'] == 'ready'
    post_state(client, agent_headers, command, [issue('AURORA-1', attachments=[
        attachment('31337', 'a.pdf')])])
    assert card(client, client_headers, 'AURORA-1')['attachments'][0]['state'] == 'ready'


def test_scenario_note_survives_refresh(aurora, protocol, client, agent_headers, client_headers):
    hub = aurora
    with hub.write():
        hub.db.execute_sql("INSERT INTO issue_note (key, work_kind, updated_at, updated_by) "
                           "VALUES ('AURORA-1', 'Аналитика', '2026-11-01T00:00:00+00:00', 'ivanov')")
    command = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, command, [issue('AURORA-1')])
    post_state(client, agent_headers, command, [issue('AURORA-1', summary='снова')])
    assert rows(hub, 'SELECT key, work_kind, updated_at FROM issue_note') == [
        ('AURORA-1', 'Аналитика', '2026-11-01T00:00:00+00:00')]
    note = card(client, client_headers, 'AURORA-1')['note']
    assert note['work_kind'] == 'Аналитика' and note['updated_by'] == 'ivanov'


def test_issue_fields_are_stored_as_sent(aurora, protocol, client, agent_headers, client_headers):
    hub = aurora
    command = protocol.claimed_refresh({'jql': BASE_JQL})
    full = issue('AURORA-1', description='h1. Описание', priority='Средний', assignee='ivanov',
                 reporter='petrov', duedate='2026-12-01', planned_end='2026-12-20',
                 epic_key='AURORA-9', sprint='Спринт 2', rank='0|i0000f:', story_points=3,
                 sprint_ids=[101])
    post_state(client, agent_headers, command, [full])
    got = card(client, client_headers, 'AURORA-1')
    assert {k: got[k] for k in ('key', 'id', 'issue_type', 'summary', 'description', 'status',
                                'priority', 'assignee', 'reporter', 'duedate', 'planned_start',
                                'planned_end', 'epic_key', 'labels', 'sprint', 'rank',
                                'story_points', 'jira_updated', 'fetched_at', 'neighbor',
                                'created', 'note')} == {
        'key': 'AURORA-1', 'id': '10001', 'issue_type': 'Задача', 'summary': 'Задача AURORA-1',
        'description': 'h1. Описание', 'status': 'В работе', 'priority': 'Средний',
        'assignee': 'ivanov', 'reporter': 'petrov', 'duedate': '2026-12-01',
        'planned_start': None, 'planned_end': '2026-12-20', 'epic_key': 'AURORA-9',
        'labels': ['AWPCA'], 'sprint': 'Спринт 2', 'rank': '0|i0000f:', 'story_points': 3.0,
        'jira_updated': '2026-10-22T09:00:00.000+0300', 'fetched_at': '2026-11-30T10:00:00+00:00',
        'neighbor': False, 'created': '2026-10-01T10:00:00.000+0300', 'note': None}
    assert got['sprints'] == [{'sprint_id': 101, 'name': None, 'state': None}]


@pytest.mark.parametrize('bad, field', [
    ({'summary': 'нет ключа'}, 'issues[1].key'),
    ({'key': 'AURORA-2', 'labels': 'AWPCA'}, 'issues[1].labels'),
    ({'key': 'AURORA-2', 'summary': 5}, 'issues[1].summary'),
    ({'key': 'AURORA-2', 'links': [{'type': 'Blocks', 'direction': 'up', 'key': 'A-1'}]},
     'issues[1].links[0].direction'),
    ({'key': 'AURORA-2', 'comments': [{'body': 'без id'}]}, 'issues[1].comments[0].id'),
    ({'key': 'AURORA-2', 'attachments': [{'id': '1', 'size': -1}]}, 'issues[1].attachments[0].size'),
    ({'key': 'AURORA-2', 'sprint_ids': ['101']}, 'issues[1].sprint_ids[0]'),
    ({'key': 'AURORA-2', 'story_points': 'три'}, 'issues[1].story_points'),
    ({'key': 'AURORA-2', 'neighbor': 'yes'}, 'issues[1].neighbor'),
    ('AURORA-2', 'issues[1]'),
])
def test_malformed_issue_is_422_and_nothing_written(aurora, protocol, client, agent_headers, bad,
                                                    field):
    hub = aurora
    command = protocol.claimed_refresh({'jql': BASE_JQL})
    response = client.simulate_post('/agent/state', headers=agent_headers, json={
        'agent': 'jira', 'command_id': command, 'issues': [issue('AURORA-1'), bad]})
    assert response.status_code == 422
    assert field in response.json['fields']
    assert rows(hub, 'SELECT count(*) FROM issue') == [(0,)]
    assert rows(hub, 'SELECT issues_count FROM sync_run') == [(0,)]


@pytest.mark.parametrize('body, status, field', [
    ({'agent': 'jira', 'command_id': 999, 'issues': []}, 404, None),
    ({'agent': 'jira', 'command_id': '1', 'issues': []}, 422, 'command_id'),
    ({'agent': 'jira', 'issues': []}, 422, 'command_id'),
    ({'agent': 'jira', 'command_id': 1, 'issues': {}}, 422, 'issues'),
    ({'agent': 'nobody', 'command_id': 1, 'issues': []}, 422, 'agent'),
    ([1, 2], 422, '_body'),
])
def test_state_request_errors(aurora, client, agent_headers, body, status, field):
    response = client.simulate_post('/agent/state', headers=agent_headers, json=body)
    assert response.status_code == status
    if field:
        assert field in response.json['fields']


@pytest.mark.parametrize('command_type, status', [
    ('refresh', 'queued'), ('refresh', 'done'), ('add_comment', 'claimed')])
def test_state_for_other_than_claimed_refresh_is_409(aurora, client, agent_headers,
                                                     command_type, status):
    hub = aurora
    with hub.write():
        batch = hub.db.execute_sql("INSERT INTO batch (title, created_at) VALUES ('x', ?)",
                                   (hub.now(),)).lastrowid
        command = hub.db.execute_sql(
            'INSERT INTO command (batch_id, seq, type, params, status) VALUES (?, 1, ?, ?, ?)',
            (batch, command_type, '{"jql": "x"}', status)).lastrowid
    response = client.simulate_post('/agent/state', headers=agent_headers, json={
        'agent': 'jira', 'command_id': command, 'issues': [issue('AURORA-1')]})
    assert response.status_code == 409
    assert rows(hub, 'SELECT count(*) FROM issue') == [(0,)]


def test_state_needs_agent_token(aurora, client, client_headers):
    response = client.simulate_post('/agent/state', headers=client_headers,
                                    json={'agent': 'jira', 'command_id': 1, 'issues': []})
    assert response.status_code == 403


# --- «Журнал синхронизаций»: counters -----------------------------------------------------------

def test_scenario_redelivered_refresh_does_not_double_counters(aurora, protocol, client,
                                                               agent_headers, clock):
    hub = aurora
    command = protocol.claimed_refresh({'jql': BASE_JQL})
    page = [issue(f'AURORA-{n}', links=[{'type': 'Blocks', 'direction': 'outward',
                                         'key': f'AURORA-{n + 1000}'}]) for n in range(1, 151)]
    for start in (0, 100):
        post_state(client, agent_headers, command, page[start:start + 100])
    assert rows(hub, 'SELECT issues_count, links_count, started_at FROM sync_run') == [
        (150, 150, '2026-11-30T10:00:00+00:00')]
    clock.advance(minutes=5)
    # The report was lost: the agent is idle again, and its next claim is the redelivery.
    again = protocol.claim()
    assert again is not None
    assert (again['id'], again['type'], again['deliveries']) == (command, 'refresh', 2)
    assert rows(hub, 'SELECT issues_count, links_count, started_at FROM sync_run') == [
        (0, 0, '2026-11-30T10:00:00+00:00')]
    for start in (0, 100):
        post_state(client, agent_headers, command, page[start:start + 100])
    assert rows(hub, 'SELECT issues_count, links_count, started_at FROM sync_run') == [
        (150, 150, '2026-11-30T10:00:00+00:00')]
    clock.advance(minutes=1)
    protocol.report(command, 'done', {'history': {'issues': 150, 'changes': 0, 'incomplete': []}})
    assert protocol.command(command)['deliveries'] == 2
    assert rows(hub, 'SELECT command_id, issues_count, links_count, started_at, finished_at '
                     'FROM sync_run') == [
        (command, 150, 150, '2026-11-30T10:00:00+00:00', '2026-11-30T10:06:00+00:00')]


# --- «Журнал изменений задач» --------------------------------------------------------------------

def change(history_id='5001', seq=0, key='AURORA-1', **fields):
    item = {'history_id': history_id, 'seq': seq, 'key': key,
            'created': '2026-10-22T09:00:00.000+0300', 'author': 'ivanov', 'field_id': 'status',
            'field_name': 'Status', 'from_value': '1', 'from_string': 'Open', 'to_value': '3',
            'to_string': 'В работе'}
    item.update(fields)
    return item


def post_history(client, headers, items, status=200, command_id=None):
    body = {'agent': 'jira', 'items': items}
    if command_id is not None:
        body['command_id'] = command_id
    response = client.simulate_post('/agent/history', headers=headers, json=body)
    assert response.status_code == status, response.json
    return response.json


def test_scenario_history_item_twice(aurora, client, agent_headers, clock):
    hub = aurora
    assert post_history(client, agent_headers, [change(field_name='status')]) == {
        'inserted': 1, 'ignored': 0, 'unparsed_times': 0}
    stored = rows(hub, 'SELECT * FROM issue_change')
    clock.advance(minutes=5)
    assert post_history(client, agent_headers, [change(field_name='status', to_string='Другое')]) \
        == {'inserted': 0, 'ignored': 1, 'unparsed_times': 0}
    assert rows(hub, 'SELECT * FROM issue_change') == stored
    assert len(stored) == 1 and stored[0][:2] == ('5001', 0)


def test_scenario_planned_date_by_field_id(aurora, client, agent_headers):
    post_history(client, agent_headers, [change(field_id='customfield_10201',
                                                field_name='Плановое окончание')])
    assert rows(aurora, 'SELECT field FROM issue_change') == [('planned_end',)]


def test_scenario_unknown_field(aurora, client, agent_headers):
    post_history(client, agent_headers, [change(field_id=None, field_name='Fix Version')])
    assert rows(aurora, 'SELECT field, field_id, field_name FROM issue_change') == [
        ('Fix Version', None, 'Fix Version')]


def test_scenario_time_with_offset(aurora, client, agent_headers):
    post_history(client, agent_headers, [change(created='2026-10-22T09:00:00.000+0300')])
    assert rows(aurora, 'SELECT at, created, fetched_at FROM issue_change') == [
        ('2026-10-22T06:00:00+00:00', '2026-10-22T09:00:00.000+0300', '2026-11-30T10:00:00+00:00')]


def test_history_errors_name_the_item(aurora, client, agent_headers):
    response = client.simulate_post('/agent/history', headers=agent_headers, json={
        'agent': 'jira', 'items': [change(), change(history_id='5002', seq='x')]})
    assert response.status_code == 422
    assert 'items[1].seq' in response.json['fields']
    assert rows(aurora, 'SELECT count(*) FROM issue_change') == [(0,)]


@pytest.mark.parametrize('extra', [{}, {'extra': 1}, {'command_id': None}],
                         ids=['usual_shape_typed', 'extra_key_general', 'null_command_id'])
def test_history_page_stored_alike_either_way(aurora, client, agent_headers, clock, extra):
    """The agent's usual page is decoded typed in one pass (hublib.history.HistoryPage); a page
    with anything else (here an unknown key) goes the general way. Both store the same rows."""
    items = [change(), change(seq=1, field_id=None, field_name='Флажок', to_string='Да'),
             change(history_id='5002', key='AURORA-2', created=None, author=None)]
    body = {'agent': 'jira', 'items': items, **extra}
    response = client.simulate_post('/agent/history', headers=agent_headers, json=body)
    assert response.status_code == 200, response.json
    assert response.json == {'inserted': 3, 'ignored': 0, 'unparsed_times': 0}
    assert rows(aurora, 'SELECT history_id, seq, key, at, created, author, field, field_id, '
                        'field_name, to_string, fetched_at FROM issue_change ORDER BY 1, 2') == [
        ('5001', 0, 'AURORA-1', '2026-10-22T06:00:00+00:00', '2026-10-22T09:00:00.000+0300',
         'ivanov', 'status', 'status', 'Status', 'В работе', '2026-11-30T10:00:00+00:00'),
        ('5001', 1, 'AURORA-1', '2026-10-22T06:00:00+00:00', '2026-10-22T09:00:00.000+0300',
         'ivanov', 'Флажок', None, 'Флажок', 'Да', '2026-11-30T10:00:00+00:00'),
        ('5002', 0, 'AURORA-2', None, None, None, 'status', 'status', 'Status', 'В работе',
         '2026-11-30T10:00:00+00:00')]


@pytest.mark.parametrize('changed, field', [
    ({'key': 'aurora-1'}, 'key'), ({'created': 5}, 'created'),
    ({'seq': -1}, 'seq'), ({'history_id': ''}, 'history_id')])
def test_history_errors_of_a_usual_page_name_the_item(aurora, client, agent_headers, changed,
                                                      field):
    response = client.simulate_post('/agent/history', headers=agent_headers, json={
        'agent': 'jira', 'items': [change(), change(**{'history_id': '5002', **changed})]})
    assert response.status_code == 422
    assert list(response.json['fields']) == [f'items[1].{field}'], response.json
    assert rows(aurora, 'SELECT count(*) FROM issue_change') == [(0,)]


# --- «Отметка журнала в журнале синхронизаций» ---------------------------------------------------

@pytest.mark.parametrize('params, status, result, marked', [
    ({'jql': BASE_JQL}, 'done', {'history': {'issues': 3, 'changes': 7, 'incomplete': []}}, True),
    ({'jql': BASE_JQL}, 'done', {'history': {'issues': 1, 'changes': 2, 'incomplete': [],
                                             'backfill_error': 'HTTP 400 …'}}, True),
    ({'jql': BASE_JQL}, 'done', {'history': {'issues': 1, 'changes': 2,
                                             'incomplete': ['AURORA-3']}}, True),
    ({'jql': BASE_JQL}, 'done', {'history': {'error': 'HTTP 500 …'}}, False),
    ({'jql': BASE_JQL}, 'done', {}, False),
    ({'jql': BASE_JQL}, 'failed', {'history': {'issues': 3, 'changes': 7, 'incomplete': []}}, False),
    ({'keys': ['AURORA-1']}, 'done', {'history': {'issues': 1, 'changes': 1, 'incomplete': []}},
     False),
    ({'jql': 'project = AURORA'}, 'done', {'history': {'issues': 1, 'changes': 1}}, False),
], ids=['history_accepted', 'backfill_error_does_not_hold', 'incomplete_does_not_hold',
        'history_error', 'old_agent', 'failed', 'keys_refresh', 'not_base_jql'])
def test_scenario_history_at(aurora, protocol, client, agent_headers, client_headers, clock,
                             params, status, result, marked):
    command = protocol.claimed_refresh(params)
    post_state(client, agent_headers, command, [issue('AURORA-1')])
    post_history(client, agent_headers, [change()], command_id=command)
    clock.advance(minutes=5)
    protocol.report(command, status, result)
    [run] = client.simulate_get('/sync-runs', headers=client_headers).json['items']
    assert (run['command_id'], run['started_at'], run['finished_at']) == (
        command, '2026-11-30T10:00:00+00:00', '2026-11-30T10:05:00+00:00')
    assert run['history_at'] == ('2026-11-30T10:05:00+00:00' if marked else None)


def test_scenario_refresh_gave_up_after_delivery_limit(aurora, protocol, client, client_headers,
                                                       clock):
    command = protocol.queue_refresh({'jql': BASE_JQL})
    # Three deliveries, none reported: each claim after the first is a redelivery.
    for delivery in (1, 2, 3):
        delivered = protocol.claim()
        assert delivered is not None
        assert (delivered['id'], delivered['deliveries']) == (command, delivery)
        clock.advance(minutes=5)
    # The fourth claim gives up on it (and has nothing else to hand out).
    assert protocol.claim() is None
    got = protocol.command(command)
    assert (got['status'], got['error'], got['deliveries'], got['finished_at']) == (
        'failed', 'агент не отчитался после 3 выдач', 3, '2026-11-30T10:15:00+00:00')
    [run] = client.simulate_get('/sync-runs', headers=client_headers).json['items']
    assert (run['command_id'], run['started_at'], run['finished_at'], run['history_at']) == (
        command, '2026-11-30T10:00:00+00:00', '2026-11-30T10:15:00+00:00', None)
    assert protocol.claim() is None  # nothing left to redeliver


def test_sync_runs_newest_first_with_cursor(aurora, protocol, client, client_headers, clock):
    commands = []
    for _ in range(3):
        commands.append(protocol.claimed_refresh({'keys': ['AURORA-1', 'AURORA-2']}))
        protocol.report(commands[-1])
        clock.advance(minutes=1)
    first = client.simulate_get('/sync-runs', headers=client_headers, params={'limit': 2}).json
    assert [run['command_id'] for run in first['items']] == commands[::-1][:2]
    assert first['items'][0]['kind'] == 'keys' and first['items'][0]['query'] == 'AURORA-1,AURORA-2'
    second = client.simulate_get('/sync-runs', headers=client_headers,
                                 params={'limit': 2, 'cursor': first['next_cursor']}).json
    assert [run['command_id'] for run in second['items']] == [commands[0]]
    assert second['next_cursor'] is None


# --- «Проекты»: slices --------------------------------------------------------------------------

@pytest.fixture
def two_projects(aurora, protocol, client, agent_headers):
    hub = aurora
    projects.create_project(hub, 'STOCKS_DRRK', 'Запасы')
    command = protocol.claimed_refresh({'jql': projects.base_jql(hub)})
    post_state(client, agent_headers, command, [
        issue('AURORA-1', labels=['STOCKS_DRRK'], epic_key='AURORA-9', status='В работе',
              links=[{'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-2'}]),
        issue('AURORA-2', labels=['AWPCA'], status='Готово'),
        issue('AURORA-3', labels=['AWPCA'], status='В работе'),
        issue('AURORA-9', labels=['AWPCA'], issue_type='Эпик', status='В работе'),
    ])
    return hub


def keys_and_flags(response):
    return [(item['key'], item['neighbor']) for item in response.json['items']]


def test_scenario_own_and_neighbors(two_projects, client, client_headers):
    response = client.simulate_get('/issues', headers=client_headers,
                                   params={'project': 'STOCKS_DRRK'})
    assert response.status_code == 200
    assert keys_and_flags(response) == [('AURORA-1', False), ('AURORA-2', True),
                                        ('AURORA-9', True)]
    assert response.json['next_cursor'] is None
    awpca = client.simulate_get('/issues', headers=client_headers, params={'project': 'AWPCA'})
    assert keys_and_flags(awpca) == [('AURORA-1', True), ('AURORA-2', False), ('AURORA-3', False),
                                     ('AURORA-9', False)]


@pytest.mark.parametrize('params, expected', [
    ({}, ['AURORA-1', 'AURORA-2', 'AURORA-3', 'AURORA-9']),
    ({'status': 'Готово'}, ['AURORA-2']),
    ({'project': 'STOCKS_DRRK', 'neighbor': 'true'}, ['AURORA-2', 'AURORA-9']),
    ({'project': 'STOCKS_DRRK', 'neighbor': 'false'}, ['AURORA-1']),
    ({'project': 'STOCKS_DRRK', 'status': 'В работе'}, ['AURORA-1', 'AURORA-9']),
    ({'q': 'aurora-3'}, ['AURORA-3']),
    ({'q': 'ЗАДАЧА AURORA-9'}, ['AURORA-9']),
    ({'updated_since': '2026-10-22T06:00:00Z'}, ['AURORA-1', 'AURORA-2', 'AURORA-3', 'AURORA-9']),
    ({'updated_since': '2026-10-22T06:00:01Z'}, []),
    ({'assignee': 'nobody'}, []),
])
def test_issue_filters(two_projects, client, client_headers, params, expected):
    response = client.simulate_get('/issues', headers=client_headers, params=params)
    assert response.status_code == 200, response.json
    assert [item['key'] for item in response.json['items']] == expected


def test_issues_keyset_pages(two_projects, client, client_headers):
    seen, cursor = [], None
    for _ in range(10):  # 4 issues, 3 a page: two pages; more means the cursor does not advance
        params = {'limit': 3, **({'cursor': cursor} if cursor else {})}
        page = client.simulate_get('/issues', headers=client_headers, params=params).json
        seen += [item['key'] for item in page['items']]
        cursor = page['next_cursor']
        if cursor is None:
            break
    else:
        pytest.fail(f'paging did not end after 10 pages: {seen}')
    assert seen == ['AURORA-1', 'AURORA-2', 'AURORA-3', 'AURORA-9']


@pytest.mark.parametrize('path, params, field', [
    ('/issues', {'limit': '0'}, 'limit'),
    ('/issues', {'limit': '1001'}, 'limit'),
    ('/issues', {'limit': 'ten'}, 'limit'),
    ('/issues', {'cursor': 'garbage!'}, 'cursor'),
    ('/issues', {'neighbor': 'maybe'}, 'neighbor'),
    ('/issues', {'updated_since': 'вчера'}, 'updated_since'),
    ('/changes', {'limit': '-5'}, 'limit'),
    ('/changes', {'since': 'garbage'}, 'since'),
    ('/changes', {'cursor': 'WzFd'}, 'cursor'),
    ('/sync-runs', {'limit': '100000'}, 'limit'),
    ('/issues/AURORA-1/changes', {'limit': 'x'}, 'limit'),
])
def test_bad_query_is_422_naming_the_parameter(two_projects, client, client_headers, path,
                                               params, field):
    response = client.simulate_get(path, headers=client_headers, params=params)
    assert response.status_code == 422
    assert field in response.json['fields']


@pytest.mark.parametrize('path', ['/issues/AURORA-404', '/issues/AURORA-404/changes',
                                  '/projects/NOPE/board', '/projects/NOPE/sprints'])
def test_unknown_is_404(two_projects, client, client_headers, path):
    assert client.simulate_get(path, headers=client_headers).status_code == 404


def test_unknown_project_filter_is_404(two_projects, client, client_headers):
    response = client.simulate_get('/issues', headers=client_headers, params={'project': 'NOPE'})
    assert response.status_code == 404


# --- change feed ---------------------------------------------------------------------------------

def test_change_feed_order_filters_and_pages(two_projects, client, agent_headers, client_headers):
    post_history(client, agent_headers, [
        change('6002', 0, 'AURORA-2', created='2026-10-22T10:00:00Z'),
        change('6001', 1, 'AURORA-1', created='2026-10-22T09:00:00Z', field_id='assignee'),
        change('6001', 0, 'AURORA-1', created='2026-10-22T09:00:00Z'),
        change('6003', 0, 'AURORA-3', created='2026-10-22T11:00:00Z'),
        change('6004', 0, 'AURORA-1', created=None),  # no time: not in the feed
    ])
    feed = client.simulate_get('/changes', headers=client_headers).json
    assert [(c['history_id'], c['seq']) for c in feed['items']] == [
        ('6001', 0), ('6001', 1), ('6002', 0), ('6003', 0)]
    page, seen = client.simulate_get('/changes', headers=client_headers,
                                     params={'limit': 3}).json, []
    seen += [(c['history_id'], c['seq']) for c in page['items']]
    page = client.simulate_get('/changes', headers=client_headers,
                               params={'limit': 3, 'cursor': page['next_cursor']}).json
    seen += [(c['history_id'], c['seq']) for c in page['items']]
    assert seen == [('6001', 0), ('6001', 1), ('6002', 0), ('6003', 0)]
    assert page['next_cursor'] is None

    def ids(**params):
        response = client.simulate_get('/changes', headers=client_headers, params=params)
        assert response.status_code == 200, response.json
        return [(c['history_id'], c['seq']) for c in response.json['items']]

    assert ids(since='2026-10-22T13:00:00+03:00') == [('6002', 0), ('6003', 0)]
    assert ids(until='2026-10-22T10:00:00Z') == [('6001', 0), ('6001', 1)]
    assert ids(key='AURORA-1') == [('6001', 0), ('6001', 1)]
    assert ids(field='assignee') == [('6001', 1)]
    assert ids(project='STOCKS_DRRK') == [('6001', 0), ('6001', 1), ('6002', 0)]
    # newest first (contract §15a), paged by cursor in that order
    assert ids(order='desc') == [('6003', 0), ('6002', 0), ('6001', 1), ('6001', 0)]
    assert ids(order='desc', key='AURORA-1') == [('6001', 1), ('6001', 0)]
    page = client.simulate_get('/changes', headers=client_headers,
                               params={'order': 'desc', 'limit': 3}).json
    rest = client.simulate_get('/changes', headers=client_headers,
                               params={'order': 'desc', 'limit': 3, 'cursor': page['next_cursor']}).json
    assert [(c['history_id'], c['seq']) for c in page['items'] + rest['items']] == [
        ('6003', 0), ('6002', 0), ('6001', 1), ('6001', 0)]
    assert rest['next_cursor'] is None
    bad = client.simulate_get('/changes', headers=client_headers, params={'order': 'newest'})
    assert bad.status_code == 422 and list(bad.json['fields']) == ['order']
    one = client.simulate_get('/issues/AURORA-1/changes', headers=client_headers).json
    assert [(c['history_id'], c['seq'], c['field']) for c in one['items']] == [
        ('6001', 0, 'status'), ('6001', 1, 'assignee')]


# --- «Доски, спринты и членство задач» ------------------------------------------------------------

BOARD = {'board_id': 4216, 'type': 'scrum', 'kanban_backlog': None, 'columns': [
    {'name': 'К выполнению', 'statuses': ['Backlog', 'Ожидает анализа']},
    {'name': 'В работе', 'statuses': ['В работе', 'Анализ']},
    {'name': 'Готово', 'statuses': ['Готово', 'Протестировано', 'Снято']}],
    'sprints': [
        {'id': 101, 'name': 'Спринт 1', 'state': 'closed', 'start_date': '2026-10-01T10:00:00.000+0300',
         'end_date': '2026-10-14T10:00:00.000+0300', 'complete_date': '2026-10-14T12:00:00.000+0300',
         'goal': 'MVP'},
        {'id': 102, 'name': 'Спринт 2', 'state': 'active', 'start_date': '2026-10-15T10:00:00.000+0300',
         'end_date': '2026-10-28T10:00:00.000+0300', 'complete_date': None, 'goal': None}]}


def post_boards(client, headers, boards, status=200):
    response = client.simulate_post('/agent/boards', headers=headers,
                                     json={'agent': 'jira', 'command_id': None, 'boards': boards})
    assert response.status_code == status, response.json
    return response.json


def test_boards_ingest_sets_project_board_type(aurora, client, agent_headers, client_headers):
    assert post_boards(client, agent_headers, [BOARD]) == {'boards': 1, 'sprints': 2, 'unparsed_times': 0}
    assert rows(aurora, 'SELECT board_id, type, kanban_backlog, fetched_at FROM jira_board') == [
        (4216, 'scrum', None, '2026-11-30T10:00:00+00:00')]
    assert rows(aurora, 'SELECT label, board_id, board_type FROM jira_project') == [
        ('AWPCA', 4216, 'scrum')]
    assert rows(aurora, 'SELECT sprint_id, board_id, name, state FROM jira_sprint ORDER BY 1') == [
        (101, 4216, 'Спринт 1', 'closed'), (102, 4216, 'Спринт 2', 'active')]


def test_scenario_issue_in_two_sprints(aurora, protocol, client, agent_headers, client_headers):
    hub = aurora
    post_boards(client, agent_headers, [BOARD])
    command = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, command, [
        issue('AURORA-1', sprint_ids=[101, 102], status='Протестировано'),
        issue('AURORA-2', sprint_ids=[102], status='В работе')])
    assert rows(hub, "SELECT sprint_id FROM issue_sprint WHERE key = 'AURORA-1' ORDER BY 1") == [
        (101,), (102,)]
    assert card(client, client_headers, 'AURORA-1')['sprints'] == [
        {'sprint_id': 101, 'name': 'Спринт 1', 'state': 'closed'},
        {'sprint_id': 102, 'name': 'Спринт 2', 'state': 'active'}]
    sprints = client.simulate_get('/projects/AWPCA/sprints', headers=client_headers).json['items']
    assert [(s['sprint_id'], s['state'], s['issues'], s['issues_count'], s['done_count'])
            for s in sprints] == [(101, 'closed', ['AURORA-1'], 1, 1),
                                  (102, 'active', ['AURORA-1', 'AURORA-2'], 2, 1)]
    # sprint_ids replace the issue's membership; absent sprint_ids keep it
    post_state(client, agent_headers, command, [issue('AURORA-1', sprint_ids=[102])])
    post_state(client, agent_headers, command, [issue('AURORA-2')])
    assert rows(hub, 'SELECT key, sprint_id FROM issue_sprint ORDER BY 1, 2') == [
        ('AURORA-1', 102), ('AURORA-2', 102)]


def test_scenario_board_columns(aurora, protocol, client, agent_headers, client_headers):
    hub = aurora
    post_boards(client, agent_headers, [BOARD])
    command = protocol.claimed_refresh({'jql': BASE_JQL})
    post_state(client, agent_headers, command, [
        issue('AURORA-1', status='Протестировано', rank='0|b'),
        issue('AURORA-2', status='Backlog', rank='0|a'),
        issue('AURORA-3', status='В работе', labels=['OTHER'])])
    board = client.simulate_get('/projects/AWPCA/board', headers=client_headers).json
    assert board['board_id'] == 4216 and board['type'] == 'scrum'
    assert board['done_statuses'] == ['Готово', 'Протестировано', 'Снято']
    assert [(c['name'], c['issues']) for c in board['columns']] == [
        ('К выполнению', ['AURORA-2']), ('В работе', []), ('Готово', ['AURORA-1'])]
    # beside the keys, the same issues as cards with what a board card shows (contract §15a)
    assert [c['cards'] for c in board['columns']] == [
        [{'key': 'AURORA-2', 'summary': 'Задача AURORA-2', 'issue_type': 'Задача',
          'priority': None, 'assignee': None, 'status': 'Backlog'}], [],
        [{'key': 'AURORA-1', 'summary': 'Задача AURORA-1', 'issue_type': 'Задача',
          'priority': None, 'assignee': None, 'status': 'Протестировано'}]]
    assert 'Протестировано' in board['done_statuses'] and 'Backlog' not in board['done_statuses']


def test_board_of_project_without_board(aurora, client, client_headers):
    projects.create_project(aurora, 'SFM', 'Без доски')
    board = client.simulate_get('/projects/SFM/board', headers=client_headers).json
    assert board == {'label': 'SFM', 'board_id': None, 'type': None, 'kanban_backlog': None,
                     'fetched_at': None, 'columns': [], 'done_statuses': []}
    sprints = client.simulate_get('/projects/SFM/sprints', headers=client_headers).json
    assert sprints == {'items': []}


@pytest.mark.parametrize('board, field', [
    ({'board_id': 0}, 'boards[0].board_id'),
    ({'board_id': 1, 'type': 'list'}, 'boards[0].type'),
    ({'board_id': 1, 'columns': [{'name': 'x'}]}, 'boards[0].columns[0].statuses'),
    ({'board_id': 1, 'sprints': [{'id': 'x'}]}, 'boards[0].sprints[0].id'),
])
def test_bad_board_is_422(aurora, client, agent_headers, board, field):
    response = client.simulate_post('/agent/boards', headers=agent_headers,
                                    json={'agent': 'jira', 'boards': [board]})
    assert response.status_code == 422
    assert field in response.json['fields']
    assert rows(aurora, 'SELECT count(*) FROM jira_board') == [(0,)]


@pytest.mark.parametrize('path, body, field', [
    ('/agent/state', {'command_id': 2 ** 64, 'issues': []}, 'command_id'),
    ('/agent/state', {'command_id': 1, 'issues': [{'key': 'AURORA-1', 'sprint_ids': [2 ** 64]}]},
     'issues[0].sprint_ids[0]'),
    ('/agent/state', {'command_id': 1, 'issues': [{'key': 'AURORA-1', 'story_points': 10 ** 400}]},
     'issues[0].story_points'),
    ('/agent/state', {'command_id': 1, 'issues': [
        {'key': 'AURORA-1', 'attachments': [{'id': '1', 'size': 2 ** 63}]}]},
     'issues[0].attachments[0].size'),
    ('/agent/history', {'items': [{'history_id': '1', 'seq': 2 ** 63, 'key': 'AURORA-1'}]},
     'items[0].seq'),
    ('/agent/boards', {'boards': [{'board_id': 2 ** 70}]}, 'boards[0].board_id'),
    ('/agent/boards', {'boards': [{'board_id': 1, 'sprints': [{'id': -2 ** 64}]}]},
     'boards[0].sprints[0].id'),
])
def test_huge_numbers_are_422_not_500(aurora, protocol, client, agent_headers, path, body, field):
    protocol.claimed_refresh({'jql': BASE_JQL})
    response = client.simulate_post(path, headers=agent_headers, json={'agent': 'jira', **body})
    assert response.status_code == 422, response.json
    # the JSON layer reads them; the field that would store one names it
    assert field in response.json['fields']


@pytest.mark.parametrize('params, field', [
    ({'limit': '9' * 5000}, 'limit'), ({'limit': '²'}, 'limit'),
    ({'cursor': __import__('hublib.paging', fromlist=['x']).encode_cursor([2 ** 64])}, 'cursor'),
])
def test_hostile_query_values_are_422(aurora, client, client_headers, params, field):
    response = client.simulate_get('/sync-runs', headers=client_headers, params=params)
    assert response.status_code == 422, response.json
    assert field in response.json['fields']


# --- issue 10, point 5: natural key order -------------------------------------------------------

def test_issues_come_in_natural_key_order_across_pages(aurora, protocol, client, agent_headers,
                                                       client_headers):
    """AURORA-2 before AURORA-10, as Jira shows them: keys of two projects, numbers 1…101."""
    command = protocol.claimed_refresh({'jql': BASE_JQL})
    keys = [f'{project}-{n}' for project in ('ZETA', 'AURORA') for n in range(101, 0, -1)]
    for start in range(0, len(keys), 100):
        post_state(client, agent_headers, command, [issue(key) for key in keys[start:start + 100]])
    expected = [f'{project}-{n}' for project in ('AURORA', 'ZETA') for n in range(1, 102)]
    for params in ({}, {'project': 'AWPCA'}):
        seen, cursor = [], None
        for _ in range(20):
            page = client.simulate_get('/issues', headers=client_headers, params={
                **params, 'limit': 25, **({'cursor': cursor} if cursor else {})}).json
            seen += [item['key'] for item in page['items']]
            cursor = page['next_cursor']
            if cursor is None:
                break
        assert seen == expected, params
