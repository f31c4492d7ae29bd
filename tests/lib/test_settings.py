"""Settings (spec «Настройки», contract §6) at the library level."""
from __future__ import annotations

import json
import sqlite3

import pytest

from hublib import ValidationError, open_hub, projects, settings
from hublib.config import import_config, settings_from_config
from tests.support.legacy import create_legacy_database

AGENT_NEVER = ('relay_dir', 'closed_statuses', 'tokens', 'backup_keep', 'auto_refresh_minutes',
               'status_labels', 'transitions_map', 'schema_version')


def version(hub) -> int:
    return settings.setting(hub, 'settings_version')


def raw_settings(hub) -> dict:
    return dict(hub.db.execute_sql('SELECT key, value FROM setting').fetchall())


def legacy_hub(data_dir, clock, schema_version, values=None):
    data_dir.mkdir(parents=True, exist_ok=True)
    create_legacy_database(data_dir / 'hub.sqlite', schema_version, values)
    return open_hub(data_dir, clock=clock)


def test_new_database_defaults(hub):
    stored = settings.stored_settings(hub)
    assert stored['settings_version'] == 1
    assert stored['schema_version'] == 9
    assert stored['closed_statuses'] == ['Готово', 'Снято']
    assert stored['backup_keep'] == 14
    assert stored['auto_refresh_minutes'] == 0
    assert stored['relay_dir'] is None
    assert stored['pacing'] == {'interval_ms': 500, 'pause_on_rate_limit_seconds': 60}
    assert set(stored['tokens']) == {'agent', 'client'}
    assert all(len(token) >= 40 for token in stored['tokens'].values())
    assert stored['tokens']['agent'] != stored['tokens']['client']
    assert 'base_jql' not in stored and 'board_id' not in stored


def test_ensure_defaults_keeps_tokens_and_version(data_dir, clock):
    hub = open_hub(data_dir, clock=clock)
    before = raw_settings(hub)
    settings.ensure_defaults(hub)
    assert raw_settings(hub) == before
    hub.close()
    hub = open_hub(data_dir, clock=clock)
    assert raw_settings(hub) == before
    assert settings.tokens(hub) == json.loads(before['tokens'])
    hub.close()


def test_scenario_settings_edit_bumps_version(hub):
    view = settings.update_settings(hub, {'pacing': {'interval_ms': 800}})
    assert version(hub) == 2
    assert view['settings_version'] == 2
    assert view['pacing'] == {'interval_ms': 800, 'pause_on_rate_limit_seconds': 60}
    # The agent is handed the new version (the queue's claim reports the same stored value).
    agent = settings.agent_settings(hub, 'jira')
    assert agent['settings_version'] == 2
    assert agent['pacing'] == {'interval_ms': 800, 'pause_on_rate_limit_seconds': 60}


def test_change_bumps_exactly_once_for_many_keys(hub):
    settings.update_settings(hub, {'backup_keep': 3, 'auto_refresh_minutes': 30,
                                   'relay_dir': '/srv/relay'})
    assert version(hub) == 2
    assert settings.setting(hub, 'relay_dir') == '/srv/relay'


@pytest.mark.parametrize('change', [
    {},
    {'backup_keep': 14},
    {'closed_statuses': ['Готово', 'Снято']},
    {'pacing': {'interval_ms': 500}},
    {'relay_dir': None},
])
def test_change_that_changes_nothing_does_not_bump(hub, change):
    before = raw_settings(hub)
    settings.update_settings(hub, change)
    assert version(hub) == 1
    assert raw_settings(hub) == before


def test_scenario_wrong_relay_dir(hub):
    before = raw_settings(hub)
    with pytest.raises(ValidationError) as raised:
        settings.update_settings(hub, {'relay_dir': 'rshb/jira-bridge', 'backup_keep': 3})
    assert set(raised.value.fields) == {'relay_dir'}
    assert raw_settings(hub) == before
    assert settings.setting(hub, 'relay_dir') is None
    assert version(hub) == 1


def test_scenario_closed_statuses_by_default(data_dir, clock):
    hub = legacy_hub(data_dir, clock, 8, {'project_key': 'AURORA', 'settings_version': 5})
    assert settings.client_settings(hub)['closed_statuses'] == ['Готово', 'Снято']
    assert 'closed_statuses' not in settings.agent_settings(hub, 'jira')
    assert version(hub) == 5
    hub.close()


def test_closed_statuses_key_removed_comes_back_at_open(data_dir, clock):
    hub = open_hub(data_dir, clock=clock)
    settings.update_settings(hub, {'closed_statuses': ['Закрыто']})
    hub.db.execute_sql("DELETE FROM setting WHERE key = 'closed_statuses'")
    hub.close()
    hub = open_hub(data_dir, clock=clock)
    assert settings.client_settings(hub)['closed_statuses'] == ['Готово', 'Снято']
    assert version(hub) == 2
    hub.close()


