"""Every view of contract §15 in a real browser: what it shows, that it is reached from the
navigation, and a 1280×800 screenshot of each (written only with ``SDLC_HUB_SCREENSHOTS``)."""
from __future__ import annotations

import re

import pytest

from .conftest import ATTACHMENT_BYTES, XSS_COMMENT, XSS_DESCRIPTION, XSS_SUMMARY

pytestmark = pytest.mark.browser


def texts(page, selector: str) -> list[str]:
    return [text.strip() for text in page.locator(selector).all_inner_texts()]


def column(page, header: str, table: str = 'main table') -> list[str]:
    """The texts of one column of the first table matching ``table``, found by its header."""
    headers = texts(page, f'{table} >> nth=0 >> thead th')
    index = headers.index(header) + 1
    return texts(page, f'{table} >> nth=0 >> tbody tr td:nth-child({index})')


# --- sign-in ---------------------------------------------------------------------------------------

def test_root_redirects_to_the_sign_in_form(ui):
    ui.page.goto(ui.origin + '/')
    ui.wait('sign-in')
    assert ui.page.url == ui.origin + '/ui/'
    token = ui.page.locator('input[name="token"]')
    assert token.get_attribute('type') == 'password'
    assert ui.page.locator(f'label[for="{token.get_attribute("id")}"]').inner_text() == 'Токен клиента'
    assert ui.page.locator('#nav').is_hidden()
    ui.screenshot('sign-in')


def test_sign_in_with_a_wrong_token_stays_out(ui):
    ui.allow_http_errors(401, 403)
    ui.open('#/issues', 'sign-in')
    token = ui.page.locator('input[name="token"]')
    token.fill('not-the-token')
    token.press('Enter')
    ui.page.wait_for_selector('input[name="token"][aria-invalid="true"]')
    error_id = token.get_attribute('aria-describedby').split()[-1]
    assert ui.page.locator(f'#{error_id}').inner_text() == 'неверный токен'
    assert ui.page.locator('#main').get_attribute('data-view') == 'sign-in'
    assert ui.page.locator('#nav').is_hidden()
    assert ui.page.evaluate('sessionStorage.length') == 0
    # the agent's token is refused too, with its own message
    token.fill(ui.hub['agent_token'])
    token.press('Enter')
    ui.page.wait_for_selector(f'#{error_id}:has-text("токен агента")')
    assert ui.page.locator('#main').get_attribute('data-view') == 'sign-in'
    assert ui.page.evaluate('sessionStorage.length') == 0


def test_sign_in_keeps_the_token_in_session_storage_and_opens_the_address(ui):
    ui.sign_in('#/issues?project=ORION', view='issues')
    assert ui.page.evaluate("sessionStorage.getItem('sdlc-hub.token')") == ui.hub['client_token']
    assert ui.page.evaluate('localStorage.length') == 0
    assert column(ui.page, 'Ключ') == ['AURORA-30']


def test_a_401_returns_to_the_sign_in_form(ui):
    ui.allow_http_errors(401)
    ui.sign_in()
    ui.page.evaluate("sessionStorage.setItem('sdlc-hub.token', 'revoked')")
    ui.go('#/projects', 'sign-in')
    assert 'Войдите снова' in ui.page.locator('#main').inner_text()
    assert ui.page.evaluate('sessionStorage.length') == 0


def test_sign_out_forgets_the_token(ui):
    ui.sign_in()
    ui.page.click('#sign-out')
    ui.wait('sign-in')
    assert ui.page.evaluate('sessionStorage.length') == 0


# --- overview and projects ---------------------------------------------------------------------------

