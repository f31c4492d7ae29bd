"""Browser tests of the web UI (contract §15): Playwright driving Debian's Chromium against a real
``sdlc-hub serve`` whose mirror was filled through the agent protocol over HTTP.

One server and one browser per session; every test gets a fresh browser context (its own
sessionStorage), 1280×800, Russian locale and the Moscow time zone (so a time shown in the
browser's zone differs from UTC). Every test also checks, at teardown, that no request left the
hub's origin and that the console stayed free of errors, apart from the HTTP errors that test
provoked on purpose (``ui.allow_http_errors(422)``).

Chromium: ``/usr/bin/chromium`` (``apt-get install chromium``; override with
``$SDLC_HUB_CHROMIUM``). Playwright's own browser downloads are never used. When the browser or
the ``playwright`` package is missing the tests are left out with one line in the summary, except
on CI (``CI=true``) where that fails the run.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import start_server

CHROMIUM = os.environ.get('SDLC_HUB_CHROMIUM', '/usr/bin/chromium')
CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                 '--disable-background-networking', '--disable-component-update', '--disable-sync',
                 '--disable-dev-shm-usage']
SCREENSHOTS = os.environ.get('SDLC_HUB_SCREENSHOTS')  # e.g. docs/screenshots: write one per view
VIEWPORT = {'width': 1280, 'height': 800}
BROWSER_DIR = Path(__file__).resolve().parent
ON_CI = os.environ.get('CI', '').lower() in ('1', 'true', 'yes')
RENDERED = '''({view, after}) => {
  const main = document.getElementById('main');
  return main.dataset.state === 'ready' && Number(main.dataset.render) > after
    && (view === null || main.dataset.view === view);
}'''
# What a view shows when it renders a missing value as text (the fixture's Jira texts have none).
LEAKED_VALUE = re.compile(r'\b(null|undefined|NaN)\b|\[object ')


def ru_plural(count, forms: tuple[str, str, str]) -> str:
    """«1 очко», «2 очка», «5 очков», «1,5 очка»: Russian plural forms (CLDR), written as the
    page writes numbers."""
    one, few, many = forms
    if count != int(count):
        form, text = few, f'{count:g}'.replace('.', ',')
    else:
        n = int(count)
        form = (one if n % 10 == 1 and n % 100 != 11
                else few if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14 else many)
        text = f'{n:,}'.replace(',', '\u00a0')
    return f'{text} {form}'


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return 'the playwright package is not installed (pip install -e ".[test]")'
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)) and not shutil.which(CHROMIUM):
        return f'no Chromium at {CHROMIUM} (apt-get install chromium)'
    return None


MISSING = _missing()


def pytest_collection_modifyitems(config, items):
    if MISSING is None or ON_CI:
        return  # on CI the browser fixture fails every test instead
    # Deselected rather than skipped one by one: the run reports them in the one line below.
    browser_items = [item for item in items if BROWSER_DIR in Path(str(item.fspath)).parents]
    if browser_items:
        config.hook.pytest_deselected(items=browser_items)
        items[:] = [item for item in items if item not in browser_items]


def pytest_terminal_summary(terminalreporter):
    if MISSING is not None and not ON_CI:
        terminalreporter.write_line(
            f'!!! WEB UI BROWSER TESTS SKIPPED: {MISSING} !!!', red=True, bold=True)


# --- the hub, filled through the protocol --------------------------------------------------------

class Api:
    """A tiny JSON client of the hub (urllib; one role's token)."""

    def __init__(self, url: str, token: str):
        self.url = url
        self.token = token

    def call(self, method: str, path: str, body=None, raw: bytes | None = None,
             expect: int | tuple = (200, 201, 202)) -> dict:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.url + path, data=data, method=method, headers={
            'Authorization': f'Bearer {self.token}',
            'Content-Type': 'application/octet-stream' if raw is not None else 'application/json'})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, payload = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, payload = error.code, error.read()
        answer = json.loads(payload) if payload else None
        expected = (expect,) if isinstance(expect, int) else expect
        assert status in expected, f'{method} {path} -> {status}: {answer}'
        return answer

    def get(self, path: str, **kw) -> dict:
        return self.call('GET', path, **kw)

    def post(self, path: str, body=None, **kw) -> dict:
        return self.call('POST', path, body if body is not None else {}, **kw)


