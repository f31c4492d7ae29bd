"""Attachments store, attachment states, download requests and cleanup (hublib.files)."""
from __future__ import annotations

import hashlib
import io
import json
import os
import threading
import time
import tracemalloc

import pytest

from hublib import files
from hublib.errors import ConflictError, NotFoundError, PayloadTooLargeError, ValidationError

OLD = time.time() - 2 * files.CLEANUP_GRACE_SECONDS


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def add_attachment(hub, attachment_id='31337', key='AURORA-1', filename='Отчёт за ноябрь.pdf',
                   mime_type='application/pdf', size=5):
    with hub.write():
        hub.db.execute_sql(
            'INSERT INTO issue_attachment (attachment_id, key, filename, size, mime_type, author, '
            'created, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
            (attachment_id, key, filename, size, mime_type, 'ivanov', '2026-10-22T09:00:00.000+0300',
             '2026-10-22T06:00:00+00:00'))


def add_command(hub, attachment_id, status, error=None, params=None):
    with hub.write():
        batch = hub.db.execute_sql(
            "INSERT INTO batch (title, author, created_at) VALUES ('Скачивание вложения', 'x', ?)",
            (hub.now(),)).lastrowid
        return hub.db.execute_sql(
            "INSERT INTO command (batch_id, seq, type, params, status, error) "
            "VALUES (?, 1, 'fetch_attachment', ?, ?, ?)",
            (batch, json.dumps(params or {'attachment_id': attachment_id}), status, error)).lastrowid


def put_file(hub, data: bytes) -> str:
    name = sha(data)
    assert files.store_file(hub, name, io.BytesIO(data)) is True
    return name


def fetch_commands(hub, attachment_id='31337'):
    return hub.db.execute_sql(
        "SELECT id, status FROM command WHERE type = 'fetch_attachment' "
        "AND json_extract(params, '$.attachment_id') = ? ORDER BY id", (attachment_id,)).fetchall()


def refresh_command(hub) -> int:
    """A claimed refresh, as the queue leaves it after a delivery (the state ingest needs one)."""
    with hub.write():
        batch = hub.db.execute_sql("INSERT INTO batch (title, created_at) VALUES ('r', ?)",
                                   (hub.now(),)).lastrowid
        return hub.db.execute_sql(
            "INSERT INTO command (batch_id, seq, type, params, status, deliveries, claimed_at) "
            "VALUES (?, 1, 'refresh', ?, 'claimed', 1, ?)",
            (batch, json.dumps({'keys': ['AURORA-1']}), hub.now())).lastrowid


def ingest_attachments(hub, *attachment_ids: str) -> None:
    """The agent sends AURORA-1 with this attachment list (hublib.mirror.ingest_state)."""
    from hublib import mirror

    attachments = [{'id': attachment_id, 'filename': 'Отчёт за ноябрь.pdf', 'size': 5,
                    'mime_type': 'application/pdf', 'author': 'ivanov',
                    'created': '2026-10-22T09:00:00.000+0300'} for attachment_id in attachment_ids]
    mirror.ingest_state(hub, 'jira', refresh_command(hub),
                        [{'key': 'AURORA-1', 'id': '10001', 'attachments': attachments}])


# --- spec scenarios -------------------------------------------------------------------------------

def test_scenario_file_removed_by_cleanup(hub):
    """«Файл убран уборкой»: row without a file, last command done → none; a request enqueues anew."""
    add_attachment(hub)
    gone = sha(b'gone')
    with hub.write():
        hub.db.execute_sql("INSERT INTO attachment_file VALUES ('31337', ?, 4, ?)", (gone, hub.now()))
    done = add_command(hub, '31337', 'done')

    assert files.attachment_states(hub, ['31337']) == {'31337': {'state': 'none', 'error': None}}
    answer = files.request_fetch(hub, '31337', author='ivanov')

    assert answer['enqueued'] is True and answer['state'] == 'fetching'
    assert answer['command_id'] > done
    assert fetch_commands(hub) == [(done, 'done'), (answer['command_id'], 'queued')]
    assert files.attachment(hub, '31337')['state'] == 'fetching'


