"""Batches and commands for interfaces (spec «Пакеты и команды», contract §9.1, §9.2, §9.6)."""
from __future__ import annotations

import pytest

from hublib import mirror, projects, queue, settings
from hublib.errors import NotFoundError, ValidationError



@pytest.fixture
def configured(hub, queue_settings):
    return queue_settings(hub)


def comment(key='AURORA-1', body='текст', **extra):
    return {'type': 'add_comment', 'params': {'key': key, 'body': body}, **extra}


def ensure(summary='Задача', **params):
    return {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'summary': summary, **params}}


def set_status(hub, command_id, status):
    hub.db.execute_sql('UPDATE command SET status = ? WHERE id = ?', (status, command_id))


def test_create_batch_returns_batch_with_commands(configured, clock):
    created = queue.create_batch(configured, title='Завести задачи', author='ivanov', project='AWPCA',
                                 commands=[ensure(temp_key='new:1'),
                                           {'type': 'ensure_link', 'depends_on': 1, 'params': {
                                               'source_key': 'new:1', 'target_key': 'AURORA-2',
                                               'link_type': 'blocks'}}])
    assert created['title'] == 'Завести задачи'
    assert created['author'] == 'ivanov'
    assert created['project'] == 'AWPCA'
    assert created['created_at'] == '2026-11-30T10:00:00+00:00'
    assert created['cancelled_at'] is None
    assert created['status'] == 'queued'
    assert created['counts'] == {'queued': 2, 'claimed': 0, 'done': 0, 'failed': 0, 'skipped': 0,
                                 'cancelled': 0, 'confirmed_by_state': 0}
    first, second = created['commands']
    assert (first['seq'], second['seq']) == (1, 2)
    assert second['depends_on'] == first['id']
    assert first['params'] == {'issue_type': 'task', 'summary': 'Задача', 'temp_key': 'new:1'}
    assert set(first) == {'id', 'batch_id', 'seq', 'type', 'params', 'status', 'claimed_at',
                          'deliveries', 'finished_at', 'result', 'error', 'jira_calls',
                          'rate_limited', 'pause_seconds', 'depends_on'}
    assert queue.command(configured, second['id']) == second
    assert queue.batch(configured, created['id']) == created


def test_estimate_seconds_from_pacing(configured, claimed_refresh):
    # 3 (ensure_issue) + 1 (comment) + 2 keys + (0 mirror issues + 1) = 7 calls × 500 ms
    created = queue.create_batch(configured, title='t', author=None, commands=[
        ensure(), comment(), {'type': 'refresh', 'params': {'keys': ['AURORA-1', 'AURORA-2']}},
        {'type': 'refresh', 'params': {'jql': projects.base_jql(configured)}}])
    assert created['estimate_seconds'] == 4  # ceil(3.5)
    settings.update_settings(configured, {'pacing': {'interval_ms': 1000}})
    # Issues of the base JQL carry a project label; AURORA-3 came from a keys refresh
    # (neighbor 0, no project label) and AURORA-4 is a neighbour: neither is in the JQL.
    mirror.ingest_state(configured, 'jira', claimed_refresh(configured), [
        {'key': 'AURORA-1', 'labels': ['AWPCA']}, {'key': 'AURORA-2', 'labels': ['x', 'AWPCA']},
        {'key': 'AURORA-3', 'labels': ['x']},
        {'key': 'AURORA-4', 'labels': [], 'neighbor': True,
         'links': [{'type': 'Blocks', 'direction': 'inward', 'key': 'AURORA-1'}]}])
    created = queue.create_batch(configured, title='t', author=None, commands=[
        {'type': 'refresh', 'params': {'jql': projects.base_jql(configured)}}])
    assert created['estimate_seconds'] == 3


