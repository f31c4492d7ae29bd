"""Who may call the hub over HTTP (contract §13): bearer tokens and their roles, for both HTTP
adapters — the Falcon app (``auth.TokenAuth``) and the MCP server's streamable HTTP transport
(``mcp_server.http``). No framework here: an adapter hands over the ``Authorization`` header and
the query string, and turns a :class:`Refusal` into its own response.

Tokens are compared in constant time and never accepted in the query string: a request that
carries one there (under a usual name such as ``token``, or as the value of any parameter) is
refused even when its header is right, so a token pasted into an address is noticed at once.
"""
from __future__ import annotations

import hmac
import time
from dataclasses import dataclass
from typing import Iterable

from hublib import settings
from hublib.db import Hub

ROLES = ('agent', 'client')
QUERY_TOKEN_NAMES = frozenset(('token', 'access_token', 'api_key', 'apikey', 'auth'))

UNAUTHORIZED = 'Нужна авторизация'
FORBIDDEN = 'Нет доступа'
QUERY_TOKEN_MESSAGE = 'токен принимается только в заголовке Authorization, не в адресе'
MISSING_MESSAGE = 'нужен заголовок Authorization: Bearer <токен>'
WRONG_MESSAGE = 'неверный токен'
WRONG_ROLE_MESSAGES = {
    'client': 'токен агента — только для /agent/*: здесь нужен токен клиента',
    'agent': 'токен клиента не даёт доступа к /agent/*',
}


@dataclass(frozen=True)
class Refusal:
    """Why a request may not pass: its HTTP status and the error body's title and description."""

    status: int
    title: str
    description: str

    def body(self) -> dict:
        return {'title': self.title, 'description': self.description}


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value, else ``None``."""
    scheme, _, token = (header or '').strip().partition(' ')
    return token.strip() if scheme.lower() == 'bearer' and token.strip() else None


# How long the tokens read from the database are trusted; ``sdlc-hub tokens --rotate`` (another
# process) changes them under a running server.
TOKEN_REREAD_SECONDS = 1.0


class Tokens:
    """The hub's tokens as both HTTP adapters check them. They are read at most once a second (a
    read is ~20-60 µs; most requests pay nothing), and at once when a presented token matches
    none: ``sdlc-hub tokens --rotate`` changes them under a running server, so a rotated token
    works at once and the old one stops within a second."""

    def __init__(self, hub: Hub, *, clock=time.monotonic):
        self.hub, self.clock = hub, clock
        self._known: tuple[float, dict[str, bytes]] | None = None

    def known(self, *, fresh: bool = False) -> dict[str, bytes]:
        """``{role: token}`` ready to compare (empty bytes for a missing token: never matches)."""
        cached, now = self._known, self.clock()
        if fresh or cached is None or now - cached[0] >= TOKEN_REREAD_SECONDS:
            tokens = settings.tokens(self.hub)
            cached = self._known = (now, {role: str(tokens.get(role) or '').encode()
                                          for role in ROLES})
        return cached[1]

    def roles_of(self, token: str, *, fresh: bool = False) -> set[str]:
        """The roles whose token ``token`` is, compared in constant time."""
        presented = token.encode()
        return {role for role, secret in self.known(fresh=fresh).items()
                if secret and hmac.compare_digest(presented, secret)}

    def refusal(self, role: str, header: str | None,
                query: Iterable[tuple[str, str]] = ()) -> Refusal | None:
        """Why a request for ``role`` with this ``Authorization`` header and query string may not
        pass, or ``None`` when it may."""
        query = list(query)
        if QUERY_TOKEN_NAMES & {name.lower() for name, _ in query}:
            return Refusal(401, UNAUTHORIZED, QUERY_TOKEN_MESSAGE)
        token = bearer_token(header)
        if token is None:
            return Refusal(401, UNAUTHORIZED, MISSING_MESSAGE)
        if any(self.roles_of(value.strip()) for _, value in query):
            return Refusal(401, UNAUTHORIZED, QUERY_TOKEN_MESSAGE)  # under any other name, too
        roles = self.roles_of(token) or self.roles_of(token, fresh=True)  # rotated a moment ago?
        if role in roles:
            return None
        if roles:
            return Refusal(403, FORBIDDEN, WRONG_ROLE_MESSAGES[role])
        return Refusal(401, UNAUTHORIZED, WRONG_MESSAGE)
