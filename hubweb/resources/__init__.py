"""Falcon resources, one module per feature; each exports ``routes(hub)``.

A responder parses (path segments, query string, body) into the values hublib takes, makes one
hublib call and sets the response; hublib validates and decides. Most endpoints are one hublib
function with the path parameters and the typed query string as its arguments: :class:`Call`
serves those; the feature modules only name the function and its documentation.
"""
from __future__ import annotations

from typing import Any, Callable

import falcon
from marshmallow import Schema

from hublib import idempotency
from hublib.db import Hub

from ..schemas import load_query, path_int

REPLAYED_HEADER = 'Idempotent-Replayed'


def idempotency_key(req: falcon.Request) -> str | None:
    """The request's ``Idempotency-Key`` header (hublib checks it)."""
    return req.get_header(idempotency.HEADER)


def respond_with(resp: falcon.Response, answer: idempotency.Answer) -> None:
    """Status and body of an answer of ``hublib.idempotency``; a replay says so in a header."""
    resp.status, resp.media = answer.status, answer.body
    if answer.replayed:
        resp.set_header(REPLAYED_HEADER, 'true')


class Resource:
    """A resource over one hub. ``DOC`` describes its responders for the OpenAPI document."""

    DOC: dict = {}

    def __init__(self, hub: Hub):
        self.hub = hub


class Call(Resource):
    """One responder that is one hublib call: ``function(hub, **path parameters, **typed query)``.

    ``ids`` names the path parameters that are numeric ids (their not-found message): anything
    but a positive 64-bit integer is that 404.
    """

    def __init__(self, hub: Hub, function: Callable[..., Any], doc: dict, *, method: str = 'get',
                 query: type[Schema] | None = None, ids: dict[str, str] | None = None):
        super().__init__(hub)
        self.function, self.query, self.ids = function, query, ids or {}
        self.DOC = {method: {**doc, 'query': query}}
        setattr(self, f'on_{method}', self.respond)

    def respond(self, req: falcon.Request, resp: falcon.Response, **params: str) -> None:
        arguments: dict[str, Any] = load_query(self.query, req) if self.query is not None else {}
        for name, value in params.items():
            arguments[name] = path_int(value, self.ids[name]) if name in self.ids else value
        resp.media = self.function(self.hub, **arguments)