@pytest.mark.parametrize('command, field', [
    (ensure(summary=''), 'commands[1].params.summary'),
    ({'type': 'ensure_issue', 'params': {'issue_type': 'bug', 'summary': 'x'}},
     'commands[1].params.issue_type'),
    (ensure(key='AURORA-1', temp_key='new:1'), 'commands[1].params.temp_key'),
    (ensure(temp_key='NEW-1'), 'commands[1].params.temp_key'),
    (ensure(duedate='2026-02-30'), 'commands[1].params.duedate'),
    (ensure(planned_start='30.11.2026'), 'commands[1].params.planned_start'),
    (ensure(labels='AWPCA'), 'commands[1].params.labels'),
    (ensure(epic_key='aurora-9'), 'commands[1].params.epic_key'),
    (ensure(colour='red'), 'commands[1].params.colour'),
    ({'type': 'refresh', 'params': {}}, 'commands[1].params.jql'),
    ({'type': 'refresh', 'params': {'jql': 'x', 'keys': ['AURORA-1']}}, 'commands[1].params.jql'),
    ({'type': 'refresh', 'params': {'keys': []}}, 'commands[1].params.keys'),
    ({'type': 'refresh', 'params': {'keys': ['new:1']}}, 'commands[1].params.keys[0]'),
    ({'type': 'ensure_link', 'params': {'source_key': 'AURORA-1', 'target_key': 'AURORA-2',
                                        'link_type': 'duplicates'}}, 'commands[1].params.link_type'),
    ({'type': 'ensure_link', 'params': {'source_key': 'AURORA-1', 'link_type': 'blocks'}},
     'commands[1].params.target_key'),
    (comment(body=''), 'commands[1].params.body'),
    (comment(key=17), 'commands[1].params.key'),
    ({'type': 'transition', 'params': {'key': 'AURORA-1'}}, 'commands[1].params.status'),
    ({'type': 'fetch_attachment', 'params': {'attachment_id': ''}},
     'commands[1].params.attachment_id'),
    ({'type': 'fly', 'params': {}}, 'commands[1].type'),
    ({'type': 'add_comment', 'params': 'AURORA-1'}, 'commands[1].params'),
    (comment(depends_on=2), 'commands[1].depends_on'),
    (comment(depends_on=0), 'commands[1].depends_on'),
    ('add_comment', 'commands[1]'),
])
def test_invalid_command_names_index_and_field(configured, command, field):
    with pytest.raises(ValidationError) as error:
        queue.create_batch(configured, title='t', author=None, commands=[comment(), command])
    assert field in error.value.fields
    assert configured.db.execute_sql('SELECT count(*) FROM command').fetchone()[0] == 0
    assert configured.db.execute_sql('SELECT count(*) FROM batch').fetchone()[0] == 0


def test_scenario_config_without_bug_type_rejects_ensure_issue_bug(configured):
    """«Конфиг без ключей ошибки», second half: ensure_issue with issue_type = bug → 422."""
    assert 'bug' not in settings.setting(configured, 'issue_types')
    with pytest.raises(ValidationError) as error:
        queue.create_batch(configured, title='t', author=None, commands=[
            {'type': 'ensure_issue', 'params': {'issue_type': 'bug', 'summary': 'Ошибка'}}])
    assert list(error.value.fields) == ['commands[0].params.issue_type']


@pytest.mark.parametrize('changes, field', [
    ({'title': ''}, 'title'), ({'title': None}, 'title'), ({'author': 5}, 'author'),
    ({'commands': []}, 'commands'), ({'commands': None}, 'commands'),
])
def test_invalid_batch_fields(configured, changes, field):
    kwargs = {'title': 't', 'author': None, 'commands': [comment()], **changes}
    with pytest.raises(ValidationError) as error:
        queue.create_batch(configured, **kwargs)
    assert field in error.value.fields


def test_batch_of_a_project_that_does_not_exist_is_not_found_and_not_created(configured):
    before = queue.batches(configured)
    with pytest.raises(NotFoundError, match='проекта .NOPE. нет'):
        queue.create_batch(configured, title='t', project='NOPE', commands=[comment()])
    with pytest.raises(NotFoundError):
        queue.create_batch(configured, title='t', project='NOPE', commands=[comment()],
                           dry_run=True)
    assert queue.batches(configured) == before


