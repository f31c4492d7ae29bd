"""What every tool module uses: the hub from the server's lifespan context, the argument types,
the annotations, and ``Toolbox.tool``, which records a tool the way ``MCPServer.tool`` would.

A tool is a top-level typed function whose docstring is the description the assistant reads; its
first parameter is ``ctx: Context`` (the SDK injects it), from which :func:`hub_of` takes the hub.
It returns the dict hublib returned (plus presentation for an assistant), described by a
marshmallow response schema of ``hubweb.schemas`` that becomes its ``outputSchema``.

Argument types are strict (``true`` is not 1, ``"5"`` is not 5) and publish their bounds; hublib
still checks every value with its own messages (``paging.page_limit``, its schemas), so a
constraint the input schema states is never the only check.
"""
import inspect
from dataclasses import dataclass
from typing import Annotated, Any, Callable

from marshmallow import Schema
from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import Field, StrictBool, StrictInt, StrictStr, WithJsonSchema

from hublib import idempotency
from hublib.db import Hub
from hublib.validation import INT64_MAX


@dataclass(frozen=True)
class HubContext:
    """The server's lifespan context: the hub every tool, prompt and resource reads."""

    hub: Hub


def hub_of(ctx: Context) -> Hub:
    """The hub of the session a tool, prompt or resource runs in."""
    return ctx.request_context.lifespan_context.hub


# --- annotations ---------------------------------------------------------------------------------

# destructiveHint and idempotentHint mean something only beside readOnlyHint false (the MCP
# specification): left out here, they cost every client bytes for nothing.
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# A note's fields are overwritten in place (no history), hence destructive; nothing leaves the hub.
NOTES_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                              open_world_hint=False)
# Queue tools reach Jira through the agent: the open world. They add or stop commands, never
# remove data.
QUEUE_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                              open_world_hint=True)


# --- registration --------------------------------------------------------------------------------

@dataclass(frozen=True)
class ToolSpec:
    """A tool as registered: its function and what ``MCPServer.add_tool`` is told about it."""

    function: Callable[..., Any]
    title: str
    annotations: ToolAnnotations
    output: type[Schema] | None  # None: the tool answers with content blocks (read_attachment)
    more: str = ''  # appended to the docstring: text whose one source is elsewhere

    @property
    def name(self) -> str:
        return self.function.__name__

    @property
    def description(self) -> str:
        """What the assistant reads: the docstring, then ``more``."""
        return '\n'.join(filter(None, (inspect.cleandoc(self.function.__doc__ or ''), self.more)))

    @property
    def read_only(self) -> bool:
        return bool(self.annotations.read_only_hint)


class Toolbox(list):
    """The tools of one module, in the order they are listed to the assistant."""

    def tool(self, title: str, annotations: ToolAnnotations, output: type[Schema] | None, *,
             more: str = '') -> Callable[[Callable], Callable]:
        """Record the decorated function as a tool (it stays a plain function)."""
        def record(function: Callable) -> Callable:
            self.append(ToolSpec(function, title, annotations, output, more))
            return function
        return record


# --- argument types ------------------------------------------------------------------------------

def limit(default: int, maximum: int) -> Any:
    """A page size argument: 1–maximum, ``default`` when absent."""
    return Annotated[StrictInt | None, Field(
        description=f'1–{maximum}, по умолчанию {default}',
        json_schema_extra={'minimum': 1, 'maximum': maximum})]


def identifier(description: str) -> Any:
    """A positive id that SQLite can hold (beyond int64 is a validation error, not a crash)."""
    return Annotated[StrictInt, Field(ge=1, le=INT64_MAX, description=description)]


OptionalText = Annotated[StrictStr | None, Field()]
Cursor = Annotated[StrictStr | None, Field(description='next_cursor предыдущей страницы')]
IssueKey = Annotated[StrictStr, Field(description='ключ задачи, например AURORA-1')]
Label = Annotated[StrictStr, Field(description='метка проекта (list_projects)')]
BatchId = identifier('номер пакета')
Moment = Annotated[StrictStr | None, Field(
    description='время ISO-8601, например 2026-10-22T09:00:00Z')]
Author = Annotated[StrictStr, Field(description='кто: логин пользователя')]
Flag = StrictBool
IDEMPOTENCY_FIELD = 'idempotency_key'  # names the argument in a refusal
IdempotencyKey = Annotated[StrictStr | None, Field(
    description='повтор с этим ключом ничего не сделает дважды',
    json_schema_extra={'minLength': 1, 'maxLength': idempotency.KEY_MAX})]
AttachmentId = Annotated[StrictStr | Annotated[StrictInt, Field(ge=0, le=INT64_MAX)],
                         WithJsonSchema({'type': ['string', 'integer'],
                                         'description': 'id вложения (attachments карточки)'})]
