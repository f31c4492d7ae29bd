"""Serving the web UI (contract §15): ``GET /`` → ``/ui/``, static files without a token, the
page's security headers, read-only static routes, and what the shipped files may contain."""
from __future__ import annotations

import configparser
import fnmatch
import re
from pathlib import Path

import pytest

from hubweb import ui
from hubweb.auth import required_role

ROOT = Path(__file__).resolve().parents[2]
STATIC = ui.STATIC_DIR
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
FIRST_LOAD_LIMIT = 300 * 1024


def static_files() -> list[Path]:
    return sorted(path for path in STATIC.rglob('*') if path.is_file())


def test_root_redirects_to_the_ui_without_a_token(client):
    response = client.simulate_get('/')
    assert response.status_code == 302
    assert response.headers['location'] == '/ui/'


@pytest.mark.parametrize('path', ['/ui/', '/ui', '/ui/index.html'])
def test_the_page_is_served_without_a_token_with_the_contract_headers(client, path):
    response = client.simulate_get(path)
    assert response.status_code == 200
    assert response.headers['content-type'] == 'text/html; charset=utf-8'
    assert response.headers['content-security-policy'] == CSP
    assert response.headers['x-content-type-options'] == 'nosniff'
    assert response.headers['referrer-policy'] == 'no-referrer'
    assert '<script type="module" src="js/main.js"></script>' in response.text


@pytest.mark.parametrize('path, media_type', [
    ('/ui/js/main.js', 'text/javascript; charset=utf-8'),
    ('/ui/js/views/issue.js', 'text/javascript; charset=utf-8'),
    ('/ui/app.css', 'text/css; charset=utf-8'),
    ('/ui/favicon.svg', 'image/svg+xml'),
])
def test_modules_and_styles_carry_their_media_type_and_the_headers(client, path, media_type):
    response = client.simulate_get(path)
    assert response.status_code == 200
    assert response.headers['content-type'] == media_type
    assert response.headers['content-security-policy'] == CSP
    assert response.headers['cache-control'] == 'no-cache'
    again = client.simulate_get(path, headers={'If-None-Match': response.headers['etag']})
    assert again.status_code == 304


@pytest.mark.parametrize('method', ['POST', 'PUT', 'DELETE', 'PATCH'])
@pytest.mark.parametrize('path', ['/', '/ui/', '/ui/js/main.js'])
def test_static_routes_are_read_only(client, method, path):
    assert client.simulate_request(method, path).status_code == 405


@pytest.mark.parametrize('path', ['/ui/../hub.sqlite', '/ui/%2e%2e/setup.cfg', '/ui/js/../../__init__.py',
                                  '/ui/..%5c__init__.py', '/ui/../__init__.py'])
def test_no_file_outside_the_static_directory(client, path):
    assert client.simulate_get(path).status_code == 404


@pytest.mark.parametrize('path', ['/ui/__init__.py', '/ui/missing.js'])
def test_a_missing_file_is_answered_with_the_page_not_with_python(client, path):
    # falcon's fallback_filename: the package's Python lives beside static/, never inside it
    response = client.simulate_get(path)
    assert response.text == (STATIC / 'index.html').read_text(encoding='utf-8')
    assert response.headers['content-type'] == 'text/html; charset=utf-8'


def test_ui_paths_are_open_and_nothing_else_is():
    for path in ('/', '/ui', '/ui/', '/ui/js/main.js', '//ui/app.css'):
        assert required_role(path) is None
    for path in ('/uix', '/ui-data', '/issues', '/settings'):
        assert required_role(path) == 'client'
    assert required_role('/agent/ui/') == 'agent'


def test_a_token_in_the_page_address_is_still_refused_on_the_api(client, tokens):
    # the page is open, but the API behind it never takes a token from an address
    response = client.simulate_get('/issues', query_string=f'token={tokens["client"]}')
    assert response.status_code == 401


def test_static_routes_are_not_api_operations(client):
    paths = client.simulate_get('/openapi.json').json['paths']
    assert not any(path == '/' or path.startswith('/ui') for path in paths)


# --- the shipped files -------------------------------------------------------------------------------