def test_duplicate_temp_key_in_batch(configured):
    with pytest.raises(ValidationError) as error:
        queue.create_batch(configured, title='t', author=None,
                           commands=[ensure(temp_key='new:1'), ensure(temp_key='new:1')])
    assert 'commands[1].params.temp_key' in error.value.fields


def test_fetch_attachment_of_an_attachment_not_in_the_mirror_is_422_naming_the_field(configured):
    # Every command error is a 422 naming commands[i].params.<field> (contract §9.1), a reference
    # to an attachment the mirror does not hold too; nothing is created.
    with pytest.raises(ValidationError) as error:
        queue.create_batch(configured, title='t', commands=[
            comment(), {'type': 'fetch_attachment', 'params': {'attachment_id': '31337'}}])
    assert list(error.value.fields) == ['commands[1].params.attachment_id']
    assert '31337' in error.value.fields['commands[1].params.attachment_id'][0]
    assert configured.db.execute_sql('SELECT count(*) FROM batch').fetchone()[0] == 0


def test_fetch_attachment_must_exist_in_mirror(configured):
    configured.db.execute_sql("INSERT INTO issue_attachment (attachment_id, key) "
                              "VALUES ('31337', 'AURORA-1')")
    created = queue.create_batch(configured, title='t', author=None, commands=[
        {'type': 'fetch_attachment', 'params': {'attachment_id': 31337}}])
    assert created['commands'][0]['params'] == {'attachment_id': '31337'}


def test_scenario_batch_status(configured):
    """«Статус пакета»: done, claimed, queued → running; all terminal → done with failed/skipped."""
    created = queue.create_batch(configured, title='t', author=None,
                                 commands=[comment(), comment(), comment()])
    ids = [item['id'] for item in created['commands']]
    set_status(configured, ids[0], 'done')
    set_status(configured, ids[1], 'claimed')
    assert queue.batch(configured, created['id'])['status'] == 'running'
    set_status(configured, ids[1], 'failed')
    set_status(configured, ids[2], 'skipped')
    done = queue.batch(configured, created['id'])
    assert done['status'] == 'done'
    assert (done['counts']['done'], done['counts']['failed'], done['counts']['skipped']) == (1, 1, 1)


def test_scenario_cancelled_batch_with_done_command(configured, clock):
    """«Отменённый пакет с выполненной командой»: cancelled, two done and one cancelled."""
    created = queue.create_batch(configured, title='t', author=None,
                                 commands=[comment(), comment(), comment()])
    first = queue.claim_command(configured, agent='jira', agent_version='15', settings_version=None,
                                last_jira_call_at=None)['command']
    queue.report_command(configured, first['id'], agent='jira', status='done', result=None,
                         error=None, jira_calls=1, rate_limited=0)
    second = queue.claim_command(configured, agent='jira', agent_version='15',
                                 settings_version=None)['command']
    clock.advance(minutes=1)
    cancelled = queue.cancel_batch(configured, created['id'])
    assert cancelled['cancelled_at'] == '2026-11-30T10:01:00+00:00'
    assert cancelled['status'] == 'running'
    assert [c['status'] for c in cancelled['commands']] == ['done', 'claimed', 'cancelled']
    assert cancelled['commands'][2]['finished_at'] == '2026-11-30T10:01:00+00:00'
    clock.advance(minutes=1)
    assert queue.cancel_batch(configured, created['id'])['cancelled_at'] == \
        '2026-11-30T10:01:00+00:00'  # idempotent
    report = queue.report_command(configured, second['id'], agent='jira', status='done',
                                  result=None, error=None, jira_calls=1, rate_limited=0)
    assert report['late'] is False and report['status'] == 'done'
    final = queue.batch(configured, created['id'])
    assert final['status'] == 'cancelled'
    assert final['counts']['done'] == 2 and final['counts']['cancelled'] == 1


