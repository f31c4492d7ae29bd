"""Service notes: ``GET/PUT /notes/{key}`` (contract §10). hublib checks key and texts
(``notes.NoteKey``, ``notes.NoteChange``)."""
from __future__ import annotations

import falcon

from hublib import idempotency, notes
from hublib.db import Hub
from hublib.validation import LOOKUP_KEY_PATTERN

from ..openapi import operation
from ..schemas import media
from ..schemas.notes import NoteSchema
from . import idempotency_key, respond_with


# A Jira key in any case (read in Jira's case) or a temp key.
NOTE_KEY = {'key': {'type': 'string', 'pattern': LOOKUP_KEY_PATTERN}}


class NoteResource:
    DOC = {
        'get': operation('Заметка задачи', response=NoteSchema, path=NOTE_KEY,
                         description='404, если у ключа нет заметки.'),
        'put': operation('Изменить заметку', body=notes.NoteChange, response=NoteSchema, path=NOTE_KEY,
                         idempotent=True,
                         description='Частичное обновление; updated_at — время хаба. Ключ — ключ '
                                     'Jira или временный new:<n>.'),
    }

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_get(self, req: falcon.Request, resp: falcon.Response, key: str) -> None:
        resp.media = notes.note(self.hub, key)

    def on_put(self, req: falcon.Request, resp: falcon.Response, key: str) -> None:
        respond_with(resp, idempotency.put_note(self.hub, key, media(req),
                                                key=idempotency_key(req)))


def routes(hub: Hub) -> list[tuple[str, object]]:
    return [('/notes/{key}', NoteResource(hub))]
