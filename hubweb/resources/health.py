"""``GET /health``: liveness without a token."""
from __future__ import annotations

import falcon

from hublib import SCHEMA_VERSION
from hublib.db import Hub

from ..openapi import operation
from ..schemas.health import HealthSchema


class HealthResource:
    DOC = {'get': operation('Проверка живости', response=HealthSchema,
                            description='Без токена; не трогает базу.')}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {'status': 'ok', 'schema_version': SCHEMA_VERSION}


def routes(hub: Hub) -> list[tuple[str, object]]:
    return [('/health', HealthResource())]
