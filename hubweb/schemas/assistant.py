"""Response shapes only the MCP tools give: the HTTP shapes plus what an assistant needs beside
them (compact search items, texts cut to ``max_chars``, the mirror's freshness, the preview of a
batch). Each is built from the HTTP schema it extends, so a field added there reaches both.
"""
from __future__ import annotations

from marshmallow import fields

from . import page_of, response, strings
from .attachments import FetchAnswerSchema
from .mirror import IssueCardSchema, IssueOutSchema
from .queue import BatchPreviewSchema
from .reports import CycleTimeSchema, FlowSchema, SprintReportSchema, VelocitySchema

# Freshness (contract §14a): finished_at of the newest successful refresh, null before the first.
AS_OF = {'as_of': fields.String(required=True, allow_none=True)}


def with_as_of(name: str, schema) -> type:
    """``schema`` plus ``as_of``."""
    return response(name, base=schema, **AS_OF)


# search_issues: enough to pick an issue; get_issue gives the rest.
SEARCH_ITEM_FIELDS = ('key', 'issue_type', 'summary', 'status', 'assignee', 'priority', 'labels',
                      'neighbor', 'fetched_at', 'snippet')
_ISSUE_FIELDS = IssueOutSchema().fields
SearchItemSchema = response(
    'SearchItem', {name: _ISSUE_FIELDS[name] for name in SEARCH_ITEM_FIELDS},
    strings('updated', allow_none=True), has_note=fields.Boolean(required=True))
SearchResultSchema = response('SearchResult', base=page_of('SearchPage', SearchItemSchema),
                              ranked_within=fields.Integer(), **AS_OF)

# get_issue and hub://issue/{key}: the card with long texts cut and the newest comments.
AssistantCardSchema = response(
    'AssistantCard', base=IssueCardSchema, truncated=fields.Boolean(required=True),
    truncated_fields=fields.List(fields.String(), required=True),
    comments_total=fields.Integer(required=True), **AS_OF)

# queue_batch: the batch as POST /batches answers, or its preview (dry_run: nothing stored, so no
# ids); the preview's shape takes both.
QueuedBatchSchema = BatchPreviewSchema

# fetch_attachment: enqueued says what the HTTP status (202 or 200) says.
FetchResultSchema = response('FetchResult', base=FetchAnswerSchema,
                             enqueued=fields.Boolean(required=True))

# The report tools: the HTTP API's reports, with the freshness of the mirror they were rebuilt from.
SprintReportResultSchema = with_as_of('SprintReportResult', SprintReportSchema)
FlowResultSchema = with_as_of('FlowResult', FlowSchema)
CycleTimeResultSchema = with_as_of('CycleTimeResult', CycleTimeSchema)
VelocityResultSchema = with_as_of('VelocityResult', VelocitySchema)
