"""The MCP server for AI assistants (contract §14, §14a): the second transport adapter beside the
Falcon app, under the same rule — no SQL, no business rule; every tool is the hublib call of the
matching HTTP resource. It imports no Falcon: what both adapters share (token rules, the error
body, the response schemas) lives in framework-free modules of ``hubweb``.

- ``server``: ``create_mcp_server(hub, tools=…)`` and the one place failures are translated;
- ``tools/``: the tools, one module per concern, as the SDK's examples write them (top-level
  typed functions taking the hub from the lifespan context); ``tooling``: what they share;
  ``arguments``: input schemas and argument errors;
- ``prompts``, ``resources``: prompts with completions, resource templates;
- ``http``: streamable HTTP behind Origin/Host checks and the client token.

The process opens its hub with ``open_hub(data, guard_mirror=True)``: ``ensure_defaults`` runs at
its start, and an SQLite authorizer refuses mirror writes on every connection.
"""
from hublib.db import Hub

from .http import http_app, serve_http
from .server import HubServer, create_mcp_server
from .tools import ALL_TOOLS, TOOL_NAMES, chosen_tools


def serve_stdio(hub: Hub, *, tools=ALL_TOOLS) -> None:
    """Serve MCP over stdin/stdout until the client closes stdin (stdout: protocol only)."""
    create_mcp_server(hub, tools=tools).run('stdio')


__all__ = ['create_mcp_server', 'HubServer', 'http_app', 'serve_http', 'serve_stdio', 'ALL_TOOLS',
           'TOOL_NAMES', 'chosen_tools']