def test_batches_filters_and_keyset_pagination(configured):
    made = [queue.create_batch(configured, title=f'b{n}', author=None, commands=[comment()],
                               project='AWPCA' if n % 2 else None) for n in range(5)]
    queue.cancel_batch(configured, made[0]['id'])
    page = queue.batches(configured, limit=2)
    assert [item['title'] for item in page['items']] == ['b4', 'b3']
    assert 'commands' not in page['items'][0]
    page2 = queue.batches(configured, limit=2, cursor=page['next_cursor'])
    assert [item['title'] for item in page2['items']] == ['b2', 'b1']
    page3 = queue.batches(configured, limit=2, cursor=page2['next_cursor'])
    assert [item['title'] for item in page3['items']] == ['b0'] and page3['next_cursor'] is None
    assert [i['title'] for i in queue.batches(configured, status='cancelled')['items']] == ['b0']
    assert [i['title'] for i in queue.batches(configured, status='queued')['items']] == \
        ['b4', 'b3', 'b2', 'b1']
    assert [i['title'] for i in queue.batches(configured, project='AWPCA')['items']] == ['b3', 'b1']
    assert page['items'][0]['counts']['queued'] == 1


@pytest.mark.parametrize('kwargs, field', [({'status': 'lost'}, 'status'), ({'limit': 0}, 'limit'),
                                           ({'limit': 1001}, 'limit'), ({'cursor': 'abc'}, 'cursor')])
def test_batches_invalid_query(configured, kwargs, field):
    with pytest.raises(ValidationError) as error:
        queue.batches(configured, **kwargs)
    assert field in error.value.fields


def test_missing_batch_and_command(configured):
    for call in (lambda: queue.batch(configured, 99), lambda: queue.command(configured, 99),
                 lambda: queue.cancel_batch(configured, 99), lambda: queue.command(configured, 'x')):
        with pytest.raises(NotFoundError):
            call()


@pytest.mark.parametrize('command', [
    {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'new:1'}},
    {'type': 'transition', 'params': {'key': 'AURORA-1', 'status': 'new:1'}},
    {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'summary': 'new:1', 'key': 'AURORA-1'}},
])
def test_text_that_reads_like_a_temp_key_is_delivered_as_text(configured, command):
    # An earlier ensure_issue of the batch created new:1 -> AURORA-77; only key fields are resolved.
    made = queue.create_batch(configured, title='t', author=None,
                              commands=[ensure(temp_key='new:1'), command])
    claimed = queue.claim_command(configured, agent='jira', agent_version='15',
                                  settings_version=None)['command']
    queue.report_command(configured, claimed['id'], agent='jira', status='done',
                         result={'key': 'AURORA-77'}, error=None, jira_calls=1, rate_limited=0)
    delivered = queue.claim_command(configured, agent='jira', agent_version='15',
                                    settings_version=None)['command']
    assert delivered['id'] == made['commands'][1]['id']
    assert delivered['params'] == command['params']


# --- temp keys checked when the batch is queued (contract §9.1, issue 10.3) --------------------

@pytest.mark.parametrize('commands, field', [
    ([comment(key='new:1')], 'commands[0].params.key'),
    ([{'type': 'transition', 'params': {'key': 'new:1', 'status': 'Готово'}}],
     'commands[0].params.key'),
    ([ensure(temp_key='new:1'), {'type': 'ensure_link', 'params': {
        'source_key': 'new:1', 'target_key': 'new:2', 'link_type': 'blocks'}}],
     'commands[1].params.target_key'),
    ([{'type': 'ensure_link', 'params': {'source_key': 'new:2', 'target_key': 'AURORA-1',
                                         'link_type': 'blocks'}}, ensure(temp_key='new:2')],
     'commands[0].params.source_key'),  # created only later in the batch
    ([ensure(temp_key='new:3', epic_key='new:3')], 'commands[0].params.epic_key'),  # by itself
])
def test_temp_key_no_earlier_ensure_issue_of_the_batch_creates_is_422_naming_the_field(
        configured, commands, field):
    with pytest.raises(ValidationError) as error:
        queue.create_batch(configured, title='t', commands=commands)
    assert list(error.value.fields) == [field]
    assert configured.db.execute_sql('SELECT count(*) FROM batch').fetchone()[0] == 0


