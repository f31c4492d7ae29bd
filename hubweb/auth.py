"""Bearer-token auth and request hygiene middleware (contract §13).

Roles are decided by path: ``/agent/*`` is the agent's, ``/health``, ``/openapi.json`` and the web
UI's static files (``/``, ``/ui/*``, contract §15: they hold no data) are open, everything else is
the interfaces' (client token). Tokens are compared in constant time and never accepted in the
query string.
"""
from __future__ import annotations

import hmac
import logging
import time

import falcon

from hublib import settings
from hublib.db import Hub

from .ui import is_ui_path

log = logging.getLogger('hubweb.access')

OPEN_PATHS = frozenset(('/health', '/openapi.json'))
AGENT_PREFIX = '/agent/'
QUERY_TOKEN_NAMES = frozenset(('token', 'access_token', 'api_key', 'apikey', 'auth'))
JSON_BODY_LIMIT = 32 * 2**20
STREAMED_PREFIXES = ('/agent/files/',)


def required_role(path: str) -> str | None:
    """``'agent'``, ``'client'`` or ``None`` (open) for a request path."""
    # Falcon's router ignores leading slashes ('//agent/settings' routes to /agent/settings), so
    # the role must be read from the same normalized path or a client token would slip through.
    path = '/' + path.lstrip('/')
    if path in OPEN_PATHS or is_ui_path(path):
        return None
    return 'agent' if path.startswith(AGENT_PREFIX) else 'client'


# How long the tokens read from the database are trusted; ``sdlc-hub tokens --rotate`` (another
# process) changes them under a running server.
TOKEN_REREAD_SECONDS = 1.0


class TokenAuth:
    """Checks ``Authorization: Bearer <token>`` against the role the path requires."""

    def __init__(self, hub: Hub, *, clock=time.monotonic):
        self.hub, self.clock = hub, clock
        self._known: tuple[float, dict[str, bytes]] | None = None

    def known(self, *, fresh: bool = False) -> dict[str, bytes]:
        """The tokens, read at most once a second (a read is ~20-60 µs; most requests pay
        nothing), or now with ``fresh``: a token that matches none is checked against a fresh
        read, so a rotated token works at once and the old one stops within a second."""
        cached, now = self._known, self.clock()
        if fresh or cached is None or now - cached[0] >= TOKEN_REREAD_SECONDS:
            cached = self._known = (now, known_tokens(self.hub))
        return cached[1]

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        role = required_role(req.path)
        if role is None or req.method == 'OPTIONS':
            return
        if QUERY_TOKEN_NAMES & {name.lower() for name in req.params}:
            raise _unauthorized(QUERY_TOKEN_MESSAGE)
        token = bearer_token(req.get_header('Authorization'))
        if token is None:
            raise _unauthorized('нужен заголовок Authorization: Bearer <токен>')
        known = self.known()
        if req.query_string and any(is_token(known, value) for value in _query_values(req)):
            raise _unauthorized(QUERY_TOKEN_MESSAGE)  # a token under any other name, too
        matches = token_roles(known, token)
        if not any(matches.values()):
            matches = token_roles(self.known(fresh=True), token)  # rotated a moment ago?
        if matches[role]:
            return
        if any(matches.values()):
            raise falcon.HTTPForbidden(
                title='Нет доступа',
                description='токен агента — только для /agent/*' if matches['agent']
                else 'токен клиента не даёт доступа к /agent/*')
        raise _unauthorized('неверный токен')


QUERY_TOKEN_MESSAGE = 'токен принимается только в заголовке Authorization, не в адресе'


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value, else ``None``."""
    scheme, _, token = (header or '').strip().partition(' ')
    return token.strip() if scheme.lower() == 'bearer' and token.strip() else None


def known_tokens(hub: Hub) -> dict[str, bytes]:
    """The hub's ``agent`` and ``client`` tokens (empty when missing), ready to compare."""
    tokens = settings.tokens(hub)
    return {name: str(tokens.get(name) or '').encode() for name in ('agent', 'client')}


def token_roles(known: dict[str, bytes], token: str) -> dict[str, bool]:
    """Which role's token ``token`` is, in constant time (the MCP HTTP gate uses it too)."""
    presented = token.encode()
    return {name: bool(secret) and hmac.compare_digest(presented, secret)
            for name, secret in known.items()}


def is_token(known: dict[str, bytes], value: str) -> bool:
    """Whether ``value`` (a query value, say) is one of the tokens, in constant time."""
    return any(token_roles(known, value.strip()).values())


UNAUTHORIZED = 'Нужна авторизация'


def _unauthorized(description: str) -> falcon.HTTPUnauthorized:
    return falcon.HTTPUnauthorized(title=UNAUTHORIZED, description=description,
                                   challenges=['Bearer'])


def _query_values(req: falcon.Request) -> list[str]:
    values = []
    for value in req.params.values():
        values.extend(value if isinstance(value, list) else [value])
    return values



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
