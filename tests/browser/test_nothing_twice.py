"""Nothing twice in the web UI (contract §9.4b): every write sends one ``Idempotency-Key``, so a
double submit or a retry after a lost answer queues one batch; a new issue takes its temp key from
``GET /temp-keys/next``; a finished batch with failed commands offers «Повторить неудавшиеся».

These tests run against a hub of their own (``hub_server`` below), whose queue they drive as the
agent: the shared hub's queue belongs to the view tests."""
from __future__ import annotations

import re

import pytest

from tests.conftest import start_server

from .conftest import Api, FilledHub

pytestmark = pytest.mark.browser


@pytest.fixture(scope='module')
def hub_server(tmp_path_factory):
    server = start_server(tmp_path_factory.mktemp('ui-nothing-twice') / 'data')
    try:
        client = Api(server['url'], server['client_token'])
        client.call('PUT', '/settings', {
            'project_key': 'AURORA',
            'issue_types': {'task': {'name': 'Задача', 'id': '3'}, 'epic': {'name': 'Эпик', 'id': '6'}},
            'link_types': {'blocks': 'Blocks'}})
        yield FilledHub(server, api=client, agent=Api(server['url'], server['agent_token']))
    finally:
        server.stop()


def batches_titled(ui, title: str) -> list[dict]:
    return [item for item in ui.hub['api'].get('/batches?limit=1000')['items']
            if item['title'] == title]


def opened_batch(ui) -> int:
    ui.wait('batch')
    return int(re.search(r'#/batches/(\d+)$', ui.page.url).group(1))


def fill_comment_form(ui, title: str) -> None:
    page = ui.page
    page.fill('input[name="title"]', title)
    page.fill('input[name="author"]', 'sidorova')
    page.select_option('select[name="type"]', 'add_comment')
    page.fill('input[name="key"]', 'AURORA-1')
    page.fill('textarea[name="body"]', 'Один раз')


def finish_queue(hub, failing: set[int]) -> None:
    """Be the agent until the queue is empty: the commands at ``failing`` seqs fail."""
    agent = hub['agent']
    while True:
        command = agent.post('/agent/claim', {'agent': 'jira', 'agent_version': 'ui'})['command']
        if command is None:
            return
        failed = command['seq'] in failing
        agent.post(f'/agent/commands/{command["id"]}/report', {
            'agent': 'jira', 'status': 'failed' if failed else 'done', 'jira_calls': 1,
            'error': 'Jira ответила 500' if failed else None,
            'result': {'key': 'AURORA-500'} if command['type'] == 'ensure_issue' and not failed
            else None})


def test_a_double_submit_of_the_new_batch_form_queues_one_batch(ui):
    ui.sign_in('#/new-batch', view='new-batch')
    fill_comment_form(ui, 'Двойное нажатие')
    # Two submits before the first answer: the button is disabled by then, but Enter in a field
    # or a script submits the form all the same.
    ui.page.evaluate('''() => {
        const form = document.querySelector('form.new-batch');
        form.requestSubmit();
        form.requestSubmit();
    }''')
    batch_id = opened_batch(ui)
    assert [item['id'] for item in batches_titled(ui, 'Двойное нажатие')] == [batch_id]
    ui.page.locator('h1').wait_for()
    ui.hub['api'].post(f'/batches/{batch_id}/cancel')


def test_a_double_click_on_submit_queues_one_batch(ui):
    ui.sign_in('#/new-batch', view='new-batch')
    fill_comment_form(ui, 'Двойной щелчок')
    ui.page.dblclick('button:text-is("Поставить в очередь")')
    batch_id = opened_batch(ui)
    assert [item['id'] for item in batches_titled(ui, 'Двойной щелчок')] == [batch_id]
    ui.hub['api'].post(f'/batches/{batch_id}/cancel')


def test_a_retry_after_a_lost_answer_queues_one_batch(ui):
    ui.sign_in('#/new-batch', view='new-batch')
    page = ui.page
    fill_comment_form(ui, 'Потерянный ответ')
    lost = []

    def lose_first_answer(route):
        if route.request.method == 'POST' and not lost:
            lost.append(route.fetch().status)  # the hub queues the batch ...
            route.abort('connectionreset')     # ... and its answer never reaches the page
        else:
            route.continue_()
    page.route(f'{ui.origin}/batches', lose_first_answer)
    page.click('button:text-is("Поставить в очередь")')
    page.wait_for_selector('form.new-batch .form-status .message')
    assert lost == [201]
    assert len(batches_titled(ui, 'Потерянный ответ')) == 1
    page.click('button:text-is("Поставить в очередь")')  # the person tries again
    batch_id = opened_batch(ui)
    assert [item['id'] for item in batches_titled(ui, 'Потерянный ответ')] == [batch_id]
    # the browser logs the connection reset of the first try
    ui.console[:] = [line for line in ui.console if 'ERR_CONNECTION_RESET' not in line]
    ui.hub['api'].post(f'/batches/{batch_id}/cancel')


