"""MCP over streamable HTTP (``sdlc-hub mcp --http``): the SDK's app at ``/mcp`` behind the client
token, served by uvicorn on loopback by default.

Auth is contract §13 applied to MCP: ``Authorization: Bearer <client token>`` on every request,
401 without it or with an unknown token, 403 for the agent token, never a token in the address;
the comparison is the Falcon app's own (``hubweb.auth.token_roles``, constant time).
"""
from __future__ import annotations

import json
import signal
import socket
import threading
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qsl

from hublib.db import Hub

from ..access import Tokens
from .tools import create_mcp_server

MCP_PATH = '/mcp'
DEFAULT_PORT = 8641
# Seconds uvicorn gives open streams (a client's GET event stream) to end on SIGTERM / Ctrl+C.
SHUTDOWN_GRACE = 5

ASGIApp = Callable[[dict, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]],
                   Awaitable[None]]


class ClientTokenGate:
    """ASGI middleware: only the client token passes; lifespan events go straight through."""

    def __init__(self, app: ASGIApp, tokens: Tokens):
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: dict, receive, send) -> None:
        if scope['type'] != 'http':
            await self.app(scope, receive, send)
            return
        query = parse_qsl(scope.get('query_string', b'').decode('latin-1'), keep_blank_values=True)
        header = next((value.decode('latin-1') for name, value in scope['headers']
                       if name == b'authorization'), None)
        refusal = self.tokens.refusal('client', header, query)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        body = json.dumps(refusal.body(), ensure_ascii=False).encode()
        headers = [(b'content-type', b'application/json'),
                   (b'content-length', str(len(body)).encode())]
        if refusal.status == 401:
            headers.append((b'www-authenticate', b'Bearer'))
        await send({'type': 'http.response.start', 'status': refusal.status, 'headers': headers})
        await send({'type': 'http.response.body', 'body': body})


def http_app(hub: Hub, *, host: str = '127.0.0.1') -> ClientTokenGate:
    """The ASGI app: the SDK's streamable HTTP transport at ``/mcp`` behind the client token.

    ``host`` is where it listens: on loopback the SDK also checks Host and Origin headers
    (DNS-rebinding protection), so a web page cannot drive the server through a browser.
    """
    server = create_mcp_server(hub)
    return ClientTokenGate(server.streamable_http_app(streamable_http_path=MCP_PATH, host=host),
                           Tokens(hub))


def url_of(host: str, port: int) -> str:
    return f'http://{f"[{host}]" if ":" in host else host}:{port}{MCP_PATH}'


def serve_http(hub: Hub, *, host: str = '127.0.0.1', port: int = DEFAULT_PORT,
               announce: Callable[[str], Any] = print) -> None:
    """Serve MCP over streamable HTTP until SIGTERM or Ctrl+C (uvicorn stops gracefully)."""
    import uvicorn  # only the HTTP mode needs it

    # The socket is bound here, before uvicorn starts, so a busy port fails like any other
    # OSError of the CLI and port 0 has its real number for the announcement.
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family)
    config = uvicorn.Config(http_app(hub, host=host), log_config=None, access_log=False,
                            timeout_graceful_shutdown=SHUTDOWN_GRACE, lifespan='on')
    announce(f'sdlc-hub mcp listening on {url_of(host, sock.getsockname()[1])}')
    announce(f'data: {hub.data_dir.resolve()}; client token: '
             f'`sdlc-hub tokens --data {hub.data_dir.resolve()}`')
    server = uvicorn.Server(config)

    def stop(signum, frame) -> None:
        server.should_exit = True

    # uvicorn catches SIGTERM / Ctrl+C while it runs, stops gracefully and then raises the
    # signal again under the handler it found: this one, so a signal before uvicorn's handlers
    # are in place still stops it, and the replayed one lets ``sdlc-hub mcp`` return and exit 0
    # (like ``sdlc-hub serve``) instead of dying of it.
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {number: signal.signal(number, stop)
                    for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run(sockets=[sock])
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