def test_temp_keys_created_earlier_in_the_batch_are_accepted_in_every_key_field(configured):
    created = queue.create_batch(configured, title='t', commands=[
        ensure(temp_key='new:1'), ensure(temp_key='new:2', epic_key='new:1'),
        {'type': 'ensure_link', 'params': {'source_key': 'new:1', 'target_key': 'new:2',
                                           'link_type': 'blocks'}},
        comment(key='new:2'), {'type': 'transition', 'params': {'key': 'new:1', 'status': 'x'}}])
    assert len(created['commands']) == 5


# --- limits, each one a validator the published schema carries -----------------------------------

@pytest.mark.parametrize('changes, field', [
    ({'title': 'ж' * 201}, 'title'), ({'title': ' \t\u3000'}, 'title'),
    ({'author': 'ж' * 201}, 'author'),
    ({'commands': [comment()] * 10001}, 'commands'),
    ({'commands': [ensure(summary='ж' * 256)]}, 'commands[0].params.summary'),
    ({'commands': [ensure(summary=' \u2003 ')]}, 'commands[0].params.summary'),
    ({'commands': [comment(body='ж' * 32001)]}, 'commands[0].params.body'),
    ({'commands': [comment(body='\n \x1c')]}, 'commands[0].params.body'),
    ({'commands': [ensure(description='ж' * 32001)]}, 'commands[0].params.description'),
    ({'commands': [{'type': 'transition', 'params': {'key': 'AURORA-1', 'status': '  '}}]},
     'commands[0].params.status'),
    ({'commands': [{'type': 'refresh', 'params': {'jql': ' '}}]}, 'commands[0].params.jql'),
    ({'commands': [{'type': 'refresh', 'params': {'keys': ['AURORA-1'], 'board_id': 0}}]},
     'commands[0].params.board_id'),
    ({'commands': [ensure(labels=['A B'])]}, 'commands[0].params.labels[0]'),
    ({'commands': [ensure(duedate='2026-13-01')]}, 'commands[0].params.duedate'),
    ({'commands': [comment(depends_on=1)]}, 'commands[0].depends_on'),
    ({'commands': [{'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'x'},
                    'after': 1}]}, 'commands[0].after'),
])
def test_limits_name_the_field(configured, changes, field):
    kwargs = {'title': 't', 'author': None, 'commands': [comment()], **changes}
    with pytest.raises(ValidationError) as error:
        queue.create_batch(configured, **kwargs)
    assert field in error.value.fields, error.value.fields


def test_texts_at_their_limits_are_accepted_and_stored_stripped_where_the_contract_strips(
        configured):
    created = queue.create_batch(configured, title='  ' + 'ж' * 200 + ' ', author='ж' * 200,
                                 commands=[ensure(summary=' ' + 'ж' * 255 + '\n',
                                                  description=' ' * 32000),
                                           comment(body=' x ' + 'ж' * 31997),
                                           {'type': 'transition',
                                            'params': {'key': 'AURORA-1', 'status': ' Готово '}}])
    assert created['title'] == 'ж' * 200
    first, second, third = (c['params'] for c in created['commands'])
    assert first['summary'] == 'ж' * 255 and len(first['description']) == 32000
    assert second['body'].startswith(' x ')  # a comment body is kept as written
    assert third['status'] == 'Готово'


def test_nulls_in_params_mean_not_given(configured):
    created = queue.create_batch(configured, title='t', commands=[
        ensure(key=None, temp_key='new:1', description=None, labels=None),
        {'type': 'refresh', 'params': {'jql': None, 'keys': ['AURORA-1']}}])
    assert [c['params'] for c in created['commands']] == [
        {'issue_type': 'task', 'summary': 'Задача', 'temp_key': 'new:1'}, {'keys': ['AURORA-1']}]


