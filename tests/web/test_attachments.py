"""HTTP: PUT /agent/files/{sha256}, GET /attachments/{id}, POST …/fetch, GET …/content."""
from __future__ import annotations

import hashlib
import io
import json
import os
import tracemalloc
from urllib.parse import unquote

import pytest

from hublib import files
from hubweb.resources.attachments import content_type

# The helpers below repeat a few of tests/lib/test_files.py on purpose: test files do not import
# each other (the suite also runs with the plain `pytest` script, where `tests` is no package).


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def add_attachment(hub, attachment_id='31337', filename='Отчёт за ноябрь.pdf'):
    with hub.write():
        hub.db.execute_sql(
            'INSERT INTO issue_attachment (attachment_id, key, filename, size, mime_type, author, '
            'created, created_at) VALUES (?, ?, ?, 5, ?, ?, ?, ?)',
            (attachment_id, 'AURORA-1', filename, 'application/pdf', 'ivanov',
             '2026-10-22T09:00:00.000+0300', '2026-10-22T06:00:00+00:00'))


def add_command(hub, attachment_id, status, error=None):
    with hub.write():
        batch = hub.db.execute_sql("INSERT INTO batch (title, created_at) VALUES ('t', ?)",
                                   (hub.now(),)).lastrowid
        hub.db.execute_sql("INSERT INTO command (batch_id, seq, type, params, status, error) "
                           "VALUES (?, 1, 'fetch_attachment', ?, ?, ?)",
                           (batch, json.dumps({'attachment_id': attachment_id}), status, error))


def fetch_commands(hub, attachment_id='31337'):
    return hub.db.execute_sql(
        "SELECT id, status FROM command WHERE type = 'fetch_attachment' "
        "AND json_extract(params, '$.attachment_id') = ? ORDER BY id", (attachment_id,)).fetchall()


class PatternStream:
    """A WSGI input of ``total`` bytes of a repeated block, produced on demand (never whole)."""

    def __init__(self, total: int, block: bytes):
        self.left, self.block, self.offset = total, block, 0

    def read(self, size: int = -1) -> bytes:
        # at most up to the end of the current block: a short read, as a socket may give
        start = self.offset % len(self.block)
        size = len(self.block) if size is None or size < 0 else size
        chunk = self.block[start:start + min(size, self.left)]
        self.offset += len(chunk)
        self.left -= len(chunk)
        return chunk

    readline = read

    def readlines(self, hint: int = -1) -> list[bytes]:
        return [self.read()]

    def __iter__(self):
        return iter(lambda: self.read(2**16), b'')


def upload(client, headers, data: bytes, name: str | None = None):
    return client.simulate_put(f'/agent/files/{name or sha(data)}', body=data,
                               headers={**headers, 'Content-Type': 'application/octet-stream'})


def tree(hub):
    root = hub.data_dir.parent
    return sorted(str(path.relative_to(root)) for path in root.rglob('*')
                  if not path.name.startswith('hub.sqlite'))


# --- PUT /agent/files/{sha256} --------------------------------------------------------------------

def test_upload_new_then_existing(client, agent_headers, hub):
    data = 'Отчёт'.encode() * 100
    first = upload(client, agent_headers, data)
    assert first.status_code == 201
    assert first.json == {'sha256': sha(data), 'created': True}
    again = upload(client, agent_headers, data)
    assert again.status_code == 200 and again.json['created'] is False
    assert (hub.files_dir / sha(data)).read_bytes() == data


def test_upload_hash_mismatch_is_422_and_keeps_nothing(client, agent_headers, hub):
    before = tree(hub)
    result = upload(client, agent_headers, b'body', name=sha(b'other'))
    assert result.status_code == 422
    assert result.json['fields'] == {'sha256': [files.MISMATCH_MESSAGE]}
    assert tree(hub) == before


def test_upload_over_limit_by_content_length_is_413(client, agent_headers, hub):
    before = tree(hub)
    result = client.simulate_put(f'/agent/files/{sha(b"x")}', body=b'x', headers={
        **agent_headers, 'Content-Length': str(files.MAX_FILE_BYTES + 1)})
    assert result.status_code == 413
    assert set(result.json) == {'title', 'description'}
    assert tree(hub) == before


