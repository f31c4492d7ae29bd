"""sdlc-hub HTTP adapter: Falcon resources over hublib, served by waitress."""
from __future__ import annotations


def create_app(hub):
    """The Falcon WSGI app for ``hub`` (see ``hubweb.app``)."""
    from .app import create_app as _create_app
    return _create_app(hub)


__all__ = ['create_app']
