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

from .schemas.errors import INTERNAL, error_body

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

# Russian title and description for falcon's own errors (routing, methods, media), whose
# built-in texts are English; an error raised with Russian texts keeps them.
HTTP_TEXTS = {
    400: ('Неверный запрос', 'запрос не удалось разобрать'),
    401: ('Нужна авторизация', 'нужен заголовок Authorization: Bearer <токен>'),
    403: ('Нет доступа', 'этот токен не даёт доступа к ресурсу'),
    404: ('Не найдено', 'такого адреса нет'),
    405: ('Метод не поддерживается', 'этот адрес не поддерживает такой метод'),
    406: ('Неприемлемый формат', 'хаб отвечает только JSON'),
    409: ('Конфликт', 'действие противоречит текущему состоянию'),
    411: ('Нужна длина тела', 'нужен заголовок Content-Length'),
    413: ('Слишком большой запрос', 'тело запроса слишком большое'),
    415: ('Неподдерживаемый тип содержимого', 'ожидается тело application/json'),
    422: ('Неверные данные', 'данные не прошли проверку'),
    431: ('Слишком большие заголовки', 'заголовки запроса слишком большие'),
    501: ('Не поддерживается', 'такой Transfer-Encoding сервер не поддерживает'),
    503: ('Хаб перегружен', 'все обработчики запросов заняты: повторите запрос через несколько '
                            'секунд'),
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
        default_title, default_description = HTTP_TEXTS.get(
            error.status_code, ('Ошибка', 'запрос не выполнен'))
        title = error.title if error.title and _CYRILLIC.search(error.title) else default_title
        description = (error.description if error.description
                       and _CYRILLIC.search(error.description) else default_description)
    return {'title': title, 'description': description}


def waitress_error_body(status_code: int) -> dict:
    """The contract's body for an answer waitress gives before the app runs (a request it could
    not parse or take, ``hubweb.lanes``)."""
    if status_code == 500:
        return dict(INTERNAL)
    if status_code == 400:
        return {'title': HTTP_TEXTS[400][0],
                'description': 'запрос не удалось разобрать: неверная строка запроса или заголовок'}
    title, description = HTTP_TEXTS.get(status_code, ('Ошибка', 'запрос не выполнен'))
    return {'title': title, 'description': description}


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
