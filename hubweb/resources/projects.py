"""Projects: ``/projects`` and ``/projects/{label}``."""
from __future__ import annotations

import falcon

from hublib import projects
from hublib.db import Hub

from ..openapi import operation
from ..schemas import object_body
from ..schemas.projects import ProjectListSchema, ProjectSchema
from . import Call, Resource


class ProjectsResource(Resource):
    DOC = {
        'get': operation('Проекты', response=ProjectListSchema),
        'post': operation('Создать проект', body=projects.ProjectCreate, response=ProjectSchema,
                          status=201),
    }

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {'items': projects.projects(self.hub)}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = projects.submit_project(self.hub, object_body(req))
        resp.status = falcon.HTTP_201


def routes(hub: Hub) -> list[tuple[str, object]]:
    return [('/projects', ProjectsResource(hub)),
            ('/projects/{label}', Call(hub, projects.project,
                                       doc=operation('Проект', response=ProjectSchema)))]
