"""Logical field names of change-history rows (contract §4)."""
from __future__ import annotations

from typing import Mapping

STANDARD_FIELDS = frozenset(
    ('status', 'description', 'summary', 'assignee', 'priority', 'duedate', 'labels', 'resolution'))

# Logical name -> key in the `field_ids` setting, checked in this order.
CONFIGURED_FIELDS = (('planned_start', 'planned_start'), ('planned_end', 'planned_end'),
                     ('epic_link', 'epic_link'))


def logical_field(field_id: str | None, field_name: str | None,
                  field_ids: Mapping[str, object] | None) -> str | None:
    """The hub's name for a changed field: standard name, configured custom field, else Jira's name."""
    if field_id in STANDARD_FIELDS:
        return field_id
    if not field_id and field_name in STANDARD_FIELDS:
        return field_name
    if field_id and field_ids:
        for logical, setting_key in CONFIGURED_FIELDS:
            configured = field_ids.get(setting_key)
            if configured and configured == field_id:
                return logical
    return field_name
