"""Schemas of the queue endpoints (contract §9). Documentation only: hublib validates batches,
claims and reports in plain Python (one rule, one place; command errors name
``commands[<i>].params.<field>``)."""
from __future__ import annotations

from marshmallow import Schema, fields, validate

from hublib import modules

COMMAND_STATUSES = ('queued', 'claimed', 'done', 'failed', 'skipped', 'cancelled',
                    'confirmed_by_state')
REPORT_STATUSES = ('done', 'failed', 'skipped', 'confirmed_by_state')
# From the module registry, so a new module or command type needs no edit here.
AGENTS = tuple(modules.MODULES)
COMMAND_TYPES = tuple(name for module in modules.MODULES.values() for name in module.command_types)
BATCH_STATUSES = ('queued', 'running', 'cancelled', 'done')


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
    status = fields.String(required=True, validate=validate.OneOf(COMMAND_STATUSES))
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


class BatchesQuerySchema(Schema):
    status = fields.String(validate=validate.OneOf(BATCH_STATUSES))
    project = fields.String()
    limit = fields.Integer(validate=validate.Range(1, 1000),
                           metadata={'description': 'по умолчанию 50'})
    cursor = fields.String()


class ClaimSchema(Schema):
    agent = fields.String(required=True, validate=validate.OneOf(AGENTS))
    agent_version = fields.String(allow_none=True)
    settings_version = fields.Integer(allow_none=True)
    last_jira_call_at = fields.String(allow_none=True)


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


class ReportSchema(Schema):
    agent = fields.String(required=True, validate=validate.OneOf(AGENTS))
    status = fields.String(required=True, validate=validate.OneOf(REPORT_STATUSES))
    result = fields.Dict(allow_none=True)
    error = fields.String(allow_none=True, metadata={'description': 'обрезается до 1500 символов'})
    jira_calls = fields.Integer(validate=validate.Range(min=0))
    rate_limited = fields.Integer(validate=validate.Range(min=0))


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
