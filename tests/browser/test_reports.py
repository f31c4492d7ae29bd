"""The reports view ``#/reports/<label>`` (contract §17, issue 21) in a real browser, over the
demo's mirror: a hub prepared as ``serve --demo`` prepares it, filled over HTTP by the agent
(``hubweb.jira_agent``) from the demo's fake Jira REST server, whose Jira tells the scrum story of
today (``FakeJira(scrum_history=now)``).

With ``SDLC_HUB_SCREENSHOTS`` set, the view is saved as ``reports.png`` and ``reports-dark.png``."""
from __future__ import annotations

import re
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from hublib import open_hub, settings
from hubweb.demo import DEMO_ISSUES, DEMO_JIRA_TOKEN, DEMO_SEED, prepare_demo
from hubweb.demo.fake_jira import FakeJira
from hubweb.demo.jira_rest import JiraRest, serve
from hubweb.jira_agent import build_agent
from tests.conftest import start_server

from .conftest import Api, FilledHub, ru_plural

pytestmark = pytest.mark.browser

CHART_CODE = re.compile(r'/ui/(js/charts\.js|js/views/reports\.js|reports\.css)$')


@pytest.fixture(scope='module')
def hub_server(tmp_path_factory):
    """This module's hub (it overrides the session's for the ``ui`` fixture): the demo's."""
    data_dir = tmp_path_factory.mktemp('reports-hub') / 'data'
    hub = open_hub(data_dir)
    try:
        prepare_demo(hub)
        settings.update_settings(hub, {'pacing': {'interval_ms': 0, 'pause_on_rate_limit_seconds': 60}})
    finally:
        hub.close()
    server = start_server(data_dir)
    jira = serve(JiraRest(FakeJira(DEMO_ISSUES, seed=DEMO_SEED,
                                   scrum_history=datetime.now(timezone.utc)),
                          token=DEMO_JIRA_TOKEN))
    try:
        agent = build_agent(server['url'], server['agent_token'], jira.url, DEMO_JIRA_TOKEN,
                            poll_interval=0)
        agent.run(once=True)
        assert agent.executed >= 1
        yield FilledHub(server, api=Api(server['url'], server['client_token']))
    finally:
        jira.close()
        server.stop()


def column_texts(table, index: int) -> list[str]:
    return [text.strip() for text in table.locator(f'tbody tr td:nth-child({index})').all_inner_texts()]


def test_reports_show_burndown_flow_velocity_and_cycle_time_each_followed_by_its_table(ui):
    ui.sign_in('#/reports/AWPCA', view='reports')
    page = ui.page
    charts = page.locator('svg[role="img"]')
    assert charts.count() == 4
    labels = [charts.nth(i).get_attribute('aria-label') for i in range(4)]
    assert labels[0].startswith('Сгорание спринта «Спринт 7»') and 'взято' in labels[0]
    assert labels[1].startswith('Накопительная диаграмма потока') and 'Готово — ' in labels[1]
    assert labels[2].startswith('Скорость за 6 закрытых спринтов')
    assert labels[3].startswith('Время цикла') and 'p50' in labels[3] and 'p85' in labels[3]
    assert all(re.search(r'\d', label) for label in labels)
    # every chart is followed by its numbers in a table
    followed = page.evaluate('''() => [...document.querySelectorAll('figure.chart')].map(
        (figure) => { let next = figure.nextElementSibling;
                      return Boolean(next && next.querySelector('table')); })''')
    assert followed == [True] * 4
    api = ui.hub['api']
    report = api.get('/projects/AWPCA/sprints/107/report?tz=Europe/Moscow')
    burndown = page.locator('figure.chart >> nth=0 >> xpath=following-sibling::div[1]//table')
    assert column_texts(burndown, 2) == [str(day['remaining_issues']) for day in report['burndown']]
    flow = api.get('/projects/AWPCA/flow?tz=Europe/Moscow')
    flow_table = page.locator('figure.chart >> nth=1 >> xpath=following-sibling::div[1]//table')
    headers = [t.strip() for t in flow_table.locator('thead th').all_inner_texts()]
    assert headers == ['День', *flow['columns'], 'Вне колонок']
    assert column_texts(flow_table, 4)[-1] == str(flow['days'][-1]['counts'][2])
    velocity = page.locator('figure.chart >> nth=2 >> xpath=following-sibling::div[1]//table')
    assert column_texts(velocity, 1) == [f'Спринт {n}' for n in range(1, 7)]
    cycle = api.get('/projects/AWPCA/cycle-time')
    assert page.locator('figure.chart >> nth=3 >> xpath=following-sibling::div[1]//tbody/tr') \
        .count() == min(200, cycle['summary']['count'])
    ui.screenshot('reports')
    page.emulate_media(color_scheme='dark')
    ui.screenshot('reports-dark')


def moscow_day(moment: str) -> str:
    return datetime.fromisoformat(moment).astimezone(ZoneInfo('Europe/Moscow')).strftime('%d.%m.%Y')


