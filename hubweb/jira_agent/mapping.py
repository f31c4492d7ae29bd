"""Jira's JSON → the hub's shapes (docs/agent.md, «Что и как переносится»).

Pure functions of a raw issue, changelog or board and the agent's settings: no request is made
here. Times go to the hub exactly as Jira wrote them (the hub normalises them), wiki markup as
sent (the v2 API returns descriptions and comments as wiki markup on both Cloud and Data Center).
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

ISSUE_KEY = re.compile(r'^[A-Z][A-Z0-9_]*-[1-9][0-9]*$')
# The fields a refresh asks for, besides the custom ones named in ``field_ids``.
STANDARD_FIELDS = ('summary', 'description', 'issuetype', 'status', 'priority', 'assignee',
                   'reporter', 'duedate', 'labels', 'created', 'updated', 'issuelinks', 'comment',
                   'attachment', 'parent')
CUSTOM_FIELDS = ('planned_start', 'planned_end', 'epic_link', 'story_points', 'sprint', 'rank')
# Data Center writes a sprint as the text of a Java object:
# com.atlassian.greenhopper.service.sprint.Sprint@1f2e3d[id=101,rapidViewId=4216,state=ACTIVE,name=Спринт 1,…]
_SPRINT_TEXT = re.compile(r'^[^\[]*\[(.*)\]\s*$', re.DOTALL)
_SPRINT_PAIR = re.compile(r',(?=[A-Za-z]+=)')
BACKLOG_COLUMNS = ('backlog', 'бэклог')


def field_ids(settings: Mapping[str, Any]) -> dict[str, str]:
    """The configured custom field ids (``field_ids`` without nulls)."""
    ids = settings.get('field_ids') if isinstance(settings.get('field_ids'), dict) else {}
    return {name: value for name, value in ids.items()
            if name in CUSTOM_FIELDS and isinstance(value, str) and value}


def search_fields(settings: Mapping[str, Any]) -> list[str]:
    """Explicit ``fields`` of a refresh: the standard ones and the configured custom ones."""
    return list(STANDARD_FIELDS) + sorted(set(field_ids(settings).values()))


def person(user: Any, cloud: bool) -> str | None:
    """A user as the mirror names people: Data Center ``name``; Cloud ``emailAddress`` when Jira
    shows it, else ``displayName``."""
    if not isinstance(user, dict):
        return None
    if cloud:
        return user.get('emailAddress') or user.get('displayName') or None
    return user.get('name') or None


def _name(value: Any) -> str | None:
    return value.get('name') if isinstance(value, dict) else None


def _text(value: Any) -> str | None:
    """A custom field's value as text: strings as they are, an option's ``value``/``name``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        inner = value.get('value', value.get('name'))
        return inner if isinstance(inner, str) else None
    return None


def _string(value: Any) -> str | None:
    """A changelog value as text (Jira writes strings; a number or flag is written as one)."""
    if value is None or isinstance(value, str):
        return value
    return str(value).lower() if isinstance(value, bool) else str(value)


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return int(number) if number.is_integer() else number
    return None


def sprint_of(value: Any) -> dict | None:
    """One sprint of the sprint field, ``{id, name, state}``: a Cloud object, or a Data Center
    ``…Sprint@…[id=…,state=…,name=…]`` text; None for anything else."""
    if isinstance(value, dict):
        sprint = {'id': value.get('id'), 'name': value.get('name'), 'state': value.get('state')}
    elif isinstance(value, str):
        match = _SPRINT_TEXT.match(value)
        if not match:
            return None
        pairs = dict(part.split('=', 1) for part in _SPRINT_PAIR.split(match.group(1)) if '=' in part)
        sprint = {name: (None if pairs.get(name) in (None, '<null>') else pairs.get(name))
                  for name in ('id', 'name', 'state')}
    else:
        return None
    try:
        sprint['id'] = int(sprint['id'])
    except (TypeError, ValueError):
        return None
    if isinstance(sprint['state'], str):
        sprint['state'] = sprint['state'].lower()
    return sprint


def sprints_of(value: Any) -> list[dict]:
    """Every sprint of the sprint field (a list, or a single value)."""
    values = value if isinstance(value, list) else [value] if value is not None else []
    return [sprint for sprint in map(sprint_of, values) if sprint is not None]


