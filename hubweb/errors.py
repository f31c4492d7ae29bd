"""The one table that maps hub errors to HTTP, and the handlers that answer with the error body
of contract §13 (``schemas.errors``, shared with the MCP server).

Anything unexpected is a 500 with a generic message; its traceback goes to the log, never to the
client (no SQL, no paths).
"""
from __future__ import annotations

import logging
import re

import falcon

from hublib.errors import (BusyError, ClientGoneError, ConflictError, DeadlineError, HubError,
                           NotFoundError, PayloadTooLargeError, SchemaError, StorageFullError,
                           ValidationError)

# HTTP_TEXTS lives with the error body now (both adapters use it); its old name here is kept.
from .schemas.errors import HTTP_TEXTS, INTERNAL, error_body, http_body  # noqa: F401

log = logging.getLogger('hubweb')

STATUS = {
    ValidationError: falcon.HTTP_422,
    NotFoundError: falcon.HTTP_404,
    ConflictError: falcon.HTTP_409,
    PayloadTooLargeError: falcon.HTTP_413,
    SchemaError: falcon.HTTP_503,
    BusyError: falcon.HTTP_503,
    DeadlineError: falcon.HTTP_503,
    StorageFullError: falcon.HTTP_507,
}

MALFORMED_JSON = ('Неверный запрос', 'тело запроса — не JSON в кодировке UTF-8')
EMPTY_JSON = ('Неверный запрос', 'тело запроса пустое, ожидается JSON')
_CYRILLIC = re.compile('[а-яА-ЯёЁ]')


def status_of(error: HubError) -> str:
    """HTTP status of a hub error (the most specific class in ``STATUS`` wins)."""
    for cls in type(error).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return falcon.HTTP_400


def http_error_body(error: falcon.HTTPError) -> dict:
    """The contract's body for one of falcon's errors, in Russian."""
    if isinstance(error, falcon.MediaNotFoundError):
        title, description = EMPTY_JSON
    elif isinstance(error, falcon.MediaMalformedError):
        title, description = MALFORMED_JSON
    else:
        default = http_body(error.status_code)
        title = error.title if error.title and _CYRILLIC.search(error.title) else default['title']
        description = (error.description if error.description
                       and _CYRILLIC.search(error.description) else default['description'])
    return {'title': title, 'description': description}


def waitress_error_body(status_code: int) -> dict:
    """The contract's body for an answer waitress gives before the app runs (a request it could
    not parse or take, ``hubweb.lanes``)."""
    if status_code == 500:
        return dict(INTERNAL)
    if status_code == 400:
        return http_body(400, 'запрос не удалось разобрать: неверная строка запроса или заголовок')
    return http_body(status_code)


def _hub_error(req, resp, error: HubError, params) -> None:
    if isinstance(error, StorageFullError):
        # Expected, not a bug: one line for the operator, no traceback; nothing was written.
        log.warning('на диске нет места: %s %s не записан', req.method, req.path)
    elif isinstance(error, BusyError):
        log.warning('хаб занят: %s %s не записан, база заблокирована дольше таймаута',
                    req.method, req.path)
    elif isinstance(error, ClientGoneError):
        log.info('клиент отключился: %s %s остановлен', req.method, req.path)
    elif isinstance(error, DeadlineError):
        log.warning('чтение остановлено по времени: %s %s', req.method, req.path)
    if getattr(error, 'retry_after', None):
        resp.set_header('Retry-After', str(error.retry_after))
    resp.status = status_of(error)
    resp.media = error_body(error)


def _unexpected(req, resp, error: Exception, params) -> None:
    log.error('unexpected error on %s %s', req.method, req.path, exc_info=error)
    resp.status = falcon.HTTP_500
    resp.media = dict(INTERNAL)


def _serialize_http_error(req, resp, error: falcon.HTTPError) -> None:
    resp.content_type = falcon.MEDIA_JSON
    resp.media = http_error_body(error)


def install(app: falcon.App) -> None:
    """Register the handlers: hub errors by the table, falcon's own errors as JSON, the rest 500."""
    app.add_error_handler(Exception, _unexpected)
    app.add_error_handler(HubError, _hub_error)
    app.set_error_serializer(_serialize_http_error)
