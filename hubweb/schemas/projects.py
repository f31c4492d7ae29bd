"""Response schemas of the project endpoints (the request body is ``hublib.projects.ProjectCreate``)."""
from __future__ import annotations

from marshmallow import fields

from . import integers, page_of, response, strings

ProjectSchema = response(
    'Project', strings('label name created_at', required=True),
    integers('own_count neighbor_count', required=True), integers('board_id', allow_none=True),
    board_type=fields.String(allow_none=True, metadata={'enum': ['scrum', 'kanban', None]}))
ProjectListSchema = page_of('ProjectList', ProjectSchema, paged=False)
