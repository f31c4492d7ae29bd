"""Schemas of the project endpoints."""
from __future__ import annotations

from marshmallow import Schema, fields


class ProjectCreateSchema(Schema):
    """Body of ``POST /projects``.

    The fields are ``Raw`` on purpose: the label, name and board rules live in
    ``hublib.projects`` (one rule, one place, also used by ``init`` and scripts), which names the
    offending field itself; the metadata only documents them.
    """

    label = fields.Raw(required=True, metadata={
        'type': 'string', 'maxLength': 100, 'example': 'AWPCA',
        'description': 'Метка Jira: без пробельных и управляющих символов и , " \' ( ) [ ] { } \\; '
                       'уникальна без учёта регистра'})
    name = fields.Raw(required=True, metadata={
        'type': 'string', 'maxLength': 100, 'example': 'АРМ КА',
        'description': 'Название, непустое после обрезки пробелов'})
    board_id = fields.Raw(allow_none=True, metadata={
        'type': 'integer', 'minimum': 1, 'nullable': True, 'example': 4216,
        'description': 'Номер доски Jira или null'})


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
