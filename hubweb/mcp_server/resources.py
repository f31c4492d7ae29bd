"""Resource templates (contract §14a): an issue card and a project's board, for clients that attach
context by address (``hub://issue/AURORA-1``) rather than by a tool call.

The card is the one ``get_issue`` gives with its defaults (texts cut to 20,000 characters, the
newest 20 comments, ``as_of``), the board the one ``project_board`` gives. An address the hub
cannot answer (no such issue or project, a malformed key) is the protocol's invalid-params error
(−32602) carrying the hub's own message.
"""
import json
from typing import Any, Callable

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from hublib import reads
from hublib.errors import HubError, NotFoundError, ValidationError

from .tooling import hub_of
from .tools.mirror import assistant_card


def _answer(read: Callable[[], dict]) -> str:
    try:
        return json.dumps(read(), ensure_ascii=False)
    except (NotFoundError, ValidationError) as error:
        raise ResourceNotFoundError(error.message) from None
    except HubError as error:
        raise ResourceError(error.message) from None


def issue(ctx: Context, key: str) -> str:
    """Карточка задачи, как get_issue: поля, заметка, связи, последние комментарии, вложения,
    спринты, as_of."""
    return _answer(lambda: assistant_card(hub_of(ctx), key))


def board(ctx: Context, label: str) -> str:
    """Доска проекта, как project_board: колонки со своими задачами проекта."""
    return _answer(lambda: reads.project_board(hub_of(ctx), label))


TEMPLATES: tuple[tuple[str, Callable[..., Any], str], ...] = (
    ('hub://issue/{key}', issue, 'Задача'),
    ('hub://project/{label}/board', board, 'Доска проекта'),
)


def register(server: MCPServer) -> None:
    """Add the resource templates (JSON)."""
    for uri, read, title in TEMPLATES:
        server.resource(uri, name=read.__name__, title=title,
                        mime_type='application/json')(read)