def test_overview_shows_agents_active_batches_and_sync_runs(ui):
    ui.sign_in()
    page = ui.page
    agents = page.locator('section:has(h2:text-is("Агенты")) table')
    jira = agents.locator('tbody tr:has(td:text-is("jira"))')
    assert 'в сети' in jira.inner_text()
    assert 'ui-tests' in jira.inner_text()
    current = jira.locator('a[href^="#/commands/"]')
    assert current.count() == 1
    assert 'не в сети' in agents.locator('tbody tr:has(td:text-is("wiki"))').inner_text()
    active = page.locator('section:has(h2:text-is("Пакеты в работе")) table')
    titles = texts(page, 'section:has(h2:text-is("Пакеты в работе")) tbody td:nth-child(2)')
    assert 'Комментарии к задачам' in titles
    assert 'выполняется' in active.inner_text()
    runs = page.locator('section:has(h2:text-is("Синхронизации")) tbody tr')
    assert runs.count() >= 1
    assert 'по JQL' in runs.first.inner_text()
    ui.screenshot('overview')
    # the current command's link opens its batch with the command marked
    current.click()
    ui.wait('batch')
    assert re.search(r'#/batches/\d+\?command=\d+$', page.url)
    assert page.locator('.highlight').count() == 1


def test_projects_show_own_and_neighbour_counts_and_lead_to_issues_and_board(ui):
    ui.sign_in()
    ui.page.click('#nav a:text-is("Проекты")')
    ui.wait('projects')
    page = ui.page
    assert column(page, 'Метка') == ['AWPCA', 'ORION']
    assert column(page, 'Свои задачи') == ['7', '1']
    assert column(page, 'Соседи') == ['2', '0']
    assert column(page, 'Доска')[0].startswith('№4216')
    ui.screenshot('projects')
    page.click('main a:text-is("AWPCA")')
    ui.wait('issues')
    assert page.url.endswith('#/issues?project=AWPCA')
    # the counts lead to those issues: own ones by the label, neighbours the rest of the slice
    ui.go('#/projects', 'projects')
    page.click('main tr:has-text("AWPCA") td:nth-child(4) a')
    ui.wait('issues')
    assert column(page, 'Ключ') == ['AURORA-9', 'AURORA-20']
    ui.go('#/projects', 'projects')
    page.click('main tr:has-text("AWPCA") td:nth-child(3) a')
    ui.wait('issues')
    assert len(column(page, 'Ключ')) == 7


# --- issues --------------------------------------------------------------------------------------------

def test_issue_list_of_a_project_is_its_own_issues_and_neighbours_in_natural_key_order(ui):
    ui.sign_in('#/issues?project=AWPCA', view='issues')
    keys = column(ui.page, 'Ключ')
    assert keys == ['AURORA-1', 'AURORA-2', 'AURORA-3', 'AURORA-9', 'AURORA-10', 'AURORA-11',
                    'AURORA-20', 'AURORA-66', 'AURORA-100']


def test_issue_list_of_a_project_is_its_slice_with_neighbours_marked(ui):
    ui.sign_in('#/issues?project=AWPCA', view='issues')
    page = ui.page
    rows = dict(zip(column(page, 'Ключ'), column(page, 'Сосед')))
    assert set(rows) == {'AURORA-1', 'AURORA-2', 'AURORA-3', 'AURORA-9', 'AURORA-10', 'AURORA-11',
                         'AURORA-20', 'AURORA-66', 'AURORA-100'}
    assert {key for key, mark in rows.items() if mark == 'сосед'} == {'AURORA-9', 'AURORA-20'}
    assert page.locator('select[name="project"]').input_value() == 'AWPCA'
    ui.screenshot('issues')


def test_issue_query_writes_the_address_and_the_api_query(ui):
    ui.sign_in('#/issues', view='issues')
    page = ui.page
    page.select_option('select[name="project"]', 'AWPCA')
    page.fill('input[name="jql"]', 'status = "в работе" AND labels = AWPCA')
    with page.expect_request(lambda r: r.url.startswith(ui.origin + '/issues?')) as request:
        page.click('form.jql-form button[type="submit"]')
    ui.wait('issues')
    assert page.url.endswith('#/issues?project=AWPCA&jql=status+%3D+%22%D0%B2+%D1%80%D0%B0%D0%B1%D0%BE%D1%82%D0%B5'
                             '%22+AND+labels+%3D+AWPCA')
    assert 'project=AWPCA' in request.value.url and 'jql=status' in request.value.url
    assert sorted(column(page, 'Ключ')) == ['AURORA-1', 'AURORA-100']
    field = page.locator('[name="jql"]')
    assert page.locator(f'label[for="{field.get_attribute("id")}"]').count() == 1


