"""Response schemas of the queue endpoints (contract §9), for the API document.

Request bodies and queries are hublib's own schemas (``batches.batch_schema(hub)``,
``batches.BatchesQuery``, ``claims.ClaimBody``, ``claims.ReportBody``), which validate them.
"""
from __future__ import annotations

from marshmallow import fields, validate

from hublib.statuses import BATCH_STATUSES, STATUSES

from . import integers, page_of, response, strings

_NULLABLE = {'allow_none': True}

CommandSchema = response(
    'Command', integers('id batch_id seq deliveries jira_calls rate_limited', required=True),
    integers('pause_seconds depends_on', **_NULLABLE), strings('type', required=True),
    strings('claimed_at finished_at error', **_NULLABLE),
    params=fields.Dict(required=True), result=fields.Dict(**_NULLABLE),
    status=fields.String(required=True, validate=validate.OneOf(STATUSES)))
CountsSchema = response('Counts', integers(' '.join(STATUSES)))
BatchSummarySchema = response(
    'BatchSummary', integers('id', required=True), strings('title created_at', required=True),
    strings('author project cancelled_at', **_NULLABLE), integers('estimate_seconds', **_NULLABLE),
    retry_of=fields.Integer(allow_none=True, metadata={
        'description': 'id пакета, неудавшиеся команды которого повторяет этот'}),
    retried_by=fields.Integer(allow_none=True, metadata={
        'description': 'id повтора этого пакета (пакет повторяется один раз), иначе null'}),
    status=fields.String(required=True, validate=validate.OneOf(BATCH_STATUSES)),
    counts=fields.Nested(CountsSchema, required=True))
BatchSchema = response('Batch', base=BatchSummarySchema,
                       commands=fields.List(fields.Nested(CommandSchema), required=True))
BatchListSchema = page_of('BatchList', BatchSummarySchema)
PreviewCommandSchema = response(
    'PreviewCommand', base=CommandSchema, id=fields.Integer(allow_none=True, required=True),
    batch_id=fields.Integer(allow_none=True, required=True),
    depends_on=fields.Integer(allow_none=True, metadata={'description': 'seq зависимости'}))
BatchPreviewSchema = response(
    'BatchPreview', base=BatchSummarySchema, id=fields.Integer(allow_none=True, required=True),
    commands=fields.List(fields.Nested(PreviewCommandSchema), required=True),
    dry_run=fields.Boolean(required=True, metadata={'description': 'всегда true: ничего не '
                                                                   'сохранено'}))
TempKeySchema = response('TempKey', temp_key=fields.String(required=True), temp_keys=fields.List(
    fields.String(), required=True))

DeliverySchema = response(
    'Delivery', integers('id batch_id seq deliveries pause_seconds', required=True),
    strings('type', required=True),
    params=fields.Dict(required=True, metadata={'description': 'временные ключи уже заменены'}))
ClaimResultSchema = response('ClaimResult', integers('settings_version', allow_none=True,
                                                     required=True),
                             command=fields.Nested(DeliverySchema, allow_none=True, required=True))
ReportResultSchema = response('ReportResult', base=CommandSchema, late=fields.Boolean(
    required=True, metadata={'description': 'отчёт о команде, уже failed или cancelled: статус '
                                            'не меняется'}))

RedeliveredSchema = response('Redelivered', integers('id deliveries', required=True),
                             strings('type', required=True), strings('claimed_at', **_NULLABLE))
AgentSchema = response(
    'Agent', strings('agent', required=True), online=fields.Boolean(required=True),
    redelivered=fields.List(fields.Nested(RedeliveredSchema), required=True),
    **strings('last_seen_at agent_version last_call_at', **_NULLABLE),
    **integers('settings_version current_command_id', **_NULLABLE))
AgentListSchema = page_of('AgentList', AgentSchema, paged=False)
