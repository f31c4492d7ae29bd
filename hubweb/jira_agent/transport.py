"""HTTP for the agent: keep-alive connections over the standard library's ``http.client``.

Both sides of the agent (the hub and Jira) go through :class:`Transport`. Why not ``urllib``: it
opens a new connection per request, and a full refresh is thousands of requests (a TLS handshake
to Jira costs more than reading a page of 100 issues). Why not ``httpx``/``requests``: a dozen
endpoints need nothing they add, and the agent runs on the same interpreter as the hub with no
extra dependency (see docs/agent.md).

What it does:
- one connection per origin (scheme, host, port), reused while the server keeps it open;
- a proxy from the environment (``HTTPS_PROXY``/``HTTP_PROXY``/``NO_PROXY``, as ``urllib`` reads
  them); loopback addresses never go through a proxy; HTTPS through a proxy is a CONNECT tunnel;
- a request sent on a reused connection that the server had meanwhile closed is sent again once,
  for methods the caller marks safe to repeat (``retry_stale``); a request that may not be
  repeated (a Jira write) goes on a new connection when its connection sat idle for more than
  :data:`IDLE_FRESH` seconds, so that a server's idle timeout never makes a write's outcome unknown;
- redirects are followed for GET only (an attachment's content lives behind one), and the
  ``Authorization`` header is dropped when a redirect leaves the origin.
"""
from __future__ import annotations

import base64
import http.client
import select
import socket
import ssl
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from email.message import Message
from typing import IO, Iterable, Mapping

import orjson

LOOPBACK = ('localhost', '127.0.0.1', '::1')
MAX_REDIRECTS = 5
REDIRECTS = (301, 302, 303, 307, 308)
# What a request on a connection the server closed while it sat idle fails with, before any byte
# of an answer: sending it again on a new connection is safe for a request that may be repeated.
STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
         ConnectionAbortedError)
USER_AGENT = 'sdlc-hub-agent'
# Servers close idle keep-alive connections after a few seconds (Tomcat's default is 20 s, load
# balancers differ); a write is never sent on a connection idle for longer than this.
IDLE_FRESH = 2.0


class TransportError(OSError):
    """The server could not be reached, or the connection broke before an answer arrived."""


@dataclass
class Response:
    """A whole answer: status, headers (case-insensitive ``get``) and the body's bytes."""

    status: int
    headers: Message
    body: bytes = b''
    url: str = ''

    def header(self, name: str) -> str | None:
        return self.headers.get(name)

    def json(self):
        """The body as JSON; ``None`` for an empty body, the text for a body that is not JSON."""
        if not self.body:
            return None
        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError:
            return self.body.decode('utf-8', 'replace')


@dataclass
class _Origin:
    scheme: str
    host: str
    port: int

    @property
    def key(self) -> tuple[str, str, int]:
        return self.scheme, self.host, self.port


