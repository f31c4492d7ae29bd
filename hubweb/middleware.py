"""The Falcon app's request hygiene beside auth: a body size limit, one access-log line per
request, and one SQLite connection per worker thread."""
from __future__ import annotations

import logging
import time

import falcon

from hublib.db import Hub

log = logging.getLogger('hubweb.access')

JSON_BODY_LIMIT = 32 * 2**20
STREAMED_PREFIXES = ('/agent/files/',)


class BodyLimit:
    """413 for JSON bodies over 32 MiB; streamed uploads check their own, larger limit."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if ('/' + req.path.lstrip('/')).startswith(STREAMED_PREFIXES):
            return
        if req.content_length is not None and req.content_length > JSON_BODY_LIMIT:
            raise falcon.HTTPContentTooLarge(
                title='Слишком большой запрос',
                description=f'тело запроса больше {JSON_BODY_LIMIT // 2**20} МиБ')


class RequestLog:
    """One access-log line per request: method, path (no query string), status, milliseconds."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.started = time.perf_counter()

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        started = getattr(req.context, 'started', None)
        elapsed = (time.perf_counter() - started) * 1000 if started else 0.0
        status = resp.status[:3] if isinstance(resp.status, str) else resp.status
        log.info('%s %s %s %.1f ms', req.method, loggable_path(req.path), status, elapsed)


def loggable_path(path: str, limit: int = 300) -> str:
    """The path as one log line: control characters escaped (a decoded ``%0A`` cannot forge a
    second line), cut to ``limit`` characters."""
    if not path.isprintable():
        path = ''.join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in path)
    return path if len(path) <= limit else path[:limit] + '…'


class ThreadConnection:
    """Each waitress worker thread keeps its own SQLite connection from request to request.

    peewee holds one connection per thread, so none is ever shared across threads, and the
    pool's size bounds their number. Closing after every request cost a reconnect (~0.9 ms with
    pragmas) and, when it was the last connection, a WAL checkpoint: claim -> report over HTTP
    went from 3.4 to 2.4 ms once connections stayed open (scripts/bench_queue.py). hublib's
    transactions always end inside the call that opened them; should a bug ever leave one open,
    it is rolled back here so the thread's next request starts clean.
    """

    def __init__(self, hub: Hub):
        self.hub = hub

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        self.hub.rollback_leftover(f'{req.method} {loggable_path(req.path)}')
