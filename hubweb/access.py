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


class Tokens:
    """The hub's tokens, read once: only ``open_hub`` writes them (there is no API to change
    them), and a request should not pay a query for them (a page of history is ~20 ms; the read
    was ~0.4)."""

    def __init__(self, hub: Hub):
        self.hub = hub
        self._known: dict[str, bytes] | None = None

    def known(self) -> dict[str, bytes]:
        """``{role: token}`` ready to compare (empty bytes for a missing token: never matches)."""
        if self._known is None:
            tokens = settings.tokens(self.hub)
            self._known = {role: str(tokens.get(role) or '').encode() for role in ROLES}
        return self._known

    def roles_of(self, token: str) -> set[str]:
        """The roles whose token ``token`` is, compared in constant time."""
        presented = token.encode()
        return {role for role, secret in self.known().items()
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
        roles = self.roles_of(token)
        if role in roles:
            return None
        if roles:
            return Refusal(403, FORBIDDEN, WRONG_ROLE_MESSAGES[role])
        return Refusal(401, UNAUTHORIZED, WRONG_MESSAGE)
