"""Nothing twice: writes sent with an idempotency key (contract §9.4b).

A client that lost the answer to a write (a browser on a flaky VPN, an assistant's tool call that
timed out) sends it again with the same key and gets the answer the hub gave the first time, while
the write happens once. The hub remembers, per token role and key, the request (method, path and
a hash of its body) and the answer (status and body) for 24 hours, in the database: a restart
forgets nothing.

The check, the write and the remembering are one write transaction (``BEGIN IMMEDIATE``; the
operation's own ``hub.write()`` nests as a savepoint). So two requests with one key at the same
moment are serialized by the write lock and the second one finds the first one's answer, and a
process killed after the commit but before the answer was sent leaves the remembered answer for
the client's retry.

The HTTP adapter (header ``Idempotency-Key``) and the MCP tools (``idempotency_key``) call the same
operations below with the same request, so a key is shared between them for one role: the method,
the path (built here from the operation's arguments in their canonical form, so
``/batches/05/cancel`` and an MCP call for batch 5 are one request, and so are ``/notes/aurora-1``
and ``/notes/AURORA-1``, one note) and the body as parsed JSON, hashed in a canonical form (sorted
keys, no spaces), since the MCP server never sees the bytes of an HTTP body. For the same reason the
answer's status is decided here, not in an adapter: the first call may come from either.

Decisions the contract leaves open:

- Only successful answers (2xx) are remembered. A refused request (422, 404, 409, a full disk)
  changed nothing and leaves its key free: the client corrects the request and sends it again
  under the same key — what a form does after showing the field errors (Stripe instead remembers
  4xx too, for requests it started to execute; ours roll back whole).
- A dry run (``POST /batches`` with ``"dry_run": true``) writes nothing, so it neither checks nor
  takes the key.
- Expired keys are deleted by the next write that carries a key, at most ``SWEEP_LIMIT`` of them
  (the oldest first): no separate job, and a write never pays for a day's backlog at once. A key
  older than 24 hours that the sweep has not reached yet counts as unused.
- The key is 1 to 200 printable ASCII characters (``KEY_PATTERN``), without spaces at its ends
  (an HTTP server strips those from a header value).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from peewee import Tuple

from . import batches, files, notes
from .db import Hub
from .errors import ValidationError
from .models import IdempotentRequest
from .timeutil import minutes_before
from .validation import load, lookup_key

HEADER = 'Idempotency-Key'
KEY_MAX = 200
# Printable ASCII; a space only inside, never at an end (a header value is stripped).
KEY_PATTERN = r'^[!-~](?:[ -~]{0,198}[!-~])?$'
KEY_SCHEMA = {'type': 'string', 'minLength': 1, 'maxLength': KEY_MAX, 'pattern': KEY_PATTERN}
KEY_MESSAGE = (f'ожидается ключ идемпотентности: от 1 до {KEY_MAX} печатных символов ASCII '
               'без пробелов по краям')
REUSED_MESSAGE = 'ключ идемпотентности уже использован для другого запроса'
TTL_MINUTES = 24 * 60
SWEEP_LIMIT = 100
CLIENT = 'client'

_KEY = re.compile(KEY_PATTERN)
_R = IdempotentRequest


@dataclass(frozen=True)
class Answer:
    """What the hub answers a write: an HTTP status, the body, and whether it is a replay of the
    answer remembered under the request's key."""

    status: int
    body: Any
    replayed: bool = False


def checked_key(key: object, field: str = HEADER) -> str:
    """``key`` when it is a valid idempotency key, else a ValidationError naming ``field``."""
    if isinstance(key, str) and len(key) <= KEY_MAX and _KEY.fullmatch(key):
        return key
    raise ValidationError({field: [KEY_MESSAGE]})


def body_hash(body: Any) -> str:
    """sha256 of the canonical JSON of a parsed body (sorted keys, compact, UTF-8)."""
    text = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(',', ':'),
                      allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def run(hub: Hub, key: str | None, *, method: str, path: str, body: Any,
        perform: Callable[[], tuple[int, Any]], role: str = CLIENT,
        field: str = HEADER) -> Answer:
    """``perform()`` → ``(status, body)`` at most once per ``(role, key)`` and request.

    Without a key, ``perform`` simply runs. With one, in one write transaction: the answer
    remembered under the key is given again when the request is the same (``replayed``), a
    different request under it is a ValidationError naming ``field`` (the header, or the MCP
    argument), and otherwise ``perform`` runs and a 2xx answer is remembered with the request.
    """
    if key is None:
        return Answer(*perform())
    key = checked_key(key, field)
    request = {'method': method.upper(), 'path': path, 'body_hash': body_hash(body)}
    with hub.write():
        now = hub.now()
        expired = minutes_before(now, TTL_MINUTES)
        _sweep(hub, expired)
        found = (_R.select().where((_R.role == role) & (_R.key == key) & (_R.created_at >= expired))
                 .dicts().execute(hub.db))
        if found:
            if any(found[0][name] != value for name, value in request.items()):
                raise ValidationError({field: [REUSED_MESSAGE]})
            return Answer(found[0]['status'], json.loads(found[0]['response']), replayed=True)
        status, answer = perform()
        if 200 <= status < 300:
            (_R.insert(role=role, key=key, **request, status=status, created_at=now,
                       response=json.dumps(answer, ensure_ascii=False))
             .on_conflict_replace().execute(hub.db))  # an expired row the sweep has not reached
        return Answer(status, answer)


