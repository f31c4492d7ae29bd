"""Projects: ``/projects`` and ``/projects/{label}``."""
from __future__ import annotations

import falcon

from hublib import projects
from hublib.db import Hub

from ..openapi import operation
from ..schemas import load
from ..schemas.projects import ProjectCreateSchema, ProjectListSchema, ProjectSchema


class ProjectsResource:
    DOC = {
        'get': operation('Проекты', response=ProjectListSchema),
        'post': operation('Создать проект', body=ProjectCreateSchema, response=ProjectSchema,
                          status=201),
    }

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {'items': projects.projects(self.hub)}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = load(ProjectCreateSchema, req)
        resp.media = projects.create_project(self.hub, body['label'], body['name'],
                                             body.get('board_id'))
        resp.status = falcon.HTTP_201


class ProjectResource:
    DOC = {'get': operation('Проект', response=ProjectSchema)}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_get(self, req: falcon.Request, resp: falcon.Response, label: str) -> None:
        resp.media = projects.project(self.hub, label)


def routes(hub: Hub) -> list[tuple[str, object]]:
    return [('/projects', ProjectsResource(hub)), ('/projects/{label}', ProjectResource(hub))]