XSS_SUMMARY = '<img src=x onerror="window.__pwned=1">Сводка с разметкой'
XSS_DESCRIPTION = '<script>window.__pwned=2</script>\nВторая строка <b>жирно</b>'
XSS_COMMENT = '<img src=x onerror="window.__pwned=3"><script>window.__pwned=4</script> комментарий'
ATTACHMENT_BYTES = 'Отчёт по задаче AURORA-1\n'.encode() * 40
BOARD = {'board_id': 4216, 'type': 'scrum', 'kanban_backlog': None, 'columns': [
    {'name': 'Открыта', 'statuses': ['Открыта']},
    {'name': 'В работе', 'statuses': ['В работе', 'На проверке']},
    {'name': 'Готово', 'statuses': ['Готово', 'Снято']}],
    'sprints': [
        {'id': 101, 'name': 'Спринт 1', 'state': 'active', 'start_date': '2026-11-23T09:00:00.000+0300',
         'end_date': '2026-12-06T18:00:00.000+0300', 'complete_date': None, 'goal': 'Очередь'},
        {'id': 102, 'name': 'Спринт 2', 'state': 'future', 'start_date': None, 'end_date': None,
         'complete_date': None, 'goal': None}]}


def issue(number: int, **fields) -> dict:
    data = {'key': f'AURORA-{number}', 'id': str(10000 + number), 'issue_type': 'Задача',
            'summary': f'Задача номер {number}', 'description': f'Описание задачи {number}',
            'status': 'Открыта', 'priority': 'Средний', 'assignee': 'ivanov', 'reporter': 'petrov',
            'labels': ['AWPCA'], 'updated': '2026-10-22T09:00:00.000+0300',
            'created': '2026-10-01T10:00:00.000+0300', 'links': [], 'comments': [],
            'attachments': [], 'sprint_ids': []}
    data.update(fields)
    return data


def mirror_issues() -> list[dict]:
    """AWPCA owns 1, 2, 3, 10, 11, 66, 100; 9 (epic of 2) and 20 (linked from 1) are its
    neighbours; 30 belongs to ORION only and is not in AWPCA's slice."""
    return [
        issue(1, status='В работе', sprint_ids=[101], epic_key='AURORA-9', duedate='2026-12-01',
              planned_start='2026-11-23', planned_end='2026-12-04', sprint='Спринт 1', story_points=3,
              description='Собрать отчёт по платежам.\nСверить итоги с бухгалтерией.', links=[
            {'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-20'},
            {'type': 'Relates', 'direction': 'inward', 'key': 'AURORA-3'}],  # AURORA-3's own link
            comments=[{'id': '9001', 'author': 'sidorova', 'created': '2026-10-22T09:00:00.000+0300',
                       'updated': '2026-10-22T09:00:00.000+0300', 'body': 'Первый комментарий'}],
            attachments=[
                {'id': '501', 'filename': 'отчёт.txt', 'size': len(ATTACHMENT_BYTES),
                 'mime_type': 'text/plain', 'author': 'ivanov', 'created': '2026-10-22T09:00:00.000+0300'},
                {'id': '502', 'filename': 'схема.pdf', 'size': 2048, 'mime_type': 'application/pdf',
                 'author': 'petrov', 'created': '2026-10-23T10:00:00.000+0300'}]),
        issue(2, epic_key='AURORA-9', status='Готово', sprint_ids=[101]),
        issue(3, status='На проверке', sprint_ids=[102], links=[
            {'type': 'Relates', 'direction': 'outward', 'key': 'AURORA-1'}]),
        issue(9, issue_type='Эпик', labels=['OTHER'], summary='Эпик соседей'),
        issue(10, status='Открыта'),
        issue(11, status='Снято'),
        issue(20, labels=['OTHER'], summary='Соседняя задача'),
        issue(30, labels=['ORION'], summary='Задача Ориона'),
        issue(66, summary=XSS_SUMMARY, description=XSS_DESCRIPTION, comments=[
            {'id': '9066', 'author': '<b>автор</b>', 'created': '2026-10-24T12:00:00.000+0300',
             'updated': '2026-10-24T12:00:00.000+0300', 'body': XSS_COMMENT}]),
        issue(100, status='В работе', assignee='petrov'),
    ]


