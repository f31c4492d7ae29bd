"""Agent modules: the families of agent commands (`jira`, `wiki`).

A module is listed in ``MODULES``; adding a module or a command type is an edit here and in the
module's own file. The command queue, the agent-status view, settings cleanup and the API document
all read this registry instead of naming modules or command types themselves.
"""
from __future__ import annotations

from typing import Any, Mapping

from .. import fields, validators
from ..errors import ValidationError
from ..validation import REQUIRED_MESSAGE, Schema
from . import jira, wiki
from .base import CommandType, Module

MODULES: dict[str, Module] = {module.name: module for module in (jira.MODULE, wiki.MODULE)}
COMMAND_TYPES: dict[str, CommandType] = {
    name: command_type for module in MODULES.values()
    for name, command_type in module.command_types.items()}
# Command types that write to Jira (read your writes follows them, contract §9.4a).
WRITE_TYPES = tuple(name for name, command_type in COMMAND_TYPES.items() if command_type.writes)


def agent_field(**metadata: Any) -> fields.String:
    """The ``agent`` field of an agent's request: the name of a module (``jira``, ``wiki``)."""
    return fields.String(required=True, validate=validators.OneOf(tuple(MODULES)),
                         metadata=metadata)


def get_module(name: object) -> Module:
    """The registered module called ``name``, or a ValidationError naming ``agent``."""
    if name is None:
        raise ValidationError({'agent': [REQUIRED_MESSAGE]})
    if not isinstance(name, str) or name not in MODULES:
        raise ValidationError(
            {'agent': [f'неизвестный модуль; ожидается один из: {", ".join(MODULES)}']})
    return MODULES[name]


def command_type(name: object) -> CommandType:
    """The command type called ``name`` in any module, or a ValidationError naming ``type``."""
    if isinstance(name, str) and name in COMMAND_TYPES:
        return COMMAND_TYPES[name]
    raise ValidationError({'type': ['неизвестный тип команды']})


def module_of(command_type_name: str) -> str | None:
    """Name of the module that owns a command type."""
    for module in MODULES.values():
        if command_type_name in module.command_types:
            return module.name
    return None


def params_schemas(settings: Mapping[str, Any]) -> dict[str, Schema]:
    """Every command type's params schema under ``settings``, by type name."""
    return {name: command_type.params_schema(settings)
            for name, command_type in COMMAND_TYPES.items()}


def result_schemas() -> dict[str, Schema]:
    """Every command type's result schema, by type name."""
    return {name: command_type.result_schema() for name, command_type in COMMAND_TYPES.items()}


def deprecated_settings() -> set[str]:
    """Every settings key some module has retired."""
    return {key for module in MODULES.values() for key in module.deprecated_settings}


__all__ = ['MODULES', 'COMMAND_TYPES', 'WRITE_TYPES', 'Module', 'CommandType', 'get_module',
           'command_type', 'module_of', 'params_schemas', 'result_schemas', 'deprecated_settings',
           'agent_field']