def test_an_address_of_the_old_filters_shows_the_same_list_as_jql(ui):
    ui.sign_in('#/issues?project=AWPCA&neighbor=false&status=%D0%92+%D1%80%D0%B0%D0%B1%D0%BE%D1%82%D0%B5',
               view='issues')
    page = ui.page
    assert page.input_value('input[name="jql"]') == 'labels = "AWPCA" AND status = "В работе"'
    assert '#/issues?project=AWPCA&jql=labels' in page.url
    assert sorted(column(page, 'Ключ')) == ['AURORA-1', 'AURORA-100']


def test_issue_list_pages_by_cursor(ui):
    ui.sign_in('#/issues', view='issues')
    page = ui.page
    with page.expect_response(lambda r: '/issues?' in r.url) as first:
        ui.go('#/issues?limit=ignored', 'issues')  # unknown UI params are not sent to the API
    assert 'limit=100' in first.value.url and 'ignored' not in first.value.url
    # a page of 100 holds the whole mirror: no next link, and a cursor in the address is passed on
    assert page.locator('a[rel="next"]').count() == 0
    cursor = ui.hub['api'].get('/issues?limit=3')['next_cursor']
    with page.expect_response(lambda r: '/issues?' in r.url) as second:
        ui.go(f'#/issues?cursor={cursor}', 'issues')
    assert f'cursor={cursor}' in second.value.url
    assert page.locator('nav.pager a:text("К первой странице")').count() == 1
    everything = [item['key'] for item in ui.hub['api'].get('/issues')['items']]
    assert column(page, 'Ключ') == everything[3:]


# --- the issue card ---------------------------------------------------------------------------------

def test_issue_card_shows_fields_links_comments_attachments_sprints_and_history(ui):
    ui.sign_in('#/issues/AURORA-1', view='issue')
    page = ui.page
    assert page.locator('h1').inner_text() == 'AURORA-1 Задача номер 1'
    outward = page.locator('section:has(h2:text-is("Связи")) .two-columns > div:has(h3:text-is("Исходящие")) a')
    inward = page.locator('section:has(h2:text-is("Связи")) .two-columns > div:has(h3:text-is("Входящие")) a')
    assert outward.all_inner_texts() == ['AURORA-20'] and outward.get_attribute('href') == '#/issues/AURORA-20'
    assert inward.all_inner_texts() == ['AURORA-3'] and inward.get_attribute('href') == '#/issues/AURORA-3'
    comment = page.locator('.comment').first
    assert 'Первый комментарий' in comment.inner_text()
    # relative to now; on hover the exact time in the browser's zone (Moscow) and in UTC
    moment = comment.locator('time')
    assert moment.get_attribute('title') == '22.10.2026, 09:00:00 (2026-10-22 06:00:00 UTC)'
    assert moment.get_attribute('datetime') == '2026-10-22T06:00:00.000Z'
    attachments = page.locator('section:has(h2:text-is("Вложения")) tbody tr')
    assert attachments.count() == 2
    assert 'в хабе' in attachments.nth(0).inner_text()
    assert 'не скачано' in attachments.nth(1).inner_text()
    assert page.locator('section:has(h2:text-is("Спринты")) li').all_inner_texts() == ['Спринт 1 — активный']
    history = page.locator('section:has(h2:text-is("Журнал изменений")) tbody tr')
    assert history.count() == 1
    assert 'Открыта' in history.inner_text() and 'В работе' in history.inner_text()
    ui.screenshot('issue')
    outward.click()
    ui.wait('issue')
    assert page.locator('h1').inner_text() == 'AURORA-20 Соседняя задача'