def test_the_sprint_period_is_dates_and_every_count_takes_its_russian_form(ui):
    ui.sign_in('#/reports/AWPCA', view='reports')
    page = ui.page
    report = ui.hub['api'].get('/projects/AWPCA/sprints/107/report?tz=Europe/Moscow')
    burndown = page.locator('section:has(h2:has-text("Сгорание спринта"))')
    lead = burndown.locator('p.lead').inner_text()
    # «с 23.11.2026 по 03.12.2026», not «с 10 дней назад по только что»
    assert f'с {moscow_day(report["start"])} по {moscow_day(report["end"])}' in lead, lead
    assert 'назад' not in lead and 'только что' not in lead
    issues, points = ('задача', 'задачи', 'задач'), ('очко', 'очка', 'очков')
    keys = ['committed', 'added', 'removed', 'completed', 'not_completed']
    assert burndown.locator('.report-figures dd').all_inner_texts() == [
        f'{ru_plural(len(report[key]), issues)} · {ru_plural(report["points"][key], points)}' for key in keys]
    label = page.locator('svg[role="img"]').first.get_attribute('aria-label')
    assert f'взято {ru_plural(report["points"]["committed"], points)},' in label, label
    remaining = report['burndown'][-1]['remaining_points']
    assert f'осталось {ru_plural(remaining, points)};' in label, label
    velocity = ui.hub['api'].get('/projects/AWPCA/velocity')['items']
    average = sum(item['completed_points'] for item in velocity) / len(velocity)
    caption = page.locator('section:has(h2:has-text("Скорость команды")) figcaption').inner_text()
    assert caption == f'В среднем выполнено {ru_plural(round(average, 2), points)} за спринт.'


def test_choosing_a_sprint_shows_its_report_and_keeps_it_in_the_address(ui):
    ui.sign_in('#/reports/AWPCA', view='reports')
    page = ui.page
    page.select_option('select[name="sprint"]', '105')
    page.click('form.filters button[type="submit"]')
    ui.wait('reports')
    assert page.url.endswith('#/reports/AWPCA?sprint=105')
    assert page.locator('h2', has_text='Сгорание спринта «Спринт 5»').count() == 1
    label = page.locator('svg[role="img"]').first.get_attribute('aria-label')
    assert label.startswith('Сгорание спринта «Спринт 5»')


def test_a_project_without_sprints_shows_its_flow_and_says_what_is_missing(ui):
    ui.sign_in('#/reports/ORION', view='reports')
    main = ui.page.locator('#main').inner_text()
    assert 'У доски проекта нет спринтов.' in main and 'Закрытых спринтов нет.' in main
    assert ui.page.locator('svg[role="img"]').first.get_attribute('aria-label').startswith(
        'Накопительная диаграмма потока')


def test_reports_are_linked_from_the_project_list_and_the_board(ui):
    ui.sign_in('#/projects', view='projects')
    ui.page.locator('tr:has-text("AWPCA") a:text-is("отчёты")').click()
    ui.wait('reports')
    assert ui.page.url.endswith('#/reports/AWPCA')
    ui.go('#/board/AWPCA', 'board')
    ui.page.locator('a:text-is("отчёты")').click()
    ui.wait('reports')
    assert ui.page.locator('h1').inner_text() == 'Отчёты проекта AWPCA'


def test_the_charts_code_loads_only_on_the_reports_view(ui):
    requested: list[str] = []
    ui.page.on('request', lambda request: requested.append(request.url))
    ui.sign_in('#/projects', view='projects')
    ui.go('#/board/AWPCA', 'board')
    assert not [url for url in requested if CHART_CODE.search(url)]
    ui.go('#/reports/AWPCA', 'reports')
    assert {CHART_CODE.search(url).group(1) for url in requested if CHART_CODE.search(url)} == {
        'js/charts.js', 'js/views/reports.js', 'reports.css'}


def test_cycle_time_rows_beyond_the_loaded_page_come_from_the_next_cursor(ui):
    # pages of 3 instead of 1,000: the table shows the first page, and «показать ещё» asks the
    # hub for the next one with its cursor (the summary is the whole window's either way)
    asked: list[str] = []

    def small_pages(route):
        asked.append(route.request.url)
        route.continue_(url=route.request.url.replace('limit=1000', 'limit=3'))

    ui.page.route(re.compile(r'.*/cycle-time\?.*'), small_pages)
    ui.sign_in('#/reports/AWPCA', view='reports')
    cycle = ui.hub['api'].get('/projects/AWPCA/cycle-time?limit=6')
    assert cycle['summary']['count'] > 6
    rows = ui.page.locator('figure.chart >> nth=3 >> xpath=following-sibling::div[1]//tbody/tr')
    assert rows.count() == 3
    ui.page.get_by_role('button', name=re.compile('Показать ещё')).click()
    ui.page.wait_for_function('''() => document.querySelectorAll(
        'figure.chart')[3].nextElementSibling.querySelectorAll('tbody tr').length === 6''')
    keys = [text.strip() for text in rows.locator('td:nth-child(1)').all_inner_texts()]
    assert keys == [item['key'] for item in cycle['items']]
    assert len(asked) == 2 and 'cursor=' in asked[1]
