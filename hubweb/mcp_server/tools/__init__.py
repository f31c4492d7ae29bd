"""Every tool of the MCP server (contract §14, §14a), grouped by concern, and the choice of the
tools a server serves (``sdlc-hub mcp --read-only`` / ``--tools``)."""
from typing import Iterable

from hublib.errors import ValidationError

from ..tooling import ToolSpec
from . import attachments, mirror, notes, queue, reports

ALL_TOOLS: tuple[ToolSpec, ...] = (*mirror.TOOLS, *reports.TOOLS, *attachments.TOOLS, *notes.TOOLS,
                                   *queue.TOOLS)
TOOL_NAMES = tuple(spec.name for spec in ALL_TOOLS)


def chosen_tools(*, read_only: bool = False, names: Iterable[str] | None = None) -> list[ToolSpec]:
    """The tools to serve: only the read-only ones with ``read_only``; only ``names`` when given
    (in the order of ``ALL_TOOLS``). An unknown name, or a writing tool named with ``read_only``,
    is a ValidationError naming it."""
    by_name = {spec.name: spec for spec in ALL_TOOLS}
    wanted = list(dict.fromkeys(names)) if names is not None else None
    if wanted is not None:
        unknown = [name for name in wanted if name not in by_name]
        if unknown:
            raise ValidationError({'tools': [f'неизвестный инструмент: {name}'
                                             for name in unknown]})
        if read_only:
            writing = [name for name in wanted if not by_name[name].read_only]
            if writing:
                raise ValidationError({'tools': [f'инструмент {name} пишет, а сервер только '
                                                 f'для чтения (--read-only)' for name in writing]})
    return [spec for spec in ALL_TOOLS if (not read_only or spec.read_only)
            and (wanted is None or spec.name in wanted)]
