"""Attachments: the agent's upload ``PUT /agent/files/{sha256}`` and the interfaces' read/fetch API."""
from __future__ import annotations

import re

import falcon

from hublib import files, idempotency
from hublib.validation import SHA256_PATTERN
from hublib.db import Hub

from ..openapi import operation
from ..schemas import optional_object_body
from ..schemas.attachments import AttachmentSchema, FetchAnswerSchema, StoredFileSchema
from . import Resource, idempotency_key, respond_with

FALLBACK_MIME = 'application/octet-stream'
_MIME = re.compile(r"[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(?:\s*;\s*[A-Za-z0-9!#$&^_.+-]+="
                   r"(?:[A-Za-z0-9!#$&^_.+-]+|\"[^\"\\\r\n]*\"))*")
# Never a path, never a header break, never a quote that ends the parameter early.
_UNSAFE_IN_FILENAME = re.compile(r'[\x00-\x1f\x7f/\\"]')


def safe_filename(filename: str) -> str:
    """The attachment's name with path separators, control characters and quotes replaced."""
    return _UNSAFE_IN_FILENAME.sub('_', filename)


def content_type(mime_type: str | None) -> str:
    """The stored mime type when it is a well-formed media type, else octet-stream."""
    return mime_type if mime_type and _MIME.fullmatch(mime_type) else FALLBACK_MIME


class FileResource(Resource):
    DOC = {'put': operation(
        'Загрузить файл вложения в хранилище', response=StoredFileSchema, status=(201, 200),
        path={'sha256': {'type': 'string', 'pattern': SHA256_PATTERN}},
        request_content='application/octet-stream',
        description='Тело — байты файла (до 256 МиБ), имя — sha256 содержимого (64 строчные '
                    'шестнадцатеричные цифры). Несовпадение хэша — 422, файл не сохраняется.')}

    def on_put(self, req: falcon.Request, resp: falcon.Response, sha256: str) -> None:
        created = files.store_file(self.hub, sha256, req.bounded_stream, length=req.content_length)
        resp.media = {'sha256': sha256, 'created': created}
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200


class AttachmentResource(Resource):
    DOC = {'get': operation('Вложение: метаданные и состояние скачивания',
                            response=AttachmentSchema)}

    def on_get(self, req: falcon.Request, resp: falcon.Response, attachment_id: str) -> None:
        resp.media = files.attachment(self.hub, attachment_id)


class FetchResource(Resource):
    DOC = {'post': operation(
        'Запросить скачивание вложения', body=files.FetchRequest, body_required=False,
        response=FetchAnswerSchema, status=(200, 202), idempotent=True,
        description='ready — 200; уже скачивается — 200 с command_id; иначе ставится пакет '
                    '«Скачивание вложения» с fetch_attachment — 202 с command_id. Тело необязательно.')}

    def on_post(self, req: falcon.Request, resp: falcon.Response, attachment_id: str) -> None:
        respond_with(resp, idempotency.fetch_attachment(
            self.hub, attachment_id, optional_object_body(req), key=idempotency_key(req)))


class ContentResource(Resource):
    DOC = {'get': operation('Содержимое скачанного вложения', response_content='*/*',
                            description='Content-Type — mime_type вложения; Content-Disposition по '
                                        'RFC 6266/5987 с именем файла. Не скачано — 409.')}

    def on_get(self, req: falcon.Request, resp: falcon.Response, attachment_id: str) -> None:
        handle, mime_type, filename, size = files.attachment_content(self.hub, attachment_id)
        resp.set_stream(handle, size)
        resp.content_type = content_type(mime_type)
        if filename:
            # falcon writes filename= (ASCII) and, for other names, filename*= (RFC 6266/5987)
            resp.downloadable_as = safe_filename(filename)
        else:
            resp.set_header('Content-Disposition', 'attachment')
        resp.set_header('X-Content-Type-Options', 'nosniff')


def routes(hub: Hub) -> list[tuple[str, object]]:
    return [('/agent/files/{sha256}', FileResource(hub)),
            ('/attachments/{attachment_id}', AttachmentResource(hub)),
            ('/attachments/{attachment_id}/fetch', FetchResource(hub)),
            ('/attachments/{attachment_id}/content', ContentResource(hub))]
