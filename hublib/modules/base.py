"""What a module is: a family of agent commands, the tables it owns and the settings it retired."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

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
