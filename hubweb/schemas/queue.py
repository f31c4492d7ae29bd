"""Response schemas of the queue endpoints (contract §9), for the API document.

Request bodies and queries are hublib's own schemas (``batches.batch_schema(hub)``,
``batches.BatchesQuery``, ``claims.ClaimBody``, ``claims.ReportBody``), which validate them;
``BatchCreateSchema`` here only stands in for ``batches.batch_schema(hub)`` until the document is
generated per hub, with each command's params as a ``oneOf`` by ``type``.
"""
from __future__ import annotations

from marshmallow import Schema, fields, validate

from hublib import modules
from hublib.batches import BATCH_STATUSES, STATUSES

# From the module registry, so a new module or command type needs no edit here.
COMMAND_TYPES = tuple(modules.COMMAND_TYPES)


class CommandInSchema(Schema):
    type = fields.String(required=True, validate=validate.OneOf(COMMAND_TYPES))
    params = fields.Dict(required=True, metadata={'description': 'параметры типа (contract §9.2)'})
    depends_on = fields.Integer(allow_none=True, metadata={
        'description': 'seq (с 1) более ранней команды этого пакета'})


class BatchCreateSchema(Schema):
    title = fields.String(required=True)
    author = fields.String(allow_none=True)
    project = fields.String(allow_none=True)
    commands = fields.List(fields.Nested(CommandInSchema), required=True)


class CommandSchema(Schema):
    id = fields.Integer(required=True)
    batch_id = fields.Integer(required=True)
    seq = fields.Integer(required=True)
    type = fields.String(required=True)
    params = fields.Dict(required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    claimed_at = fields.String(allow_none=True)
    deliveries = fields.Integer(required=True)
    finished_at = fields.String(allow_none=True)
    result = fields.Dict(allow_none=True)
    error = fields.String(allow_none=True)
    jira_calls = fields.Integer(required=True)
    rate_limited = fields.Integer(required=True)
    pause_seconds = fields.Integer(allow_none=True)
    depends_on = fields.Integer(allow_none=True)


class CountsSchema(Schema):
    queued = fields.Integer()
    claimed = fields.Integer()
    done = fields.Integer()
    failed = fields.Integer()
    skipped = fields.Integer()
    cancelled = fields.Integer()
    confirmed_by_state = fields.Integer()


class BatchSummarySchema(Schema):
    id = fields.Integer(required=True)
    title = fields.String(required=True)
    author = fields.String(allow_none=True)
    project = fields.String(allow_none=True)
    created_at = fields.String(required=True)
    cancelled_at = fields.String(allow_none=True)
    estimate_seconds = fields.Integer(allow_none=True)
    status = fields.String(required=True, validate=validate.OneOf(BATCH_STATUSES))
    counts = fields.Nested(CountsSchema, required=True)


class BatchSchema(BatchSummarySchema):
    commands = fields.List(fields.Nested(CommandSchema), required=True)


class BatchListSchema(Schema):
    items = fields.List(fields.Nested(BatchSummarySchema), required=True)
    next_cursor = fields.String(allow_none=True)


class DeliverySchema(Schema):
    id = fields.Integer(required=True)
    batch_id = fields.Integer(required=True)
    seq = fields.Integer(required=True)
    type = fields.String(required=True)
    params = fields.Dict(required=True, metadata={'description': 'временные ключи уже заменены'})
    deliveries = fields.Integer(required=True)
    pause_seconds = fields.Integer(required=True)


class ClaimResultSchema(Schema):
    command = fields.Nested(DeliverySchema, allow_none=True, required=True)
    settings_version = fields.Integer(allow_none=True, required=True)


class ReportResultSchema(CommandSchema):
    late = fields.Boolean(required=True, metadata={
        'description': 'отчёт о команде, уже failed или cancelled: статус не меняется'})


class RedeliveredSchema(Schema):
    id = fields.Integer(required=True)
    type = fields.String(required=True)
    claimed_at = fields.String(allow_none=True)
    deliveries = fields.Integer(required=True)


class AgentSchema(Schema):
    agent = fields.String(required=True)
    online = fields.Boolean(required=True)
    last_seen_at = fields.String(allow_none=True)
    agent_version = fields.String(allow_none=True)
    settings_version = fields.Integer(allow_none=True)
    current_command_id = fields.Integer(allow_none=True)
    last_call_at = fields.String(allow_none=True)
    redelivered = fields.List(fields.Nested(RedeliveredSchema), required=True)


class AgentListSchema(Schema):
    items = fields.List(fields.Nested(AgentSchema), required=True)