def current_sprint(sprints: list[dict]) -> str | None:
    """The name of the active sprint, else of the last one."""
    for sprint in sprints:
        if sprint.get('state') == 'active':
            return sprint.get('name')
    return sprints[-1].get('name') if sprints else None


def links_of(fields: Mapping[str, Any]) -> list[dict]:
    links = []
    for link in fields.get('issuelinks') or ():
        if not isinstance(link, dict):
            continue
        link_type = _name(link.get('type'))
        for side, direction in (('outwardIssue', 'outward'), ('inwardIssue', 'inward')):
            other = link.get(side)
            if isinstance(other, dict) and other.get('key') and link_type:
                links.append({'type': link_type, 'direction': direction, 'key': other['key']})
    return links


def comment_of(comment: Mapping[str, Any], cloud: bool) -> dict:
    return {'id': str(comment.get('id')), 'author': person(comment.get('author'), cloud),
            'created': comment.get('created'), 'updated': comment.get('updated'),
            'body': comment.get('body') if isinstance(comment.get('body'), str) else None}


def attachment_of(attachment: Mapping[str, Any], cloud: bool) -> dict:
    size = attachment.get('size')
    return {'id': str(attachment.get('id')), 'filename': attachment.get('filename'),
            'size': size if isinstance(size, int) and not isinstance(size, bool) else None,
            'mime_type': attachment.get('mimeType'),
            'author': person(attachment.get('author'), cloud), 'created': attachment.get('created')}


def comments_field(fields: Mapping[str, Any]) -> tuple[list[dict], bool]:
    """The comments embedded in an issue and whether they are all of them (``total``)."""
    field = fields.get('comment')
    if isinstance(field, dict):
        comments = [item for item in field.get('comments') or () if isinstance(item, dict)]
        total = field.get('total')
        return comments, not (isinstance(total, int) and total > len(comments))
    if isinstance(field, list):
        return [item for item in field if isinstance(item, dict)], True
    return [], True


def epic_key(fields: Mapping[str, Any], settings: Mapping[str, Any]) -> str | None:
    """``field_ids.epic_link`` when it holds a key; else the parent when its type is the epic's."""
    link_field = field_ids(settings).get('epic_link')
    value = fields.get(link_field) if link_field else None
    if isinstance(value, str) and ISSUE_KEY.match(value):
        return value
    parent = fields.get('parent')
    types = settings.get('issue_types') if isinstance(settings.get('issue_types'), dict) else {}
    epic_name = (types.get('epic') or {}).get('name') if isinstance(types.get('epic'), dict) else None
    if isinstance(parent, dict) and epic_name:
        parent_type = _name((parent.get('fields') or {}).get('issuetype'))
        if parent_type is not None and parent_type.casefold() == epic_name.casefold():
            return parent.get('key')
    return None


def issue_of(raw: Mapping[str, Any], settings: Mapping[str, Any], cloud: bool, *,
             neighbor: bool = False, comments: list[dict] | None = None) -> dict:
    """A Jira issue as the ISSUE of ``POST /agent/state``. ``comments``: every comment when the
    embedded list was cut short (read through ``/issue/{key}/comment``)."""
    fields = raw.get('fields') or {}
    custom = field_ids(settings)
    embedded, _ = comments_field(fields)
    issue = {
        'key': raw.get('key'), 'id': str(raw['id']) if raw.get('id') is not None else None,
        'issue_type': _name(fields.get('issuetype')), 'summary': fields.get('summary'),
        'description': fields.get('description') if isinstance(fields.get('description'), str)
        else None,
        'status': _name(fields.get('status')), 'priority': _name(fields.get('priority')),
        'assignee': person(fields.get('assignee'), cloud),
        'reporter': person(fields.get('reporter'), cloud),
        'duedate': fields.get('duedate'),
        'planned_start': _text(fields.get(custom['planned_start'])) if 'planned_start' in custom
        else None,
        'planned_end': _text(fields.get(custom['planned_end'])) if 'planned_end' in custom else None,
        'epic_key': epic_key(fields, settings),
        'labels': [label for label in fields.get('labels') or () if isinstance(label, str)],
        'rank': _text(fields.get(custom['rank'])) if 'rank' in custom else None,
        'story_points': _number(fields.get(custom['story_points'])) if 'story_points' in custom
        else None,
        'updated': fields.get('updated'), 'created': fields.get('created'),
        'neighbor': neighbor,
        'links': links_of(fields),
        'comments': [comment_of(item, cloud) for item in (comments if comments is not None
                                                          else embedded)],
        'attachments': [attachment_of(item, cloud) for item in fields.get('attachment') or ()
                        if isinstance(item, dict)],
    }
    if 'sprint' in custom:
        sprints = sprints_of(fields.get(custom['sprint']))
        issue['sprint'] = current_sprint(sprints)
        issue['sprint_ids'] = [sprint['id'] for sprint in sprints]
    else:
        issue['sprint'] = None
    return issue


