"""Agent modules: the families of agent commands and tables (`jira`, `wiki`).

A module is listed in ``MODULES``; adding a module or a command type is an edit here and in the
module's own file. The command queue, the agent-status view and settings cleanup all read
this registry instead of naming modules themselves.
"""
from __future__ import annotations

from ..errors import ValidationError
from . import jira, wiki
from .base import CommandType, Module

MODULES: dict[str, Module] = {module.name: module for module in (jira.MODULE, wiki.MODULE)}


def get_module(name: object) -> Module:
    """The registered module called ``name``, or a ValidationError naming ``agent``."""
    if not isinstance(name, str) or name not in MODULES:
        raise ValidationError(
            {'agent': [f'неизвестный модуль; ожидается один из: {", ".join(MODULES)}']})
    return MODULES[name]


def command_type(name: object) -> CommandType:
    """The command type called ``name`` in any module, or a ValidationError naming ``type``."""
    for module in MODULES.values():
        if isinstance(name, str) and name in module.command_types:
            return module.command_types[name]
    raise ValidationError({'type': ['неизвестный тип команды']})


def module_of(command_type_name: str) -> str | None:
    """Name of the module that owns a command type."""
    for module in MODULES.values():
        if command_type_name in module.command_types:
            return module.name
    return None


def deprecated_settings() -> set[str]:
    """Every settings key some module has retired."""
    return {key for module in MODULES.values() for key in module.deprecated_settings}



__all__ = ['MODULES', 'Module', 'CommandType', 'get_module', 'command_type', 'module_of',
           'deprecated_settings']
