"""Settings for interfaces (``/settings``) and for agents (``/agent/settings``)."""
from __future__ import annotations

import falcon

from hublib import settings
from hublib.db import Hub

from ..openapi import operation
from ..media import media
from ..schemas.settings import AgentSettingsSchema, SettingsSchema
from . import Call, Resource


class SettingsResource(Resource):
    DOC = {
        'get': operation('Настройки хаба', response=SettingsSchema,
                         description='Все ключи, кроме токенов и schema_version, и вычисленная base_jql.'),
        'put': operation('Изменить настройки', body=settings.SettingsChange, response=SettingsSchema,
                         description='Частичное изменение; любая ошибка — 422, ничего не записано.'),
    }

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = settings.client_settings(self.hub)

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = settings.update_settings(self.hub, media(req))


def routes(hub: Hub) -> list[tuple[str, object]]:
    return [('/settings', SettingsResource(hub)),
            ('/agent/settings', Call(hub, settings.agent_settings, query=settings.AgentQuery,
                                     doc=operation('Настройки для агента',
                                                   response=AgentSettingsSchema)))]
