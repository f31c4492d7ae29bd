"""Projects: label-based slices of one Jira project (spec «Проекты», contract §7).

A project's slice (own issues and neighbours) is kept by ``hublib.slices``; creating a project
builds its slice from the mirror in the same transaction.
"""
from __future__ import annotations

from typing import Any, Mapping

from peewee import JOIN, fn

from . import fields, slices, validators
from .db import Hub, Prepared
from .errors import ConflictError, NotFoundError
from .models import JiraProject, Project, SliceCount
from .settings import PROJECT_ORDER, base_jql, project_labels
from .validation import INT64_MAX, WHITESPACE, Int, Pattern, Schema, StrippedText, load

LABEL_MAX = 100
NAME_MAX = 100
# No whitespace, no control characters (Unicode category Cc), none of , " ' ( ) [ ] { } \
LABEL_PATTERN = '^[^' + WHITESPACE + r'''\x00-\x1f\x7f-\x9f,"'()\[\]{}\\]+$'''
_LABEL_REASONS = (
    (f'[{WHITESPACE}]', 'метка не может содержать пробельные символы'),
    (r'[\x00-\x1f\x7f-\x9f]', 'метка не может содержать управляющие символы'),
    (r'''[,"'()\[\]{}\\]''', 'метка не может содержать символы , " \' ( ) [ ] { } \\'),
)


class ProjectCreate(Schema):
    """Body of ``POST /projects``."""

    label = fields.String(required=True, validate=[
        validators.Length(min=1, max=LABEL_MAX, error=f'метка: от 1 до {LABEL_MAX} символов'),
        Pattern(LABEL_PATTERN, 'недопустимая метка', _LABEL_REASONS)],
        metadata={'example': 'AWPCA', 'description': 'Метка Jira; уникальна без учёта регистра'})
    name = StrippedText(
        required=True, max_length=NAME_MAX, blank='название не может быть пустым',
        too_long=f'название длиннее {NAME_MAX} символов',
        metadata={'example': 'АРМ КА', 'description': 'Хранится без пробелов по краям'})
    board_id = Int(minimum=1, maximum=INT64_MAX, allow_none=True,
                   metadata={'example': 4216, 'description': 'Номер доски Jira или null'})


def create_project(hub: Hub, label: str, name: str, board_id: int | None = None) -> dict:
    """:func:`submit_project` with the fields of the body as arguments."""
    return submit_project(hub, {'label': label, 'name': name, 'board_id': board_id})


def submit_project(hub: Hub, body: Mapping[str, Any]) -> dict:
    """Create a project (and its jira board row, and its slice) from the body of
    ``POST /projects``, checked once by :class:`ProjectCreate`; settings_version is not touched."""
    values = load(ProjectCreate, body)
    label, name = values['label'], values['name']
    with hub.write():
        existing = Project.select(Project.label).tuples().execute(hub.db)
        if any(other.casefold() == label.casefold() for (other,) in existing):
            raise ConflictError('проект с такой меткой уже есть')
        Project.insert(label=label, name=name, created_at=hub.now()).execute(hub.db)
        JiraProject.insert(label=label, board_id=values.get('board_id')).execute(hub.db)
        slices.build_slice(hub, label)
        return _project(hub, label)


def _select():
    """Projects with their board and slice counts (``slice_count``, kept by ingest)."""
    return (Project.select(Project.label, Project.name, Project.created_at, JiraProject.board_id,
                           JiraProject.board_type,
                           fn.COALESCE(SliceCount.own_count, 0).alias('own_count'),
                           fn.COALESCE(SliceCount.neighbor_count, 0).alias('neighbor_count'))
            .join(JiraProject, on=(JiraProject.label == Project.label), join_type=JOIN.LEFT_OUTER)
            .join_from(Project, SliceCount, on=(SliceCount.label == Project.label),
                       join_type=JOIN.LEFT_OUTER))


def _project(hub: Hub, label: str) -> dict:
    found = _select().where(Project.label == label).dicts().execute(hub.db)
    if not found:
        raise NotFoundError(f'проекта {label!r} нет')
    return found[0]


def project(hub: Hub, label: str) -> dict:
    """One project with its board and slice counts."""
    with hub.read():
        return _project(hub, label)


def projects(hub: Hub) -> list[dict]:
    """All projects by creation, with boards and slice counts."""
    with hub.read():
        return list(_select().order_by(*PROJECT_ORDER).dicts().execute(hub.db))


def require_project(hub: Hub, label: str) -> str:
    """``label`` when such a project exists, else NotFoundError."""
    if not _PROJECT_EXISTS.tuples(hub, label=label):
        raise NotFoundError(f'проекта {label!r} нет')
    return label


# Every read of a project's slice asks this first: built once (Peewee's build was most of it).
_PROJECT_EXISTS = Prepared(lambda p: Project.select(Project.label)
                           .where(Project.label == p('label')).limit(1))


__all__ = ['ProjectCreate', 'create_project', 'submit_project', 'project', 'projects',
           'project_labels', 'require_project', 'base_jql']