def test_the_page_builds_no_html_from_strings_and_evaluates_no_code():
    forbidden = re.compile(r'innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|'
                           r'new Function|setAttribute\(\s*[\'"](style|on\w+)[\'"]|\.style\.cssText')
    offenders = [f'{path.relative_to(STATIC)}: {line.strip()}'
                 for path in static_files() if path.suffix == '.js'
                 for line in path.read_text(encoding='utf-8').splitlines()
                 if forbidden.search(line) and not line.lstrip().startswith('//')]
    assert offenders == []


def test_no_inline_script_style_or_handler_in_the_html():
    html = (STATIC / 'index.html').read_text(encoding='utf-8')
    assert re.findall(r'<script\b[^>]*>', html) == ['<script type="module" src="js/main.js">']
    assert '<style' not in html
    assert not re.search(r'\sstyle=|\son\w+=', html)


def test_no_file_refers_to_another_origin():
    # no CDN: the hub runs offline; the only absolute URL allowed is the SVG namespace
    offenders = [f'{path.relative_to(STATIC)}: {url}' for path in static_files()
                 for url in re.findall(r'(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^\s\'")]*',
                                       path.read_text(encoding='utf-8'))
                 if url != 'http://www.w3.org/2000/svg']
    assert offenders == []


def test_every_static_file_is_declared_as_package_data():
    # a non-editable install ships only what setup.cfg declares
    config = configparser.ConfigParser()
    config.read(ROOT / 'setup.cfg', encoding='utf-8')
    patterns = config['options.package_data']['hubweb.ui'].split()
    base = STATIC.parent
    missing = [str(path.relative_to(base)) for path in static_files()
               if not any(fnmatch.fnmatch(str(path.relative_to(base).as_posix()), pattern)
                          and path.relative_to(base).as_posix().count('/') == pattern.count('/')
                          for pattern in patterns)]
    assert missing == []


def module_graph(entry: Path) -> set[Path]:
    """The ES modules ``entry`` loads, following static ``import … from './x.js'``."""
    seen, todo = set(), [entry]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for target in re.findall(r"^import\s[^;]*?from\s+'(\.[^']+)'", path.read_text(encoding='utf-8'),
                                 re.MULTILINE | re.DOTALL):
            todo.append((path.parent / target).resolve())
    return seen


def test_the_first_load_transfers_less_than_300_kb_and_views_load_when_they_open():
    html = STATIC / 'index.html'
    text = html.read_text(encoding='utf-8')
    assets = [STATIC / name for name in re.findall(r'(?:href|src)="([^"#:]+)"', text)]
    shell = module_graph((STATIC / 'js' / 'main.js').resolve())
    views = sorted(path.resolve() for path in (STATIC / 'js' / 'views').glob('*.js'))
    assert not shell & set(views)  # routes.js imports a view when it first opens
    overview = module_graph((STATIC / 'js' / 'views' / 'overview.js').resolve())
    first = {html.resolve(), *(path.resolve() for path in assets), *shell, *overview}
    assert all(path.is_file() for path in first)
    assert len(shell) >= 6  # main, api, dom, format, routes, goto, …
    assert sum(path.stat().st_size for path in first) < FIRST_LOAD_LIMIT
    every = first.union(*(module_graph(view) for view in views))
    assert sum(path.stat().st_size for path in every) < FIRST_LOAD_LIMIT  # even every view at once


def test_the_reports_charts_are_not_part_of_the_first_load():
    # #/reports/<label> imports its view (and the charts) on demand and adds its own stylesheet
    modules = module_graph((STATIC / 'js' / 'main.js').resolve())
    lazy = {(STATIC / 'js' / 'charts.js').resolve(), (STATIC / 'js' / 'views' / 'reports.js').resolve()}
    assert lazy.isdisjoint(modules) and all(path.is_file() for path in lazy)
    assert 'reports.css' not in (STATIC / 'index.html').read_text(encoding='utf-8')
    # through the loader every view uses (a module that does not arrive is «хаб недоступен»)
    assert "lazy('./views/reports.js')" in (STATIC / 'js' / 'routes.js').read_text(encoding='utf-8')