def history_items() -> list[dict]:
    return [{'history_id': '7001', 'seq': 0, 'key': 'AURORA-1', 'created': '2026-10-22T09:30:00.000+0300',
             'author': 'ivanov', 'field_id': 'status', 'field_name': 'Status', 'from_value': '1',
             'from_string': 'Открыта', 'to_value': '3', 'to_string': 'В работе'},
            {'history_id': '7002', 'seq': 0, 'key': 'AURORA-66', 'created': '2026-10-24T12:05:00.000+0300',
             'author': 'petrov', 'field_id': 'summary', 'field_name': 'Summary', 'from_value': None,
             'from_string': 'Старая сводка', 'to_value': None, 'to_string': XSS_SUMMARY}]


class FilledHub(dict):
    """The running hub and what the fill left in it (ids of the batches the tests use)."""


def fill(server) -> FilledHub:
    client = Api(server['url'], server['client_token'])
    agent = Api(server['url'], server['agent_token'])
    client.call('PUT', '/settings', {
        'project_key': 'AURORA',
        'issue_types': {'task': {'name': 'Задача', 'id': '3'}, 'epic': {'name': 'Эпик', 'id': '6'}},
        'link_types': {'blocks': 'Blocks', 'relates': 'Relates'}})
    client.post('/projects', {'label': 'AWPCA', 'name': 'АРМ КА', 'board_id': 4216})
    client.post('/projects', {'label': 'ORION', 'name': 'Орион'})
    jql = client.get('/settings')['base_jql']

    def claim() -> dict:
        command = agent.post('/agent/claim', {'agent': 'jira', 'agent_version': 'ui-tests'})['command']
        assert command is not None
        return command

    refresh = client.post('/batches', {'title': 'Полная загрузка', 'author': 'tests', 'commands': [
        {'type': 'refresh', 'params': {'jql': jql}}]})
    command = claim()
    assert command['batch_id'] == refresh['id']
    agent.post('/agent/state', {'agent': 'jira', 'command_id': command['id'], 'issues': mirror_issues()})
    agent.post('/agent/history', {'agent': 'jira', 'command_id': command['id'], 'items': history_items()})
    agent.post('/agent/boards', {'agent': 'jira', 'command_id': command['id'], 'boards': [BOARD]})
    agent.post(f'/agent/commands/{command["id"]}/report', {
        'agent': 'jira', 'status': 'done', 'jira_calls': 3, 'rate_limited': 0,
        'result': {'history': {'issues': 10, 'changes': 2, 'incomplete': []}}})

    # attachment 501 downloaded into the hub (ready); 502 stays «не скачано»
    fetch = client.post('/attachments/501/fetch', expect=202)
    command = claim()
    assert command['id'] == fetch['command_id']
    sha256 = hashlib.sha256(ATTACHMENT_BYTES).hexdigest()
    agent.call('PUT', f'/agent/files/{sha256}', raw=ATTACHMENT_BYTES)
    agent.post(f'/agent/commands/{command["id"]}/report', {
        'agent': 'jira', 'status': 'done', 'jira_calls': 1, 'rate_limited': 0,
        'result': {'sha256': sha256, 'size': len(ATTACHMENT_BYTES)}})

    # a running batch (first command handed to the agent) and a queued one to cancel
    running = client.post('/batches', {'title': 'Комментарии к задачам', 'author': 'ivanov',
                                       'project': 'AWPCA', 'commands': [
        {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'Проверено'}},
        {'type': 'transition', 'params': {'key': 'AURORA-1', 'status': 'Готово'}}]})
    assert claim()['batch_id'] == running['id']
    to_cancel = client.post('/batches', {'title': 'Пакет для отмены', 'author': 'petrov', 'commands': [
        {'type': 'add_comment', 'params': {'key': 'AURORA-2', 'body': 'Лишний комментарий'}},
        {'type': 'transition', 'params': {'key': 'AURORA-2', 'status': 'В работе'}}]})
    return FilledHub(server, api=client, running_batch=running['id'], cancel_batch=to_cancel['id'],
                     refresh_batch=refresh['id'])


@pytest.fixture(scope='session')
def hub_server(tmp_path_factory):
    server = start_server(tmp_path_factory.mktemp('ui-hub') / 'data')
    try:
        yield fill(server)
    finally:
        server.stop()


# --- the browser -----------------------------------------------------------------------------------

