"""Claim and report (contract §9.3–§9.6), sync-run bookkeeping and agent status.

Spec sections «Пакеты и команды», «Журнал синхронизаций и статус агента», «Служебные заметки».
"""
from __future__ import annotations

import hashlib
import io

import pytest

from hublib import files, mirror, notes, open_hub, projects, queue, settings
from hublib.errors import ConflictError, NotFoundError, ValidationError

LIMIT_ERROR = 'агент не отчитался после 3 выдач'


@pytest.fixture
def hub(hub, queue_settings):
    return queue_settings(hub)


def claim(hub, agent='jira', **kwargs):
    kwargs = {'agent_version': '15', 'settings_version': 2, **kwargs}
    return queue.claim_command(hub, agent=agent, **kwargs)


def report(hub, command_id, status='done', result=None, error=None, jira_calls=1, rate_limited=0,
           agent='jira'):
    return queue.report_command(hub, command_id, agent=agent, status=status, result=result,
                                error=error, jira_calls=jira_calls, rate_limited=rate_limited)


def comment(key='AURORA-1', **extra):
    return {'type': 'add_comment', 'params': {'key': key, 'body': 'текст'}, **extra}


def ensure(temp_key=None, **extra):
    params = {'issue_type': 'task', 'summary': 'Новая задача'}
    if temp_key:
        params['temp_key'] = temp_key
    return {'type': 'ensure_issue', 'params': params, **extra}


def make_batch(hub, *commands, title='t'):
    return queue.create_batch(hub, title=title, author='ivanov', commands=list(commands))


def sync_run(hub, command_id):
    row = hub.db.execute_sql('SELECT started_at, finished_at, kind, query, issues_count, '
                             'links_count, jira_calls, rate_limited, history_at FROM sync_run '
                             'WHERE command_id = ?', (command_id,)).fetchone()
    return dict(zip(('started_at', 'finished_at', 'kind', 'query', 'issues_count', 'links_count',
                     'jira_calls', 'rate_limited', 'history_at'), row)) if row else None


def agent_row(hub, agent='jira'):
    row = hub.db.execute_sql('SELECT last_seen_at, agent_version, settings_version, '
                             'current_command_id, last_call_at FROM agent_status WHERE agent = ?',
                             (agent,)).fetchone()
    return dict(zip(('last_seen_at', 'agent_version', 'settings_version', 'current_command_id',
                     'last_call_at'), row)) if row else None


# --- claim ---------------------------------------------------------------------------------------

def test_claim_with_empty_queue_records_agent(hub):
    answer = claim(hub, last_jira_call_at='2026-11-30T12:59:00.000+0300')
    assert answer == {'command': None, 'settings_version': 2}
    assert agent_row(hub) == {'last_seen_at': '2026-11-30T10:00:00+00:00', 'agent_version': '15',
                              'settings_version': 2, 'current_command_id': None,
                              'last_call_at': '2026-11-30T09:59:00+00:00'}


def test_claim_delivers_in_batch_and_seq_order(hub, clock):
    first = make_batch(hub, comment('AURORA-1'), comment('AURORA-2'))
    make_batch(hub, comment('AURORA-3'))
    delivered = claim(hub)['command']
    assert delivered == {'id': first['commands'][0]['id'], 'batch_id': first['id'], 'seq': 1,
                         'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'текст'},
                         'deliveries': 1, 'pause_seconds': 0}
    assert agent_row(hub)['current_command_id'] == delivered['id']
    stored = queue.command(hub, delivered['id'])
    assert (stored['status'], stored['claimed_at'], stored['deliveries']) == \
        ('claimed', '2026-11-30T10:00:00+00:00', 1)
    report(hub, delivered['id'])
    assert agent_row(hub)['current_command_id'] is None
    assert claim(hub)['command']['params']['key'] == 'AURORA-2'
    assert claim(hub)['command']['params']['key'] == 'AURORA-2'  # lost delivery: again


