"""Bearer-token auth of the Falcon app (contract §13): the role a path requires, and the
middleware that applies the token rules of ``hubweb.access`` to it.

Roles are decided by path: ``/agent/*`` is the agent's, ``/health``, ``/openapi.json`` and the web
UI's static files (``/``, ``/ui/*``, contract §15: they hold no data) are open, everything else is
the interfaces' (client token).
"""
from __future__ import annotations

import time

import falcon

from hublib.db import Hub

from .access import Tokens
from .ui import is_ui_path

OPEN_PATHS = frozenset(('/health', '/openapi.json'))
AGENT_PREFIX = '/agent/'


def required_role(path: str) -> str | None:
    """``'agent'``, ``'client'`` or ``None`` (open) for a request path."""
    # Falcon's router ignores leading slashes ('//agent/settings' routes to /agent/settings), so
    # the role must be read from the same normalized path or a client token would slip through.
    path = '/' + path.lstrip('/')
    if path in OPEN_PATHS or is_ui_path(path):
        return None
    return 'agent' if path.startswith(AGENT_PREFIX) else 'client'


class TokenAuth:
    """Checks ``Authorization: Bearer <token>`` against the role the path requires."""

    def __init__(self, hub: Hub, *, clock=time.monotonic):
        self.tokens = Tokens(hub, clock=clock)

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        role = required_role(req.path)
        if role is None or req.method == 'OPTIONS':
            return
        query = [(name, value) for name, values in req.params.items()
                 for value in (values if isinstance(values, list) else [values])]
        refusal = self.tokens.refusal(role, req.get_header('Authorization'), query)
        if refusal is None:
            return
        if refusal.status == 403:
            raise falcon.HTTPForbidden(title=refusal.title, description=refusal.description)
        raise falcon.HTTPUnauthorized(title=refusal.title, description=refusal.description,
                                      challenges=['Bearer'])
