"""MCP over streamable HTTP (``sdlc-hub mcp --http``): the SDK's app at ``/mcp`` behind two checks,
served by uvicorn on loopback by default.

1. Origin and Host, on every ``--host`` (the MCP specification's MUST; the SDK checks them only on
   loopback): a request whose ``Origin`` is present and is neither the server's own origin nor one
   given with ``--allow-origin`` → 403; a ``Host`` that is neither the listening address nor the
   host of an allowed origin → 421. So a web page the user visits cannot drive the server through
   the browser, by its own origin or by DNS rebinding a name of its own to this address.
2. The client token (contract §13 applied to MCP, the rules of ``hubweb.access``): 401 without it
   or with an unknown token, 403 for the agent token, never a token in the address.

Every error answer the hub can word is its JSON error body (contract §13, §20): the gate's own,
and the plain-text ones of the SDK and Starlette behind it (413 «Request body too large», 400
«Invalid Content-Type header», 404 off ``/mcp``), which :class:`ErrorBodies` rewrites; uvicorn's
answer to a request it cannot parse (400 «Invalid HTTP request received.») comes from
``hubweb.mcp_server.h11``. JSON answers (the protocol's JSON-RPC errors) pass as they are.

The listening address's names: the address itself; on loopback also ``localhost``, ``127.0.0.1``
and ``[::1]``; on a wildcard address (``0.0.0.0``, ``::``) also this machine's host name, its
fully qualified name and the addresses they resolve to. Any other name a client uses — a reverse
proxy's, an address the host name does not resolve to — is given with ``--allow-origin``.
"""
from __future__ import annotations

import ipaddress
import json
import signal
import socket
import threading
from typing import Any, Awaitable, Callable, Iterable
from urllib.parse import parse_qsl, urlsplit

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings

from hublib.db import Hub

from ..access import FORBIDDEN, Refusal, Tokens
from ..schemas.errors import http_body
from .server import create_mcp_server
from .tools import ALL_TOOLS

MCP_PATH = '/mcp'
DEFAULT_PORT = 8641
# Seconds uvicorn gives open streams (a client's GET event stream) to end on SIGTERM / Ctrl+C.
SHUTDOWN_GRACE = 5
LOOPBACK = ('localhost', '127.0.0.1', '::1')
WILDCARD = ('0.0.0.0', '::', '')
DEFAULT_PORTS = {'http': 80, 'https': 443}
MISDIRECTED = 'Неверный адрес'

