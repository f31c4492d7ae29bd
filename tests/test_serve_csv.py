"""``GET /issues.csv`` over a real waitress server (contract §20): a CSV that fails after its first
byte ends with a last line ``# ошибка: …`` and the connection is closed without the chunked body's
terminating chunk, so no HTTP client takes the file for complete.

Where it lives: hublib's export writes the error line (the file's own format, the same for a
script, ``tests/lib/test_csv_export.py``) and lets the error go on; the Falcon resource streams what
hublib yields; the WSGI server, handed an error by the response's iterator after the headers,
closes the connection without the last chunk (waitress). The failure here is a table the export
reads (``jira_sprint``, for the ``sprint`` column) renamed under the running server: real SQLite,
failing after the header line has gone out."""
from __future__ import annotations

import http.client
import socket
import sqlite3
from urllib.parse import urlsplit

import pytest

from hublib import mirror, open_hub

from .conftest import start_server


@pytest.fixture
def failing_export(tmp_path, claimed_refresh):
    data_dir = tmp_path / 'data'
    hub = open_hub(data_dir)
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [
        {'key': f'AURORA-{number}', 'summary': f'Задача {number}', 'sprint_ids': [1]}
        for number in range(1, 4)])
    hub.close()
    server = start_server(data_dir)
    try:
        with sqlite3.connect(data_dir / 'hub.sqlite') as connection:
            connection.execute('ALTER TABLE jira_sprint RENAME TO jira_sprint_gone')
        yield server
    finally:
        server.stop()


def raw_get(server, path: str) -> bytes:
    """Every byte the server sends for ``GET path`` until it closes the connection (which it does
    after a whole answer too: ``Connection: close``; the proof of a broken one is its body)."""
    address = urlsplit(server['url'])
    with socket.create_connection((address.hostname, address.port), timeout=30) as connection:
        connection.sendall((f'GET {path} HTTP/1.1\r\nHost: {address.netloc}\r\n'
                            f'Authorization: Bearer {server["client_token"]}\r\n'
                            'Connection: close\r\n\r\n').encode())
        received = b''
        while True:
            data = connection.recv(65536)
            if not data:
                return received
            received += data


def dechunk(body: bytes) -> tuple[bytes, bool]:
    """The data of a chunked body, and whether it ended with the terminating zero-size chunk."""
    data = b''
    while body:
        size_line, _, rest = body.partition(b'\r\n')
        size = int(size_line.split(b';')[0], 16)
        if size == 0:
            return data, True
        data, body = data + rest[:size], rest[size + 2:]
    return data, False


def test_a_csv_that_fails_after_its_first_byte_ends_with_an_error_line_and_no_last_chunk(
        failing_export):
    received = raw_get(failing_export, '/issues.csv?fields=key,sprint')
    head, _, body = received.partition(b'\r\n\r\n')
    assert head.startswith(b'HTTP/1.1 200 ')
    assert b'transfer-encoding: chunked' in head.lower()
    data, complete = dechunk(body)
    assert not complete                                  # no terminating chunk: not a whole file
    text = data.decode('utf-8')
    assert text.startswith('\ufeffkey,sprint\r\n')
    lines = text.split('\r\n')
    assert lines[-1] == ''
    assert lines[-2].startswith('# ошибка: ') and 'файл неполный' in lines[-2]
    assert 'jira_sprint' not in text                     # no SQL in the file
    assert 'Exception while serving /issues.csv' in failing_export['server'].log_text()


def test_an_http_client_sees_the_broken_csv_as_incomplete(failing_export):
    address = urlsplit(failing_export['url'])
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    connection.request('GET', '/issues.csv?fields=key,sprint', headers={
        'Authorization': f'Bearer {failing_export["client_token"]}'})
    response = connection.getresponse()
    assert response.status == 200
    with pytest.raises(http.client.IncompleteRead) as broken:
        response.read()
    assert '# ошибка: ' in broken.value.partial.decode('utf-8')
    connection.close()
    # the server goes on serving
    again = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    again.request('GET', '/health')
    assert again.getresponse().status == 200
    again.close()


def test_a_csv_that_completes_ends_with_the_last_chunk(failing_export):
    received = raw_get(failing_export, '/issues.csv?fields=key,summary')
    data, complete = dechunk(received.partition(b'\r\n\r\n')[2])
    assert complete and '# ошибка' not in data.decode('utf-8')
    assert data.decode('utf-8').count('\r\n') == 4       # the header and three issues
