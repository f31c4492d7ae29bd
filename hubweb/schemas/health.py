"""Schema of ``GET /health``."""
from __future__ import annotations

from marshmallow import Schema, fields


class HealthSchema(Schema):
    status = fields.String(required=True, metadata={'example': 'ok'})
    schema_version = fields.Integer(required=True, metadata={'example': 9})
    storage = fields.String(metadata={
        'enum': ['full'], 'description': 'только пока последняя запись не удалась: нет места на диске'})
    storage_full_since = fields.String(metadata={
        'format': 'date-time', 'description': 'с какой неудачной записи (время хаба, UTC)'})