# Package scope: Playwright's sync API marks its event loop as running in the main thread while
# it is open, so asyncio (the MCP tests' anyio client) could not start a loop in any test after
# these; the browser stops when the browser tests are done.
@pytest.fixture(scope='package')
def browser():
    if MISSING is not None:
        pytest.fail(f'browser tests need Chromium on CI: {MISSING}')
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which(CHROMIUM) or CHROMIUM,
                                             args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class Ui:
    """A signed-out page on the hub plus what it logged and requested."""

    def __init__(self, page, hub: FilledHub):
        self.page = page
        self.hub = hub
        self.origin = hub['url']
        self.console: list[str] = []
        self.foreign: list[str] = []
        self.allowed_statuses: set[int] = set()
        self.seen = 0
        page.on('console', lambda msg: self.console.append(f'{msg.type}: {msg.text}')
                if msg.type == 'error' else None)
        page.on('pageerror', lambda error: self.console.append(f'pageerror: {error}'))

    def allow_http_errors(self, *statuses: int) -> None:
        """The browser logs a failed fetch as a console error; this test provokes these ones."""
        self.allowed_statuses.update(statuses)

    def console_errors(self) -> list[str]:
        allowed = re.compile(r'status of (%s)\b' % '|'.join(map(str, self.allowed_statuses))) \
            if self.allowed_statuses else None
        return [line for line in self.console if not (allowed and allowed.search(line))]

    def open(self, hash_path: str = '#/', view: str | None = None) -> None:
        """Load the page at ``/ui/<hash>`` and wait until the view has rendered."""
        self.seen = 0  # a new document counts its renders from 1
        self.page.goto(f'{self.origin}/ui/{hash_path}')
        self.wait(view)

    def go(self, hash_path: str, view: str | None = None) -> None:
        """Navigate inside the loaded page (a new hash) and wait for the view."""
        self.page.evaluate('hash => { location.hash = hash; }', hash_path)
        self.wait(view)

    def wait(self, view: str | None = None) -> None:
        """Until a render newer than the last one waited for is done (so a click that changes the
        address is never answered by the view it leaves); it never shows a JavaScript non-value."""
        self.page.wait_for_function(RENDERED, arg={'view': view, 'after': self.seen})
        self.seen = int(self.page.get_attribute('#main', 'data-render'))
        shown = self.page.inner_text('#main')
        assert not LEAKED_VALUE.search(shown), LEAKED_VALUE.search(shown).group(0)

    def sign_in(self, hash_path: str = '#/', view: str | None = 'overview') -> None:
        self.open(hash_path, 'sign-in')
        self.page.fill('input[name="token"]', self.hub['client_token'])
        self.page.click('form.sign-in button[type="submit"]')
        self.wait(view)

    def screenshot(self, name: str) -> None:
        """``<name>.png`` in the light scheme and ``<name>-dark.png`` under
        ``prefers-color-scheme: dark`` (only with ``SDLC_HUB_SCREENSHOTS``)."""
        if SCREENSHOTS:
            Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
            self.page.emulate_media(color_scheme='light')
            self.page.screenshot(path=str(Path(SCREENSHOTS) / f'{name}.png'))
            self.page.emulate_media(color_scheme='dark')
            self.page.screenshot(path=str(Path(SCREENSHOTS) / f'{name}-dark.png'))
            self.page.emulate_media(color_scheme='light')


@contextlib.contextmanager
def open_ui(browser, hub: FilledHub, **options):
    """A fresh browser context on ``hub`` (``options`` go to ``new_context``, e.g.
    ``color_scheme='dark'``); at the end, no request may have left the origin and the console
    must be free of errors."""
    context = browser.new_context(viewport=VIEWPORT, locale='ru-RU', timezone_id='Europe/Moscow',
                                  accept_downloads=True, **options)
    context.set_default_timeout(10_000)
    page = context.new_page()
    helper = Ui(page, hub)

    def guard(route):
        url = route.request.url
        if url.startswith(helper.origin + '/') or url.startswith(('blob:', 'data:')):
            route.continue_()
        else:
            helper.foreign.append(url)
            route.abort()
    context.route('**/*', guard)
    try:
        yield helper
    finally:
        context.close()
    assert helper.foreign == [], 'requests left the hub origin'
    assert helper.console_errors() == [], 'console errors'


@pytest.fixture
def ui(browser, hub_server):
    with open_ui(browser, hub_server) as helper:
        yield helper
