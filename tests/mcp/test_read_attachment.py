"""``read_attachment`` (contract §14a): what an assistant can see of a downloaded attachment — an
image by its magic bytes, text by its mime type, cut at ``max_chars`` — and why it cannot see the
rest (a ZIP named ``.png``, a binary, an attachment not downloaded yet)."""
from __future__ import annotations

import base64
import hashlib
import io
import json
import struct
import zipfile
import zlib

import pytest

from hublib import files

from .conftest import body

pytestmark = pytest.mark.anyio


def png(width: int = 2, height: int = 1) -> bytes:
    """A real PNG (RGB, one filter byte per row)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack('>I', len(data)) + kind + data + struct.pack(
            '>I', zlib.crc32(kind + data) & 0xffffffff)
    rows = b''.join(b'\x00' + b'\xff\x00\x00' * width for _ in range(height))
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 8, 2, 0,
                                                             0, 0))
            + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))


def zip_bytes() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w') as archive:
        archive.writestr('inside.txt', 'секрет')
    return buffer.getvalue()


def attach(hub, attachment_id: str, filename: str, mime_type: str | None,
           content: bytes | None) -> None:
    """An attachment of AURORA-2 in the mirror, downloaded when ``content`` is given (the agent's
    upload and its done report)."""
    with hub.write():
        hub.db.execute_sql(
            'INSERT INTO issue_attachment (attachment_id, key, filename, size, mime_type) '
            'VALUES (?, ?, ?, ?, ?)', (attachment_id, 'AURORA-2', filename,
                                       len(content or b''), mime_type))
    if content is not None:
        sha256 = hashlib.sha256(content).hexdigest()
        files.store_file(hub, sha256, io.BytesIO(content), length=len(content))
        files.record_download(hub, attachment_id, sha256, len(content))


def about(result) -> dict:
    """The metadata block that comes first."""
    assert result.content[0].type == 'text'
    return json.loads(result.content[0].text)


async def test_a_real_png_comes_back_as_image_content(client, filled):
    picture = png()
    attach(filled, '501', 'схема.png', 'image/png', picture)
    result = await client.call_tool('read_attachment', {'attachment_id': '501'})
    assert not result.is_error, result.content
    image = result.content[1]
    assert (image.type, image.mime_type) == ('image', 'image/png')
    assert base64.b64decode(image.data) == picture
    assert about(result) == {'attachment_id': '501', 'filename': 'схема.png',
                             'mime_type': 'image/png', 'size': len(picture), 'truncated': False}


async def test_the_image_type_comes_from_the_bytes_not_the_name(client, filled):
    attach(filled, '502', 'photo.bin', 'application/octet-stream', b'\xff\xd8\xff\xe0' + b'0' * 20)
    result = await client.call_tool('read_attachment', {'attachment_id': 502})
    assert not result.is_error
    assert result.content[1].mime_type == 'image/jpeg'


async def test_a_zip_named_png_is_refused(client, filled):
    attach(filled, '503', 'picture.png', 'image/png', zip_bytes())
    result = await client.call_tool('read_attachment', {'attachment_id': '503'})
    assert result.is_error is True
    description = body(result)['description']
    assert 'picture.png' in description and 'не изображение' in description


async def test_text_is_cut_at_max_chars(client, filled):
    text = 'Строка отчёта; ' * 2000  # 30,000 characters, 2 bytes each in UTF-8 mostly
    attach(filled, '504', 'отчёт.csv', 'text/csv; charset=utf-8', text.encode())
    short = await client.call_tool('read_attachment', {'attachment_id': '504', 'max_chars': 100})
    assert not short.is_error
    assert short.content[1].text == text[:100]
    assert about(short)['truncated'] is True
    default = await client.call_tool('read_attachment', {'attachment_id': '504'})
    assert default.content[1].text == text[:20000]
    whole = await client.call_tool('read_attachment', {'attachment_id': '504',
                                                       'max_chars': 30000})
    assert whole.content[1].text == text and about(whole)['truncated'] is False


@pytest.mark.parametrize('mime_type', ['application/json', 'application/vnd.api+json',
                                       'text/xml', 'application/xml'])
async def test_json_and_xml_are_text(client, filled, mime_type):
    attach(filled, '505', 'data', mime_type, '\ufeff{"ключ": "значение"}'.encode())
    result = await client.call_tool('read_attachment', {'attachment_id': '505'})
    assert result.content[1].text == '{"ключ": "значение"}'  # the BOM is not text


@pytest.mark.parametrize('mime_type, content', [
    ('application/pdf', b'%PDF-1.7 binary'),
    ('application/zip', zip_bytes()),
    ('text/plain', b'\xff\xfe not UTF-8 \x80'),  # says text, is not UTF-8
    (None, b'no mime type at all'),
])
async def test_binary_is_refused_with_the_reason(client, filled, mime_type, content):
    attach(filled, '506', 'файл', mime_type, content)
    result = await client.call_tool('read_attachment', {'attachment_id': '506'})
    assert result.is_error is True
    assert 'показать его нельзя' in body(result)['description']


async def test_not_downloaded_is_refused_naming_fetch_attachment(client, filled):
    attach(filled, '507', 'ТЗ.docx', 'application/msword', None)
    result = await client.call_tool('read_attachment', {'attachment_id': '507'})
    assert result.is_error is True
    error = body(result)
    assert 'fetch_attachment' in error['description'] and 'none' in error['description']
    await client.call_tool('fetch_attachment', {'attachment_id': '507'})
    pending = body(await client.call_tool('read_attachment', {'attachment_id': '507'}))
    assert 'fetching' in pending['description'] and 'fetch_attachment' in pending['description']


async def test_an_unknown_attachment_is_not_found(client):
    result = await client.call_tool('read_attachment', {'attachment_id': '999'})
    assert body(result) == {'title': 'Не найдено', 'description': 'вложение не найдено'}


async def test_an_image_over_the_limit_is_refused(client, filled, monkeypatch):
    from hubweb.mcp_server.tools import attachments
    monkeypatch.setattr(attachments, 'IMAGE_LIMIT', 50)
    attach(filled, '508', 'big.png', 'image/png', png(width=40, height=40))
    result = await client.call_tool('read_attachment', {'attachment_id': '508'})
    assert result.is_error is True and 'больше 3,75 МиБ' in body(result)['description']
