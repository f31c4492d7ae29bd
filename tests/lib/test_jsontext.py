"""One decoder for JSON in TEXT columns (``hublib.jsontext``): settings, the claim's settings read
and commands read a value that is not JSON alike, as its raw text."""
from __future__ import annotations

import pytest

from hublib import batches, jsontext, queue, settings


@pytest.mark.parametrize('text, value', [
    ('{"a": [1, 2.5, null]}', {'a': [1, 2.5, None]}), ('"Готово"', 'Готово'), ('7', 7),
    ('not json', 'not json'), ('{"broken": ', '{"broken": '), ('', ''), (None, None)])
def test_a_stored_value_is_its_json_or_its_raw_text(text, value):
    assert jsontext.load(text) == value


def test_dump_keeps_cyrillic_and_none_as_null():
    assert jsontext.dump({'summary': 'Задача'}) == '{"summary": "Задача"}'
    assert jsontext.dump(None) is None


def test_the_claim_reads_a_hand_written_setting_as_settings_reads_it(hub):
    with hub.write():
        hub.db.execute_sql("UPDATE setting SET value = 'seven' WHERE key = 'settings_version'")
        hub.db.execute_sql("UPDATE setting SET value = 'fast' WHERE key = 'pacing'")
    answer = queue.claim_command(hub, agent='jira')
    assert answer['settings_version'] == settings.setting(hub, 'settings_version') == 'seven'
    assert settings.pacing(hub) == settings.DEFAULT_PACING  # not an object: the defaults


def test_a_command_whose_params_are_not_json_reads_as_text(hub):
    with hub.write():
        batch = hub.db.execute_sql("INSERT INTO batch (title, created_at) VALUES ('x', ?)",
                                   (hub.now(),)).lastrowid
        command = hub.db.execute_sql("INSERT INTO command (batch_id, seq, type, params, result) "
                                     "VALUES (?, 1, 'refresh', 'keys=AURORA-1', 'ok')",
                                     (batch,)).lastrowid
    found = batches.command(hub, command)
    assert (found['params'], found['result']) == ('keys=AURORA-1', 'ok')
