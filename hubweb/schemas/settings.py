"""Response schemas of the settings endpoints (the request body is ``hublib.settings.SettingsChange``)."""
from __future__ import annotations

from marshmallow import INCLUDE, fields

from hublib.settings import Pacing, SettingsChange

from . import integers, response, strings


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


AgentProjectSchema = response('AgentProject', strings('label name'),
                              integers('board_id', allow_none=True),
                              strings('board_type', allow_none=True))
AgentSettingsSchema = response(
    'AgentSettings', strings('project_key base_jql', allow_none=True),
    integers('settings_version'), pacing=fields.Nested(Pacing),
    projects=fields.List(fields.Nested(AgentProjectSchema)),
    board_id=fields.Raw(allow_none=True, metadata={
        'description': 'Запасная доска (старый ключ v3), только если он есть'}),
    **{name: fields.Dict(allow_none=True)
       for name in ('field_ids', 'issue_types', 'priority_map', 'link_types')})
