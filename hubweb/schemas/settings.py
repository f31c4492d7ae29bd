"""Schemas of the settings endpoints (documentation; hublib validates the values)."""
from __future__ import annotations

from marshmallow import Schema, fields

from hublib.modules import MODULES


class IssueTypeSchema(Schema):
    name = fields.String(allow_none=True)
    id = fields.String(allow_none=True)


class PacingSchema(Schema):
    interval_ms = fields.Integer(metadata={'minimum': 0, 'example': 500})
    pause_on_rate_limit_seconds = fields.Integer(metadata={'minimum': 0, 'example': 60})


class SettingsChangeSchema(Schema):
    """Body of ``PUT /settings``: any subset of the writable keys."""

    project_key = fields.String(metadata={'example': 'AURORA',
                                          'description': 'Ключ проекта Jira'})
    field_ids = fields.Dict(keys=fields.String(), values=fields.String(allow_none=True), metadata={
        'description': 'planned_start, planned_end, epic_link, story_points, sprint, rank → id поля'})
    issue_types = fields.Dict(keys=fields.String(), values=fields.Nested(IssueTypeSchema),
                              metadata={'description': '{task, epic, bug?}, каждый {name, id}'})
    priority_map = fields.Dict(keys=fields.String(), values=fields.String())
    link_types = fields.Dict(keys=fields.String(), values=fields.String())
    pacing = fields.Nested(PacingSchema)
    backup_keep = fields.Integer(metadata={'minimum': 1, 'example': 14})
    auto_refresh_minutes = fields.Integer(metadata={'minimum': 0, 'description': '0 — выключено'})
    relay_dir = fields.String(allow_none=True, metadata={
        'description': 'Абсолютный путь папки реле или null'})
    closed_statuses = fields.List(fields.String(), metadata={'example': ['Готово', 'Снято']})


class SettingsSchema(SettingsChangeSchema):
    """``GET /settings``: stored keys plus the computed, read-only ``base_jql``."""

    settings_version = fields.Integer()
    base_jql = fields.String(allow_none=True, metadata={
        'description': 'Вычисляется из проектов; только для чтения'})
    project_key = fields.String(allow_none=True)
    field_ids = fields.Dict(allow_none=True)
    issue_types = fields.Dict(allow_none=True)
    priority_map = fields.Dict(allow_none=True)
    link_types = fields.Dict(allow_none=True)
    board_id = fields.Raw(allow_none=True, metadata={
        'description': 'Старый ключ v3, если остался; только для чтения'})


class AgentQuerySchema(Schema):
    agent = fields.String(required=True, metadata={'enum': list(MODULES),
                                                   'description': 'Модуль агента'})


class AgentProjectSchema(Schema):
    label = fields.String()
    name = fields.String()
    board_id = fields.Integer(allow_none=True)
    board_type = fields.String(allow_none=True)


class AgentSettingsSchema(Schema):
    """``GET /agent/settings?agent=jira``."""

    project_key = fields.String(allow_none=True)
    field_ids = fields.Dict(allow_none=True)
    issue_types = fields.Dict(allow_none=True)
    priority_map = fields.Dict(allow_none=True)
    link_types = fields.Dict(allow_none=True)
    pacing = fields.Nested(PacingSchema)
    settings_version = fields.Integer()
    base_jql = fields.String(allow_none=True)
    board_id = fields.Raw(allow_none=True, metadata={
        'description': 'Запасная доска (старый ключ v3), только если он есть'})
    projects = fields.List(fields.Nested(AgentProjectSchema))
