"""Response schemas of the settings endpoints (the request body is ``hublib.settings.SettingsChange``)."""
from __future__ import annotations

from marshmallow import INCLUDE, Schema, fields

from hublib.settings import Pacing, SettingsChange


class SettingsSchema(SettingsChange):
    """``GET /settings``: stored keys plus the computed, read-only ``base_jql``."""

    class Meta:
        unknown = INCLUDE  # a key some older tool left behind is shown as it is

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
    pacing = fields.Nested(Pacing)
    settings_version = fields.Integer()
    base_jql = fields.String(allow_none=True)
    board_id = fields.Raw(allow_none=True, metadata={
        'description': 'Запасная доска (старый ключ v3), только если он есть'})
    projects = fields.List(fields.Nested(AgentProjectSchema))
