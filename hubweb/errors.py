"""The one table that maps hub errors to HTTP, and the JSON error body of contract §13.

Body: ``{"title": ..., "description": ..., "fields": {...}?}``. Anything unexpected is a 500 with
a generic message; its traceback goes to the log, never to the client (no SQL, no paths).
"""
from __future__ import annotations

import logging

import falcon

from hublib.errors import (ConflictError, HubError, NotFoundError, PayloadTooLargeError,
                           SchemaError, ValidationError)

log = logging.getLogger('hubweb')

STATUS = {
    ValidationError: falcon.HTTP_422,
    NotFoundError: falcon.HTTP_404,
    ConflictError: falcon.HTTP_409,
    PayloadTooLargeError: falcon.HTTP_413,
    SchemaError: falcon.HTTP_503,
}


def status_of(error: HubError) -> str:
    """HTTP status of a hub error (the most specific class in ``STATUS`` wins)."""
    for cls in type(error).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return falcon.HTTP_400


def _hub_error(req, resp, error: HubError, params) -> None:
    resp.status = status_of(error)
    body = {'title': error.title, 'description': error.message}
    if isinstance(error, ValidationError):
        body['fields'] = error.fields
    resp.media = body


def _unexpected(req, resp, error: Exception, params) -> None:
    log.error('unexpected error on %s %s', req.method, req.path, exc_info=error)
    resp.status = falcon.HTTP_500
    resp.media = {'title': 'Внутренняя ошибка', 'description': 'Внутренняя ошибка хаба; подробности в журнале сервера.'}


def _serialize_http_error(req, resp, error: falcon.HTTPError) -> None:
    body = {'title': error.title or 'Ошибка', 'description': error.description or error.title or ''}
    resp.content_type = falcon.MEDIA_JSON
    resp.media = body


def install(app: falcon.App) -> None:
    """Register the handlers: hub errors by the table, falcon's own errors as JSON, the rest 500."""
    app.add_error_handler(Exception, _unexpected)
    app.add_error_handler(HubError, _hub_error)
    app.set_error_serializer(_serialize_http_error)