# --- dry run ---------------------------------------------------------------------------------------

def test_dry_run_validates_like_a_real_creation_and_stores_nothing(configured, clock):
    configured.db.execute_sql("INSERT INTO issue_attachment (attachment_id, key) "
                              "VALUES ('31337', 'AURORA-1')")
    commands = [ensure(summary='  Новая  ', temp_key='new:1'),
                comment(key='new:1', depends_on=1),
                {'type': 'fetch_attachment', 'params': {'attachment_id': 31337}}]
    preview = queue.create_batch(configured, title=' Пакет ', author='ivanov', project='AWPCA',
                                 commands=commands, dry_run=True)
    assert configured.db.execute_sql('SELECT count(*) FROM batch').fetchone()[0] == 0
    assert configured.db.execute_sql('SELECT count(*) FROM command').fetchone()[0] == 0
    assert (preview['id'], preview['title'], preview['project'], preview['status'],
            preview['dry_run']) == (None, 'Пакет', 'AWPCA', 'queued', True)
    assert preview['estimate_seconds'] == 3  # (3 + 1 + 1) calls × 500 ms
    assert preview['counts']['queued'] == 3
    assert [c['params'] for c in preview['commands']] == [
        {'issue_type': 'task', 'summary': 'Новая', 'temp_key': 'new:1'},
        {'key': 'new:1', 'body': 'текст'}, {'attachment_id': '31337'}]
    assert [(c['seq'], c['depends_on'], c['status']) for c in preview['commands']] == [
        (1, None, 'queued'), (2, 1, 'queued'), (3, None, 'queued')]
    real = queue.create_batch(configured, title=' Пакет ', author='ivanov', project='AWPCA',
                              commands=commands)
    assert [c['params'] for c in real['commands']] == [c['params'] for c in preview['commands']]
    assert real['estimate_seconds'] == preview['estimate_seconds']


@pytest.mark.parametrize('commands, error', [
    ([comment(key='new:1')], ValidationError),
    ([{'type': 'fetch_attachment', 'params': {'attachment_id': '404'}}], ValidationError),
])
def test_dry_run_refuses_what_a_real_creation_refuses(configured, commands, error):
    with pytest.raises(error):
        queue.create_batch(configured, title='t', commands=commands, dry_run=True)


# --- the schema the API document is generated from -----------------------------------------------

def test_batch_schema_follows_the_settings_and_the_projects(configured):
    from hublib import batches
    schema = batches.batch_schema(configured)
    commands = schema.fields['commands'].inner.schemas
    assert list(commands) == ['refresh', 'ensure_issue', 'ensure_link', 'add_comment',
                              'transition', 'fetch_attachment']
    issue_type = commands['ensure_issue'].fields['params'].schema.fields['issue_type']
    assert set(issue_type.validators[0].choices) == {'task', 'epic'}
    link_type = commands['ensure_link'].fields['params'].schema.fields['link_type']
    assert set(link_type.validators[0].choices) == {'blocks', 'relates'}
    settings.update_settings(configured, {'link_types': {'blocks': 'Blocks'}})
    projects.create_project(configured, 'STOCKS', 'Склады')
    schema = batches.batch_schema(configured)
    link_type = (schema.fields['commands'].inner.schemas['ensure_link'].fields['params']
                 .schema.fields['link_type'])
    assert link_type.validators[0].choices == ('blocks',)
    assert queue.create_batch(configured, title='t', project='STOCKS',
                              commands=[comment()])['project'] == 'STOCKS'
    with pytest.raises(ValidationError) as error:  # and creation follows the same settings
        queue.create_batch(configured, title='t', commands=[
            {'type': 'ensure_link', 'params': {'source_key': 'AURORA-1', 'target_key': 'AURORA-2',
                                               'link_type': 'relates'}}])
    assert list(error.value.fields) == ['commands[0].params.link_type']