def test_scenario_attachment_list_updated(hub):
    """«Список вложений обновился»: a ready attachment stays ready after a state ingest."""
    add_attachment(hub)
    name = put_file(hub, b'%PDF-')
    add_command(hub, '31337', 'done')
    files.record_download(hub, '31337', name, 5)
    assert files.attachment(hub, '31337')['state'] == 'ready'

    ingest_attachments(hub, '31337')

    assert files.attachment_states(hub, ['31337']) == {'31337': {'state': 'ready', 'error': None}}
    assert hub.db.execute_sql('SELECT file FROM attachment_file').fetchall() == [(name,)]


def test_scenario_attachments_in_state(hub):
    """«Вложения в состоянии»: #1 leaves the list; its file is kept until cleanup, #2 stays ready."""
    ingest_attachments(hub, '1', '2')
    one, two = put_file(hub, b'one'), put_file(hub, b'two')
    files.record_download(hub, '1', one, 3)
    files.record_download(hub, '2', two, 3)

    ingest_attachments(hub, '2', '3')

    assert files.attachment_states(hub, ['1', '2', '3']) == {
        '1': {'state': 'ready', 'error': None}, '2': {'state': 'ready', 'error': None},
        '3': {'state': 'none', 'error': None}}
    with pytest.raises(NotFoundError):
        files.attachment(hub, '1')
    for name in (one, two):
        os.utime(hub.files_dir / name, (OLD, OLD))
    assert files.cleanup(hub)['removed'] == [one]
    assert hub.db.execute_sql('SELECT attachment_id FROM attachment_file ORDER BY 1').fetchall() == [
        ('1',), ('2',)]


# --- state machine --------------------------------------------------------------------------------

def test_failed_fetch_is_failed_with_its_error(hub):
    add_attachment(hub)
    add_command(hub, '31337', 'failed', 'HTTP 404: вложение удалено в Jira')
    assert files.attachment(hub, '31337')['state'] == 'failed'
    assert files.attachment(hub, '31337')['error'] == 'HTTP 404: вложение удалено в Jira'


def test_cancelled_fetch_is_failed(hub):
    add_attachment(hub)
    add_command(hub, '31337', 'failed', 'old error')
    add_command(hub, '31337', 'cancelled')
    assert files.attachment_states(hub, ['31337']) == {'31337': {'state': 'failed', 'error': None}}


def test_last_command_decides_between_failed_and_none(hub):
    add_command(hub, '1', 'failed', 'boom')
    add_command(hub, '1', 'done')
    add_command(hub, '2', 'done')
    add_command(hub, '2', 'failed', 'boom')
    states = files.attachment_states(hub, ['1', '2'])
    assert states == {'1': {'state': 'none', 'error': None}, '2': {'state': 'failed', 'error': 'boom'}}


@pytest.mark.parametrize('status', ['queued', 'claimed'])
def test_pending_fetch_is_fetching(hub, status):
    add_attachment(hub)
    add_command(hub, '31337', 'failed', 'boom')
    command = add_command(hub, '31337', status)
    state = files.attachment_states(hub, ['31337'])['31337']
    assert state['state'] == 'fetching' and state['error'] is None and state['command_id'] == command


def test_ready_wins_over_a_pending_or_failed_command(hub):
    add_attachment(hub)
    name = put_file(hub, b'data')
    files.record_download(hub, '31337', name, 4)
    add_command(hub, '31337', 'failed', 'later failure')
    assert files.attachment(hub, '31337')['state'] == 'ready'


def test_never_requested_is_none(hub):
    add_attachment(hub)
    assert files.attachment(hub, '31337')['state'] == 'none'
    assert files.attachment_states(hub, ['31337', 'unknown']) == {
        '31337': {'state': 'none', 'error': None}, 'unknown': {'state': 'none', 'error': None}}


def test_states_of_many_ids_in_one_call(hub):
    ids = [str(n) for n in range(1200)]
    for n in (5, 700):
        add_command(hub, str(n), 'failed', f'e{n}')
    add_command(hub, '1100', 'queued')
    add_command(hub, '6', 'done', params={'attachment_id': 6})  # an int in params still matches
    states = files.attachment_states(hub, ids)
    assert len(states) == 1200
    assert {k for k, v in states.items() if v['state'] != 'none'} == {'5', '700', '1100'}
    assert states['700'] == {'state': 'failed', 'error': 'e700'}
    assert files.attachment_states(hub, []) == {}


def test_attachment_metadata(hub):
    add_attachment(hub)
    assert files.attachment(hub, '31337') == {
        'attachment_id': '31337', 'key': 'AURORA-1', 'filename': 'Отчёт за ноябрь.pdf', 'size': 5,
        'mime_type': 'application/pdf', 'author': 'ivanov', 'created': '2026-10-22T09:00:00.000+0300',
        'created_at': '2026-10-22T06:00:00+00:00', 'state': 'none', 'error': None}


