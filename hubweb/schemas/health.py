"""Schema of ``GET /health``."""
from __future__ import annotations

from marshmallow import Schema, fields


class HealthSchema(Schema):
    status = fields.String(required=True, metadata={'example': 'ok'})
    schema_version = fields.Integer(required=True, metadata={'example': 9})
