"""The tool that writes service notes (fields Jira does not have); nothing leaves the hub."""
from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field, StrictStr

from hublib import idempotency

from ...schemas.notes import NoteSchema
from ..tooling import IDEMPOTENCY_FIELD, NOTES_WRITE, Author, IdempotencyKey, Toolbox, hub_of

TOOLS = Toolbox()

NoteText = StrictStr | None


@TOOLS.tool('Служебная заметка', NOTES_WRITE, NoteSchema)
def put_note(ctx: Context, key: Annotated[StrictStr, Field(
                 description='ключ задачи (AURORA-1) или временный ключ (new:1)')],
             updated_by: Author, work_kind: NoteText = None, done_text: NoteText = None,
             rest_text: NoteText = None, owner_note: NoteText = None,
             idempotency_key: IdempotencyKey = None) -> dict:
    """Создать или изменить служебную заметку задачи: вид работ, что сделано, что осталось,
    заметка владельца (до 20000 символов каждое). Меняются только переданные поля ("" —
    очистить); в Jira ничего не уходит.
    Как PUT /notes/{key}."""
    texts = {'work_kind': work_kind, 'done_text': done_text, 'rest_text': rest_text,
             'owner_note': owner_note}
    changes = {name: value for name, value in texts.items() if value is not None}
    return idempotency.put_note(hub_of(ctx), key, {**changes, 'updated_by': updated_by},
                                key=idempotency_key, field=IDEMPOTENCY_FIELD).body
