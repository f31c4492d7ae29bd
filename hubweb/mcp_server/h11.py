"""uvicorn's HTTP/1.1 protocol (h11) for ``sdlc-hub mcp --http``, answering a request it cannot
parse — not HTTP, a malformed request line or header, headers past h11's size limit — with the
hub's JSON error body instead of uvicorn's plain-text «Invalid HTTP request received.» (contract
§13, §20). Imported only in the HTTP mode, like uvicorn itself."""
from __future__ import annotations

import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..schemas.errors import http_body

INVALID_REQUEST = http_body(400, 'запрос не удалось разобрать: это не HTTP/1.1, неверная строка '
                                 'запроса или заголовок, или заголовки слишком большие')


class HubH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the hub's answer to an unparsable request."""

    def send_400_response(self, msg: str) -> None:
        """The 400 uvicorn sends before any app runs, as JSON; the connection closes after it as
        uvicorn's does (``msg`` is uvicorn's English text, logged by uvicorn already)."""
        body = json.dumps(INVALID_REQUEST, ensure_ascii=False).encode()
        for event in (h11.Response(status_code=400, reason=b'Bad Request', headers=[
                          (b'content-type', b'application/json; charset=utf-8'),
                          (b'content-length', str(len(body)).encode()),
                          (b'connection', b'close')]),
                      h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()