def test_new_issues_take_their_temp_keys_from_the_hub(ui):
    api = ui.hub['api']
    api.call('PUT', '/notes/new:1', {'owner_note': 'занят заметкой', 'updated_by': 'x'})
    free = api.get('/temp-keys/next?count=2')['temp_keys']
    assert 'new:1' not in free
    ui.sign_in('#/new-batch', view='new-batch')
    page = ui.page
    page.fill('input[name="title"]', 'Две новые задачи')
    command = page.locator('fieldset.command')
    for index, summary in enumerate(('Первая', 'Вторая')):
        if index:
            page.click('button:text-is("Добавить команду")')
        command.nth(index).locator('select[name="type"]').select_option('ensure_issue')
        command.nth(index).locator('input[name="summary"]').fill(summary)
    for index, key in enumerate(free):
        temp_key = command.nth(index).locator('input[name="temp_key"]')
        page.wait_for_function('([element, key]) => element.value === key',
                               arg=[temp_key.element_handle(), key])
        assert temp_key.get_attribute('readonly') is not None
    page.click('button:text-is("Поставить в очередь")')
    batch_id = opened_batch(ui)
    batch = api.get(f'/batches/{batch_id}')
    assert [c['params'].get('temp_key') for c in batch['commands']] == free
    assert api.get('/temp-keys/next')['temp_key'] not in free  # owned now
    api.post(f'/batches/{batch_id}/cancel')


def test_retry_button_queues_the_failed_commands_and_opens_the_new_batch(ui):
    api = ui.hub['api']
    original = api.post('/batches', {'title': 'Работа с ошибкой', 'author': 'ivanov', 'commands': [
        {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'прошёл'}},
        {'type': 'add_comment', 'params': {'key': 'AURORA-2', 'body': 'упал'}},
        {'type': 'transition', 'params': {'key': 'AURORA-2', 'status': 'Готово'}, 'depends_on': 2}]})
    finish_queue(ui.hub, failing={2})
    assert api.get(f'/batches/{original["id"]}')['counts']['failed'] == 1
    ui.sign_in(f'#/batches/{original["id"]}', view='batch')
    page = ui.page
    page.dblclick('button:text-is("Повторить неудавшиеся")')
    retry_id = opened_batch(ui)
    assert retry_id != original['id']
    retry = api.get(f'/batches/{retry_id}')
    assert (retry['title'], retry['retry_of']) == ('Повтор: Работа с ошибкой', original['id'])
    assert [(c['type'], c['params']['key']) for c in retry['commands']] == [
        ('add_comment', 'AURORA-2'), ('transition', 'AURORA-2')]
    assert [item['id'] for item in batches_titled(ui, 'Повтор: Работа с ошибкой')] == [retry_id]
    assert page.locator(f'main a[href="#/batches/{original["id"]}"]').count() == 1
    assert page.locator('button:text-is("Повторить неудавшиеся")').count() == 0  # queued
    api.post(f'/batches/{retry_id}/cancel')
    # the original is retried once: its view links to the retry instead of offering the button
    ui.go(f'#/batches/{original["id"]}?again=1', view='batch')
    assert page.locator('button:text-is("Повторить неудавшиеся")').count() == 0
    link = page.locator(f'.retry a[href="#/batches/{retry_id}"]')
    assert link.count() == 1 and 'уже повторены' in page.locator('.retry').inner_text()


def test_no_retry_button_while_running_or_without_failures(ui):
    api = ui.hub['api']
    fine = api.post('/batches', {'title': 'Без ошибок', 'commands': [
        {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'ok'}}]})
    ui.sign_in(f'#/batches/{fine["id"]}', view='batch')
    assert ui.page.locator('button:text-is("Повторить неудавшиеся")').count() == 0
    finish_queue(ui.hub, failing=set())
    ui.go(f'#/batches/{fine["id"]}?again=1', view='batch')
    assert ui.page.locator('button:text-is("Повторить неудавшиеся")').count() == 0
