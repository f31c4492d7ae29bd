"""Projects: label-based slices of one Jira project (spec «Проекты», contract §7)."""
from __future__ import annotations

import json
import unicodedata
from typing import Any

from .db import Hub
from .errors import ConflictError, NotFoundError, ValidationError

LABEL_MAX = 100
NAME_MAX = 100
_FORBIDDEN_IN_LABEL = set(',"\'()[]{}\\')

# The slice of project :label — its own issues (label present, exact match) and its neighbours
# (linked to an own issue either way, or the epic of an own issue) that are in the mirror.
SLICE_CTE = """
own(key, epic_key) AS (
  SELECT i.key, i.epic_key FROM issue i
  WHERE EXISTS (SELECT 1 FROM json_each(i.labels) AS l WHERE l.value = :label)),
related(key) AS (
  SELECT l.target_key FROM issue_link l JOIN own o ON l.source_key = o.key
  UNION SELECT l.source_key FROM issue_link l JOIN own o ON l.target_key = o.key
  UNION SELECT epic_key FROM own WHERE epic_key IS NOT NULL),
slice(key, neighbor) AS (
  SELECT key, 0 FROM own
  UNION ALL
  SELECT i.key, 1 FROM issue i JOIN related r ON r.key = i.key
  WHERE i.key NOT IN (SELECT key FROM own))
"""


def label_errors(label: object) -> list[str]:
    """Why ``label`` cannot be a project label (empty list when it can)."""
    if not isinstance(label, str):
        return ['метка должна быть строкой']
    if not label:
        return ['метка не может быть пустой']
    errors = []
    if len(label) > LABEL_MAX:
        errors.append(f'метка длиннее {LABEL_MAX} символов')
    if any(ch.isspace() for ch in label):
        errors.append('метка не может содержать пробельные символы')
    if any(unicodedata.category(ch) == 'Cc' for ch in label):
        errors.append('метка не может содержать управляющие символы')
    bad = sorted({ch for ch in label if ch in _FORBIDDEN_IN_LABEL})
    if bad:
        errors.append('метка не может содержать символы ' + ' '.join(bad))
    return errors


def name_errors(name: object) -> list[str]:
    """Why ``name`` cannot be a project name."""
    if not isinstance(name, str):
        return ['название должно быть строкой']
    if not name.strip():
        return ['название не может быть пустым']
    if len(name.strip()) > NAME_MAX:
        return [f'название длиннее {NAME_MAX} символов']
    return []


def board_id_errors(board_id: object) -> list[str]:
    """Why ``board_id`` cannot be a project board (``None`` is allowed)."""
    if board_id is None:
        return []
    if isinstance(board_id, bool) or not isinstance(board_id, int) or board_id <= 0:
        return ['номер доски — целое больше нуля или null']
    return []


def create_project(hub: Hub, label: Any, name: Any, board_id: Any = None) -> dict:
    """Create a project (and its jira board row); settings_version is not touched."""
    errors = {field: messages for field, messages in (
        ('label', label_errors(label)), ('name', name_errors(name)),
        ('board_id', board_id_errors(board_id))) if messages}
    if errors:
        raise ValidationError(errors)
    with hub.write():
        existing = [row[0] for row in hub.db.execute_sql('SELECT label FROM project')]
        if any(other.casefold() == label.casefold() for other in existing):
            raise ConflictError('проект с такой меткой уже есть')
        hub.db.execute_sql('INSERT INTO project (label, name, created_at) VALUES (?, ?, ?)',
                           (label, name.strip(), hub.now()))
        hub.db.execute_sql('INSERT INTO jira_project (label, board_id, board_type) '
                           'VALUES (?, ?, NULL)', (label, board_id))
        return _project(hub, label)


_PROJECT_SELECT = ('SELECT p.label, p.name, p.created_at, jp.board_id, jp.board_type '
                   'FROM project p LEFT JOIN jira_project jp ON jp.label = p.label')
_PROJECT_COLUMNS = ('label', 'name', 'created_at', 'board_id', 'board_type')


def _project(hub: Hub, label: str) -> dict:
    row = hub.db.execute_sql(_PROJECT_SELECT + ' WHERE p.label = ?', (label,)).fetchone()
    if row is None:
        raise NotFoundError(f'проекта {label!r} нет')
    project = dict(zip(_PROJECT_COLUMNS, row))
    project.update(slice_counts(hub, label))
    return project


def project(hub: Hub, label: str) -> dict:
    """One project with its board and slice counts."""
    with hub.read():
        return _project(hub, label)


def projects(hub: Hub) -> list[dict]:
    """All projects by creation, with boards and slice counts."""
    with hub.read():
        rows = hub.db.execute_sql(_PROJECT_SELECT + ' ORDER BY p.created_at, p.label').fetchall()
        items = [dict(zip(_PROJECT_COLUMNS, row)) for row in rows]
        for item in items:
            item.update(slice_counts(hub, item['label']))
    return items


def slice_counts(hub: Hub, label: str) -> dict:
    """How many own issues and neighbours the project's slice has."""
    row = hub.db.execute_sql(
        f'WITH {SLICE_CTE} SELECT count(*) - coalesce(sum(neighbor), 0), coalesce(sum(neighbor), 0) '
        'FROM slice', {'label': label}).fetchone()
    return {'own_count': row[0], 'neighbor_count': row[1]}


def project_slice(hub: Hub, label: str) -> dict[str, bool]:
    """Keys of the project's slice mapped to ``neighbor`` relative to that project."""
    rows = hub.db.execute_sql(f'WITH {SLICE_CTE} SELECT key, neighbor FROM slice',
                              {'label': label})
    return {key: bool(neighbor) for key, neighbor in rows}


def project_labels(hub: Hub) -> list[str]:
    """Labels in base-JQL order: by creation time, then label."""
    return [row[0] for row in
            hub.db.execute_sql('SELECT label FROM project ORDER BY created_at, label')]


def base_jql(hub: Hub) -> str | None:
    """``project = <key> AND labels in ("L1", …)``; ``None`` without projects or project key."""
    row = hub.db.execute_sql("SELECT value FROM setting WHERE key = 'project_key'").fetchone()
    try:
        project_key = json.loads(row[0]) if row and row[0] else None
    except ValueError:
        project_key = None
    labels = project_labels(hub)
    if not isinstance(project_key, str) or not project_key or not labels:
        return None
    return 'project = {} AND labels in ({})'.format(
        project_key, ', '.join(f'"{label}"' for label in labels))