def history_of(key: str, histories: Iterable[Mapping[str, Any]], cloud: bool) -> list[dict]:
    """One item of ``POST /agent/history`` per ``items[]`` entry of each changelog entry."""
    items = []
    for history in histories:
        if not isinstance(history, dict) or history.get('id') is None:
            continue
        author = person(history.get('author'), cloud)
        for seq, item in enumerate(history.get('items') or ()):
            if not isinstance(item, dict):
                continue
            items.append({
                'history_id': str(history['id']), 'seq': seq, 'key': key,
                'created': history.get('created'), 'author': author,
                'field_id': _string(item.get('fieldId')) or None,
                'field_name': _string(item.get('field')),
                'from_value': _string(item.get('from')), 'from_string': _string(item.get('fromString')),
                'to_value': _string(item.get('to')), 'to_string': _string(item.get('toString'))})
    return items


def changelog_of(raw: Mapping[str, Any]) -> tuple[list[dict], bool]:
    """The changelog embedded by ``expand=changelog`` and whether it is complete (Cloud's search
    cuts it short: ``total`` larger than the histories given; no changelog at all: incomplete)."""
    changelog = raw.get('changelog')
    if not isinstance(changelog, dict):
        return [], False
    histories = [item for item in changelog.get('histories') or () if isinstance(item, dict)]
    total = changelog.get('total')
    start = changelog.get('startAt') or 0
    complete = not (isinstance(total, int) and (total > len(histories) or start))
    return histories, complete


def board_of(board_id: int, board: Mapping[str, Any], configuration: Mapping[str, Any],
             statuses: Mapping[str, str], sprints: Iterable[Mapping[str, Any]]) -> dict:
    """A board of ``POST /agent/boards``: type, columns (status names), kanban backlog, sprints.

    Decisions: a board type other than ``scrum``/``kanban`` (Cloud's ``simple``) is sent as null
    (unknown); a kanban board has a backlog when its first column is Jira's «Backlog» column
    (``Backlog``/``Бэклог``), which the REST API shows as an ordinary column."""
    board_type = board.get('type') if board.get('type') in ('scrum', 'kanban') else None
    columns = []
    column_config = configuration.get('columnConfig') if isinstance(configuration, dict) else None
    for column in (column_config or {}).get('columns') or ():
        if not isinstance(column, dict):
            continue
        names = []
        for status in column.get('statuses') or ():
            status_id = str(status.get('id')) if isinstance(status, dict) else None
            name = statuses.get(status_id) if status_id is not None else None
            if name:
                names.append(name)
        columns.append({'name': column.get('name') or '', 'statuses': names})
    backlog = None
    if board_type == 'kanban':
        backlog = bool(columns) and columns[0]['name'].strip().casefold() in BACKLOG_COLUMNS
    return {'board_id': board_id, 'type': board_type, 'columns': columns or None,
            'kanban_backlog': backlog,
            'sprints': [sprint_payload(sprint) for sprint in sprints if isinstance(sprint, dict)
                        and isinstance(sprint.get('id'), int)]}


def sprint_payload(sprint: Mapping[str, Any]) -> dict:
    return {'id': sprint['id'], 'name': sprint.get('name'),
            'state': (sprint.get('state') or '').lower() or None,
            'start_date': sprint.get('startDate'), 'end_date': sprint.get('endDate'),
            'complete_date': sprint.get('completeDate'), 'goal': sprint.get('goal')}


__all__ = ['issue_of', 'history_of', 'changelog_of', 'board_of', 'sprint_of', 'sprints_of',
           'person', 'search_fields', 'field_ids', 'comments_field', 'links_of']
