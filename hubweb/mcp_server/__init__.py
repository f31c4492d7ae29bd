"""The MCP server for AI assistants (contract §14): the second transport adapter beside the
Falcon app, under the same rule — no SQL, no business rule; every tool is the hublib call of the
matching HTTP resource.

- ``tools``: the server and its fifteen tools (the counterpart of ``resources/`` and
  ``errors.py``);
- ``outputs``: the typed results the tools publish as ``outputSchema`` (the counterpart of
  ``schemas/``);
- ``http``: streamable HTTP behind the client token (the counterpart of ``auth.py`` and
  ``serve.py``); stdio needs nothing but ``serve_stdio``.

The process opens its hub with ``open_hub(data, guard_mirror=True)``: ``ensure_defaults`` runs at
every session start, and an SQLite authorizer refuses mirror writes on every connection.
"""
from __future__ import annotations

from hublib.db import Hub

from .http import http_app, serve_http
from .tools import HubServer, create_mcp_server


def serve_stdio(hub: Hub) -> None:
    """Serve MCP over stdin/stdout until the client closes stdin (stdout: protocol only)."""
    create_mcp_server(hub).run('stdio')


__all__ = ['create_mcp_server', 'HubServer', 'http_app', 'serve_http', 'serve_stdio']
