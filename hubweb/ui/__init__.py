"""The web UI (contract §15): static files under ``/ui/``, ``GET /`` → ``/ui/``, and their headers.

The page is a client of the REST API and nothing more: the files in ``static/`` hold no data, so
they are served without a token (``auth.required_role`` keeps ``/`` and ``/ui/*`` open) and every
data call carries the client token itself. Falcon's own static route serves them (ETag,
Last-Modified, 304, ranges, no path escapes); its fallback to ``index.html`` is what answers
``/ui/``. Neither the static route nor the redirect is an API operation, so neither appears in
the OpenAPI document.
"""
from __future__ import annotations

from pathlib import Path

import falcon

PREFIX = '/ui'
STATIC_DIR = Path(__file__).resolve().parent / 'static'

# Contract §15. No 'unsafe-inline' anywhere: the page has no inline script and no style attribute.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
HEADERS = {
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    # Revalidate on every load (a cheap 304 by ETag), so an upgraded hub never runs stale modules.
    'Cache-Control': 'no-cache',
}
# Falcon's static types carry no charset; the page and its modules are UTF-8 (Russian labels).
MEDIA_TYPES = {'.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
               '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml'}
READ_METHODS = frozenset(('GET', 'HEAD', 'OPTIONS'))


def is_ui_path(path: str) -> bool:
    """Whether ``path`` is the root redirect or one of the page's static files."""
    path = '/' + path.lstrip('/')
    return path in ('/', PREFIX) or path.startswith(PREFIX + '/')


class UiHeaders:
    """The page's security headers on every ``/`` and ``/ui/*`` answer; static files are read-only."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if is_ui_path(req.path) and req.method not in READ_METHODS:
            raise falcon.HTTPMethodNotAllowed(sorted(READ_METHODS))

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        if is_ui_path(req.path):
            resp.set_headers(HEADERS)


def redirect_to_ui(req: falcon.Request, resp: falcon.Response, **params) -> None:
    """``GET /``: the page lives under ``/ui/``."""
    raise falcon.HTTPFound(PREFIX + '/')


def install(app: falcon.App) -> None:
    """Serve the page from ``static/`` under ``/ui/`` and redirect ``/`` there."""
    app.resp_options.static_media_types.update(MEDIA_TYPES)
    app.add_middleware(UiHeaders())
    app.add_static_route(PREFIX, str(STATIC_DIR), fallback_filename='index.html')
    app.add_sink(redirect_to_ui, r'/\Z')
