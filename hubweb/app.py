"""``create_app(hub)``: wires middleware, error handlers and the feature modules' routes."""
from __future__ import annotations

import falcon

import hublib
from hublib.db import Hub

from . import errors, ui
from .auth import TokenAuth
from .media import json_handler
from .middleware import BodyLimit, ReadDeadline, RequestLog, ThreadConnection
from .openapi import OpenApiResource

from .resources import attachments, health, mirror, notes, projects, queue, reports, settings

# Feature modules; each exports routes(hub) -> [(uri template, resource)].
FEATURES = (health, settings, projects, mirror, queue, notes, attachments, reports)


def feature_routes(hub: Hub) -> list[tuple[str, object]]:
    """Every (uri template, resource) of every feature, in registration order."""
    return [route for module in FEATURES for route in module.routes(hub)]


def create_app(hub: Hub) -> falcon.App:
    """The WSGI application serving ``hub``."""
    app = falcon.App(middleware=[RequestLog(), BodyLimit(), TokenAuth(hub), ReadDeadline(hub),
                                 ThreadConnection(hub)])
    app.req_options.strip_url_path_trailing_slash = True
    # JSON only: a form body (curl -d sends application/x-www-form-urlencoded) is a 415 like any
    # other non-JSON type, not a set of form fields that then fail validation.
    for media_type in (falcon.MEDIA_URLENCODED, falcon.MEDIA_MULTIPART):
        app.req_options.media_handlers.pop(media_type, None)
    app.req_options.media_handlers[falcon.MEDIA_JSON] = json_handler()
    app.resp_options.media_handlers[falcon.MEDIA_JSON] = json_handler()
    app.resp_options.default_media_type = falcon.MEDIA_JSON
    errors.install(app)
    routes = feature_routes(hub)
    # The document describes exactly the routes registered below, itself included.
    routes.append(('/openapi.json', OpenApiResource(hub, routes, hublib.__version__)))
    for uri, resource in routes:
        app.add_route(uri, resource)
    ui.install(app)  # the web page: static files and GET / -> /ui/, not API operations
    return app