@pytest.mark.parametrize('attachment_id', ['404', '', None, 7])
def test_unknown_attachment_is_not_found(hub, attachment_id):
    with pytest.raises(NotFoundError):
        files.attachment(hub, attachment_id)
    with pytest.raises(NotFoundError):
        files.attachment_content(hub, attachment_id)


# --- download requests ----------------------------------------------------------------------------

def test_request_fetch_enqueues_once(hub):
    add_attachment(hub)
    first = files.request_fetch(hub, '31337', author='ivanov')
    second = files.request_fetch(hub, '31337')
    assert first == {'state': 'fetching', 'command_id': first['command_id'], 'enqueued': True}
    assert second == {'state': 'fetching', 'command_id': first['command_id'], 'enqueued': False}
    assert fetch_commands(hub) == [(first['command_id'], 'queued')]
    title, author = hub.db.execute_sql(
        'SELECT b.title, b.author FROM batch b JOIN command c ON c.batch_id = b.id WHERE c.id = ?',
        (first['command_id'],)).fetchone()
    assert (title, author) == ('Скачивание вложения', 'ivanov')


def test_concurrent_requests_enqueue_one_command(hub):
    add_attachment(hub)
    start, answers = threading.Barrier(4), []

    def ask():
        try:
            start.wait()
            answers.append(files.request_fetch(hub, '31337'))
        finally:
            hub.close()  # each thread has its own connection

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(answer['enqueued'] for answer in answers) == [False, False, False, True]
    assert len({answer['command_id'] for answer in answers}) == 1
    assert len(fetch_commands(hub)) == 1


def test_request_fetch_of_ready_is_200_without_command(hub):
    add_attachment(hub)
    files.record_download(hub, '31337', put_file(hub, b'x'), 1)
    assert files.request_fetch(hub, '31337') == {'state': 'ready', 'enqueued': False}
    assert fetch_commands(hub) == []


def test_request_fetch_after_failure_enqueues_again(hub):
    add_attachment(hub)
    failed = add_command(hub, '31337', 'failed', 'boom')
    answer = files.request_fetch(hub, '31337')
    assert answer['enqueued'] is True and answer['command_id'] != failed


def test_request_fetch_of_unknown_attachment(hub):
    with pytest.raises(NotFoundError):
        files.request_fetch(hub, 'nope')
    assert fetch_commands(hub, 'nope') == []


def test_fetch_round_trip_through_the_queue(hub):
    """request → claim → upload → done report → ready; a done report without the file is 409."""
    from hublib import claims

    add_attachment(hub)
    data = b'%PDF-1.7'
    asked = files.request_fetch(hub, '31337', author='ivanov')
    claim = dict(agent='jira', agent_version='15', settings_version=None)
    delivery = claims.claim_command(hub, **claim)['command']
    assert delivery['id'] == asked['command_id'] and delivery['params'] == {'attachment_id': '31337'}
    report = dict(agent='jira', status='done', error=None, jira_calls=1, rate_limited=0,
                  result={'sha256': sha(data), 'size': len(data)})
    with pytest.raises(ConflictError):
        claims.report_command(hub, delivery['id'], **report)
    assert files.attachment(hub, '31337')['state'] == 'fetching'  # the failed report changed nothing

    assert files.store_file(hub, sha(data), io.BytesIO(data)) is True
    claims.report_command(hub, delivery['id'], **report)

    assert files.attachment(hub, '31337')['state'] == 'ready'
    handle, *_, size = files.attachment_content(hub, '31337')
    with handle:
        assert (handle.read(), size) == (data, len(data))
    assert files.request_fetch(hub, '31337') == {'state': 'ready', 'enqueued': False}


def test_failed_report_makes_the_state_failed(hub):
    from hublib import claims

    add_attachment(hub)
    asked = files.request_fetch(hub, '31337')
    claims.claim_command(hub, agent='jira', agent_version='15', settings_version=None,
                         last_jira_call_at=None)
    claims.report_command(hub, asked['command_id'], agent='jira', status='failed', result=None,
                          error='HTTP 404: вложение удалено', jira_calls=1, rate_limited=0)
    assert files.attachment_states(hub, ['31337']) == {
        '31337': {'state': 'failed', 'error': 'HTTP 404: вложение удалено'}}


