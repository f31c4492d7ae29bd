"""Service notes (spec «Служебные заметки», contract §10 notes)."""
from __future__ import annotations

import pytest

from hublib import mirror, notes, projects, queue, settings
from hublib.errors import NotFoundError, ValidationError


def test_put_and_get_note(hub, clock):
    created = notes.put_note(hub, 'AURORA-1', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    assert created == {'key': 'AURORA-1', 'work_kind': 'Аналитика', 'done_text': None,
                       'rest_text': None, 'owner_note': None,
                       'updated_at': '2026-11-30T10:00:00+00:00', 'updated_by': 'ivanov'}
    clock.advance(minutes=1)
    changed = notes.put_note(hub, 'AURORA-1', {'done_text': 'сделано', 'updated_by': 'petrov'})
    assert changed['work_kind'] == 'Аналитика'  # partial update keeps the rest
    assert (changed['done_text'], changed['updated_by'], changed['updated_at']) == \
        ('сделано', 'petrov', '2026-11-30T10:01:00+00:00')
    assert notes.note(hub, 'AURORA-1') == changed
    cleared = notes.put_note(hub, 'AURORA-1', {'work_kind': None, 'updated_by': 'petrov'})
    assert cleared['work_kind'] is None


def test_missing_note(hub):
    with pytest.raises(NotFoundError):
        notes.note(hub, 'AURORA-2')


@pytest.mark.parametrize('key', ['aurora', 'AURORA', 'new:', 'new:x', 'NEW:5', 'AURORA-1 ', '1-2'])
def test_note_key_must_be_jira_or_temp_key(hub, key):
    with pytest.raises(ValidationError) as error:
        notes.put_note(hub, key, {'updated_by': 'ivanov'})
    assert list(error.value.fields) == ['key']


@pytest.mark.parametrize('key', ['AURORA-1', 'STOCKS_DRRK-15', 'A1-2', 'new:5'])
def test_valid_note_keys(hub, key):
    assert notes.put_note(hub, key, {'updated_by': 'ivanov'})['key'] == key


@pytest.mark.parametrize('changes, field', [
    ({'work_kind': 'x'}, 'updated_by'), ({'updated_by': ''}, 'updated_by'),
    ({'done_text': 'ж' * 20001, 'updated_by': 'a'}, 'done_text'),
    ({'owner_note': 5, 'updated_by': 'a'}, 'owner_note'),
    ({'fact_status': 'В работе', 'updated_by': 'a'}, 'fact_status'),
])
def test_note_validation(hub, changes, field):
    with pytest.raises(ValidationError) as error:
        notes.put_note(hub, 'AURORA-1', changes)
    assert field in error.value.fields
    with pytest.raises(NotFoundError):
        notes.note(hub, 'AURORA-1')


def test_texts_up_to_20000_chars(hub):
    assert len(notes.put_note(hub, 'AURORA-1', {'rest_text': 'ж' * 20000,
                                                'updated_by': 'a'})['rest_text']) == 20000


def test_scenario_note_merge_with_note_under_key(hub, clock):
    """«Слияние с заметкой под ключом»."""
    notes.put_note(hub, 'AURORA-1640', {'owner_note': 'спросить ИБ', 'updated_by': 'petrov'})
    clock.advance(minutes=1)
    notes.put_note(hub, 'new:5', {'work_kind': 'Аналитика', 'owner_note': '', 'updated_by': 'ivanov'})
    notes.merge_note(hub, 'new:5', 'AURORA-1640')
    merged = notes.note(hub, 'AURORA-1640')
    assert merged == {'key': 'AURORA-1640', 'work_kind': 'Аналитика', 'done_text': None,
                      'rest_text': None, 'owner_note': 'спросить ИБ',
                      'updated_at': '2026-11-30T10:01:00+00:00', 'updated_by': 'ivanov'}
    with pytest.raises(NotFoundError):
        notes.note(hub, 'new:5')


def test_merge_keeps_later_author_of_real_note(hub, clock):
    notes.put_note(hub, 'new:5', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    clock.advance(minutes=1)
    notes.put_note(hub, 'AURORA-1640', {'work_kind': 'Разработка', 'updated_by': 'petrov'})
    notes.merge_note(hub, 'new:5', 'AURORA-1640')
    merged = notes.note(hub, 'AURORA-1640')
    assert (merged['work_kind'], merged['updated_by'], merged['updated_at']) == \
        ('Аналитика', 'petrov', '2026-11-30T10:01:00+00:00')


def test_merge_moves_note_when_key_has_none(hub):
    notes.put_note(hub, 'new:5', {'rest_text': 'остаток', 'updated_by': 'ivanov'})
    notes.merge_note(hub, 'new:5', 'AURORA-1640')
    assert notes.note(hub, 'AURORA-1640')['rest_text'] == 'остаток'
    notes.merge_note(hub, 'new:6', 'AURORA-1641')  # no temp note: nothing happens
    with pytest.raises(NotFoundError):
        notes.note(hub, 'AURORA-1641')


def test_scenario_note_survives_refresh(hub):
    """«Заметка переживает refresh»: a full mirror update does not change work_kind."""
    settings.update_settings(hub, {'project_key': 'AURORA'})
    projects.create_project(hub, 'AWPCA', 'АРМ КА')
    notes.put_note(hub, 'AURORA-1', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    before = notes.note(hub, 'AURORA-1')
    made = queue.create_batch(hub, title='t', author=None, commands=[
        {'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}}])
    command_id = made['commands'][0]['id']
    queue.claim_command(hub, agent='jira', agent_version='15', settings_version=None)
    mirror.ingest_state(hub, 'jira', command_id, [{'key': 'AURORA-1', 'summary': 'новое',
                                                   'labels': ['AWPCA']}])
    queue.report_command(hub, command_id, agent='jira', status='done', result={}, error=None,
                         jira_calls=1, rate_limited=0)
    assert notes.note(hub, 'AURORA-1') == before