def test_upload_over_limit_while_streaming_is_413(client, agent_headers, hub, monkeypatch):
    # Content-Length can lie only below the limit; the count while streaming is the second guard.
    monkeypatch.setattr(files.store_file, '__kwdefaults__', {'limit': 1000, 'length': None})
    before = tree(hub)
    result = upload(client, agent_headers, b'y' * 1001)
    assert result.status_code == 413
    assert tree(hub) == before


@pytest.mark.parametrize('name', ['../x', '%2e%2e', '%2E%2E', '..%2fx', 'C:%5Cx', 'C:\\x',
                                  'A' * 64, 'a' * 63, 'a' * 65, '%2e%2e%2f' + 'a' * 55,
                                  'g' * 64, ' ' + 'a' * 63])
def test_upload_bad_names_are_4xx_and_touch_nothing(client, agent_headers, hub, name):
    before = tree(hub)
    result = client.simulate_put(f'/agent/files/{name}', body=b'evil', headers=agent_headers)
    assert 400 <= result.status_code < 500, result.status_code
    assert tree(hub) == before


def test_upload_needs_the_agent_token(client, client_headers):
    assert upload(client, client_headers, b'data').status_code == 403
    assert upload(client, {}, b'data').status_code == 401


def test_upload_50_mib_streams_with_bounded_memory(client, agent_headers, hub):
    total, block = 50 * 2**20, os.urandom(2**20)
    digest = hashlib.sha256()
    for _ in range(50):
        digest.update(block)
    name = digest.hexdigest()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        result = client.simulate_put(
            f'/agent/files/{name}', headers={**agent_headers, 'Content-Length': str(total)},
            extras={'wsgi.input': PatternStream(total, block)})
        peak = tracemalloc.get_traced_memory()[1] - baseline
    finally:
        tracemalloc.stop()
    assert result.status_code == 201, result.text
    assert peak < 20 * 2**20, f'peak growth {peak / 2**20:.1f} MiB'
    assert (hub.files_dir / name).stat().st_size == total


# --- GET /attachments/{id} and fetch --------------------------------------------------------------

def test_get_attachment(client, client_headers, hub):
    add_attachment(hub)
    add_command(hub, '31337', 'failed', 'HTTP 403 от Jira')
    result = client.simulate_get('/attachments/31337', headers=client_headers)
    assert result.status_code == 200
    assert result.json == {
        'attachment_id': '31337', 'key': 'AURORA-1', 'filename': 'Отчёт за ноябрь.pdf', 'size': 5,
        'mime_type': 'application/pdf', 'author': 'ivanov', 'created': '2026-10-22T09:00:00.000+0300',
        'created_at': '2026-10-22T06:00:00+00:00', 'state': 'failed', 'error': 'HTTP 403 от Jira'}
    missing = client.simulate_get('/attachments/404', headers=client_headers)
    assert missing.status_code == 404 and set(missing.json) == {'title', 'description'}


def test_attachments_need_the_client_token(client, agent_headers):
    assert client.simulate_get('/attachments/1', headers=agent_headers).status_code == 403
    assert client.simulate_post('/attachments/1/fetch').status_code == 401


def test_fetch_202_then_200_with_the_same_command(client, client_headers, hub):
    add_attachment(hub)
    first = client.simulate_post('/attachments/31337/fetch', headers=client_headers,
                                 json={'author': 'ivanov'})
    assert first.status_code == 202
    assert first.json == {'state': 'fetching', 'command_id': first.json['command_id']}
    second = client.simulate_post('/attachments/31337/fetch', headers=client_headers)
    assert second.status_code == 200 and second.json == first.json
    assert fetch_commands(hub) == [(first.json['command_id'], 'queued')]
    state = client.simulate_get('/attachments/31337', headers=client_headers).json
    assert state['state'] == 'fetching' and state['command_id'] == first.json['command_id']


def test_fetch_of_ready_is_200(client, client_headers, hub):
    add_attachment(hub)
    files.store_file(hub, sha(b'%PDF-'), io.BytesIO(b'%PDF-'))
    files.record_download(hub, '31337', sha(b'%PDF-'), 5)
    result = client.simulate_post('/attachments/31337/fetch', headers=client_headers)
    assert result.status_code == 200 and result.json == {'state': 'ready'}