def test_cancelled_batch_makes_the_state_failed(hub):
    from hublib import queue

    add_attachment(hub)
    asked = files.request_fetch(hub, '31337')
    batch_id = hub.db.execute_sql('SELECT batch_id FROM command WHERE id = ?',
                                  (asked['command_id'],)).fetchone()[0]
    queue.cancel_batch(hub, batch_id)
    assert files.attachment(hub, '31337')['state'] == 'failed'
    assert files.request_fetch(hub, '31337')['enqueued'] is True


# --- record_download and content ------------------------------------------------------------------

def test_record_download_needs_the_file(hub):
    add_attachment(hub)
    for name in (sha(b'never uploaded'), '../x', 'A' * 64):
        with pytest.raises(ConflictError):
            files.record_download(hub, '31337', name, 3)
    assert hub.db.execute_sql('SELECT COUNT(*) FROM attachment_file').fetchone() == (0,)


def test_record_download_upserts(hub, clock):
    add_attachment(hub)
    first = put_file(hub, b'first')
    files.record_download(hub, '31337', first, 999)
    clock.advance(minutes=5)
    second = put_file(hub, b'second!')
    files.record_download(hub, '31337', second, None)
    assert hub.db.execute_sql('SELECT * FROM attachment_file').fetchall() == [
        ('31337', second, 7, '2026-11-30T10:05:00+00:00')]


def test_attachment_content(hub):
    add_attachment(hub)
    with pytest.raises(ConflictError):
        files.attachment_content(hub, '31337')
    name = put_file(hub, b'%PDF-')
    files.record_download(hub, '31337', name, 5)
    handle, *meta = files.attachment_content(hub, '31337')
    with handle:
        assert (handle.read(), meta) == (b'%PDF-', ['application/pdf', 'Отчёт за ноябрь.pdf', 5])
    (hub.files_dir / name).unlink()
    with pytest.raises(ConflictError):
        files.attachment_content(hub, '31337')


# --- store ----------------------------------------------------------------------------------------

def listing(hub):
    return sorted(os.listdir(hub.data_dir)), sorted(os.listdir(hub.files_dir))


def test_store_file_new_then_existing(hub):
    data = b'hello' * 1000
    name = sha(data)
    assert files.store_file(hub, name, io.BytesIO(data)) is True
    assert files.has_file(hub, name)
    assert files.store_file(hub, name, io.BytesIO(data)) is False
    assert (hub.files_dir / name).read_bytes() == data
    assert os.listdir(hub.files_dir) == [name]


def test_store_file_mismatch_keeps_nothing(hub):
    before = listing(hub)
    with pytest.raises(ValidationError) as caught:
        files.store_file(hub, sha(b'other'), io.BytesIO(b'content'))
    assert caught.value.fields == {'sha256': [files.MISMATCH_MESSAGE]}
    assert listing(hub) == before


def test_store_file_mismatch_on_an_existing_name(hub):
    name = put_file(hub, b'content')
    with pytest.raises(ValidationError):
        files.store_file(hub, name, io.BytesIO(b'tampered'))
    assert (hub.files_dir / name).read_bytes() == b'content'


def test_store_file_over_limit(hub):
    data = b'x' * 3000
    before = listing(hub)
    with pytest.raises(PayloadTooLargeError):
        files.store_file(hub, sha(data), io.BytesIO(data), limit=2048)
    with pytest.raises(PayloadTooLargeError):
        files.store_file(hub, sha(data), io.BytesIO(b''), length=files.MAX_FILE_BYTES + 1)
    assert listing(hub) == before
    assert files.store_file(hub, sha(data), io.BytesIO(data), limit=3000) is True


@pytest.mark.parametrize('name', ['../x', '%2e%2e', '..', 'C:\\x', '/etc/passwd', '',
                                  'A' * 64, 'a' * 63, 'a' * 65, 'a' * 63 + '\n', 'g' * 64,
                                  '../' + 'a' * 61, 'a' * 62 + '/.', None])
def test_bad_names_never_reach_the_filesystem(hub, name):
    parent = sorted(os.listdir(hub.data_dir.parent))
    before = listing(hub)
    stream = io.BytesIO(b'evil')
    with pytest.raises(ValidationError) as caught:
        files.store_file(hub, name, stream)
    assert caught.value.fields == {'sha256': [files.NAME_MESSAGE]}
    assert stream.tell() == 0  # refused before the body was read
    assert not files.has_file(hub, name)
    assert listing(hub) == before and sorted(os.listdir(hub.data_dir.parent)) == parent


