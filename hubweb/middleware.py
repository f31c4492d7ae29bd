"""The Falcon app's request hygiene beside auth: a body size limit, one access-log line per
request, a time limit on every request's reads, and one SQLite connection per worker thread."""
from __future__ import annotations

import logging
import time
from contextlib import ExitStack
from typing import Callable, Iterable, Iterator

import falcon

from hublib import settings
from hublib.db import Hub
from hublib.errors import ClientGoneError

from .auth import required_role

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


# The WSGI key under which waitress offers a callable that is true once the client has gone
# (it notices only with channel_request_lookahead > 0, which ``hubweb.serve`` sets).
CLIENT_DISCONNECTED = 'waitress.client_disconnected'


class ReadDeadline:
    """Every request's reads run within the hub's read budget (``settings.bounded_reads``): they
    end after ``read_deadline_seconds`` (503 with Retry-After, by the status table) or as soon as
    the client has gone. Open paths (``/health``, ``/openapi.json``, the web page) read nothing
    and skip it.

    A streamed body (the CSV export) is read after ``process_response``, chunk by chunk: each
    chunk gets a budget of its own (an export of any size runs while every page of it is quick),
    and the stream stops when the client has gone.
    """

    def __init__(self, hub: Hub):
        self.hub = hub

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if required_role(req.path) is None:
            return
        budget = ExitStack()
        budget.enter_context(settings.bounded_reads(self.hub, req.env.get(CLIENT_DISCONNECTED)))
        req.context.read_budget = budget

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        budget = getattr(req.context, 'read_budget', None)
        if budget is None:
            return
        budget.close()
        if resp.stream is not None and not hasattr(resp.stream, 'read'):  # files stream as they are
            resp.stream = bounded_stream(self.hub, resp.stream, req.env.get(CLIENT_DISCONNECTED),
                                         f'{req.method} {loggable_path(req.path)}')


def bounded_stream(hub: Hub, chunks: Iterable[bytes], cancelled: Callable[[], bool] | None,
                   what: str) -> Iterator[bytes]:
    """``chunks``, each produced within a read budget of its own; ends quietly once the client
    has gone (there is no one left to tell)."""
    source = iter(chunks)
    try:
        while True:
            with settings.bounded_reads(hub, cancelled):
                try:
                    chunk = next(source)
                except StopIteration:
                    return
                except ClientGoneError:
                    log.info('%s: клиент отключился, выгрузка остановлена', what)
                    return
            yield chunk
    finally:
        close = getattr(source, 'close', None)
        if close is not None:
            close()


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