def test_claim_of_wiki_gets_nothing_and_never_takes_jira_commands(hub):
    make_batch(hub, comment())
    assert claim(hub, agent='wiki')['command'] is None
    assert claim(hub)['command']['deliveries'] == 1
    assert claim(hub, agent='wiki')['command'] is None  # a claimed jira command is not wiki's


@pytest.mark.parametrize('kwargs, field', [
    ({'agent': 'confluence'}, 'agent'), ({'settings_version': 'x'}, 'settings_version'),
    ({'last_jira_call_at': 'вчера'}, 'last_jira_call_at'),
    ({'agent_version': ['15']}, 'agent_version')])
def test_claim_validation(hub, kwargs, field):
    with pytest.raises(ValidationError) as error:
        claim(hub, **kwargs)
    assert field in error.value.fields


def test_scenario_settings_change_raises_version_and_next_claim_hands_it_out(hub):
    """«Правка настроек поднимает версию»."""
    before = claim(hub)['settings_version']
    settings.update_settings(hub, {'pacing': {'interval_ms': 800, 'pause_on_rate_limit_seconds': 60}})
    assert claim(hub)['settings_version'] == before + 1


def test_pause_seconds_after_rate_limited_report(hub):
    settings.update_settings(hub, {'pacing': {'interval_ms': 500, 'pause_on_rate_limit_seconds': 90}})
    make_batch(hub, comment(), comment(), comment())
    first = claim(hub)['command']
    report(hub, first['id'], rate_limited=2)
    second = claim(hub)['command']
    assert second['pause_seconds'] == 90
    assert queue.command(hub, second['id'])['pause_seconds'] == 90
    report(hub, second['id'], rate_limited=0)
    assert claim(hub)['command']['pause_seconds'] == 0


# --- lost deliveries ---------------------------------------------------------------------------

def test_scenario_refresh_redelivery_does_not_double_counters(hub, clock):
    """«Довыдача refresh не удваивает счётчики»: 150 issues, lost report, again 150 → 150."""
    made = make_batch(hub, {'type': 'refresh', 'params': {'keys': ['AURORA-1']}})
    command_id = made['commands'][0]['id']
    issues = [{'key': f'AURORA-{n}', 'summary': 's', 'labels': ['AWPCA']} for n in range(1, 151)]
    assert claim(hub)['command']['id'] == command_id
    mirror.ingest_state(hub, 'jira', command_id, issues)
    assert sync_run(hub, command_id)['issues_count'] == 150
    clock.advance(minutes=10)
    again = claim(hub)['command']
    assert (again['id'], again['deliveries']) == (command_id, 2)
    run = sync_run(hub, command_id)
    assert (run['issues_count'], run['started_at']) == (0, '2026-11-30T10:00:00+00:00')
    mirror.ingest_state(hub, 'jira', command_id, issues)
    assert sync_run(hub, command_id)['issues_count'] == 150