def test_fetch_errors(client, client_headers, hub):
    assert client.simulate_post('/attachments/404/fetch', headers=client_headers).status_code == 404
    add_attachment(hub)
    bad = client.simulate_post('/attachments/31337/fetch', headers=client_headers, json={'author': 5})
    assert bad.status_code == 422 and 'author' in bad.json['fields']
    assert fetch_commands(hub) == []
    # the body is optional, but one that is there must be an object (schemathesis sent `false`)
    for body in ('false', '[]', '0'):
        bad = client.simulate_post('/attachments/31337/fetch', body=body,
                                   headers={**client_headers, 'Content-Type': 'application/json'})
        assert bad.status_code == 422, body
    assert fetch_commands(hub) == []


# --- GET /attachments/{id}/content ----------------------------------------------------------------

def test_content_of_a_ready_attachment(client, client_headers, agent_headers, hub):
    add_attachment(hub, filename='Отчёт за ноябрь.pdf')
    data = b'%PDF-1.7 test'
    assert upload(client, agent_headers, data).status_code == 201
    files.record_download(hub, '31337', sha(data), len(data))

    result = client.simulate_get('/attachments/31337/content', headers=client_headers)

    assert result.status_code == 200
    assert result.content == data
    assert result.headers['Content-Type'] == 'application/pdf'
    assert result.headers['Content-Length'] == str(len(data))
    disposition = result.headers['Content-Disposition']
    assert disposition == ('attachment; filename=________________.pdf; filename*=UTF-8\'\''
                           '%D0%9E%D1%82%D1%87%D1%91%D1%82%20%D0%B7%D0%B0%20'
                           '%D0%BD%D0%BE%D1%8F%D0%B1%D1%80%D1%8C.pdf')
    assert unquote(disposition.split("UTF-8''")[1]) == 'Отчёт за ноябрь.pdf'
    assert disposition.isascii()


def test_content_not_ready_is_409(client, client_headers, hub):
    add_attachment(hub)
    result = client.simulate_get('/attachments/31337/content', headers=client_headers)
    assert result.status_code == 409
    assert result.json == {'title': 'Конфликт', 'description': files.NOT_READY_MESSAGE}
    assert client.simulate_get('/attachments/9/content', headers=client_headers).status_code == 404


@pytest.mark.parametrize('filename, expected', [
    ('report.pdf', 'attachment; filename="report.pdf"'),
    (None, 'attachment'),
    ('Щука ёж.txt', "attachment; filename=________.txt; "
                    "filename*=UTF-8''%D0%A9%D1%83%D0%BA%D0%B0%20%D1%91%D0%B6.txt"),
    ('a"b\\c.txt', 'attachment; filename="a_b_c.txt"'),
    ('../../etc/passwd', 'attachment; filename=".._.._etc_passwd"'),
    ('line\r\nbreak.txt', 'attachment; filename="line__break.txt"'),
    ('café.txt', "attachment; filename=cafe_.txt; filename*=UTF-8''caf%C3%A9.txt"),
    ('日本.txt', "attachment; filename=__.txt; filename*=UTF-8''%E6%97%A5%E6%9C%AC.txt"),
])
def test_content_disposition(client, client_headers, agent_headers, hub, filename, expected):
    """Never a path, never a header break: falcon's downloadable_as over a sanitized name."""
    add_attachment(hub, filename=filename)
    data = b'content'
    upload(client, agent_headers, data)
    files.record_download(hub, '31337', sha(data), len(data))
    result = client.simulate_get('/attachments/31337/content', headers=client_headers)
    assert result.headers['Content-Disposition'] == expected


@pytest.mark.parametrize('mime, expected', [
    ('application/pdf', 'application/pdf'), ('text/plain; charset=utf-8', 'text/plain; charset=utf-8'),
    (None, 'application/octet-stream'), ('', 'application/octet-stream'),
    ('text/html\r\nX-Evil: 1', 'application/octet-stream'), ('pdf', 'application/octet-stream')])
def test_content_type(mime, expected):
    assert content_type(mime) == expected


def test_openapi_documents_the_attachment_endpoints(client):
    paths = client.simulate_get('/openapi.json').json['paths']
    assert set(paths['/agent/files/{sha256}']) == {'put'}
    assert set(paths['/attachments/{attachment_id}/fetch']['post']['responses']) >= {'200', '202'}
    assert 'get' in paths['/attachments/{attachment_id}/content']
