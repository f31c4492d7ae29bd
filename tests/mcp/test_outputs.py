"""The tools' result types and the HTTP API's response schemas describe the same objects: a field
added on one side and forgotten on the other fails here, not in an assistant's session."""
from __future__ import annotations

import pytest

from hubweb.mcp_server import outputs
from hubweb.schemas import attachments, mirror, notes, projects, queue, settings

# Fields only the assistant tools add (presentation): cut texts, preview marker.
PRESENTATION = {'truncated', 'truncated_fields', 'comments_total'}
SEARCH_ONLY = {'snippet'}  # only full-text search results carry it


@pytest.mark.parametrize('typed, schema, extra', [
    (outputs.IssueCard, mirror.IssueCardSchema, PRESENTATION),
    (outputs.Comment, mirror.CommentOutSchema, set()),
    (outputs.Attachment, mirror.AttachmentOutSchema, set()),
    (outputs.IssueSprint, mirror.IssueSprintOutSchema, set()),
    (outputs.Links, mirror.LinksOutSchema, set()),
    (outputs.Link, mirror.LinkOutSchema, set()),
    (outputs.Note, notes.NoteSchema, set()),
    (outputs.Change, mirror.ChangeSchema, set()),
    (outputs.ChangeList, mirror.ChangeListSchema, set()),
    (outputs.SyncRun, mirror.SyncRunSchema, set()),
    (outputs.SyncRunList, mirror.SyncRunListSchema, set()),
    (outputs.Board, mirror.BoardSchema, set()),
    (outputs.BoardColumn, mirror.BoardColumnSchema, set()),
    (outputs.BoardCard, mirror.BoardCardSchema, set()),
    (outputs.Sprint, mirror.SprintOutSchema, set()),
    (outputs.SprintList, mirror.SprintListSchema, set()),
    (outputs.Project, projects.ProjectSchema, set()),
    (outputs.ProjectList, projects.ProjectListSchema, set()),
    (outputs.Agent, queue.AgentSchema, set()),
    (outputs.AgentList, queue.AgentListSchema, set()),
    (outputs.Redelivered, queue.RedeliveredSchema, set()),
    (outputs.BatchSummary, queue.BatchSummarySchema, set()),
    (outputs.Batch, queue.BatchSchema, set()),
    (outputs.BatchList, queue.BatchListSchema, set()),
    (outputs.Command, queue.CommandSchema, set()),
    (outputs.Counts, queue.CountsSchema, set()),
])
def test_result_type_has_the_fields_of_the_http_schema(typed, schema, extra):
    expected = set(schema().fields) | extra
    if typed is outputs.IssueCard:
        expected -= SEARCH_ONLY  # the card's schema extends the list item's; a card has none
    assert set(typed.__annotations__) == expected


def test_queued_batch_covers_the_batch_and_its_preview():
    assert set(outputs.QueuedBatch.__annotations__) == set(queue.BatchSchema().fields) | {'dry_run'}
    assert set(outputs.QueuedCommand.__annotations__) == set(queue.CommandSchema().fields)


def test_search_item_is_a_projection_of_the_issue():
    issue = set(mirror.IssueOutSchema().fields) | {'snippet'}
    renamed = {'updated': 'jira_updated', 'has_note': 'note'}
    assert {renamed.get(name, name) for name in outputs.SearchItem.__annotations__} <= issue


def test_fetch_answer_says_what_the_http_status_says():
    assert set(outputs.FetchAnswer.__annotations__) == \
        set(attachments.FetchAnswerSchema().fields) | {'enqueued'}


def test_settings_type_has_every_key_of_get_settings():
    assert set(outputs.Settings.__annotations__) == set(settings.SettingsSchema().fields)