def test_jira_text_with_markup_shows_literally_and_executes_nothing(ui):
    ui.sign_in('#/issues/AURORA-66', view='issue')
    page = ui.page
    assert page.locator('h1 .summary').inner_text() == XSS_SUMMARY
    assert page.locator('.description').inner_text() == XSS_DESCRIPTION
    assert page.locator('.comment .text').inner_text() == XSS_COMMENT
    assert page.locator('.comment .author').inner_text() == '<b>автор</b>'
    history = page.locator('section:has(h2:text-is("Журнал изменений")) tbody')
    assert XSS_SUMMARY in history.inner_text()
    ui.go('#/issues?jql=key+%3D+AURORA-66', 'issues')
    assert page.locator('main td .summary').inner_text() == XSS_SUMMARY
    assert page.locator('main img, main script, main b').count() == 0
    assert page.evaluate('window.__pwned') is None


def test_saving_a_note_changes_get_notes(ui):
    ui.allow_http_errors(422)
    ui.sign_in('#/issues/AURORA-2', view='issue')
    page = ui.page
    editor = page.locator('form.note-editor')
    editor.locator('[name="work_kind"]').fill('Аналитика')
    editor.locator('[name="done_text"]').fill('Собраны требования\nи <script>не выполнится</script>')
    editor.locator('[name="rest_text"]').fill('Согласовать')
    # without "Кто правит" the API answers 422: the message sits next to that field
    editor.locator('button[type="submit"]').click()
    author = editor.locator('[name="updated_by"]')
    page.wait_for_selector('form.note-editor [name="updated_by"][aria-invalid="true"]')
    error = editor.locator('.field:has([name="updated_by"]) .field-error')
    assert 'укажите, кто правит заметку' in error.inner_text()  # the API's own message
    assert error.get_attribute('id') in author.get_attribute('aria-describedby').split()
    author.fill('ivanov')
    editor.locator('button[type="submit"]').click()
    page.wait_for_selector('form.note-editor .message-ok')
    assert author.get_attribute('aria-invalid') is None
    note = ui.hub['api'].get('/notes/AURORA-2')
    assert (note['work_kind'], note['done_text'], note['rest_text'], note['owner_note'],
            note['updated_by']) == ('Аналитика', 'Собраны требования\nи <script>не выполнится</script>',
                                    'Согласовать', None, 'ivanov')
    assert 'ivanov' in editor.locator('.note-meta').inner_text()
    # a reload shows the stored note; the author is remembered for the next form
    ui.open('#/issues/AURORA-2', 'issue')
    assert editor.locator('[name="done_text"]').input_value() == note['done_text']
    assert author.input_value() == 'ivanov'


def test_ready_attachment_downloads_through_fetch_with_the_token_in_a_header(ui):
    ui.sign_in('#/issues/AURORA-1', view='issue')
    page = ui.page
    requests = []
    page.on('request', lambda r: requests.append((r.url, r.headers.get('authorization'))))
    with page.expect_download() as download:
        page.click('button:text-is("Скачать")')
    assert download.value.suggested_filename == 'отчёт.txt'
    assert open(download.value.path(), 'rb').read() == ATTACHMENT_BYTES
    content = [(url, auth) for url, auth in requests if url.endswith('/attachments/501/content')]
    assert content == [(ui.origin + '/attachments/501/content', f'Bearer {ui.hub["client_token"]}')]
    assert all(ui.hub['client_token'] not in url for url, _ in requests)
    assert page.locator(f'a[href*="{ui.hub["client_token"]}"]').count() == 0