@pytest.mark.parametrize('key', ['base_jql', 'board_id'])
def test_scenario_writing_base_jql(hub, key):
    value = 'project = AURORA' if key == 'base_jql' else 4216
    with pytest.raises(ValidationError) as raised:
        settings.update_settings(hub, {key: value})
    assert raised.value.fields == {key: ['базовая JQL собирается из проектов']}
    assert raised.value.message == 'базовая JQL собирается из проектов'
    assert version(hub) == 1
    assert settings.setting(hub, key) is None


def test_scenario_project_creation_keeps_settings_version(hub):
    settings.update_settings(hub, {'project_key': 'AURORA'})
    projects.create_project(hub, 'AWPCA', 'АРМ КА')
    before = version(hub)
    projects.create_project(hub, 'STOCKS_DRRK', 'Акции ДРРК')
    assert version(hub) == before == 2
    assert settings.client_settings(hub)['base_jql'] == \
        'project = AURORA AND labels in ("AWPCA", "STOCKS_DRRK")'


def test_scenario_keys_returned_by_an_older_process(data_dir, clock):
    hub = legacy_hub(data_dir, clock, 8, {'project_key': 'AURORA', 'settings_version': 7})
    # An older process (MCP session before reconnect) writes the retired keys back.
    conn = sqlite3.connect(data_dir / 'hub.sqlite')
    conn.executemany('INSERT INTO setting (key, value) VALUES (?, ?)',
                     [('status_labels', '{}'), ('transitions_map', '{}')])
    conn.commit()
    conn.close()
    settings.ensure_defaults(hub)
    keys = set(settings.stored_settings(hub))
    assert 'status_labels' not in keys and 'transitions_map' not in keys
    assert version(hub) == 7
    hub.close()


@pytest.mark.parametrize('extra', [{}, {'status_labels': {}, 'transitions_map': {'x': 'y'}}])
def test_scenario_no_status_keys_in_fact(data_dir, clock, extra):
    hub = legacy_hub(data_dir, clock, 8, {'project_key': 'AURORA', 'settings_version': 3, **extra})
    client = settings.client_settings(hub)
    agent = settings.agent_settings(hub, 'jira')
    for key in ('status_labels', 'transitions_map'):
        assert key not in client
        assert key not in agent
    assert version(hub) == 3
    hub.close()


def test_client_settings_view(hub):
    view = settings.client_settings(hub)
    assert 'tokens' not in view and 'schema_version' not in view
    assert view['base_jql'] is None
    assert view['settings_version'] == 1


def test_agent_settings_shape(hub):
    settings.update_settings(hub, {'project_key': 'AURORA', 'relay_dir': '/srv/relay',
                                   'closed_statuses': ['Готово'], 'auto_refresh_minutes': 15})
    projects.create_project(hub, 'AWPCA', 'АРМ КА', board_id=4216)
    agent = settings.agent_settings(hub, 'jira')
    assert set(agent) == {'project_key', 'field_ids', 'issue_types', 'priority_map', 'link_types',
                          'pacing', 'settings_version', 'base_jql', 'projects'}
    for key in AGENT_NEVER:
        assert key not in agent
    assert agent['base_jql'] == 'project = AURORA AND labels in ("AWPCA")'
    assert agent['projects'] == [
        {'label': 'AWPCA', 'name': 'АРМ КА', 'board_id': 4216, 'board_type': None}]
    assert agent['settings_version'] == 2


def test_agent_settings_pass_legacy_board_id_as_fallback(data_dir, clock):
    hub = legacy_hub(data_dir, clock, 3, {'project_key': 'AURORA', 'board_id': 4216,
                                          'base_jql': 'project = AURORA AND labels in (A, B)'})
    agent = settings.agent_settings(hub, 'jira')
    assert agent['board_id'] == 4216
    for key in AGENT_NEVER:
        assert key not in agent
    assert 'board_id' in settings.client_settings(hub)  # legacy key kept, shown as stored
    hub.close()


def test_agent_settings_of_wiki_and_unknown_agent(hub):
    assert settings.agent_settings(hub, 'wiki') == {'settings_version': 1}
    with pytest.raises(ValidationError) as raised:
        settings.agent_settings(hub, 'confluence')
    assert set(raised.value.fields) == {'agent'}


@pytest.mark.parametrize('key, value', [
    ('settings_version', 5),
    ('schema_version', 10),
    ('tokens', {'agent': 'a', 'client': 'b'}),
    ('sprint_names', ['Спринт 1']),
    ('status_labels', {}),
])
def test_read_only_and_unknown_keys_are_refused(hub, key, value):
    before = raw_settings(hub)
    with pytest.raises(ValidationError) as raised:
        settings.update_settings(hub, {key: value, 'backup_keep': 2})
    assert set(raised.value.fields) == {key}
    assert raw_settings(hub) == before


