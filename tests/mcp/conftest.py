"""MCP fixtures: a mirror filled through the agent's own hublib calls, then a second, guarded
hub on the same directory for the MCP server (as the ``sdlc-hub mcp`` process opens it), and the
SDK's in-process client."""
from __future__ import annotations

import hashlib
import io
import json

import pytest
from mcp import Client

from hublib import files, history, mirror, notes, open_hub, projects, queue, settings
from hubweb.mcp_server import create_mcp_server

BASE_JQL = 'project = AURORA AND labels in ("AWPCA")'
ISSUE_TYPES = {'task': {'name': 'Задача', 'id': '3'}, 'epic': {'name': 'Эпик', 'id': '6'}}
LONG_DESCRIPTION = 'Описание. ' * 3000          # 30,000 characters
COMMENTS = [{'id': str(100 + n), 'author': 'petrov', 'body': f'комментарий {n}',
             'created': f'2026-10-{n + 1:02d}T09:00:00.000+0300'} for n in range(25)]
COMMENTS[-1]['body'] = 'Ж' * 25000             # the newest comment is long


def issue(number: int, **fields) -> dict:
    return {'key': f'AURORA-{number}', 'id': str(10000 + number), 'issue_type': 'Задача',
            'summary': f'Задача {number}', 'status': 'В работе' if number % 2 else 'Готово',
            'priority': 'Средний', 'assignee': 'ivanov' if number % 3 else 'petrov',
            'labels': ['AWPCA'], 'updated': f'2026-10-{number:02d}T09:00:00.000+0300',
            'created': '2026-10-01T10:00:00.000+0300', **fields}


ISSUES = [
    issue(1, description=LONG_DESCRIPTION, epic_key='AURORA-9', rank='0|i0001:',
          links=[{'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-2'},
                 {'type': 'Relates', 'direction': 'inward', 'key': 'AURORA-20'}],
          comments=COMMENTS,
          attachments=[{'id': '2', 'filename': 'спецификация.pdf', 'size': 1234,
                        'mime_type': 'application/pdf', 'author': 'petrov',
                        'created': '2026-10-02T10:00:00.000+0300'},
                       {'id': '3', 'filename': 'b.png', 'size': 10}],
          sprint_ids=[101, 102]),
    *[issue(number) for number in range(2, 13) if number != 9],
    issue(9, issue_type='Эпик', summary='Эпик проекта'),
    issue(20, labels=[], neighbor=True, summary='Соседняя задача'),
]
CHANGES = [{'history_id': str(5000 + n), 'seq': 0, 'key': 'AURORA-1', 'author': 'ivanov',
            'created': f'2026-10-{n + 1:02d}T09:00:00.000+0300', 'field_id': 'status',
            'field_name': 'Status', 'from_string': 'Открыта', 'to_string': 'В работе'}
           for n in range(6)]
BOARDS = [{'board_id': 4216, 'type': 'scrum', 'kanban_backlog': None,
           'columns': [{'name': 'К выполнению', 'statuses': ['Открыта']},
                       {'name': 'В работе', 'statuses': ['В работе']},
                       {'name': 'Готово', 'statuses': ['Готово']}],
           'sprints': [{'id': 101, 'name': 'Спринт 1', 'state': 'closed',
                        'start_date': '2026-10-01T09:00:00.000+0300',
                        'end_date': '2026-10-14T18:00:00.000+0300',
                        'complete_date': '2026-10-14T18:00:00.000+0300'},
                       {'id': 102, 'name': 'Спринт 2', 'state': 'active',
                        'start_date': '2026-10-15T09:00:00.000+0300',
                        'end_date': '2026-10-28T18:00:00.000+0300'}]}]


def fill_hub(hub, claimed_refresh) -> dict:
    """A mirror with every table in use, written the agent's way (hublib ingest calls)."""
    settings.update_settings(hub, {'project_key': 'AURORA', 'issue_types': ISSUE_TYPES,
                                   'link_types': {'blocks': 'Blocks'}})
    projects.create_project(hub, 'AWPCA', 'АРМ КА', board_id=4216)
    projects.create_project(hub, 'EMPTY', 'Пустой проект')
    command = claimed_refresh(hub, {'jql': BASE_JQL})
    mirror.ingest_state(hub, 'jira', command, ISSUES)
    history.ingest_history(hub, 'jira', command, CHANGES)
    mirror.ingest_boards(hub, 'jira', command, BOARDS)
    queue.report_command(hub, command, agent='jira', status='done', result={},
                         error=None, jira_calls=3, rate_limited=0)
    # attachment #3 was downloaded (the agent's upload and its done report)
    content = b'\x89PNG fake picture'
    sha256 = hashlib.sha256(content).hexdigest()
    files.store_file(hub, sha256, io.BytesIO(content), length=len(content))
    files.record_download(hub, '3', sha256, len(content))
    notes.put_note(hub, 'AURORA-1', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    batch = queue.create_batch(hub, title='Комментарий', author='ivanov', project='AWPCA',
                               commands=[{'type': 'add_comment',
                                          'params': {'key': 'AURORA-1', 'body': 'текст'}}])
    hub.db.execute_sql("UPDATE command SET status = 'done', finished_at = ?, result = ? "
                       'WHERE id = ?', (hub.now(), json.dumps({'ok': True}),
                                        batch['commands'][0]['id']))
    failed = queue.create_batch(hub, title='Переход', author='petrov', project='AWPCA',
                                commands=[{'type': 'transition',
                                           'params': {'key': 'AURORA-2', 'status': 'Готово'}}])
    hub.db.execute_sql("UPDATE command SET status = 'failed', finished_at = ?, error = ? "
                       'WHERE id = ?', (hub.now(), 'переход недоступен',
                                        failed['commands'][0]['id']))
    return {'refresh': command, 'batch': batch['id'], 'failed_batch': failed['id']}


@pytest.fixture
def filled(hub, claimed_refresh):
    """The writer's hub (the agent side), filled."""
    fill_hub(hub, claimed_refresh)
    return hub


@pytest.fixture
def mcp_hub(filled, data_dir, clock):
    """The MCP process's hub: its own connections, the mirror guard on."""
    guarded = open_hub(data_dir, clock=clock, guard_mirror=True)
    yield guarded
    guarded.close()


@pytest.fixture
def server(mcp_hub):
    return create_mcp_server(mcp_hub)


@pytest.fixture
def anyio_backend():
    return 'asyncio'


@pytest.fixture
async def client(server):
    """The SDK's in-process client; it checks every successful result against the tool's
    ``outputSchema`` (jsonschema), so a result that breaks its schema fails the test."""
    async with Client(server) as connected:
        yield connected


def body(result) -> dict:
    """The JSON text block of a tool result."""
    assert len(result.content) == 1 and result.content[0].type == 'text'
    return json.loads(result.content[0].text)