def _sweep(hub: Hub, expired: str) -> None:
    oldest = (_R.select(_R.role, _R.key).where(_R.created_at < expired)
              .order_by(_R.created_at).limit(SWEEP_LIMIT))
    _R.delete().where(Tuple(_R.role, _R.key).in_(oldest)).execute(hub.db)


# --- the writes that take a key ---------------------------------------------------------------------
# Each is the one definition of its request (method, path, body) and of its answer's status, for
# HTTP and MCP alike.

def queue_batch(hub: Hub, body: Mapping[str, Any], *, key: str | None = None,
                role: str = CLIENT, field: str = HEADER) -> Answer:
    """``POST /batches``: 201 with the queued batch; a dry run: 200 with the preview."""
    if batches.is_dry_run(body):
        if key is not None:
            checked_key(key, field)
        return Answer(200, batches.submit_batch(hub, body))
    return run(hub, key, method='POST', path='/batches', body=body, role=role, field=field,
               perform=lambda: (201, batches.submit_batch(hub, body)))


def put_note(hub: Hub, note_key: str, body: Mapping[str, Any], *, key: str | None = None,
             role: str = CLIENT, field: str = HEADER) -> Answer:
    """``PUT /notes/{key}``: 200 with the note. The request names the note by its canonical key
    (``validation.lookup_key``, as ``notes.put_note`` reads it): ``aurora-1`` is ``AURORA-1``."""
    return run(hub, key, method='PUT', path=f'/notes/{lookup_key(note_key)}', body=body,
               role=role, field=field, perform=lambda: (200, notes.put_note(hub, note_key, body)))


def cancel_batch(hub: Hub, batch_id: int, *, key: str | None = None, role: str = CLIENT,
                 field: str = HEADER) -> Answer:
    """``POST /batches/{id}/cancel``: 200 with the batch."""
    return run(hub, key, method='POST', path=f'/batches/{batch_id}/cancel', body=None,
               role=role, field=field, perform=lambda: (200, batches.cancel_batch(hub, batch_id)))


def fetch_attachment(hub: Hub, attachment_id: str, body: Mapping[str, Any] | None = None, *,
                     key: str | None = None, role: str = CLIENT, field: str = HEADER) -> Answer:
    """``POST /attachments/{id}/fetch``: 202 when a download was queued, else 200 (contract §10).

    An empty body and ``{}`` are one request; a body that is there must be an object."""
    body = {} if body is None else body

    def perform() -> tuple[int, Any]:
        answer = files.request_fetch(hub, attachment_id, **load(files.FetchRequest, body))
        return (202 if answer.pop('enqueued') else 200), answer
    return run(hub, key, method='POST', path=f'/attachments/{attachment_id}/fetch', body=body,
               role=role, field=field, perform=perform)


def retry_batch(hub: Hub, batch_id: int, body: Mapping[str, Any] | None = None, *,
                key: str | None = None, role: str = CLIENT, field: str = HEADER) -> Answer:
    """``POST /batches/{id}/retry``: 201 with the new batch. The contract names four writes with
    a key; a retry queues a batch too, so a double click on «Повторить» must not queue two."""
    body = {} if body is None else body

    def perform() -> tuple[int, Any]:
        return 201, batches.retry_batch(hub, batch_id, **load(batches.RetryBody, body))
    return run(hub, key, method='POST', path=f'/batches/{batch_id}/retry', body=body, role=role,
               field=field, perform=perform)


__all__ = ['Answer', 'run', 'checked_key', 'body_hash', 'queue_batch', 'put_note',
           'cancel_batch', 'fetch_attachment', 'retry_batch', 'HEADER', 'KEY_SCHEMA',
           'KEY_PATTERN', 'KEY_MAX', 'REUSED_MESSAGE', 'TTL_MINUTES', 'SWEEP_LIMIT']
