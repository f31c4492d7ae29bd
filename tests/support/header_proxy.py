"""A tiny HTTP proxy for tests: forwards each request to a local server with extra headers (the
client token for a client that sends none, such as the MCP conformance suite), and everything else
— ``Host``, ``Origin``, the body, the streamed answer — byte for byte.

One request per connection: the proxy asks the server to close after answering
(``Connection: close``), so it never has to find where the next request on a connection starts.
"""
from __future__ import annotations

import socket
import socketserver
import threading

DROPPED = (b'connection', b'keep-alive', b'proxy-connection')


class HeaderProxy:
    """``with HeaderProxy({'Authorization': 'Bearer …'}) as proxy:`` listens on ``proxy.port``;
    set ``proxy.target_port`` before the first request."""

    def __init__(self, headers: dict[str, str], target_port: int | None = None):
        self.headers = b''.join(f'{name}: {value}\r\n'.encode('latin-1')
                                for name, value in headers.items())
        self.target_port = target_port
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy.forward(self.request)

        self.server = socketserver.ThreadingTCPServer(('127.0.0.1', 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]

    def __enter__(self) -> 'HeaderProxy':
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def forward(self, client: socket.socket) -> None:
        data = b''
        while b'\r\n\r\n' not in data:
            chunk = client.recv(65536)
            if not chunk:
                return
            data += chunk
        head, rest = data.split(b'\r\n\r\n', 1)
        request_line, *lines = head.split(b'\r\n')
        kept = [line for line in lines if line.split(b':', 1)[0].strip().lower() not in DROPPED]
        head = b'\r\n'.join([request_line, *kept]) + b'\r\n' + self.headers + \
            b'Connection: close\r\n\r\n'
        with socket.create_connection(('127.0.0.1', self.target_port)) as upstream:
            upstream.sendall(head + rest)
            threading.Thread(target=_pipe, args=(client, upstream), daemon=True).start()
            _pipe(upstream, client)


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            target.sendall(chunk)
    except OSError:
        pass
    finally:
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass
