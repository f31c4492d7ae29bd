"""Response schemas of the project endpoints (the request body is ``hublib.projects.ProjectCreate``)."""
from __future__ import annotations

from marshmallow import Schema, fields


class ProjectSchema(Schema):
    label = fields.String(required=True)
    name = fields.String(required=True)
    created_at = fields.String(required=True)
    board_id = fields.Integer(allow_none=True)
    board_type = fields.String(allow_none=True, metadata={'enum': ['scrum', 'kanban', None]})
    own_count = fields.Integer(required=True)
    neighbor_count = fields.Integer(required=True)


class ProjectListSchema(Schema):
    items = fields.List(fields.Nested(ProjectSchema), required=True)