def test_fetch_button_asks_the_agent_to_download_an_attachment(ui):
    ui.sign_in('#/issues/AURORA-1', view='issue')
    page = ui.page
    row = page.locator('section:has(h2:text-is("Вложения")) tbody tr:has-text("схема.pdf")')
    row.locator('button:text-is("Скачать в хаб")').click()
    row.locator('text=скачивается').wait_for()
    link = row.locator('a[href^="#/commands/"]')
    assert ui.hub['api'].get('/attachments/502')['state'] == 'fetching'
    command_id = int(link.get_attribute('href').rsplit('/', 1)[1])
    assert ui.hub['api'].get(f'/commands/{command_id}')['params'] == {'attachment_id': '502'}


# --- board ------------------------------------------------------------------------------------------------

def test_board_shows_columns_with_own_issues_done_column_and_sprint_filter(ui):
    ui.sign_in('#/board/AWPCA?sprint=all', view='board')
    page = ui.page
    columns = page.locator('.board-column')
    assert columns.count() == 3
    keys = [sorted(columns.nth(i).locator('li a.key').all_inner_texts()) for i in range(3)]
    assert keys == [['AURORA-10', 'AURORA-66'], ['AURORA-1', 'AURORA-100', 'AURORA-3'],
                    ['AURORA-11', 'AURORA-2']]
    assert columns.nth(2).get_attribute('class') == 'board-column done'
    assert 'готово' in columns.nth(2).locator('h2').inner_text()
    sprints = page.locator('section:has(h2:text-is("Спринты")) tbody tr')
    assert sprints.count() == 2
    page.select_option('select[name="sprint"]', '102')
    page.click('form.filters button[type="submit"]')
    ui.wait('board')
    assert page.url.endswith('#/board/AWPCA?sprint=102')
    keys = [sorted(columns.nth(i).locator('li a.key').all_inner_texts()) for i in range(3)]
    assert keys == [[], ['AURORA-3'], []]


# --- batches ------------------------------------------------------------------------------------------------

def test_batches_list_filters_by_status(ui):
    ui.sign_in('#/batches', view='batches')
    page = ui.page
    titles = column(page, 'Название')
    assert {'Полная загрузка', 'Комментарии к задачам', 'Пакет для отмены'} <= set(titles)
    ui.screenshot('batches')
    page.select_option('select[name="status"]', 'running')
    page.click('form.filters button[type="submit"]')
    ui.wait('batches')
    assert page.url.endswith('#/batches?status=running')
    assert set(column(page, 'Статус')) == {'выполняется'}
    assert 'Комментарии к задачам' in column(page, 'Название')


def test_batch_page_shows_its_commands(ui):
    batch_id = ui.hub['running_batch']
    ui.sign_in(f'#/batches/{batch_id}', view='batch')
    page = ui.page
    assert page.locator('h1').inner_text() == f'Пакет №{batch_id}: Комментарии к задачам'
    assert column(page, 'Статус') == ['выдана агенту', 'в очереди']
    assert column(page, 'Выдач') == ['1', '0']
    assert column(page, 'Параметры') == ['key: AURORA-1\nbody: Проверено',
                                         'key: AURORA-1\nstatus: Готово']
    ui.screenshot('batch')


def test_cancelling_a_batch_from_its_page_cancels_it(ui):
    batch_id = ui.hub['cancel_batch']
    ui.sign_in(f'#/batches/{batch_id}', view='batch')
    page = ui.page
    page.click('button:text-is("Отменить пакет")')
    page.click('button:text-is("Да, отменить")')
    page.wait_for_selector('.message-ok:text("Пакет отменён.")')
    batch = ui.hub['api'].get(f'/batches/{batch_id}')
    assert batch['status'] == 'cancelled'
    assert [c['status'] for c in batch['commands']] == ['cancelled', 'cancelled']
    assert column(page, 'Статус') == ['отменена', 'отменена']
    assert page.locator('button:text-is("Отменить пакет")').count() == 0


