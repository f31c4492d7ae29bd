"""Importing a jira-sync config (CLI ``sdlc-hub init``, contract §12): settings and projects.

Only the keys the contract names are read; ``jira_url``, ``jira_login``, ``jira_password`` and
``jira_token`` are never read, so they cannot end up in the database.
"""
from __future__ import annotations

from typing import Any, Mapping

from . import projects, settings
from .db import Hub
from .errors import ValidationError
from .models import Project

CONFIG_SETTINGS = ('project_key', 'field_ids', 'priority_map', 'link_types', 'pacing',
                   'backup_keep', 'auto_refresh_minutes')


def settings_from_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The settings a jira-sync config carries (issue types from ``issue_type_<kind>[_id]``)."""
    if not isinstance(config, Mapping):
        raise ValidationError({'config': ['конфиг должен быть JSON-объектом']})
    values = {key: config[key] for key in CONFIG_SETTINGS if key in config}

    def issue_type(kind: str) -> dict[str, str | None]:
        name, type_id = config.get(f'issue_type_{kind}'), config.get(f'issue_type_{kind}_id')
        if type(type_id) is int:  # Jira ids are strings; configs often write them as numbers
            type_id = str(type_id)
        return {'name': name, 'id': type_id}

    values['issue_types'] = {'task': issue_type('task'), 'epic': issue_type('epic')}
    if 'issue_type_bug' in config or 'issue_type_bug_id' in config:
        values['issue_types']['bug'] = issue_type('bug')
    return values


def import_config(hub: Hub, config: Mapping[str, Any]) -> dict[str, Any]:
    """Import a jira-sync config: settings (one version bump at most) and missing projects."""
    values = settings.validate_changes(settings_from_config(config))
    listed = config.get('projects') or []
    if not isinstance(listed, list) or not all(isinstance(item, Mapping) for item in listed):
        raise ValidationError({'projects': ['ожидается список объектов {label, name, board_id?}']})
    with hub.write():
        settings.update_settings(hub, values)
        existing = {label.casefold() for (label,) in
                    Project.select(Project.label).tuples().execute(hub.db)}
        created = []
        for item in listed:
            label = item.get('label')
            if isinstance(label, str) and label.casefold() in existing:
                continue
            projects.create_project(hub, label, item.get('name', label), item.get('board_id'))
            existing.add(label.casefold())
            created.append(label)
    return {'projects_created': created}


__all__ = ['settings_from_config', 'import_config']
