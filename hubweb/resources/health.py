"""``GET /health``: liveness without a token."""
from __future__ import annotations

import falcon
from marshmallow import Schema, fields

from hublib import SCHEMA_VERSION
from hublib.db import Hub

from ..openapi import operation


class HealthSchema(Schema):
    status = fields.String(required=True)
    schema_version = fields.Integer(required=True)


class HealthResource:
    DOC = {'get': operation('Проверка живости', response=HealthSchema)}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {'status': 'ok', 'schema_version': SCHEMA_VERSION}


def routes(hub: Hub) -> list[tuple[str, object]]:
    return [('/health', HealthResource())]
