"""The error body of every 4xx/5xx (contract §13): the HTTP API's response and the MCP tools'
``isError`` text, and the Russian texts of the HTTP statuses both HTTP servers answer on their
own (Falcon's routing and media errors; the MCP transport's), decided here once for both
adapters."""
from __future__ import annotations

from marshmallow import Schema, fields

from hublib.errors import HubError, ValidationError

INTERNAL = {'title': 'Внутренняя ошибка',
            'description': 'Внутренняя ошибка хаба; подробности в журнале сервера.'}


# Russian title and description of an HTTP status whose answer a framework or server makes (Falcon's
# routing, methods and media; the MCP transport's own refusals), whose built-in texts are English;
# an error raised with Russian texts keeps them.
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


def http_body(status: int, description: str | None = None) -> dict:
    """``{"title", "description"}`` of an answer with ``status`` that the hub did not word itself
    (``HTTP_TEXTS``); ``description`` when a better one is known."""
    title, default = HTTP_TEXTS.get(status, ('Ошибка', 'запрос не выполнен'))
    return {'title': title, 'description': description or default}


class ErrorSchema(Schema):
    """The error body of every 4xx/5xx (contract §13)."""

    title = fields.String(required=True)
    description = fields.String(allow_none=True)
    fields = fields.Dict(keys=fields.String(), values=fields.List(fields.String()))


def error_body(error: HubError) -> dict:
    """``{"title", "description", "fields"?}`` of a hub error."""
    body = {'title': error.title, 'description': error.message}
    if isinstance(error, ValidationError):
        body['fields'] = error.fields
    return body
