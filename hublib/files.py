"""Downloaded attachments: the content-addressed store in ``<data>/files/`` and attachment states.

Spec «Скачанные вложения», contract §8.4, §10 (attachments), §11 (cleanup). A stored file is named
by the sha256 of its content (64 lowercase hex digits); ``attachment_file`` says which attachment was
downloaded into which file. The state an interface sees is computed at read time from that row, the
presence of the file and the ``fetch_attachment`` commands of the queue.

Decisions the spec did not make:

- A name is checked against ``^[0-9a-f]{64}$`` before any path is built from it, so ``../x``,
  ``%2e%2e``, ``C:\\x`` or an uppercase digest never reach the filesystem.
- An upload is written to a temp file (``.upload-*.tmp``) inside ``files/`` itself, so the final
  ``os.replace`` is a rename on one filesystem. Uploading a content the store already has hashes the
  body without writing it and refreshes the file's mtime (see cleanup).
- ``cleanup`` keeps files modified within the last ``CLEANUP_GRACE_SECONDS`` (file-system time): an
  upload in progress, or a file the agent has just uploaded and not yet reported ``done``, is not
  an orphan yet. Everything older that no row names is removed.
- ``record_download`` stores the size of the file actually in the store: the content is addressed
  by its hash, so its real size is the truth; the reported size is only used if the file is gone.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import BinaryIO

from peewee import fn

from . import batches
from .db import Hub, Prepared, fsync_directory, json_list
from .errors import (ConflictError, NotFoundError, PayloadTooLargeError, StorageFullError,
                     ValidationError, is_storage_full)
from .models import AttachmentFile, Command, IssueAttachment
from .statuses import ACTIVE
from .validation import Schema, Text

MAX_FILE_BYTES = 256 * 2**20
CHUNK_BYTES = 2**20
CLEANUP_GRACE_SECONDS = 15 * 60
TEMP_PREFIX = '.upload-'
TEMP_SUFFIX = '.tmp'
FETCH_TYPE = 'fetch_attachment'
FETCH_BATCH_TITLE = 'Скачивание вложения'

NAME_MESSAGE = 'имя файла — sha256 содержимого: 64 строчные шестнадцатеричные цифры'
MISMATCH_MESSAGE = 'sha256 содержимого не совпадает с именем файла'
TOO_LARGE_MESSAGE = f'файл больше {MAX_FILE_BYTES // 2**20} МиБ'
NOT_FOUND_MESSAGE = 'вложение не найдено'
NOT_READY_MESSAGE = 'вложение не скачано'
NOT_STORED_MESSAGE = 'файла {sha256} нет в хранилище: сначала загрузите его (PUT /agent/files/{sha256})'

_NAME = re.compile(r'[0-9a-f]{64}')
_FAILED = ('failed', 'cancelled')


def is_file_name(name: object) -> bool:
    """True for a valid store name: 64 lowercase hex digits."""
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def _file_path(hub: Hub, sha256: str) -> Path:
    # The one place a store path is built; every caller has checked the name first.
    if not is_file_name(sha256):
        raise ValidationError({'sha256': [NAME_MESSAGE]})
    return hub.files_dir / sha256


def has_file(hub: Hub, sha256: str) -> bool:
    """True when ``files/<sha256>`` exists (False for an invalid name)."""
    return is_file_name(sha256) and (hub.files_dir / sha256).is_file()


def store_file(hub: Hub, sha256: str, stream: BinaryIO, *, limit: int = MAX_FILE_BYTES,
               length: int | None = None) -> bool:
    """Stream ``stream`` into ``files/<sha256>``; True when the file is new.

    The body is read in 1 MiB chunks while hashing, never whole. ``length`` (the declared
    Content-Length, if any) over ``limit`` is refused before anything is read; the byte count is
    checked while streaming too. On mismatch or overflow nothing is kept.
    """
    target = _file_path(hub, sha256)
    if length is not None and length > limit:
        raise PayloadTooLargeError(TOO_LARGE_MESSAGE)
    if target.is_file():
        _check_digest(sha256, _copy_hashed(stream, None, limit))
        _touch(target)
        return False
    handle, temp_name = tempfile.mkstemp(dir=hub.files_dir, prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX)
    temp = Path(temp_name)
    try:
        with os.fdopen(handle, 'wb') as output:
            digest = _copy_hashed(stream, output, limit)
            _check_digest(sha256, digest)
            output.flush()
            os.fsync(output.fileno())
        os.replace(temp, target)
    except BaseException as exc:
        temp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and is_storage_full(exc):
            raise StorageFullError('на диске нет места: файл не сохранён') from exc
        raise
    fsync_directory(hub.files_dir)
    return True


def _copy_hashed(stream: BinaryIO, output: BinaryIO | None, limit: int) -> str:
    digest = hashlib.sha256()
    total = 0
    while True:
        chunk = stream.read(CHUNK_BYTES)
        if not chunk:
            return digest.hexdigest()
        total += len(chunk)
        if total > limit:
            raise PayloadTooLargeError(TOO_LARGE_MESSAGE)
        digest.update(chunk)
        if output is not None:
            output.write(chunk)


def _check_digest(expected: str, actual: str) -> None:
    if actual != expected:
        raise ValidationError({'sha256': [MISMATCH_MESSAGE]})


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:
        pass  # only a hint for cleanup's grace period


# --- attachment state ---------------------------------------------------------------------------

_PARAM_ID = fn.json_extract(Command.params, '$.attachment_id').cast('TEXT')


def _states(hub: Hub, attachment_ids: list[str]) -> dict[str, dict]:
    ids = list(dict.fromkeys(str(item) for item in attachment_ids))
    files: dict[str, str] = {}
    commands: dict[str, list[tuple[int, str, str | None]]] = {}
    listed = json.dumps(ids)
    files.update(_FILES_OF.tuples(hub, ids=listed))
    for attachment_id, command_id, status, error in _FETCHES_OF.tuples(hub, ids=listed):
        commands.setdefault(attachment_id, []).append((command_id, status, error))
    return {attachment_id: _state(hub, files.get(attachment_id), commands.get(attachment_id, []))
            for attachment_id in ids}


# Built once (a card with attachments asks both; building them was more than running them); the
# ids are one JSON list.
_FILES_OF = Prepared(lambda p: AttachmentFile.select(
    AttachmentFile.attachment_id, AttachmentFile.file).where(
    AttachmentFile.attachment_id.in_(json_list(p, 'ids'))))
_FETCHES_OF = Prepared(lambda p: Command.select(
    _PARAM_ID, Command.id, Command.status, Command.error).where(
    (Command.type == FETCH_TYPE)
    & _PARAM_ID.in_(json_list(p, 'ids'))).order_by(Command.id))


def _state(hub: Hub, file: str | None, commands: list[tuple[int, str, str | None]]) -> dict:
    if file is not None and has_file(hub, file):
        return {'state': 'ready', 'error': None}
    active = [command_id for command_id, status, _ in commands if status in ACTIVE]
    if active:
        return {'state': 'fetching', 'error': None, 'command_id': active[-1]}
    if commands and commands[-1][1] in _FAILED:
        return {'state': 'failed', 'error': commands[-1][2]}
    return {'state': 'none', 'error': None}


def attachment_states(hub: Hub, attachment_ids: list[str]) -> dict[str, dict]:
    """``{id: {"state": ready|fetching|failed|none, "error": str|None}}`` for every id asked.

    Two set-based queries (per 500 ids). A ``fetching`` entry also carries ``command_id``.
    """
    with hub.read():
        return _states(hub, attachment_ids)


def _attachment_row(hub: Hub, attachment_id: str) -> dict:
    found = IssueAttachment.select().where(IssueAttachment.attachment_id == attachment_id) \
        .dicts().execute(hub.db)
    if not found:
        raise NotFoundError(NOT_FOUND_MESSAGE)
    return found[0]


def _attachment(hub: Hub, attachment_id: object) -> dict:
    if not isinstance(attachment_id, str) or not attachment_id:
        raise NotFoundError(NOT_FOUND_MESSAGE)
    item = _attachment_row(hub, attachment_id)
    state = _states(hub, [attachment_id])[attachment_id]
    item['state'], item['error'] = state['state'], state['error']
    if 'command_id' in state:
        item['command_id'] = state['command_id']
    return item


def attachment(hub: Hub, attachment_id: str) -> dict:
    """Metadata of one attachment plus its ``state`` and ``error`` (404 if not in the mirror)."""
    with hub.read():
        return _attachment(hub, attachment_id)


class FetchRequest(Schema):
    """Body of ``POST /attachments/{id}/fetch`` (optional; may be empty)."""

    author = Text(max_length=200, allow_none=True)


def request_fetch(hub: Hub, attachment_id: str, *, author: str | None = None) -> dict:
    """Ask the agent to download an attachment: ``{"state", "command_id"?, "enqueued"}``.

    ``ready``: nothing to do; already ``fetching``: the pending command; otherwise a batch
    «Скачивание вложения» is enqueued in the same write transaction (so two requests never enqueue
    two commands) and ``enqueued`` is true.
    """
    with hub.write():
        item = _attachment(hub, attachment_id)
        if item['state'] == 'ready':
            return {'state': 'ready', 'enqueued': False}
        if item['state'] == 'fetching':
            return {'state': 'fetching', 'command_id': item['command_id'], 'enqueued': False}
        created = batches.create_batch(hub, title=FETCH_BATCH_TITLE, author=author, commands=[
            {'type': FETCH_TYPE, 'params': {'attachment_id': attachment_id}}])
        return {'state': 'fetching', 'command_id': created['commands'][0]['id'], 'enqueued': True}


def attachment_content(hub: Hub, attachment_id: str) -> tuple[BinaryIO, str | None, str | None, int]:
    """``(open file, mime_type, filename, size)`` of a ready attachment; 409 when not ready.

    The file is opened here, so a cleanup racing the request is a ConflictError like any other
    "not ready"; the caller closes it (falcon does, after streaming).
    """
    with hub.read():
        item = _attachment(hub, attachment_id)
        if item['state'] != 'ready':
            raise ConflictError(NOT_READY_MESSAGE)
        file = AttachmentFile.select(AttachmentFile.file) \
            .where(AttachmentFile.attachment_id == attachment_id).scalar(hub.db)
    try:
        handle = open(_file_path(hub, file), 'rb')
    except FileNotFoundError:  # removed by a cleanup since the read above
        raise ConflictError(NOT_READY_MESSAGE) from None
    return handle, item['mime_type'], item['filename'], os.fstat(handle.fileno()).st_size


def attachment_bytes(hub: Hub, attachment_id: str, *, limit: int) -> dict:
    """The metadata and ``state`` of an attachment and, when it is ready, ``content``: the first
    ``limit`` bytes of its file, with ``size`` the file's whole size (404 if not in the mirror).

    Not ready, ``content`` is ``None`` (and ``size`` the size Jira reported), so the caller can say
    why. A file a cleanup removed since the state was read is not ready either: its state is read
    again.
    """
    with hub.read():
        item = _attachment(hub, attachment_id)
        file = AttachmentFile.select(AttachmentFile.file) \
            .where(AttachmentFile.attachment_id == attachment_id).scalar(hub.db)
    item['content'] = None
    if item['state'] != 'ready':
        return item
    try:
        with open(_file_path(hub, file), 'rb') as handle:
            item['size'] = os.fstat(handle.fileno()).st_size
            item['content'] = handle.read(limit)
    except FileNotFoundError:
        item.update(attachment_states(hub, [attachment_id])[attachment_id])
    return item


def record_download(hub: Hub, attachment_id: str, sha256: str, size: int | None) -> None:
    """Upsert ``attachment_file`` after a ``done`` fetch; 409 when ``files/<sha256>`` is missing."""
    if not has_file(hub, sha256):
        raise ConflictError(NOT_STORED_MESSAGE.format(sha256=sha256 if is_file_name(sha256)
                                                      else '<sha256>'))
    try:
        size = (hub.files_dir / sha256).stat().st_size
    except FileNotFoundError:
        raise ConflictError(NOT_STORED_MESSAGE.format(sha256=sha256)) from None
    with hub.write():
        AttachmentFile.replace(attachment_id=str(attachment_id), file=sha256, size=size,
                               fetched_at=hub.now()).execute(hub.db)


# --- cleanup ------------------------------------------------------------------------------------

def cleanup(hub: Hub, *, dry_run: bool = False) -> dict:
    """Remove orphan and stray temp files from ``files/``: ``{"removed": [names], "bytes": n}``.

    Orphan: no ``attachment_file`` row of an attachment still in ``issue_attachment`` names it.
    Rows are never deleted. Files younger than ``CLEANUP_GRACE_SECONDS`` are kept (listed in
    ``kept_recent``). The scan runs under the write lock so no ``done`` report can name a file
    between the check and the removal.
    """
    removed: list[str] = []
    kept_recent: list[str] = []
    freed = 0
    horizon = time.time() - CLEANUP_GRACE_SECONDS
    with hub.write():
        referenced = {name for (name,) in
                      AttachmentFile.select(AttachmentFile.file).distinct()
                      .join(IssueAttachment, on=(IssueAttachment.attachment_id
                                                 == AttachmentFile.attachment_id))
                      .tuples().execute(hub.db)}
        with os.scandir(hub.files_dir) as entries:
            candidates = sorted((entry for entry in entries if entry.name not in referenced
                                 and not entry.is_dir(follow_symlinks=False)),
                                key=lambda entry: entry.name)
        for entry in candidates:
            try:
                info = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            if info.st_mtime > horizon:
                kept_recent.append(entry.name)
                continue
            if not dry_run:
                try:
                    os.unlink(entry.path)
                except FileNotFoundError:
                    continue
            removed.append(entry.name)
            freed += info.st_size
    return {'removed': removed, 'bytes': freed, 'kept_recent': kept_recent, 'dry_run': dry_run}


__all__ = ['attachment_states', 'record_download', 'has_file', 'store_file', 'attachment',
           'request_fetch', 'attachment_content', 'cleanup', 'is_file_name', 'MAX_FILE_BYTES']