def test_new_batch_form_shows_the_api_422_next_to_the_field_then_queues_the_batch(ui):
    ui.allow_http_errors(422)
    ui.sign_in('#/new-batch', view='new-batch')
    page = ui.page
    page.fill('input[name="title"]', 'Комментарий из страницы')
    page.fill('input[name="author"]', 'sidorova')
    page.select_option('select[name="type"]', 'add_comment')
    page.fill('input[name="key"]', 'aurora-1')
    page.fill('textarea[name="body"]', 'Готово к ревью')
    page.click('button:text-is("Поставить в очередь")')
    key = page.locator('input[name="key"]')
    page.wait_for_selector('input[name="key"][aria-invalid="true"]')
    error = page.locator('.field:has(input[name="key"]) .field-error')
    assert 'ожидается ключ задачи' in error.inner_text()
    assert error.get_attribute('id') in key.get_attribute('aria-describedby').split()
    assert page.evaluate('document.activeElement.name') == 'key'
    assert page.locator('textarea[name="body"]').get_attribute('aria-invalid') is None
    ui.screenshot('new-batch')
    key.fill('AURORA-1')
    page.click('button:text-is("Поставить в очередь")')
    ui.wait('batch')
    batch_id = int(re.search(r'#/batches/(\d+)$', page.url).group(1))
    batch = ui.hub['api'].get(f'/batches/{batch_id}')
    assert (batch['title'], batch['author'], batch['status']) == (
        'Комментарий из страницы', 'sidorova', 'queued')
    assert [(c['type'], c['params']) for c in batch['commands']] == [
        ('add_comment', {'key': 'AURORA-1', 'body': 'Готово к ревью'})]
    ui.hub['api'].post(f'/batches/{batch_id}/cancel')  # keep the agent's queue for other tests


def test_new_batch_form_queues_refreshes_transitions_and_new_issues(ui):
    ui.sign_in('#/new-batch', view='new-batch')
    page = ui.page
    page.fill('input[name="title"]', 'Разное')
    command = page.locator('fieldset.command')
    command.nth(0).locator('select[name="mode"]').select_option('jql')
    assert command.nth(0).locator('input[name="jql"]').input_value() == \
        'project = AURORA AND labels in ("AWPCA", "ORION")'
    page.click('button:text-is("Добавить команду")')
    command.nth(1).locator('select[name="type"]').select_option('refresh')
    command.nth(1).locator('input[name="keys"]').fill('AURORA-1, AURORA-2 AURORA-3')
    page.click('button:text-is("Добавить команду")')
    command.nth(2).locator('select[name="type"]').select_option('transition')
    command.nth(2).locator('input[name="key"]').fill('AURORA-3')
    command.nth(2).locator('input[name="status"]').fill('Готово')
    page.click('button:text-is("Добавить команду")')
    command.nth(3).locator('select[name="type"]').select_option('ensure_issue')
    command.nth(3).locator('select[name="issue_type"]').select_option('task')
    command.nth(3).locator('input[name="summary"]').fill('Новая задача со страницы')
    command.nth(3).locator('input[name="labels"]').fill('AWPCA')
    temp_key = ui.hub['api'].get('/temp-keys/next')['temp_key']  # the form asks the hub too
    page.wait_for_function('key => document.querySelector(\'input[name="temp_key"]\').value === key',
                           arg=temp_key)
    page.click('button:text-is("Поставить в очередь")')
    ui.wait('batch')
    batch_id = int(re.search(r'#/batches/(\d+)$', page.url).group(1))
    batch = ui.hub['api'].get(f'/batches/{batch_id}')
    assert [(c['type'], c['params']) for c in batch['commands']] == [
        ('refresh', {'jql': 'project = AURORA AND labels in ("AWPCA", "ORION")'}),
        ('refresh', {'keys': ['AURORA-1', 'AURORA-2', 'AURORA-3']}),
        ('transition', {'key': 'AURORA-3', 'status': 'Готово'}),
        ('ensure_issue', {'issue_type': 'task', 'summary': 'Новая задача со страницы',
                          'labels': ['AWPCA'], 'temp_key': temp_key})]
    ui.hub['api'].post(f'/batches/{batch_id}/cancel')


