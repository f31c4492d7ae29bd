"""``GET /health``: liveness without a token."""
from __future__ import annotations

import falcon

from hublib import SCHEMA_VERSION
from hublib.db import Hub

from ..openapi import operation
from ..schemas.health import HealthSchema


class HealthResource:
    DOC = {'get': operation('Проверка живости', response=HealthSchema, description=(
        'Без токена; не трогает базу. Пока последняя запись этого процесса не удалась из-за '
        'нехватки места на диске, ответ несёт `"storage": "full"` и `storage_full_since`; '
        'первая успешная запись их убирает.'))}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = {'status': 'ok', 'schema_version': SCHEMA_VERSION}
        full_since = self.hub.storage_full_since
        if full_since is not None:
            body.update(storage='full', storage_full_since=full_since)
        resp.media = body


def routes(hub: Hub) -> list[tuple[str, object]]:
    return [('/health', HealthResource(hub))]