@dataclass
class Transport:
    """Keep-alive HTTP/1.1 connections, one per origin. Not thread-safe: one per agent thread."""

    timeout: float = 60.0
    ssl_context: ssl.SSLContext | None = None
    proxies: Mapping[str, str] | None = None
    _connections: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.proxies is None:
            self.proxies = urllib.request.getproxies()

    # --- connections ---------------------------------------------------------------------------

    def _proxy_for(self, origin: _Origin) -> urllib.parse.SplitResult | None:
        if origin.host in LOOPBACK or urllib.request.proxy_bypass(origin.host):
            return None
        proxy = (self.proxies or {}).get(origin.scheme)
        return urllib.parse.urlsplit(proxy if '://' in proxy else f'http://{proxy}') if proxy else None

    def _connect(self, origin: _Origin) -> tuple[http.client.HTTPConnection, bool]:
        """A connection to ``origin`` and whether requests on it name the absolute URL (a plain
        HTTP proxy) instead of the path."""
        proxy = self._proxy_for(origin)
        if proxy is None:
            if origin.scheme == 'https':
                return http.client.HTTPSConnection(origin.host, origin.port, timeout=self.timeout,
                                                   context=self.ssl_context), False
            return http.client.HTTPConnection(origin.host, origin.port, timeout=self.timeout), False
        headers = {}
        if proxy.username:
            credentials = f'{urllib.parse.unquote(proxy.username)}:' \
                          f'{urllib.parse.unquote(proxy.password or "")}'
            headers['Proxy-Authorization'] = 'Basic ' + base64.b64encode(credentials.encode()).decode()
        proxy_port = proxy.port or (443 if proxy.scheme == 'https' else 80)
        if origin.scheme == 'https':
            connection = http.client.HTTPSConnection(proxy.hostname, proxy_port, timeout=self.timeout,
                                                     context=self.ssl_context)
            connection.set_tunnel(origin.host, origin.port, headers=headers)
            return connection, False
        connection = http.client.HTTPConnection(proxy.hostname, proxy_port, timeout=self.timeout)
        connection.proxy_headers = headers
        return connection, True

    def _connection(self, origin: _Origin, fresh_after: float | None
                    ) -> tuple[http.client.HTTPConnection, bool, bool]:
        """``(connection, absolute, reused)``; a new one when the held one sat idle for more than
        ``fresh_after`` seconds."""
        held = self._connections.get(origin.key)
        if held is not None and ((fresh_after is not None and time.monotonic() - held[2] > fresh_after)
                                 or _dropped(held[0])):
            self._drop(origin)
            held = None
        if held is not None:
            return held[0], held[1], True
        connection, absolute = self._connect(origin)
        self._connections[origin.key] = (connection, absolute, time.monotonic())
        return connection, absolute, False

    def _used(self, origin: _Origin) -> None:
        held = self._connections.get(origin.key)
        if held is not None:
            self._connections[origin.key] = (held[0], held[1], time.monotonic())

    def _drop(self, origin: _Origin) -> None:
        held = self._connections.pop(origin.key, None)
        if held is not None:
            held[0].close()

    def close(self) -> None:
        for connection, *_ in self._connections.values():
            connection.close()
        self._connections.clear()

    # --- requests ------------------------------------------------------------------------------

    def request(self, method: str, url: str, *, headers: Mapping[str, str] | None = None,
                body: bytes | IO[bytes] | None = None, length: int | None = None,
                retry_stale: bool = False, follow_redirects: bool = False,
                sink: IO[bytes] | None = None) -> Response:
        """Send one request and read its whole answer (into ``sink`` when given: the body then
        stays empty). TransportError when no answer came."""
        for _ in range(MAX_REDIRECTS + 1):
            response = self._once(method, url, headers or {}, body, length, retry_stale, sink)
            location = response.header('Location')
            if not (follow_redirects and method == 'GET' and response.status in REDIRECTS
                    and location):
                return response
            target = urllib.parse.urljoin(url, location)
            if _origin(target).key != _origin(url).key:
                headers = {name: value for name, value in (headers or {}).items()
                           if name.lower() != 'authorization'}
            url = target
        raise TransportError(f'слишком много перенаправлений: {url}')

    def _once(self, method: str, url: str, headers: Mapping[str, str], body, length: int | None,
              retry_stale: bool, sink: IO[bytes] | None) -> Response:
        origin = _origin(url)
        parts = urllib.parse.urlsplit(url)
        target = parts.path or '/'
        if parts.query:
            target += '?' + parts.query
        sent = {'User-Agent': USER_AGENT, 'Accept-Encoding': 'identity', **headers}
        if body is not None:
            sent['Content-Length'] = str(length if length is not None else len(body))
        for attempt in (1, 2):
            connection, absolute, reused = self._connection(
                origin, None if retry_stale else IDLE_FRESH)
            if absolute:
                sent = {**sent, **getattr(connection, 'proxy_headers', {})}
            start = body.tell() if hasattr(body, 'tell') else None
            try:
                connection.request(method, url if absolute else target, body=body, headers=sent)
                answer = connection.getresponse()
                if sink is not None and 200 <= answer.status < 300:
                    _copy(answer, sink)
                    data = b''
                else:
                    data = answer.read()
            except STALE as error:
                self._drop(origin)
                if reused and retry_stale and attempt == 1:
                    if start is not None:
                        body.seek(start)
                    continue
                raise TransportError(f'{method} {_shown(url)}: соединение разорвано ({error!r})') \
                    from None
            except (OSError, http.client.HTTPException) as error:
                self._drop(origin)
                raise TransportError(f'{method} {_shown(url)}: {_reason(error)}') from None
            if answer.will_close:
                self._drop(origin)
            else:
                self._used(origin)
            return Response(answer.status, answer.headers, data, url)
        raise AssertionError('unreachable')  # pragma: no cover


def _dropped(connection: http.client.HTTPConnection) -> bool:
    """Whether the server closed an idle connection: its socket reads as ready (the end of the
    stream) while no request is out."""
    sock = connection.sock
    if sock is None:
        return False
    try:
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _copy(source, sink: IO[bytes], chunk: int = 1 << 16) -> None:
    while True:
        block = source.read(chunk)
        if not block:
            return
        sink.write(block)


def _origin(url: str) -> _Origin:
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ('http', 'https') or not parts.hostname:
        raise TransportError(f'неверный адрес {url!r}: ожидается http:// или https://')
    return _Origin(scheme, parts.hostname, parts.port or (443 if scheme == 'https' else 80))


def check_url(url: str) -> str:
    """``url`` without a trailing slash, or ValueError in Russian when it is no http(s) address."""
    try:
        _origin(url)
    except TransportError as error:
        raise ValueError(str(error)) from None
    return url.rstrip('/')


def _shown(url: str) -> str:
    """The URL without its query (a JQL can be long; it never carries a secret, but logs stay short)."""
    return url.split('?', 1)[0]


def _reason(error: BaseException) -> str:
    if isinstance(error, socket.timeout):
        return 'нет ответа (таймаут)'
    if isinstance(error, ssl.SSLError):
        return f'ошибка TLS: {error.reason or error}'
    if isinstance(error, ConnectionRefusedError):
        return 'соединение отклонено'
    if isinstance(error, socket.gaierror):
        return 'имя хоста не найдено'
    return getattr(error, 'strerror', None) or repr(error)


def query(params: Mapping[str, object] | Iterable[tuple[str, object]]) -> str:
    """``?a=1&b=x`` from the pairs whose value is not None ('' for none)."""
    pairs = params.items() if isinstance(params, Mapping) else params
    kept = [(name, value if isinstance(value, str) else str(value))
            for name, value in pairs if value is not None]
    return '?' + urllib.parse.urlencode(kept) if kept else ''


__all__ = ['Transport', 'Response', 'TransportError', 'check_url', 'query']