# --- changes ------------------------------------------------------------------------------------------------

def test_changes_feed_lists_changes_with_filters(ui):
    ui.sign_in('#/changes', view='changes')
    page = ui.page
    assert column(page, 'Задача') == ['AURORA-66', 'AURORA-1']  # newest first
    assert column(page, 'Поле') == ['сводка', 'статус']
    last = page.locator('main tbody tr').last.locator('time')
    assert last.get_attribute('title') == '22.10.2026, 09:30:00 (2026-10-22 06:30:00 UTC)'
    ui.screenshot('changes')
    page.fill('input[name="key"]', 'AURORA-66')
    page.click('form.filters button[type="submit"]')
    ui.wait('changes')
    assert page.url.endswith('#/changes?key=AURORA-66')
    assert column(page, 'Задача') == ['AURORA-66']
    page.fill('input[name="since"]', '2026-10-24T12:00')  # Moscow time = 09:00 UTC
    page.click('form.filters button[type="submit"]')
    ui.wait('changes')
    assert page.url.endswith('#/changes?key=AURORA-66&since=2026-10-24T09%3A00%3A00Z')


def test_unknown_address_and_missing_issue_say_so(ui):
    ui.allow_http_errors(404)
    ui.sign_in('#/nowhere', view='not-found')
    assert ui.page.locator('h1').inner_text() == 'Нет такой страницы'
    ui.go('#/issues/AURORA-999', 'error')
    assert 'AURORA-999' in ui.page.locator('#main').inner_text()


# --- keyboard and labels --------------------------------------------------------------------------------

VIEWS = ['#/', '#/projects', '#/issues?project=AWPCA', '#/issues/AURORA-1', '#/board/AWPCA',
         '#/batches', '#/batches/{refresh_batch}', '#/new-batch', '#/changes']
UNLABELLED = '''() => [...document.querySelectorAll('input, select, textarea')].filter((el) => {
  const label = el.id && document.querySelector(`label[for="${el.id}"]`);
  return !(label && label.textContent.trim()) && !el.getAttribute('aria-label');
}).map((el) => el.outerHTML)'''
FAKE_BUTTONS = '''() => [...document.querySelectorAll('[onclick], [role="button"], div[tabindex], span[tabindex]')]
  .map((el) => el.outerHTML)'''


def test_every_view_labels_its_fields_and_uses_real_buttons(ui):
    ui.sign_in('#/changes', view='changes')  # then every address below is a new one
    for address in VIEWS:
        address = address.format(**ui.hub)
        ui.go(address)
        assert ui.page.evaluate(UNLABELLED) == [], address
        assert ui.page.evaluate(FAKE_BUTTONS) == [], address
        assert ui.page.locator('h1').count() == 1, address


def test_the_pages_work_with_the_keyboard(ui):
    ui.open('#/', 'sign-in')
    page = ui.page
    assert page.evaluate('document.activeElement.name') == 'token'  # focus starts in the field
    page.keyboard.type(ui.hub['client_token'])
    page.keyboard.press('Enter')
    ui.wait('overview')
    # Tab from the page's heading reaches the navigation, Enter follows a link
    page.focus('#nav a:text-is("Проекты")')
    page.keyboard.press('Enter')
    ui.wait('projects')
    assert page.evaluate('document.activeElement.tagName') == 'H1'  # focus moves to the new view
    for _ in range(40):
        page.keyboard.press('Tab')
        if page.evaluate('document.activeElement.textContent') == 'AWPCA':
            break
    page.keyboard.press('Enter')
    ui.wait('issues')
    # the query form submits with Enter from its field
    page.focus('input[name="jql"]')
    page.keyboard.type('key in (AURORA-100, AURORA-10)')
    page.keyboard.press('Enter')
    ui.wait('issues')
    assert 'jql=key+in' in page.url
    assert column(page, 'Ключ') == ['AURORA-10', 'AURORA-100']
