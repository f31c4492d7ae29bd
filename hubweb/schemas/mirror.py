"""Response schemas of the mirror endpoints (documentation of what hublib returns). Request bodies
and query strings are hublib's own schemas (``hublib.mirror``, ``hublib.history``, ``hublib.reads``)."""
from __future__ import annotations

from marshmallow import Schema, fields, validate

from .notes import NoteSchema


class IssueFieldsSchema(Schema):
    """The Jira fields an issue has both on the way in (agent) and out (interfaces)."""

    id = fields.String(allow_none=True)
    issue_type = fields.String(allow_none=True)
    summary = fields.String(allow_none=True)
    description = fields.String(allow_none=True)
    status = fields.String(allow_none=True)
    priority = fields.String(allow_none=True)
    assignee = fields.String(allow_none=True)
    reporter = fields.String(allow_none=True)
    duedate = fields.String(allow_none=True)
    planned_start = fields.String(allow_none=True)
    planned_end = fields.String(allow_none=True)
    epic_key = fields.String(allow_none=True)
    labels = fields.List(fields.String())
    sprint = fields.String(allow_none=True)
    rank = fields.String(allow_none=True)
    story_points = fields.Float(allow_none=True)
    created = fields.String(allow_none=True)
    neighbor = fields.Boolean()


class StateResultSchema(Schema):
    issues = fields.Integer(required=True)
    links = fields.Integer(required=True)


class HistoryResultSchema(Schema):
    inserted = fields.Integer(required=True)
    ignored = fields.Integer(required=True)


class ColumnSchema(Schema):
    name = fields.String(required=True)
    statuses = fields.List(fields.String(), required=True)


class BoardsResultSchema(Schema):
    boards = fields.Integer(required=True)
    sprints = fields.Integer(required=True)


# --- interfaces' reads (contract §10) ----------------------------------------------------------

class IssueOutSchema(IssueFieldsSchema):
    key = fields.String(required=True)
    snippet = fields.String(metadata={'description': 'только с text=: фрагмент текста, найденные '
                                                     'слова в [квадратных скобках]'})
    jira_updated = fields.String(allow_none=True)
    fetched_at = fields.String(allow_none=True)
    note = fields.Nested(NoteSchema, allow_none=True)


class IssueListSchema(Schema):
    items = fields.List(fields.Nested(IssueOutSchema), required=True)
    next_cursor = fields.String(allow_none=True)


class LinkOutSchema(Schema):
    type = fields.String()
    key = fields.String()


class LinksOutSchema(Schema):
    outward = fields.List(fields.Nested(LinkOutSchema))
    inward = fields.List(fields.Nested(LinkOutSchema))


class CommentOutSchema(Schema):
    comment_id = fields.String()
    author = fields.String(allow_none=True)
    created = fields.String(allow_none=True)
    updated = fields.String(allow_none=True)
    body = fields.String(allow_none=True)
    created_at = fields.String(allow_none=True)


class AttachmentOutSchema(Schema):
    attachment_id = fields.String()
    key = fields.String()
    filename = fields.String(allow_none=True)
    size = fields.Integer(allow_none=True)
    mime_type = fields.String(allow_none=True)
    author = fields.String(allow_none=True)
    created = fields.String(allow_none=True)
    created_at = fields.String(allow_none=True)
    state = fields.String(validate=validate.OneOf(('ready', 'fetching', 'failed', 'none')))
    error = fields.String(allow_none=True)


class IssueSprintOutSchema(Schema):
    sprint_id = fields.Integer()
    name = fields.String(allow_none=True)
    state = fields.String(allow_none=True)


class IssueCardSchema(IssueOutSchema):
    links = fields.Nested(LinksOutSchema)
    comments = fields.List(fields.Nested(CommentOutSchema))
    attachments = fields.List(fields.Nested(AttachmentOutSchema))
    sprints = fields.List(fields.Nested(IssueSprintOutSchema))


class ChangeSchema(Schema):
    history_id = fields.String()
    seq = fields.Integer()
    key = fields.String()
    at = fields.String()
    created = fields.String(allow_none=True)
    author = fields.String(allow_none=True)
    field = fields.String(allow_none=True)
    field_id = fields.String(allow_none=True)
    field_name = fields.String(allow_none=True)
    from_value = fields.String(allow_none=True)
    from_string = fields.String(allow_none=True)
    to_value = fields.String(allow_none=True)
    to_string = fields.String(allow_none=True)
    fetched_at = fields.String()


class ChangeListSchema(Schema):
    items = fields.List(fields.Nested(ChangeSchema), required=True)
    next_cursor = fields.String(allow_none=True)


class SyncRunSchema(Schema):
    id = fields.Integer()
    started_at = fields.String()
    finished_at = fields.String(allow_none=True)
    kind = fields.String()
    query = fields.String(allow_none=True)
    issues_count = fields.Integer()
    links_count = fields.Integer()
    jira_calls = fields.Integer()
    rate_limited = fields.Integer()
    command_id = fields.Integer(allow_none=True)
    history_at = fields.String(allow_none=True)


class SyncRunListSchema(Schema):
    items = fields.List(fields.Nested(SyncRunSchema), required=True)
    next_cursor = fields.String(allow_none=True)


class BoardColumnSchema(ColumnSchema):
    issues = fields.List(fields.String(), required=True)


class BoardSchema(Schema):
    label = fields.String()
    board_id = fields.Integer(allow_none=True)
    type = fields.String(allow_none=True)
    kanban_backlog = fields.Boolean(allow_none=True)
    fetched_at = fields.String(allow_none=True)
    columns = fields.List(fields.Nested(BoardColumnSchema), required=True)
    done_statuses = fields.List(fields.String(), required=True)


class SprintOutSchema(Schema):
    sprint_id = fields.Integer()
    board_id = fields.Integer(allow_none=True)
    name = fields.String(allow_none=True)
    state = fields.String(allow_none=True)
    start_date = fields.String(allow_none=True)
    end_date = fields.String(allow_none=True)
    complete_date = fields.String(allow_none=True)
    goal = fields.String(allow_none=True)
    issues = fields.List(fields.String())
    issues_count = fields.Integer()
    done_count = fields.Integer()


class SprintListSchema(Schema):
    items = fields.List(fields.Nested(SprintOutSchema), required=True)
