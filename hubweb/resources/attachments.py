"""Attachments: the agent's upload ``PUT /agent/files/{sha256}`` and the interfaces' read/fetch API."""
from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

import falcon

from hublib import files
from hublib.db import Hub

from ..openapi import operation
from ..schemas import load_data, media
from ..schemas.attachments import (AttachmentSchema, FetchAnswerSchema, FetchRequestSchema,
                                   StoredFileSchema)

FALLBACK_MIME = 'application/octet-stream'
_MIME = re.compile(r"[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(?:\s*;\s*[A-Za-z0-9!#$&^_.+-]+="
                   r"(?:[A-Za-z0-9!#$&^_.+-]+|\"[^\"\\\r\n]*\"))*")
# RFC 5987 attr-char minus the percent sign: everything else is percent-encoded UTF-8.
_ATTR_CHARS = "!#$&+-.^_`|~"
_CYRILLIC = dict(zip(
    'абвгдеёжзийклмнопрстуфхцчшщъыьэюя',
    ['a', 'b', 'v', 'g', 'd', 'e', 'e', 'zh', 'z', 'i', 'y', 'k', 'l', 'm', 'n', 'o', 'p', 'r',
     's', 't', 'u', 'f', 'kh', 'ts', 'ch', 'sh', 'shch', '', 'y', '', 'e', 'yu', 'ya']))


def _ascii_fallback(name: str) -> str:
    out = []
    for char in name:
        lower = char.lower()
        if lower in _CYRILLIC:
            latin = _CYRILLIC[lower]
            out.append(latin.capitalize() if char != lower else latin)
            continue
        plain = unicodedata.normalize('NFKD', char).encode('ascii', 'ignore').decode()
        out.append(plain if plain and plain.isprintable() and plain not in '"\\' else '_')
    return ''.join(out).strip() or 'file'


def content_disposition(filename: str | None) -> str:
    """``attachment; filename="<ascii>"; filename*=UTF-8''<utf-8 percent-encoded>`` (RFC 6266/5987)."""
    if not filename:
        return 'attachment'
    name = re.sub(r'[\x00-\x1f\x7f/\\]', '_', filename)  # never a path, never a header break
    fallback = _ascii_fallback(name)
    if fallback == name:
        return f'attachment; filename="{name}"'
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe=_ATTR_CHARS)}"


def content_type(mime_type: str | None) -> str:
    """The stored mime type when it is a well-formed media type, else octet-stream."""
    return mime_type if mime_type and _MIME.fullmatch(mime_type) else FALLBACK_MIME


class FileResource:
    DOC = {'put': operation(
        'Загрузить файл вложения в хранилище', response=StoredFileSchema, status=(201, 200),
        request_content='application/octet-stream',
        description='Тело — байты файла (до 256 МиБ), имя — sha256 содержимого (64 строчные '
                    'шестнадцатеричные цифры). Несовпадение хэша — 422, файл не сохраняется.')}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_put(self, req: falcon.Request, resp: falcon.Response, sha256: str) -> None:
        created = files.store_file(self.hub, sha256, req.bounded_stream, length=req.content_length)
        resp.media = {'sha256': sha256, 'created': created}
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200


class AttachmentResource:
    DOC = {'get': operation('Вложение: метаданные и состояние скачивания',
                            response=AttachmentSchema)}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_get(self, req: falcon.Request, resp: falcon.Response, attachment_id: str) -> None:
        resp.media = files.attachment(self.hub, attachment_id)


class FetchResource:
    DOC = {'post': operation(
        'Запросить скачивание вложения', body=FetchRequestSchema, response=FetchAnswerSchema,
        status=(200, 202),
        description='ready — 200; уже скачивается — 200 с command_id; иначе ставится пакет '
                    '«Скачивание вложения» с fetch_attachment — 202 с command_id. Тело необязательно.')}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_post(self, req: falcon.Request, resp: falcon.Response, attachment_id: str) -> None:
        body = load_data(FetchRequestSchema, media(req) or {})
        answer = files.request_fetch(self.hub, attachment_id, author=body.get('author'))
        resp.status = falcon.HTTP_202 if answer.pop('enqueued') else falcon.HTTP_200
        resp.media = answer


class ContentResource:
    DOC = {'get': operation('Содержимое скачанного вложения', response_content='application/octet-stream',
                            description='Content-Type — mime_type вложения; Content-Disposition по '
                                        'RFC 6266/5987 с именем файла. Не скачано — 409.')}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_get(self, req: falcon.Request, resp: falcon.Response, attachment_id: str) -> None:
        handle, mime_type, filename, size = files.attachment_content(self.hub, attachment_id)
        resp.set_stream(handle, size)
        resp.content_type = content_type(mime_type)
        resp.set_header('Content-Disposition', content_disposition(filename))
        resp.set_header('X-Content-Type-Options', 'nosniff')


def routes(hub: Hub) -> list[tuple[str, object]]:
    return [('/agent/files/{sha256}', FileResource(hub)),
            ('/attachments/{attachment_id}', AttachmentResource(hub)),
            ('/attachments/{attachment_id}/fetch', FetchResource(hub)),
            ('/attachments/{attachment_id}/content', ContentResource(hub))]
