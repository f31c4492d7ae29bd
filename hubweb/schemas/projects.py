"""Schemas of the project endpoints."""
from __future__ import annotations

from marshmallow import Schema, fields


class ProjectCreateSchema(Schema):
    """Body of ``POST /projects`` (hublib checks the label, name and board rules)."""

    label = fields.Raw(required=True)
    name = fields.Raw(required=True)
    board_id = fields.Raw(allow_none=True)


class ProjectSchema(Schema):
    label = fields.String(required=True)
    name = fields.String(required=True)
    created_at = fields.String(required=True)
    board_id = fields.Integer(allow_none=True)
    board_type = fields.String(allow_none=True)
    own_count = fields.Integer()
    neighbor_count = fields.Integer()


class ProjectListSchema(Schema):
    items = fields.List(fields.Nested(ProjectSchema), required=True)
