"""Attachment tools: ask the agent to download one (writes the queue), and read a downloaded one
as an image or text the assistant can see.

``read_attachment`` decides by content, not by name: an image is PNG, JPEG, GIF or WEBP by its
first bytes (a ZIP named ``.png`` is not), at most ``IMAGE_LIMIT`` bytes (3.75 MiB: 5 MiB once
base64-encoded, the image size assistants' APIs take); text is what the mirror's mime type says is
text (``text/*``, JSON, XML, CSV) and decodes as UTF-8. Anything else is refused with the reason.
"""
import base64
import codecs
import json
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ImageContent, TextContent
from pydantic import Field, StrictInt

from hublib import files, idempotency
from hublib.errors import ConflictError
from hublib.paging import page_limit

from ...schemas.assistant import FetchResultSchema
from ..tooling import (IDEMPOTENCY_FIELD, QUEUE_WRITE, READ_ONLY, AttachmentId, IdempotencyKey,
                       Toolbox, hub_of)

TOOLS = Toolbox()

IMAGE_LIMIT = 3_932_160  # 3.75 MiB
MAX_CHARS = (20000, 1_000_000)
IMAGE_SIGNATURES = ((b'\x89PNG\r\n\x1a\n', 'image/png'), (b'\xff\xd8\xff', 'image/jpeg'),
                    (b'GIF87a', 'image/gif'), (b'GIF89a', 'image/gif'))
TEXT_TYPES = ('application/json', 'application/xml', 'application/csv')
NOT_READY = ('вложение {id} не скачано (состояние {state}{error}): вызови fetch_attachment — он '
             'поставит скачивание в очередь агенту, — и повтори, когда состояние станет ready')
UNREADABLE = ('вложение {id} ({filename}, {mime}) — не изображение PNG, JPEG, GIF или WEBP и не '
              'текст в UTF-8: показать его нельзя')
TOO_LARGE = 'изображение {id} больше 3,75 МиБ ({size} байт): показать его нельзя'


def image_type(head: bytes) -> str | None:
    """The image type of a file by its first bytes, or ``None``."""
    if head[:4] == b'RIFF' and head[8:12] == b'WEBP':
        return 'image/webp'
    return next((mime for signature, mime in IMAGE_SIGNATURES if head.startswith(signature)),
                None)


def is_text_type(mime_type: str | None) -> bool:
    """Whether a mime type names text: ``text/*``, JSON, XML or CSV (``+json``/``+xml`` too)."""
    mime = (mime_type or '').split(';')[0].strip().lower()
    return mime.startswith('text/') or mime in TEXT_TYPES or mime.endswith(('+json', '+xml'))


def utf8_text(content: bytes, whole: bool) -> str | None:
    """``content`` as text (a BOM dropped), or ``None`` when it is not UTF-8. When the file goes on
    (``whole`` false), a character cut at the end of ``content`` is left out, not an error."""
    try:
        return codecs.getincrementaldecoder('utf-8-sig')().decode(content, final=whole)
    except UnicodeDecodeError:
        return None


@TOOLS.tool('Скачать вложение', QUEUE_WRITE, FetchResultSchema)
def fetch_attachment(ctx: Context, attachment_id: AttachmentId,
                     idempotency_key: IdempotencyKey = None) -> dict:
    """Попросить агента скачать вложение в хаб: ready — уже скачано; fetching — скачивается
    (command_id); иначе ставится пакет «Скачивание вложения» (enqueued: true). Прочитать —
    read_attachment. Как POST /attachments/{id}/fetch."""
    answer = idempotency.fetch_attachment(hub_of(ctx), str(attachment_id), key=idempotency_key,
                                          field=IDEMPOTENCY_FIELD)
    return {**answer.body, 'enqueued': answer.status == 202}


@TOOLS.tool('Прочитать вложение', READ_ONLY, None)
def read_attachment(ctx: Context, attachment_id: AttachmentId,
                    max_chars: Annotated[StrictInt | None, Field(
                        description='текст обрезается до стольких символов',
                        json_schema_extra={'minimum': 1, 'maximum': MAX_CHARS[1]})]
                    = MAX_CHARS[0]) -> CallToolResult:
    """Скачанное вложение: изображение PNG, JPEG, GIF или WEBP до 3,75 МиБ — картинкой; текст
    (text/*, JSON, XML, CSV в UTF-8) — текстом до max_chars символов. Перед ним — JSON с
    filename, mime_type, size, truncated. Не скачано — ошибка: сначала fetch_attachment."""
    max_chars = page_limit(max_chars, *MAX_CHARS, name='max_chars')
    attachment_id = str(attachment_id)
    # Enough for the largest image and for max_chars characters of 4 bytes plus a BOM.
    item = files.attachment_bytes(hub_of(ctx), attachment_id,
                                  limit=max(IMAGE_LIMIT + 1, 4 * max_chars + 3))
    content = item['content']
    if content is None:
        error = f': {item["error"]}' if item.get('error') else ''
        raise ConflictError(NOT_READY.format(id=attachment_id, state=item['state'], error=error))
    about = {'attachment_id': attachment_id, 'filename': item['filename'],
             'mime_type': item['mime_type'], 'size': item['size']}
    image = image_type(content[:12])
    if image is not None:
        if item['size'] > IMAGE_LIMIT:
            raise ConflictError(TOO_LARGE.format(id=attachment_id, size=item['size']))
        block = ImageContent(type='image', data=base64.b64encode(content).decode('ascii'), mime_type=image)
        about.update(mime_type=image, truncated=False)
    else:
        text = utf8_text(content, whole=len(content) == item['size']) \
            if is_text_type(item['mime_type']) else None
        if text is None:
            raise ConflictError(UNREADABLE.format(id=attachment_id, filename=item['filename'],
                                                  mime=item['mime_type'] or 'тип не указан'))
        truncated = len(text) > max_chars or len(content) < item['size']
        block = TextContent(type='text', text=text[:max_chars])
        about['truncated'] = truncated
    return CallToolResult(content=[TextContent(type='text', text=json.dumps(
        about, ensure_ascii=False)), block])