def test_scenario_refresh_gives_up_after_delivery_limit(hub, clock):
    """«refresh сдался по пределу выдач»: three deliveries without report → failed, finished_at."""
    made = make_batch(hub, {'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}},
                      comment(depends_on=1), comment('AURORA-7'))
    refresh_id, dependent_id, other_id = (c['id'] for c in made['commands'])
    for delivery in (1, 2, 3):
        delivered = claim(hub)['command']
        assert (delivered['id'], delivered['deliveries']) == (refresh_id, delivery)
        clock.advance(minutes=5)
    answer = claim(hub)
    assert answer['command']['id'] == other_id
    failed = queue.command(hub, refresh_id)
    assert failed['status'] == 'failed'
    assert failed['error'] == LIMIT_ERROR
    assert failed['finished_at'] == '2026-11-30T10:15:00+00:00'
    assert sync_run(hub, refresh_id)['finished_at'] == '2026-11-30T10:15:00+00:00'
    assert sync_run(hub, refresh_id)['history_at'] is None
    skipped = queue.command(hub, dependent_id)
    assert (skipped['status'], skipped['error']) == ('skipped', f'зависимость #{refresh_id} не выполнена')


def test_late_done_of_a_failed_full_refresh_keeps_history_at_and_neighbors(hub, clock):
    """001 «Отметка журнала…»: a refresh that ended failed keeps history_at NULL, even when its
    done report arrives late; no neighbour marking for a run that did not end done."""
    hub.db.execute_sql('INSERT INTO issue (key, labels, neighbor) VALUES (?, ?, 0)',
                       ('AURORA-50', '["AWPCA"]'))
    refresh_id = make_batch(hub, {'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}}
                            )['commands'][0]['id']
    clock.advance(minutes=1)
    for _ in range(3):
        claim(hub)
    mirror.ingest_state(hub, 'jira', refresh_id, [{'key': 'AURORA-1', 'labels': ['AWPCA']}])
    claim(hub)  # the fourth claim fails it by the delivery limit
    closed = sync_run(hub, refresh_id)
    answer = report(hub, refresh_id, result={'history': {'issues': 1, 'changes': 0,
                                                         'incomplete': []}}, jira_calls=5)
    assert (answer['late'], answer['status']) == (True, 'failed')
    assert sync_run(hub, refresh_id) == closed
    assert closed['history_at'] is None
    assert hub.db.execute_sql("SELECT neighbor FROM issue WHERE key = 'AURORA-50'").fetchone() == (0,)


def test_agents_redelivered_list(hub, clock):
    made = make_batch(hub, comment())
    claim(hub)
    assert queue.agents(hub)['items'][0]['redelivered'] == []
    clock.advance(minutes=2)
    claim(hub)
    jira = queue.agents(hub)['items'][0]
    assert jira['redelivered'] == [{'id': made['commands'][0]['id'], 'type': 'add_comment',
                                    'claimed_at': '2026-11-30T10:02:00+00:00', 'deliveries': 2}]


# --- agent status --------------------------------------------------------------------------------

def test_scenario_agents_status_separately(hub, clock):
    """«Статусы агентов раздельно»: jira a minute ago → online; wiki never → offline, null."""
    claim(hub, last_jira_call_at='2026-11-30T09:59:30+00:00')
    clock.advance(minutes=1)
    items = {item['agent']: item for item in queue.agents(hub)['items']}
    assert list(items) == ['jira', 'wiki']
    assert items['jira'] == {'agent': 'jira', 'online': True,
                             'last_seen_at': '2026-11-30T10:00:00+00:00', 'agent_version': '15',
                             'settings_version': 2, 'current_command_id': None,
                             'last_call_at': '2026-11-30T09:59:30+00:00', 'redelivered': []}
    assert items['wiki'] == {'agent': 'wiki', 'online': False, 'last_seen_at': None,
                             'agent_version': None, 'settings_version': None,
                             'current_command_id': None, 'last_call_at': None, 'redelivered': []}


def test_scenario_agent_silent_for_long(hub, clock):
    """«Агент давно не выходил на связь»: last_seen_at older than 5 minutes → online = false."""
    claim(hub)
    clock.advance(minutes=4, seconds=59)
    assert queue.agents(hub)['items'][0]['online'] is True
    clock.advance(seconds=1)
    assert queue.agents(hub)['items'][0]['online'] is False


# --- dependencies and temp keys ------------------------------------------------------------------

def test_failed_report_skips_dependents_transitively(hub):
    made = make_batch(hub, comment(), comment(depends_on=1), comment(depends_on=2), comment())
    ids = [c['id'] for c in made['commands']]
    first = claim(hub)['command']
    report(hub, first['id'], status='failed', error='HTTP 500')
    got = [queue.command(hub, i) for i in ids]
    assert [c['status'] for c in got] == ['failed', 'skipped', 'skipped', 'queued']
    assert got[1]['error'] == f'зависимость #{ids[0]} не выполнена'
    assert got[2]['error'] == f'зависимость #{ids[1]} не выполнена'
    assert claim(hub)['command']['id'] == ids[3]
    assert queue.batch(hub, made['id'])['counts']['skipped'] == 2


def test_claim_skips_command_whose_dependency_was_not_done(hub):
    made = make_batch(hub, comment(), comment(depends_on=1), comment())
    ids = [c['id'] for c in made['commands']]
    hub.db.execute_sql("UPDATE command SET status = 'cancelled' WHERE id = ?", (ids[0],))
    assert claim(hub)['command']['id'] == ids[2]
    skipped = queue.command(hub, ids[1])
    assert (skipped['status'], skipped['error']) == ('skipped', f'зависимость #{ids[0]} не выполнена')
    assert skipped['finished_at'] == '2026-11-30T10:00:00+00:00' and skipped['deliveries'] == 0


def test_temp_key_substituted_at_delivery(hub):
    made = make_batch(hub, ensure('new:5'), ensure('new:6'),
                      {'type': 'ensure_link', 'depends_on': 2,
                       'params': {'source_key': 'new:5', 'target_key': 'new:6', 'link_type': 'blocks'}},
                      {'type': 'ensure_issue', 'depends_on': 1,
                       'params': {'issue_type': 'task', 'summary': 'Подзадача', 'epic_key': 'new:5'}})
    report(hub, claim(hub)['command']['id'], result={'key': 'AURORA-1640'})
    report(hub, claim(hub)['command']['id'], result={'key': 'AURORA-1641'})
    link = claim(hub)['command']
    assert link['params'] == {'source_key': 'AURORA-1640', 'target_key': 'AURORA-1641',
                              'link_type': 'blocks'}
    assert queue.command(hub, link['id'])['params']['source_key'] == 'new:5'  # stored as queued
    assert claim(hub)['command']['params']['source_key'] == 'AURORA-1640'  # redelivery too
    report(hub, link['id'])
    assert claim(hub)['command']['params']['epic_key'] == 'AURORA-1640'
    assert made['commands'][3]['params']['epic_key'] == 'new:5'


def test_unresolved_temp_key_is_skipped_with_error_naming_it(hub):
    made = make_batch(hub, ensure('new:5'), comment('new:5', depends_on=1), comment('new:5'),
                      comment('AURORA-2'))
    ids = [c['id'] for c in made['commands']]
    # confirmed_by_state without result.key: the issue exists, but its key is unknown
    report(hub, claim(hub)['command']['id'], status='confirmed_by_state', result={})
    assert claim(hub)['command']['id'] == ids[3]
    for command_id in ids[1:3]:
        skipped = queue.command(hub, command_id)
        assert skipped['status'] == 'skipped' and 'new:5' in skipped['error']


# --- report --------------------------------------------------------------------------------------

def test_report_errors(hub):
    made = make_batch(hub, comment())
    command_id = made['commands'][0]['id']
    with pytest.raises(NotFoundError):
        report(hub, 999)
    with pytest.raises(ConflictError):
        report(hub, command_id)  # still queued
    claim(hub)
    with pytest.raises(ConflictError):
        report(hub, command_id, agent='wiki')
    for kwargs, field in (({'status': 'claimed'}, 'status'), ({'result': [1]}, 'result'),
                          ({'jira_calls': -1}, 'jira_calls'), ({'rate_limited': 'x'}, 'rate_limited'),
                          ({'error': 5}, 'error')):
        with pytest.raises(ValidationError) as error:
            report(hub, command_id, **kwargs)
        assert field in error.value.fields
    assert queue.command(hub, command_id)['status'] == 'claimed'


def test_report_stores_fields_and_cuts_error(hub, clock):
    made = make_batch(hub, comment())
    command_id = claim(hub)['command']['id']
    clock.advance(seconds=30)
    answer = report(hub, command_id, status='failed', result={'http': 500}, error='ж' * 2000,
                    jira_calls=4, rate_limited=1)
    assert answer['late'] is False
    stored = queue.command(hub, command_id)
    assert stored['status'] == 'failed'
    assert stored['finished_at'] == '2026-11-30T10:00:30+00:00'
    assert stored['result'] == {'http': 500}
    assert stored['error'] == 'ж' * 1500
    assert (stored['jira_calls'], stored['rate_limited']) == (4, 1)
    assert queue.batch(hub, made['id'])['status'] == 'done'


@pytest.mark.parametrize('first', ['done', 'confirmed_by_state', 'skipped'])
def test_repeated_report_changes_nothing(hub, clock, first):
    command_id = make_batch(hub, comment())['commands'][0]['id']
    claim(hub)
    report(hub, command_id, status=first, result={'n': 1})
    before = queue.command(hub, command_id)
    clock.advance(minutes=1)
    again = report(hub, command_id, status=first, result={'n': 1}, jira_calls=7)
    assert again['late'] is False
    assert queue.command(hub, command_id) == before
    with pytest.raises(ConflictError):  # another outcome: tests/lib/test_report_checks.py
        report(hub, command_id, status='failed', result={'n': 2}, error='x')
    assert queue.command(hub, command_id) == before


def test_late_report_on_failed_command_keeps_status_and_stores_result(hub, clock):
    command_id = make_batch(hub, comment())['commands'][0]['id']
    for _ in range(4):
        claim(hub)
    assert queue.command(hub, command_id)['status'] == 'failed'
    answer = report(hub, command_id, result={'comment_id': '101'})
    assert answer['late'] is True
    stored = queue.command(hub, command_id)
    assert (stored['status'], stored['error'], stored['result']) == \
        ('failed', LIMIT_ERROR, {'comment_id': '101'})


def test_scenario_note_merge_on_ensure_issue_done(hub):
    """«Слияние с заметкой под ключом» through a done report of ensure_issue new:5."""
    notes.put_note(hub, 'new:5', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    notes.put_note(hub, 'AURORA-1640', {'owner_note': 'спросить ИБ', 'updated_by': 'petrov'})
    command_id = make_batch(hub, ensure('new:5'))['commands'][0]['id']
    claim(hub)
    report(hub, command_id, result={'key': 'AURORA-1640'})
    merged = notes.note(hub, 'AURORA-1640')
    assert (merged['work_kind'], merged['owner_note']) == ('Аналитика', 'спросить ИБ')
    with pytest.raises(NotFoundError):
        notes.note(hub, 'new:5')


def test_scenario_note_merge_by_late_done_after_delivery_limit(hub, clock):
    """Late done report with a key on an ensure_issue failed by the delivery limit merges notes."""
    notes.put_note(hub, 'new:5', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    notes.put_note(hub, 'AURORA-1640', {'owner_note': 'спросить ИБ', 'updated_by': 'petrov'})
    command_id = make_batch(hub, ensure('new:5'))['commands'][0]['id']
    for _ in range(4):
        claim(hub)
        clock.advance(minutes=1)
    assert queue.command(hub, command_id)['error'] == LIMIT_ERROR
    answer = report(hub, command_id, result={'key': 'AURORA-1640'})
    assert answer['late'] is True and answer['status'] == 'failed'
    merged = notes.note(hub, 'AURORA-1640')
    assert (merged['work_kind'], merged['owner_note']) == ('Аналитика', 'спросить ИБ')
    with pytest.raises(NotFoundError):
        notes.note(hub, 'new:5')


def test_late_done_on_cancelled_claimed_command_moves_note(hub):
    notes.put_note(hub, 'new:7', {'rest_text': 'доделать', 'updated_by': 'ivanov'})
    made = make_batch(hub, ensure('new:7'))
    command_id = made['commands'][0]['id']
    claim(hub)
    hub.db.execute_sql("UPDATE command SET status = 'cancelled' WHERE id = ?", (command_id,))
    assert report(hub, command_id, result={'key': 'AURORA-77'})['late'] is True
    assert notes.note(hub, 'AURORA-77')['rest_text'] == 'доделать'


def test_full_refresh_done_sets_history_and_marks_neighbors(hub, clock):
    """Scenario «Журнал принят» through the report; the finished run marks neighbours."""
    hub.db.execute_sql("INSERT INTO issue (key, neighbor, fetched_at) VALUES "
                       "('AURORA-99', 0, '2026-11-29T00:00:00+00:00')")
    command_id = make_batch(hub, {'type': 'refresh',
                                  'params': {'jql': projects.base_jql(hub)}})['commands'][0]['id']
    claim(hub)
    mirror.ingest_state(hub, 'jira', command_id, [{'key': 'AURORA-1', 'labels': ['AWPCA']}])
    clock.advance(minutes=3)
    report(hub, command_id, result={'history': {'issues': 3, 'changes': 7, 'incomplete': []}},
           jira_calls=7, rate_limited=1)
    run = sync_run(hub, command_id)
    assert run['finished_at'] == run['history_at'] == '2026-11-30T10:03:00+00:00'
    assert (run['kind'], run['jira_calls'], run['rate_limited'], run['issues_count']) == \
        ('jql', 7, 1, 1)
    neighbor = dict(hub.db.execute_sql('SELECT key, neighbor FROM issue').fetchall())
    assert neighbor == {'AURORA-1': 0, 'AURORA-99': 1}


def test_fetch_attachment_done_records_download(hub):
    hub.db.execute_sql("INSERT INTO issue_attachment (attachment_id, key) VALUES ('31337', 'AURORA-1')")
    made = make_batch(hub, {'type': 'fetch_attachment', 'params': {'attachment_id': '31337'}},
                      {'type': 'fetch_attachment', 'params': {'attachment_id': '31337'}})
    body = b'%PDF-1.4 test'
    digest = hashlib.sha256(body).hexdigest()
    first = claim(hub)['command']['id']
    with pytest.raises(ConflictError):
        report(hub, first, result={'sha256': digest, 'size': len(body)})
    assert queue.command(hub, first)['status'] == 'claimed'  # nothing of the report kept
    with pytest.raises(ValidationError):
        report(hub, first, result={'sha256': 'nope'})
    files.store_file(hub, digest, io.BytesIO(body))
    report(hub, first, result={'sha256': digest, 'size': len(body)})
    row = hub.db.execute_sql('SELECT file, size FROM attachment_file WHERE attachment_id = ?',
                             ('31337',)).fetchone()
    assert row == (digest, len(body))
    assert made['commands'][1]['status'] == 'queued'


# --- auto refresh --------------------------------------------------------------------------------

def test_auto_refresh_batch(hub, clock):
    assert claim(hub)['command'] is None  # off by default
    settings.update_settings(hub, {'auto_refresh_minutes': 30})
    delivered = claim(hub)['command']
    assert delivered['type'] == 'refresh'
    assert delivered['params'] == {'jql': projects.base_jql(hub)}
    auto = queue.batch(hub, delivered['batch_id'])
    assert (auto['title'], auto['author']) == ('Автообновление', 'hub')
    report(hub, delivered['id'])
    clock.advance(minutes=29)
    assert claim(hub)['command'] is None  # a full run started within 30 minutes
    clock.advance(minutes=1)
    again = claim(hub)['command']
    assert again['type'] == 'refresh' and again['batch_id'] != delivered['batch_id']
    assert claim(hub)['command']['id'] == again['id']  # redelivered, not a second auto batch
    assert queue.batches(hub)['items'][0]['id'] == again['batch_id']


def test_auto_refresh_is_queued_even_when_the_base_jql_exceeds_the_client_limit(hub):
    # 330 projects with 100-character labels: a base JQL of ~34,000 characters, longer than a
    # client may type into a refresh. The hub's own batch must not be refused (nor block claims).
    for n in range(330):
        projects.create_project(hub, f'P{n:03d}' + 'X' * 96, f'Проект {n}')
    settings.update_settings(hub, {'auto_refresh_minutes': 5})
    assert len(projects.base_jql(hub)) > 32_000
    delivered = claim(hub)['command']
    assert delivered['type'] == 'refresh'
    assert delivered['params'] == {'jql': projects.base_jql(hub)}


def test_auto_refresh_waits_for_queued_refresh_and_ignores_keys_runs(hub, clock):
    settings.update_settings(hub, {'auto_refresh_minutes': 30})
    made = make_batch(hub, {'type': 'refresh', 'params': {'keys': ['AURORA-1']}})
    delivered = claim(hub)['command']
    assert delivered['id'] == made['commands'][0]['id']  # no auto batch while a refresh is queued
    report(hub, delivered['id'])
    auto = claim(hub)['command']  # a keys refresh is not a full run
    assert queue.batch(hub, auto['batch_id'])['title'] == 'Автообновление'


def test_temp_key_of_an_earlier_batch_is_refused_at_post(hub):
    """Contract §9.1 (issue 10.3): a temp key is owned by an ensure_issue of the same batch only;
    an earlier batch's temp key no longer resolves, it is a 422 naming the field."""
    make_batch(hub, ensure('new:8'))
    report(hub, claim(hub)['command']['id'], result={'key': 'AURORA-1800'})
    with pytest.raises(ValidationError) as error:
        make_batch(hub, comment('new:8'))
    assert list(error.value.fields) == ['commands[0].params.key']
    assert 'new:8' in error.value.fields['commands[0].params.key'][0]


def test_module_registry():
    from hublib import modules
    jira = modules.get_module('jira')
    assert set(jira.command_types) == {'refresh', 'ensure_issue', 'ensure_link', 'add_comment',
                                       'transition', 'fetch_attachment'}
    assert jira.deprecated_settings == ('status_labels', 'transitions_map')
    assert modules.get_module('wiki').command_types == {}
    assert modules.module_of('transition') == 'jira' and modules.module_of('nope') is None


def test_issue_written_only_by_a_lost_delivery_is_marked_neighbor(hub, clock):
    """Neighbour marking counts what the finishing delivery wrote, as the counters do."""
    refresh_id = make_batch(hub, {'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}}
                            )['commands'][0]['id']
    claim(hub)
    mirror.ingest_state(hub, 'jira', refresh_id, [{'key': 'AURORA-1', 'labels': ['AWPCA']},
                                                  {'key': 'AURORA-2', 'labels': ['AWPCA']}])
    clock.advance(minutes=5)
    assert claim(hub)['command']['deliveries'] == 2  # the first delivery's report was lost
    mirror.ingest_state(hub, 'jira', refresh_id, [{'key': 'AURORA-1', 'labels': ['AWPCA']}])
    report(hub, refresh_id)
    flags = dict(hub.db.execute_sql('SELECT key, neighbor FROM issue').fetchall())
    assert flags == {'AURORA-1': 0, 'AURORA-2': 1}
    assert sync_run(hub, refresh_id)['issues_count'] == 1


def test_auto_refresh_needs_a_base_jql(tmp_path, clock):
    # A project key but no project: no base JQL, so auto refresh never queues anything.
    bare = open_hub(tmp_path / 'bare', clock=clock)
    try:
        settings.update_settings(bare, {'project_key': 'AURORA', 'auto_refresh_minutes': 5})
        assert projects.base_jql(bare) is None
        assert claim(bare)['command'] is None
        assert queue.batches(bare)['items'] == []
    finally:
        bare.close()


# --- exact neighbour marking (issue 10.2) -------------------------------------------------------

def full_run(hub, keys: list[str]) -> int:
    """A full refresh through the protocol: claimed, one state page of ``keys``, reported done."""
    command_id = make_batch(hub, {'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}}
                            )['commands'][0]['id']
    assert claim(hub)['command']['id'] == command_id
    mirror.ingest_state(hub, 'jira', command_id, [{'key': key, 'labels': ['AWPCA']} for key in keys])
    report(hub, command_id, result={'history': {'issues': len(keys), 'changes': 0,
                                                'incomplete': []}})
    return command_id


def neighbor_flags(hub) -> dict[str, int]:
    return dict(hub.db.execute_sql('SELECT key, neighbor FROM issue ORDER BY key').fetchall())


def test_several_full_runs_inside_one_second_mark_exactly_what_each_did_not_write(hub, clock):
    """Issue 10.2: "not written by this run" is known from the keys the run wrote, not from the
    clock. The clock stands still: every run is claimed and written in the same second."""
    full_run(hub, ['AURORA-1', 'AURORA-2', 'AURORA-3'])
    assert neighbor_flags(hub) == {'AURORA-1': 0, 'AURORA-2': 0, 'AURORA-3': 0}
    full_run(hub, ['AURORA-2', 'AURORA-3'])
    assert neighbor_flags(hub) == {'AURORA-1': 1, 'AURORA-2': 0, 'AURORA-3': 0}
    full_run(hub, ['AURORA-1', 'AURORA-3'])
    assert neighbor_flags(hub) == {'AURORA-1': 0, 'AURORA-2': 1, 'AURORA-3': 0}
    assert hub.db.execute_sql('SELECT count(*) FROM refresh_written').fetchone() == (0,)


def test_keys_written_only_by_a_lost_delivery_in_the_same_second_count_as_not_written(hub):
    refresh_id = make_batch(hub, {'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}}
                            )['commands'][0]['id']
    claim(hub)
    mirror.ingest_state(hub, 'jira', refresh_id, [{'key': 'AURORA-1', 'labels': ['AWPCA']},
                                                  {'key': 'AURORA-2', 'labels': ['AWPCA']}])
    assert claim(hub)['command']['deliveries'] == 2  # same second: the first report was lost
    assert hub.db.execute_sql('SELECT count(*) FROM refresh_written').fetchone() == (0,)
    mirror.ingest_state(hub, 'jira', refresh_id, [{'key': 'AURORA-1', 'labels': ['AWPCA']}])
    report(hub, refresh_id)
    assert neighbor_flags(hub) == {'AURORA-1': 0, 'AURORA-2': 1}


def test_written_keys_are_dropped_when_a_refresh_fails_or_gives_up(hub, clock):
    failed = make_batch(hub, {'type': 'refresh', 'params': {'keys': ['AURORA-1']}})
    given_up = make_batch(hub, {'type': 'refresh', 'params': {'keys': ['AURORA-2']}})
    claim(hub)
    mirror.ingest_state(hub, 'jira', failed['commands'][0]['id'], [{'key': 'AURORA-1'}])
    report(hub, failed['commands'][0]['id'], status='failed', error='HTTP 500')
    for _ in range(3):
        claim(hub)
    mirror.ingest_state(hub, 'jira', given_up['commands'][0]['id'], [{'key': 'AURORA-2'}])
    assert hub.db.execute_sql('SELECT count(*) FROM refresh_written').fetchone() == (1,)
    claim(hub)
    assert queue.command(hub, given_up['commands'][0]['id'])['error'] == LIMIT_ERROR
    assert hub.db.execute_sql('SELECT count(*) FROM refresh_written').fetchone() == (0,)
    assert neighbor_flags(hub) == {'AURORA-1': 0, 'AURORA-2': 0}  # keys runs mark nothing