@pytest.mark.parametrize('body', [None, [], 'pacing', 5])
def test_change_must_be_an_object(hub, body):
    with pytest.raises(ValidationError):
        settings.update_settings(hub, body)
    assert version(hub) == 1


VALID = [
    ('project_key', 'AURORA'), ('project_key', 'A1_B'),
    ('field_ids', {}), ('field_ids', {'planned_start': 'customfield_10200', 'planned_end': None,
                                      'epic_link': 'customfield_10008', 'story_points': 'x',
                                      'sprint': 'customfield_10010', 'rank': 'customfield_10019'}),
    ('issue_types', {'task': {'name': 'Задача', 'id': '10002'}, 'epic': {'name': 'Эпик', 'id': None}}),
    ('issue_types', {'task': {'name': None, 'id': None}, 'epic': {'name': 'Эпик', 'id': None},
                     'bug': {'name': 'Ошибка', 'id': '1'}}),
    ('priority_map', {}), ('priority_map', {'high': 'Высокий'}),
    ('link_types', {'blocks': 'Blocks'}),
    ('pacing', {}), ('pacing', {'interval_ms': 0, 'pause_on_rate_limit_seconds': 5}),
    ('backup_keep', 1), ('backup_keep', 100),
    ('auto_refresh_minutes', 0), ('auto_refresh_minutes', 60),
    ('relay_dir', None), ('relay_dir', '/srv/relay'), ('relay_dir', 'C:\\relay'),
    ('relay_dir', '\\\\server\\share\\relay'),
    ('closed_statuses', []), ('closed_statuses', ['Готово']),
]

INVALID = [
    ('project_key', ''), ('project_key', 'aurora'), ('project_key', '1AURORA'),
    ('project_key', 'AU RORA'), ('project_key', None), ('project_key', 5),
    ('project_key', 'АВРОРА'), ('project_key', 'AURORA\n'), ('project_key', 'AUR-ORA'),
    ('field_ids', []), ('field_ids', {'unknown': 'x'}), ('field_ids', {'rank': 5}),
    ('field_ids', {'rank': ''}),
    ('issue_types', {'task': {'name': 'Задача', 'id': None}}),
    ('issue_types', {'task': {'name': 'a', 'id': None}, 'epic': {'name': 'b', 'id': None},
                     'story': {'name': 'c', 'id': None}}),
    ('issue_types', {'task': 'Задача', 'epic': {'name': 'b', 'id': None}}),
    ('issue_types', {'task': {'name': 'a', 'id': 5}, 'epic': {'name': 'b', 'id': None}}),
    ('issue_types', []),
    ('priority_map', []), ('priority_map', {'high': 5}), ('priority_map', {'high': ''}),
    ('link_types', 'Blocks'),
    ('pacing', []), ('pacing', {'interval_ms': -1}), ('pacing', {'interval_ms': 1.5}),
    ('pacing', {'interval_ms': True}), ('pacing', {'burst': 3}),
    ('backup_keep', 0), ('backup_keep', -1), ('backup_keep', '14'), ('backup_keep', True),
    ('backup_keep', 1.0), ('backup_keep', None),
    ('auto_refresh_minutes', -5), ('auto_refresh_minutes', '5'), ('auto_refresh_minutes', None),
    ('relay_dir', 'rshb/jira-bridge'), ('relay_dir', './relay'), ('relay_dir', ''),
    ('relay_dir', 5), ('relay_dir', ['/srv']),
    ('closed_statuses', 'Готово'), ('closed_statuses', None), ('closed_statuses', [1]),
    ('closed_statuses', ['']), ('closed_statuses', {'Готово': True}),
    # Upper bounds: values that would overflow SQLite integers or datetime in claims.
    ('pacing', {'interval_ms': 60_001}), ('pacing', {'pause_on_rate_limit_seconds': 10**30}),
    ('auto_refresh_minutes', 2**62), ('backup_keep', 10_001),
]


@pytest.mark.parametrize('key, value', VALID)
def test_validator_accepts(key, value):
    assert key in settings.validate_changes({key: value})


@pytest.mark.parametrize('key, value', INVALID)
def test_validator_refuses(key, value):
    with pytest.raises(ValidationError) as raised:
        settings.validate_changes({key: value})
    assert set(raised.value.fields) == {key}
    assert all(isinstance(message, str) and message for message in raised.value.fields[key])


def test_validation_lists_every_bad_key(hub):
    with pytest.raises(ValidationError) as raised:
        settings.update_settings(hub, {'relay_dir': 'x', 'backup_keep': 0, 'base_jql': 'q'})
    assert set(raised.value.fields) == {'relay_dir', 'backup_keep', 'base_jql'}


