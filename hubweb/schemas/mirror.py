"""Response schemas of the mirror endpoints (documentation of what hublib returns). Request bodies
and query strings are hublib's own schemas (``hublib.mirror``, ``hublib.history``, ``hublib.reads``)."""
from __future__ import annotations

from marshmallow import fields, validate

from hublib.reads import CARDS_PER_COLUMN

from . import integers, page_of, response, strings
from .attachments import STATES
from .notes import NoteSchema

_NULLABLE = {'allow_none': True}

# --- agent ingest answers (contract §8.1–8.3) ----------------------------------------------------
# Times stored that to_utc cannot read (hublib.mirror.UnparsedTimes): 0 when none.
_UNPARSED = {'unparsed_times': fields.Integer(required=True, metadata={
    'description': 'сколько времён Jira на странице не разобрать: сохранены как присланы, '
                   'приведённое время (at, created_at) — null, строка журнала не попадает в '
                   'ленту; 0 — все разобраны'})}
StateResultSchema = response('StateResult', integers('issues links', required=True), _UNPARSED)
HistoryResultSchema = response('HistoryResult', integers('inserted ignored', required=True),
                               _UNPARSED)
BoardsResultSchema = response('BoardsResult', integers('boards sprints', required=True),
                              _UNPARSED)

# --- interfaces' reads (contract §10) ------------------------------------------------------------
IssueOutSchema = response(
    'IssueOut', strings('key', required=True),
    strings('id issue_type summary description status priority assignee reporter duedate '
            'planned_start planned_end epic_key sprint rank created jira_updated fetched_at',
            **_NULLABLE),
    labels=fields.List(fields.String()), story_points=fields.Float(**_NULLABLE),
    neighbor=fields.Boolean(), note=fields.Nested(NoteSchema, **_NULLABLE),
    snippet=fields.String(metadata={'description': 'только с text=: фрагмент текста, найденные '
                                                   'слова в [квадратных скобках]'}))
IssueListSchema = page_of('IssueList', IssueOutSchema, ranked_within=fields.Integer(metadata={
    'description': 'только когда совпадений больше, чем ранжируется за раз (частое слово в '
                   'большом зеркале): релевантность упорядочивает задачи внутри окон по столько '
                   'совпадений, начиная с самых новых; курсор проходит все совпадения '
                   '(docs/jql.md)'}))

IssueCountSchema = response('IssueCount', integers('count', required=True))
FacetValueSchema = response('FacetValue', integers('count', required=True),
                            value=fields.String(allow_none=True, required=True))
IssueFacetsSchema = response('IssueFacets', **{
    name: fields.List(fields.Nested(FacetValueSchema), required=True)
    for name in ('status', 'assignee', 'issue_type', 'priority', 'labels')})

LinkOutSchema = response('LinkOut', strings('type key'), strings('summary status', **_NULLABLE, metadata={
    'description': 'связанной задачи; null, если её нет в зеркале'}))
LinksOutSchema = response('LinksOut', outward=fields.List(fields.Nested(LinkOutSchema)),
                          inward=fields.List(fields.Nested(LinkOutSchema)))
CommentOutSchema = response('CommentOut', strings('comment_id'),
                            strings('author created updated body created_at', **_NULLABLE))
AttachmentOutSchema = response(
    'AttachmentOut', strings('attachment_id key'), integers('size', **_NULLABLE),
    strings('filename mime_type author created created_at error', **_NULLABLE),
    state=fields.String(validate=validate.OneOf(STATES)))
IssueSprintOutSchema = response('IssueSprintOut', integers('sprint_id'),
                                strings('name state', **_NULLABLE))
IssueCardSchema = response(
    'IssueCard', base=IssueOutSchema, links=fields.Nested(LinksOutSchema),
    comments=fields.List(fields.Nested(CommentOutSchema)),
    attachments=fields.List(fields.Nested(AttachmentOutSchema)),
    sprints=fields.List(fields.Nested(IssueSprintOutSchema)))

ChangeSchema = response(
    'Change', strings('history_id key at fetched_at'), integers('seq'),
    strings('created author field field_id field_name from_value from_string to_value to_string',
            **_NULLABLE))
ChangeListSchema = page_of('ChangeList', ChangeSchema)

SyncRunSchema = response(
    'SyncRun', integers('id issues_count links_count jira_calls rate_limited'),
    integers('command_id', **_NULLABLE), strings('started_at kind'),
    strings('finished_at query history_at', **_NULLABLE),
    query_truncated=fields.Boolean(metadata={
        'description': 'в списке query обрезан до 200 символов; целиком — GET /sync-runs/{run_id}'}))
SyncRunListSchema = page_of('SyncRunList', SyncRunSchema)

BoardCardSchema = response('BoardCard', strings('key', required=True),
                           strings('summary issue_type priority assignee status', **_NULLABLE))
BoardColumnSchema = response('BoardColumn', strings('name', required=True),
                             statuses=fields.List(fields.String(), required=True),
                             issues=fields.List(fields.String(), required=True),
                             cards=fields.List(fields.Nested(BoardCardSchema), required=True,
                                               metadata={'description': 'первые задачи из issues '
                                                         f'(до {CARDS_PER_COLUMN}) с полями карточки '
                                                         'доски'}))
BoardSchema = response(
    'Board', strings('label'), integers('board_id', **_NULLABLE),
    strings('type fetched_at', **_NULLABLE), kanban_backlog=fields.Boolean(**_NULLABLE),
    columns=fields.List(fields.Nested(BoardColumnSchema), required=True),
    done_statuses=fields.List(fields.String(), required=True))
SprintOutSchema = response(
    'SprintOut', integers('sprint_id issues_count done_count'), integers('board_id', **_NULLABLE),
    strings('name state start_date end_date complete_date goal', **_NULLABLE),
    issues=fields.List(fields.String()))
SprintListSchema = page_of('SprintList', SprintOutSchema, paged=False)
