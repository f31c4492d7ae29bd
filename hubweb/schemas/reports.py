"""Response schemas of the reports (contract §17); the query strings are hublib's own schemas
(``hublib.reports``). Every key is always present: ``required`` marks them for the document and
for the MCP tools' output schemas derived from these."""
from __future__ import annotations

from marshmallow import fields

from . import integers, page_of, response, strings

_ALWAYS = {'required': True}
_NULLABLE = {'required': True, 'allow_none': True}
_DAY = {'format': 'date', 'description': 'день ГГГГ-ММ-ДД в часовом поясе tz'}
_TIME = {'format': 'date-time', 'description': 'время UTC'}
LISTS = ('committed', 'added', 'removed', 'completed', 'not_completed')


def _numbers(names: str, **options) -> dict[str, fields.Field]:
    return {name: fields.Float(**options) for name in names.split()}


def _keys(description: str) -> fields.List:
    return fields.List(fields.String(), required=True, metadata={'description': description})


ReportSprintSchema = response(
    'ReportSprint', integers('sprint_id', **_ALWAYS),
    strings('name state start_date end_date complete_date goal', **_NULLABLE))
SprintPointsSchema = response('SprintPoints', _numbers(' '.join(LISTS), **_ALWAYS))
BurndownDaySchema = response(
    'BurndownDay', date=fields.String(**_ALWAYS, metadata=_DAY),
    remaining_issues=fields.Integer(**_ALWAYS), remaining_points=fields.Float(**_ALWAYS))
SprintReportSchema = response(
    'SprintReport', sprint=fields.Nested(ReportSprintSchema, **_ALWAYS),
    start=fields.String(**_ALWAYS, metadata={**_TIME, 'description': 'start_date спринта, UTC'}),
    end=fields.String(**_ALWAYS, metadata={**_TIME, 'description': 'complete_date, иначе сейчас'}),
    committed=_keys('в спринте в момент start'),
    added=_keys('вошли в спринт в (start, end], не будучи в нём в start'),
    removed=_keys('из committed и added, но не в спринте в end'),
    completed=_keys('в спринте в end и выполнены в end'),
    not_completed=_keys('в спринте в end и не выполнены в end'),
    points=fields.Nested(SprintPointsSchema, **_ALWAYS,
                         metadata={'description': 'суммы текущих story_points (null — 0)'}),
    burndown=fields.List(fields.Nested(BurndownDaySchema), **_ALWAYS,
                         metadata={'description': 'на конец каждого дня от start до end'}))

FlowDaySchema = response(
    'FlowDay', date=fields.String(**_ALWAYS, metadata=_DAY),
    counts=fields.List(fields.Integer(), **_ALWAYS,
                       metadata={'description': 'задач в каждой колонке, в порядке columns'}),
    unmapped=fields.Integer(**_ALWAYS, metadata={'description': 'статус ни в одной колонке'}))
FlowSchema = response(
    'Flow', columns=fields.List(fields.String(), **_ALWAYS,
                                metadata={'description': 'колонки доски по порядку'}),
    days=fields.List(fields.Nested(FlowDaySchema), **_ALWAYS))

CycleTimeItemSchema = response(
    'CycleTimeItem', strings('key done', **_ALWAYS), strings('created started', **_NULLABLE),
    _numbers('lead_days cycle_days', **_NULLABLE))
PercentilesSchema = response('Percentiles', _numbers('p50 p85 p95', **_NULLABLE))
CycleTimeSummarySchema = response(
    'CycleTimeSummary', integers('count', **_ALWAYS),
    lead_days=fields.Nested(PercentilesSchema, **_ALWAYS),
    cycle_days=fields.Nested(PercentilesSchema, **_ALWAYS))
CycleTimeSchema = response(
    'CycleTime', items=fields.List(fields.Nested(CycleTimeItemSchema), **_ALWAYS, metadata={
        'description': 'страница задач (limit, cursor) в естественном порядке ключей'}),
    next_cursor=fields.String(**_NULLABLE, metadata={
        'description': 'cursor следующей страницы; null — страница последняя'}),
    summary=fields.Nested(CycleTimeSummarySchema, **_ALWAYS, metadata={
        'description': 'по всем задачам окна, не только по странице'}))

VelocityItemSchema = response(
    'VelocityItem', integers('sprint_id committed_issues completed_issues', **_ALWAYS),
    strings('name', **_NULLABLE), _numbers('committed_points completed_points', **_ALWAYS))
VelocitySchema = page_of('Velocity', VelocityItemSchema, paged=False)
