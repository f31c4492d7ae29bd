"""Schemas of the settings endpoints (documentation; hublib validates the values)."""
from __future__ import annotations

from marshmallow import Schema, fields


class IssueTypeSchema(Schema):
    name = fields.String(allow_none=True)
    id = fields.String(allow_none=True)


class PacingSchema(Schema):
    interval_ms = fields.Integer()
    pause_on_rate_limit_seconds = fields.Integer()


class SettingsChangeSchema(Schema):
    """Body of ``PUT /settings``: any subset of the writable keys."""

    project_key = fields.String()
    field_ids = fields.Dict(keys=fields.String(), values=fields.String(allow_none=True))
    issue_types = fields.Dict(keys=fields.String(), values=fields.Nested(IssueTypeSchema))
    priority_map = fields.Dict(keys=fields.String(), values=fields.String())
    link_types = fields.Dict(keys=fields.String(), values=fields.String())
    pacing = fields.Nested(PacingSchema)
    backup_keep = fields.Integer()
    auto_refresh_minutes = fields.Integer()
    relay_dir = fields.String(allow_none=True)
    closed_statuses = fields.List(fields.String())


class SettingsSchema(SettingsChangeSchema):
    """``GET /settings``: stored keys plus the computed, read-only ``base_jql``."""

    settings_version = fields.Integer()
    base_jql = fields.String(allow_none=True)
    project_key = fields.String(allow_none=True)
    field_ids = fields.Dict(allow_none=True)
    issue_types = fields.Dict(allow_none=True)
    priority_map = fields.Dict(allow_none=True)
    link_types = fields.Dict(allow_none=True)
    board_id = fields.Raw(allow_none=True)


class AgentQuerySchema(Schema):
    agent = fields.String(required=True)


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
    board_id = fields.Raw(allow_none=True)
    projects = fields.List(fields.Nested(AgentProjectSchema))
