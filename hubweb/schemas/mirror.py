"""Schemas of the mirror endpoints: agent ingest (documentation only — hublib validates these hot
bodies in plain Python) and the interfaces' reads (query strings and responses)."""
from __future__ import annotations

from marshmallow import Schema, fields, validate

from .notes import NoteSchema


# --- agent ingest (contract §8.1–8.3) ----------------------------------------------------------

class LinkInSchema(Schema):
    type = fields.String(required=True)
    direction = fields.String(required=True, validate=validate.OneOf(('outward', 'inward')))
    key = fields.String(required=True)


class CommentInSchema(Schema):
    id = fields.String(required=True)
    author = fields.String(allow_none=True)
    created = fields.String(allow_none=True)
    updated = fields.String(allow_none=True)
    body = fields.String(allow_none=True)


class AttachmentInSchema(Schema):
    id = fields.String(required=True)
    filename = fields.String(allow_none=True)
    size = fields.Integer(allow_none=True)
    mime_type = fields.String(allow_none=True)
    author = fields.String(allow_none=True)
    created = fields.String(allow_none=True)


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


class IssueInSchema(IssueFieldsSchema):
    """One issue of ``POST /agent/state``; absent ``comments``/``attachments``/``sprint_ids``/
    ``links`` keep what the mirror has."""

    key = fields.String(required=True)
    updated = fields.String(allow_none=True)
    links = fields.List(fields.Nested(LinkInSchema))
    comments = fields.List(fields.Nested(CommentInSchema))
    attachments = fields.List(fields.Nested(AttachmentInSchema))
    sprint_ids = fields.List(fields.Integer())


class StateSchema(Schema):
    """Body of ``POST /agent/state`` (a page of up to ~100 issues of a claimed refresh)."""

    agent = fields.String(required=True)
    command_id = fields.Integer(required=True)
    issues = fields.List(fields.Nested(IssueInSchema), required=True)


class StateResultSchema(Schema):
    issues = fields.Integer(required=True)
    links = fields.Integer(required=True)


class HistoryItemSchema(Schema):
    history_id = fields.String(required=True)
    seq = fields.Integer(required=True)
    key = fields.String(required=True)
    created = fields.String(allow_none=True)
    author = fields.String(allow_none=True)
    field_id = fields.String(allow_none=True)
    field_name = fields.String(allow_none=True)
    from_value = fields.String(allow_none=True)
    from_string = fields.String(allow_none=True)
    to_value = fields.String(allow_none=True)
    to_string = fields.String(allow_none=True)


class HistorySchema(Schema):
    """Body of ``POST /agent/history``."""

    agent = fields.String(required=True)
    command_id = fields.Integer(allow_none=True)
    items = fields.List(fields.Nested(HistoryItemSchema), required=True)


class HistoryResultSchema(Schema):
    inserted = fields.Integer(required=True)
    ignored = fields.Integer(required=True)


class ColumnSchema(Schema):
    name = fields.String(required=True)
    statuses = fields.List(fields.String(), required=True)


class SprintInSchema(Schema):
    id = fields.Integer(required=True)
    name = fields.String(allow_none=True)
    state = fields.String(allow_none=True)
    start_date = fields.String(allow_none=True)
    end_date = fields.String(allow_none=True)
    complete_date = fields.String(allow_none=True)
    goal = fields.String(allow_none=True)


class BoardInSchema(Schema):
    board_id = fields.Integer(required=True)
    type = fields.String(allow_none=True)
    columns = fields.List(fields.Nested(ColumnSchema), allow_none=True)
    kanban_backlog = fields.Boolean(allow_none=True)
    sprints = fields.List(fields.Nested(SprintInSchema))


class BoardsSchema(Schema):
    """Body of ``POST /agent/boards``."""

    agent = fields.String(required=True)
    command_id = fields.Integer(allow_none=True)
    boards = fields.List(fields.Nested(BoardInSchema), required=True)


class BoardsResultSchema(Schema):
    boards = fields.Integer(required=True)
    sprints = fields.Integer(required=True)


# --- interfaces' reads (contract §10) ----------------------------------------------------------

class PageQuerySchema(Schema):
    limit = fields.Integer()
    cursor = fields.String()


class IssuesQuerySchema(PageQuerySchema):
    project = fields.String()
    status = fields.String()
    assignee = fields.String()
    neighbor = fields.Boolean()
    q = fields.String(metadata={'description': 'подстрока ключа или названия, без учёта регистра'})
    updated_since = fields.String(metadata={'description': 'время ISO-8601: updated Jira ≥ этого'})


class ChangesQuerySchema(PageQuerySchema):
    since = fields.String(metadata={'description': 'at ≥ since (ISO-8601)'})
    until = fields.String(metadata={'description': 'at < until (ISO-8601)'})
    key = fields.String()
    project = fields.String()
    field = fields.String()


class IssueChangesQuerySchema(PageQuerySchema):
    since = fields.String()
    until = fields.String()
    field = fields.String()


class IssueOutSchema(IssueFieldsSchema):
    key = fields.String(required=True)
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
