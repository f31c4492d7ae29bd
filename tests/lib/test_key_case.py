"""Jira keys are upper-case; a person types ``aurora-1``. Wherever a key is looked up (the card,
its changes, the change feed's ``key``, notes) hublib reads it in Jira's case, so HTTP and MCP
find the issue alike. Temp keys (``new:5``) stay as they are."""
from __future__ import annotations

import pytest

from hublib import history, mirror, notes, reads
from hublib.errors import NotFoundError, ValidationError


@pytest.fixture
def mirrored(hub, claimed_refresh):
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [
        {'key': 'AURORA-1', 'summary': 'Сверка', 'links': [
            {'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-2'}]},
        {'key': 'AURORA-2', 'summary': 'Отчёт'}])
    history.ingest_history(hub, 'jira', None, [
        {'history_id': '1', 'seq': 0, 'key': 'AURORA-1', 'created': '2026-10-22T09:00:00Z',
         'field_id': 'status', 'to_string': 'Готово'}])
    return hub


@pytest.mark.parametrize('typed', ['aurora-1', 'Aurora-1', 'AURORA-1'])
def test_card_and_changes_find_a_key_typed_in_any_case(mirrored, typed):
    card = reads.issue_card(mirrored, typed)
    assert card['key'] == 'AURORA-1' and card['links']['outward'] == [
        {'type': 'Blocks', 'key': 'AURORA-2', 'summary': 'Отчёт', 'status': None}]
    assert [item['key'] for item in reads.issue_changes(mirrored, typed)['items']] == ['AURORA-1']
    assert [item['key'] for item in reads.change_feed(mirrored, key=typed)['items']] == ['AURORA-1']


def test_a_missing_issue_is_named_in_jiras_case(mirrored):
    with pytest.raises(NotFoundError, match='AURORA-77'):
        reads.issue_card(mirrored, 'aurora-77')


@pytest.mark.parametrize('typed', ['aurora-1', 'Aurora-1'])
def test_notes_are_kept_and_found_under_the_jira_key(hub, typed):
    stored = notes.put_note(hub, typed, {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    assert stored['key'] == 'AURORA-1'
    assert notes.note(hub, 'AURORA-1')['work_kind'] == 'Аналитика'
    assert notes.note(hub, typed)['key'] == 'AURORA-1'


def test_temp_keys_stay_lower_and_other_shapes_stay_refused(hub):
    assert notes.put_note(hub, 'new:5', {'rest_text': 'x', 'updated_by': 'ivanov'})['key'] == 'new:5'
    for wrong in ('NEW:5', 'aurora', 'аврора-1', 'ſ-1'):
        with pytest.raises(ValidationError):
            notes.put_note(hub, wrong, {'rest_text': 'x', 'updated_by': 'ivanov'})