ASGIApp = Callable[[dict, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]],
                   Awaitable[None]]


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of an origin or URL, lower-case, the scheme's default port left
    out (as browsers send ``Origin``); ValueError when it is none."""
    parts = urlsplit(url.strip())
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or parts.username \
            or parts.path not in ('', '/') or parts.query or parts.fragment:
        raise ValueError(f'ожидается источник вида http://host:port или https://host, а не {url!r}')
    port = parts.port  # ValueError for a port out of range
    suffix = '' if port in (None, DEFAULT_PORTS[parts.scheme]) else f':{port}'
    return f'{parts.scheme}://{_bracketed(parts.hostname)}{suffix}'


def _bracketed(host: str) -> str:
    host = host.lower()
    return f'[{host}]' if ':' in host else host


def listening_names(host: str) -> set[str]:
    """The names a client may call the listening address by (see the module's docstring)."""
    host = host.strip('[]').lower()
    names = {host}
    if host in LOOPBACK or _is_loopback(host):
        names.update(LOOPBACK)
    elif host in WILDCARD:
        names.update(LOOPBACK)
        for name in {socket.gethostname(), socket.getfqdn()}:
            names.add(name.lower())
            try:
                names.update(info[4][0].lower() for info in socket.getaddrinfo(name, None))
            except OSError:
                pass
    return names - set(WILDCARD)  # a wildcard is no name a client should call it by


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class AddressCheck:
    """Which ``Host`` and ``Origin`` values a request may carry."""

    def __init__(self, host: str, port: int, allow_origins: Iterable[str] = ()):
        names = [_bracketed(name) for name in sorted(listening_names(host))]
        self.origins = {f'http://{name}:{port}' if port != 80 else f'http://{name}'
                        for name in names}
        self.hosts = {f'{name}:{port}' for name in names} | ({*names} if port == 80 else set())
        for origin in allow_origins:
            origin = origin_of(origin)
            self.origins.add(origin)
            parts = urlsplit(origin)
            port_given = parts.port or DEFAULT_PORTS[parts.scheme]
            self.hosts |= {f'{_bracketed(parts.hostname)}:{port_given}'}
            if port_given == DEFAULT_PORTS[parts.scheme]:
                self.hosts.add(_bracketed(parts.hostname))

    def refusal(self, host: str | None, origin: str | None) -> Refusal | None:
        if (host or '').strip().lower() not in self.hosts:
            return Refusal(421, MISDIRECTED, f'заголовок Host {host!r} — не адрес этого сервера: '
                                             'другое имя можно разрешить ключом --allow-origin')
        if origin is not None:
            try:
                allowed = origin_of(origin) in self.origins
            except ValueError:
                allowed = False
            if not allowed:
                return Refusal(403, FORBIDDEN, f'источник (Origin) {origin!r} не разрешён: '
                                               'добавьте его ключом --allow-origin')
        return None


# What the SDK's plain-text refusals mean, in the hub's words (the others get their status's text).
SDK_REFUSALS = {
    b'Request body too large':
        f'тело запроса больше {DEFAULT_MAX_REQUEST_BODY_SIZE // 2 ** 20} МиБ',
    b'Invalid Content-Type header': 'нужен заголовок Content-Type: application/json',
}
_REPLACED_HEADERS = frozenset((b'content-type', b'content-length'))


def json_answer(status: int, body: dict, headers: Iterable[tuple[bytes, bytes]] = ()) -> tuple[
        dict, dict]:
    """The two ASGI messages of a JSON answer."""
    data = json.dumps(body, ensure_ascii=False).encode()
    return ({'type': 'http.response.start', 'status': status, 'headers': [
                *headers, (b'content-type', b'application/json; charset=utf-8'),
                (b'content-length', str(len(data)).encode())]},
            {'type': 'http.response.body', 'body': data})


class ErrorBodies:
    """An ASGI ``send`` that gives an error answer (4xx, 5xx) which is not JSON as the hub's JSON
    error body: its status, the Russian text of that status (or of a refusal ``SDK_REFUSALS``
    knows), its other headers (``Allow``, ``WWW-Authenticate``) kept."""

    def __init__(self, send: Callable[[dict], Awaitable[None]]):
        self.send = send
        self.held: dict | None = None
        self.text = b''

    async def __call__(self, message: dict) -> None:
        if message['type'] == 'http.response.start' and message['status'] >= 400:
            headers = dict(message.get('headers') or ())
            if not headers.get(b'content-type', b'').startswith(b'application/json'):
                self.held = message
                return
        if self.held is not None and message['type'] == 'http.response.body':
            self.text += message.get('body', b'')
            if message.get('more_body'):
                return
            status = self.held['status']
            kept = [(name, value) for name, value in self.held.get('headers') or ()
                    if name.lower() not in _REPLACED_HEADERS]
            self.held = None
            for answer in json_answer(status, http_body(status, SDK_REFUSALS.get(
                    self.text.strip())), kept):
                await self.send(answer)
            return
        await self.send(message)


class Gate:
    """ASGI middleware: the address check, then the client token; lifespan events go straight
    through."""

    def __init__(self, app: ASGIApp, addresses: AddressCheck, tokens: Tokens):
        self.app = app
        self.addresses = addresses
        self.tokens = tokens

    async def __call__(self, scope: dict, receive, send) -> None:
        if scope['type'] != 'http':
            await self.app(scope, receive, send)
            return
        headers = {}
        for name, value in scope['headers']:
            headers.setdefault(name, value.decode('latin-1'))
        query = parse_qsl(scope.get('query_string', b'').decode('latin-1'), keep_blank_values=True)
        refusal = (self.addresses.refusal(headers.get(b'host'), headers.get(b'origin'))
                   or self.tokens.refusal('client', headers.get(b'authorization'), query))
        if refusal is None:
            await self.app(scope, receive,
                           send if scope.get('method') == 'HEAD' else ErrorBodies(send))
            return
        challenge = [(b'www-authenticate', b'Bearer')] if refusal.status == 401 else []
        for answer in json_answer(refusal.status, refusal.body(), challenge):
            await send(answer)


def http_app(hub: Hub, *, host: str = '127.0.0.1', port: int = DEFAULT_PORT,
             allow_origins: Iterable[str] = (), tools=ALL_TOOLS) -> Gate:
    """The ASGI app: the SDK's streamable HTTP transport at ``/mcp`` behind :class:`Gate`.

    ``host`` and ``port`` are where it listens (the port actually bound). The SDK's own Host and
    Origin check is off: the gate makes it, on every host, with ``allow_origins``.
    """
    server = create_mcp_server(hub, tools=tools)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH, host=host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    return Gate(app, AddressCheck(host, port, allow_origins), Tokens(hub))


def url_of(host: str, port: int) -> str:
    return f'http://{_bracketed(host)}:{port}{MCP_PATH}'


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before uvicorn starts: a busy port fails like any other OSError
    of the CLI, and port 0 has its real number for the announcement and the address check."""
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    return socket.create_server((host, port), family=family)


def serve_http(hub: Hub, *, host: str = '127.0.0.1', port: int = DEFAULT_PORT,
               allow_origins: Iterable[str] = (), tools=ALL_TOOLS,
               announce: Callable[[str], Any] = print) -> None:
    """Serve MCP over streamable HTTP until SIGTERM or Ctrl+C (uvicorn stops gracefully)."""
    sock = bind(host, port)
    port = sock.getsockname()[1]
    app = http_app(hub, host=host, port=port, allow_origins=allow_origins, tools=tools)
    announce(f'sdlc-hub mcp listening on {url_of(host, port)}')
    announce(f'data: {hub.data_dir.resolve()}; client token: '
             f'`sdlc-hub tokens --data {hub.data_dir.resolve()}`')
    run_uvicorn(app, sock)


def run_uvicorn(app: ASGIApp, sock: socket.socket) -> None:
    """Run ``app`` on ``sock`` until SIGTERM or Ctrl+C, then return (exit 0, like ``serve``)."""
    import uvicorn  # only the HTTP mode needs it

    from .h11 import HubH11Protocol  # uvicorn's protocol: only the HTTP mode needs it either
    config = uvicorn.Config(app, log_config=None, access_log=False, http=HubH11Protocol,
                            timeout_graceful_shutdown=SHUTDOWN_GRACE, lifespan='on')
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
