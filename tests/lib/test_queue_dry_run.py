"""``queue.create_batch(dry_run=True)``: the validated preview of a batch, nothing stored (the
MCP tool ``queue_batch`` with ``dry_run``, contract §14)."""
from __future__ import annotations

import sqlite3

import pytest

from hublib import projects, queue, settings
from hublib.errors import ValidationError

ISSUE_TYPES = {'task': {'name': 'Задача', 'id': '3'}, 'epic': {'name': 'Эпик', 'id': '6'}}
COMMANDS = [
    {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'summary': '  Новая  ',
                                        'temp_key': 'new:1'}},
    {'type': 'ensure_link', 'depends_on': 1, 'params': {'source_key': 'new:1',
                                                        'target_key': 'AURORA-2',
                                                        'link_type': 'blocks'}},
    {'type': 'refresh', 'params': {'keys': ['AURORA-1', 'AURORA-2']}},
]


@pytest.fixture
def configured(hub):
    settings.update_settings(hub, {'project_key': 'AURORA', 'issue_types': ISSUE_TYPES,
                                   'link_types': {'blocks': 'Blocks'}})
    projects.create_project(hub, 'AWPCA', 'АРМ КА')
    return hub


def queue_state(hub) -> tuple:
    return tuple(hub.db.execute_sql(sql).fetchall() for sql in (
        'SELECT * FROM batch', 'SELECT * FROM command',
        "SELECT * FROM sqlite_sequence WHERE name IN ('batch', 'command')"))


def test_preview_is_what_create_would_queue_and_stores_nothing(configured):
    before = queue_state(configured)
    preview = queue.create_batch(configured, title=' Завести ', author='ivanov', project='AWPCA',
                                 commands=COMMANDS, dry_run=True)
    assert queue_state(configured) == before
    created = queue.create_batch(configured, title=' Завести ', author='ivanov', project='AWPCA',
                                 commands=COMMANDS)
    assert preview == {
        'dry_run': True, 'title': 'Завести', 'author': 'ivanov', 'project': 'AWPCA',
        'estimate_seconds': created['estimate_seconds'],
        'commands': [{'seq': c['seq'], 'type': c['type'], 'params': c['params'],
                      'depends_on': None if c['depends_on'] is None else 1}
                     for c in created['commands']]}
    assert preview['estimate_seconds'] == 3  # (3 + 1 + 2 calls) × 500 ms
    assert preview['commands'][0]['params']['summary'] == 'Новая'  # normalized as stored


@pytest.mark.parametrize('bad, field', [
    ({'title': ''}, 'title'),
    ({'project': 'NOPE'}, 'project'),
    ({'commands': [{'type': 'add_comment', 'params': {'key': 'AURORA-1'}}]},
     'commands[0].params.body'),
    ({'commands': [{'type': 'ensure_issue', 'params': {'issue_type': 'bug', 'summary': 'x'}}]},
     'commands[0].params.issue_type'),
])
def test_preview_refuses_exactly_what_create_refuses(configured, bad, field):
    arguments = {'title': 'Пакет', 'author': 'ivanov', 'commands': COMMANDS, **bad}
    with pytest.raises(ValidationError) as real:
        queue.create_batch(configured, **arguments)
    with pytest.raises(ValidationError) as preview:
        queue.create_batch(configured, **arguments, dry_run=True)
    assert field in real.value.fields
    assert preview.value.fields == real.value.fields


def test_preview_does_not_wait_for_the_write_lock(configured):
    other = sqlite3.connect(configured.db_path, timeout=0.1)
    other.execute('BEGIN IMMEDIATE')  # e.g. an ingest in another process
    try:
        preview = queue.create_batch(configured, title='Пакет', author=None, commands=COMMANDS,
                                     dry_run=True)
    finally:
        other.rollback()
        other.close()
    assert len(preview['commands']) == 3
