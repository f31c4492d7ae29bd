"""Falcon resources, one module per feature; each exports ``routes(hub)``.

A responder parses (path segments, query string, body) into the values hublib takes, makes one
hublib call and sets the response; hublib validates and decides.
"""
from __future__ import annotations

from hublib.db import Hub


class Resource:
    """A resource over one hub. ``DOC`` describes its responders for the OpenAPI document."""

    DOC: dict = {}

    def __init__(self, hub: Hub):
        self.hub = hub
