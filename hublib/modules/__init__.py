"""Agent modules: the families of agent commands and tables (`jira`, `wiki`).

A module is registered in ``MODULES``; adding a module or a command type is an edit here and in
the module's own file. The command queue, the agent-status view and settings cleanup all read
this registry instead of naming modules themselves.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..errors import ValidationError

# A params validator takes the hub and the raw params and returns the normalized params or raises
# ValidationError with field names relative to params.
ParamsValidator = Callable[[Any, Mapping[str, Any]], dict]


@dataclass(frozen=True)
class CommandType:
    """One command type: its module, its params validator and its Jira-call estimate."""

    name: str
    validate: ParamsValidator
    # Estimated Jira calls (contract §9.6); a callable of (hub, params) or a constant.
    estimate_calls: Callable[[Any, Mapping[str, Any]], int] | int = 1
    # Params naming an issue, where a temp key (new:<n>) is resolved at delivery. Only these:
    # a comment body or a summary that happens to read "new:1" is text, not a key.
    key_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class Module:
    """A family of agent commands, the tables it owns and the settings keys it has retired."""

    name: str
    command_types: Mapping[str, CommandType] = field(default_factory=dict)
    deprecated_settings: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()


MODULES: dict[str, Module] = {}


def register(module: Module) -> Module:
    """Add ``module`` to the registry (last registration of a name wins)."""
    MODULES[module.name] = module
    return module


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


from . import jira, wiki  # noqa: E402,F401  (registration side effect)
