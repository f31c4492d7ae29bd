"""sdlc-hub library: the Jira mirror, service notes, command queue and settings in one SQLite file.

A script opens the hub and calls the operation modules with it::

    from hublib import open_hub, projects, settings
    hub = open_hub('./hub-data')
    projects.create_project(hub, 'AWPCA', 'АРМ КА', board_id=4216)
    print(settings.client_settings(hub)['base_jql'])

hublib never imports a web framework; ``hubweb`` is the HTTP adapter on top of it.
"""
from __future__ import annotations

from .db import Hub
from .errors import (BusyError, ConflictError, HubError, MigrationError, NotFoundError,
                     SchemaError, ValidationError)
from .models import SCHEMA_VERSION
from .startup import open_hub

__all__ = ['Hub', 'open_hub', 'SCHEMA_VERSION', 'HubError', 'ValidationError', 'NotFoundError',
           'ConflictError', 'BusyError', 'SchemaError', 'MigrationError']
__version__ = '0.1.0'
