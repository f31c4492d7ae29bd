"""The `jira` module: its command types (contract §9.2) and retired settings keys.

Command-type params validators are filled in by ``hublib.queue`` work; see ``COMMAND_TYPES``.
"""
from __future__ import annotations

from . import Module, register

DEPRECATED_SETTINGS = ('status_labels', 'transitions_map')

MODULE = register(Module(name='jira', deprecated_settings=DEPRECATED_SETTINGS))