class PatternStream:
    """``total`` bytes of a repeated 1 MiB block, produced on demand (never whole in memory)."""

    def __init__(self, total: int, block: bytes):
        self.left, self.block, self.offset = total, block, 0

    def read(self, size: int = -1) -> bytes:
        if self.left <= 0:
            return b''
        size = self.left if size is None or size < 0 else min(size, self.left)
        start = self.offset % len(self.block)
        chunk = (self.block[start:] + self.block)[:size] if start + size > len(self.block) \
            else self.block[start:start + size]
        self.offset += len(chunk)
        self.left -= len(chunk)
        return chunk

    def readline(self, size: int = -1) -> bytes:  # WSGI input needs it; never used for uploads
        return self.read(size if size is not None and size >= 0 else 2**16)

    def readlines(self, hint: int = -1) -> list[bytes]:
        return [self.read()]

    def __iter__(self):
        return iter(lambda: self.read(2**16), b'')

    @staticmethod
    def digest(total: int, block: bytes) -> str:
        digest = hashlib.sha256()
        for _ in range(total // len(block)):
            digest.update(block)
        return digest.hexdigest()


def test_store_50_mib_with_bounded_memory(hub):
    total, block = 50 * 2**20, os.urandom(2**20)
    name = PatternStream.digest(total, block)
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        assert files.store_file(hub, name, PatternStream(total, block)) is True
        peak = tracemalloc.get_traced_memory()[1] - baseline
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20, f'peak growth {peak / 2**20:.1f} MiB'
    assert (hub.files_dir / name).stat().st_size == total


# --- cleanup --------------------------------------------------------------------------------------

def make_store(hub):
    """Referenced, orphan (no row / row of a vanished attachment), temp and fresh files."""
    add_attachment(hub, '1')
    add_attachment(hub, '2')
    kept = put_file(hub, b'kept')
    files.record_download(hub, '1', kept, 4)
    shared = put_file(hub, b'shared')  # named by a gone attachment and a present one
    files.record_download(hub, '2', shared, 6)
    files.record_download(hub, '3', shared, 6)
    gone = put_file(hub, b'attachment 4 left the mirror')
    files.record_download(hub, '4', gone, 28)
    orphan = put_file(hub, b'orphan!')
    temp = hub.files_dir / '.upload-abc123.tmp'
    temp.write_bytes(b'half')
    for path in hub.files_dir.iterdir():
        os.utime(path, (OLD, OLD))
    fresh = put_file(hub, b'just uploaded, report not yet in')
    return {'kept': kept, 'shared': shared, 'gone': gone, 'orphan': orphan, 'temp': temp.name,
            'fresh': fresh}


def test_cleanup_removes_orphans_and_temp_files(hub):
    names = make_store(hub)
    rows = hub.db.execute_sql('SELECT * FROM attachment_file ORDER BY 1').fetchall()

    report = files.cleanup(hub)

    expected = sorted([names['gone'], names['orphan'], names['temp']])
    assert report['removed'] == expected
    assert report['bytes'] == 28 + 7 + 4
    assert report['kept_recent'] == [names['fresh']]
    assert sorted(os.listdir(hub.files_dir)) == sorted([names['kept'], names['shared'], names['fresh']])
    assert hub.db.execute_sql('SELECT * FROM attachment_file ORDER BY 1').fetchall() == rows
    assert files.attachment(hub, '1')['state'] == 'ready'
    assert files.cleanup(hub)['removed'] == []


def test_cleanup_dry_run_deletes_nothing(hub):
    names = make_store(hub)
    before = sorted(os.listdir(hub.files_dir))
    report = files.cleanup(hub, dry_run=True)
    assert report['removed'] == sorted([names['gone'], names['orphan'], names['temp']])
    assert report['bytes'] == 39 and report['dry_run'] is True
    assert sorted(os.listdir(hub.files_dir)) == before


def test_uploading_an_existing_orphan_protects_it_from_cleanup(hub):
    name = put_file(hub, b'again')
    os.utime(hub.files_dir / name, (OLD, OLD))
    assert files.store_file(hub, name, io.BytesIO(b'again')) is False
    assert files.cleanup(hub)['removed'] == []