CONFIG = {
    'jira_url': 'https://jira.example', 'jira_login': 'bridge', 'jira_password': 'p@ss-не-хранить',
    'jira_token': 'tok-не-хранить', 'project_key': 'AURORA',
    'issue_type_task': 'Задача', 'issue_type_task_id': 10002,
    'issue_type_epic': 'Эпик',
    'field_ids': {'planned_start': 'customfield_10200', 'planned_end': 'customfield_10201',
                  'epic_link': 'customfield_10008'},
    'priority_map': {'high': 'Высокий'}, 'link_types': {'blocks': 'Blocks'},
    'pacing': {'interval_ms': 700}, 'backup_keep': 7, 'auto_refresh_minutes': 0,
    'projects': [{'label': 'AWPCA', 'name': 'АРМ КА', 'board_id': 4216},
                 {'label': 'STOCKS_DRRK', 'name': 'Акции'}],
    'unrelated_key': 1,
}


def test_scenario_config_without_bug_keys(hub):
    """The ``ensure_issue`` 422 half of this scenario is tested with the queue."""
    result = import_config(hub, CONFIG)
    assert result == {'projects_created': ['AWPCA', 'STOCKS_DRRK']}
    issue_types = settings.setting(hub, 'issue_types')
    assert issue_types == {'task': {'name': 'Задача', 'id': '10002'},
                           'epic': {'name': 'Эпик', 'id': None}}
    assert 'bug' not in issue_types
    stored = raw_settings(hub)
    for secret in ('p@ss-не-хранить', 'tok-не-хранить', 'bridge', 'https://jira.example'):
        assert not any(secret in (value or '') for value in stored.values())
    for key in ('jira_url', 'jira_login', 'jira_password', 'jira_token', 'unrelated_key', 'projects'):
        assert key not in stored
    assert settings.setting(hub, 'pacing') == {'interval_ms': 700, 'pause_on_rate_limit_seconds': 60}
    assert settings.setting(hub, 'backup_keep') == 7
    assert version(hub) == 2
    assert [(p['label'], p['name'], p['board_id']) for p in projects.projects(hub)] == [
        ('AWPCA', 'АРМ КА', 4216), ('STOCKS_DRRK', 'Акции', None)]
    assert settings.client_settings(hub)['base_jql'] == \
        'project = AURORA AND labels in ("AWPCA", "STOCKS_DRRK")'


@pytest.mark.parametrize('keys, bug', [
    ({'issue_type_bug': 'Ошибка'}, {'name': 'Ошибка', 'id': None}),
    ({'issue_type_bug_id': '10004'}, {'name': None, 'id': '10004'}),
    ({'issue_type_bug': 'Ошибка', 'issue_type_bug_id': 10004}, {'name': 'Ошибка', 'id': '10004'}),
])
def test_config_with_a_bug_key_has_bug(keys, bug):
    issue_types = settings_from_config({'issue_type_task': 'Задача', **keys})['issue_types']
    assert issue_types == {'task': {'name': 'Задача', 'id': None},
                           'epic': {'name': None, 'id': None}, 'bug': bug}


def test_reimport_keeps_tokens_and_bumps_only_on_change(hub, clock):
    tokens = settings.tokens(hub)
    import_config(hub, CONFIG)
    assert version(hub) == 2
    clock.advance(minutes=1)
    assert import_config(hub, CONFIG) == {'projects_created': []}
    assert version(hub) == 2
    import_config(hub, {**CONFIG, 'backup_keep': 9,
                                 'projects': [{'label': 'awpca', 'name': 'дубль'},
                                              {'label': 'NEW', 'name': 'Новый'}]})
    assert version(hub) == 3
    assert settings.tokens(hub) == tokens
    assert [p['label'] for p in projects.projects(hub)] == ['AWPCA', 'STOCKS_DRRK', 'NEW']


@pytest.mark.parametrize('config, field', [
    ({**CONFIG, 'backup_keep': 0}, 'backup_keep'),
    ({**CONFIG, 'projects': 'AWPCA'}, 'projects'),
    ({**CONFIG, 'projects': [{'label': 'BAD LABEL', 'name': 'x'}]}, 'label'),
    ([1, 2], 'config'),
])
def test_invalid_config_writes_nothing(hub, config, field):
    before = raw_settings(hub)
    with pytest.raises(ValidationError) as raised:
        import_config(hub, config)
    assert field in raised.value.fields
    assert raw_settings(hub) == before
    assert projects.projects(hub) == []


def test_value_that_is_not_json_reads_as_text(hub):
    hub.db.execute_sql("INSERT INTO setting (key, value) VALUES ('hand_written', 'not json')")
    assert settings.setting(hub, 'hand_written') == 'not json'
    assert settings.stored_settings(hub)['hand_written'] == 'not json'
    assert settings.setting(hub, 'absent', 'default') == 'default'
