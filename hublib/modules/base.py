"""What a module is: a family of agent commands and the settings it retired."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..db import Hub
from ..validation import Schema

# Builds a command type's params schema from the current settings (contract §9.2: some params
# must name a configured key, e.g. ``issue_type`` one of ``issue_types``).
ParamsSchema = Callable[[Mapping[str, Any]], Schema]
# Names the params that refer to state the hub must hold (``{param: message}``, empty when all
# is there): a 422 naming ``commands[i].params.<param>``, like every other command error.
References = Callable[[Hub, Mapping[str, Any]], dict[str, str]]


@dataclass(frozen=True)
class CommandType:
    """One command type: its params and result schemas, its Jira-call estimate, its key params."""

    name: str
    params: ParamsSchema
    # The shape of ``result`` in a report of this type (any status; fields the agent may omit).
    result: type[Schema]
    # Estimated Jira calls (contract §9.6); a callable of (hub, params) or a constant.
    estimate_calls: Callable[[Hub, Mapping[str, Any]], int] | int = 1
    # Params naming an issue, where a temp key (new:<n>) is resolved at delivery. Only these:
    # a comment body or a summary that happens to read "new:1" is text, not a key.
    key_fields: tuple[str, ...] = ()
    # Writes to Jira: when a batch's last write ends, the hub refreshes what they touched
    # (contract §9.4a).
    writes: bool = False
    references: References | None = None
    # ``result`` fields a ``done`` report must carry (what the hub does with a done command needs
    # them: the file of the download). Not the key of a created issue: an ``ensure_issue`` done
    # without it is kept (``claims.submit_report``), a redelivery could create the issue twice.
    done_requires: tuple[str, ...] = ()

    def params_schema(self, settings: Mapping[str, Any]) -> Schema:
        """The params schema under ``settings`` (the published contract of this type)."""
        return self.params(settings)

    def result_schema(self) -> Schema:
        """The schema of ``result`` in this type's reports."""
        return self.result()

    def estimate(self, hub: Hub, params: Mapping[str, Any]) -> int:
        """Estimated Jira calls of one command with ``params``."""
        calls = self.estimate_calls
        return calls(hub, params) if callable(calls) else calls

    def missing_references(self, hub: Hub, params: Mapping[str, Any]) -> dict[str, str]:
        """``{param: message}`` for each param naming something the hub does not hold."""
        return self.references(hub, params) if self.references else {}


@dataclass(frozen=True)
class Module:
    """A family of agent commands and the settings keys it has retired."""

    name: str
    command_types: Mapping[str, CommandType] = field(default_factory=dict)
    deprecated_settings: tuple[str, ...] = ()
