"""The hub's agent API over HTTP, exactly as docs/agent-protocol.md describes it.

:meth:`HubClient.request` is one plain request (tests and load workers use it to see every status);
the agent's calls go through :meth:`HubClient.call`, which waits out what the page tells an agent to
wait out: 503 «хаб занят» (``Retry-After``), 507 «на диске нет места», and a hub that is down or
restarting (the same request again, with growing pauses, until it answers or the agent is stopped).
"""
from __future__ import annotations

import logging
import threading
from typing import IO, Any

import orjson

from .clock import Clock
from .transport import Response, Transport, TransportError

log = logging.getLogger('hubweb.jira_agent')

# Pauses while the hub cannot take a request: 1, 2, 4 … seconds, at most this many.
HUB_PAUSE_MAX = 30.0
DISK_FULL_PAUSE = 10.0


class HubHTTPError(Exception):
    """The hub answered with an HTTP error status."""

    def __init__(self, status: int, body: Any, method: str, path: str):
        self.status = status
        self.body = body
        super().__init__(f'{method} {path} -> {status}: {_brief(body)}')


class HubAuthError(HubHTTPError):
    """401/403: the agent token is wrong or not the agent's; polling will not fix it."""


def _brief(body: Any) -> str:
    if isinstance(body, dict):
        parts = [str(body.get('title') or ''), str(body.get('description') or '')]
        if body.get('fields'):
            parts.append(orjson.dumps(body['fields']).decode())
        return ': '.join(part for part in parts if part) or str(body)
    return str(body)[:500]


def _retry_after(response: Response, default: float) -> float:
    try:
        return max(0.0, float(response.header('Retry-After') or default))
    except ValueError:
        return default


class HubClient:
    """JSON over HTTP with one bearer token; a keep-alive connection per thread."""

    def __init__(self, url: str, token: str, timeout: float = 30.0, clock: Clock | None = None):
        self.url = url.rstrip('/')
        self.token = token
        self.timeout = timeout
        self.clock = clock or Clock()
        self._local = threading.local()

    @property
    def transport(self) -> Transport:
        transport = getattr(self._local, 'transport', None)
        if transport is None:
            transport = self._local.transport = Transport(timeout=self.timeout)
        return transport

    def close(self) -> None:
        transport = getattr(self._local, 'transport', None)
        if transport is not None:
            transport.close()

    def send(self, method: str, path: str, body: Any = None, raw: bytes | IO[bytes] | None = None,
             length: int | None = None) -> Response:
        """One request; the whole answer whatever its status (TransportError when none came)."""
        headers = {'Authorization': f'Bearer {self.token}', 'Accept': 'application/json'}
        if raw is not None:
            data = raw
            headers['Content-Type'] = 'application/octet-stream'
        elif body is not None:
            data = orjson.dumps(body)
            headers['Content-Type'] = 'application/json'
        else:
            data = None
        # Every agent request may be repeated: claims and reports are idempotent on the hub's side,
        # pages are keyed, a file is named by its hash.
        return self.transport.request(method, self.url + path, headers=headers, body=data,
                                      length=length, retry_stale=True)

    def request(self, method: str, path: str, body: Any = None, raw: bytes | None = None,
                ok: tuple[int, ...] = ()) -> tuple[int, Any]:
        """One request: ``(status, decoded JSON)``; HubHTTPError for a status ≥ 400 not in ``ok``."""
        response = self.send(method, path, body, raw)
        if response.status >= 400 and response.status not in ok:
            raise _error(response.status, response.json(), method, path)
        return response.status, response.json()

    def get(self, path: str) -> Any:
        return self.request('GET', path)[1]

    def post(self, path: str, body: Any) -> Any:
        return self.request('POST', path, body)[1]

    def call(self, method: str, path: str, body: Any = None, *, raw: IO[bytes] | None = None,
             length: int | None = None) -> Any:
        """The agent's request: waits out a busy hub, a full disk and a hub that is down, and
        sends the same request again; any other error status raises HubHTTPError."""
        pause = 1.0
        waited = None
        while True:
            start = raw.tell() if raw is not None else None
            try:
                response = self.send(method, path, body, raw, length)
            except TransportError as error:
                wait, pause, reason = pause, min(pause * 2, HUB_PAUSE_MAX), f'хаб недоступен: {error}'
            else:
                if response.status == 503:
                    wait, reason = _retry_after(response, pause), 'хаб занят (503)'
                elif response.status == 507:
                    wait, reason = DISK_FULL_PAUSE, 'у хаба нет места на диске (507)'
                elif response.status >= 400:
                    raise _error(response.status, response.json(), method, path)
                else:
                    if waited is not None:
                        log.info('хаб снова принимает запросы (%s %s)', method, path)
                    return response.json()
            if waited is None:  # one line per outage, not one per attempt
                log.warning('%s; %s %s будет отправлен снова', reason, method, path)
                waited = reason
            if raw is not None:
                raw.seek(start)
            self.clock.sleep(wait)


def _error(status: int, body: Any, method: str, path: str) -> HubHTTPError:
    cls = HubAuthError if status in (401, 403) else HubHTTPError
    return cls(status, body, method, path)


__all__ = ['HubClient', 'HubHTTPError', 'HubAuthError']
