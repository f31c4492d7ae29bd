"""Report tools (contract §17, §14a): a sprint's report, the cumulative flow, cycle time and
velocity of a project. Each makes the hublib call of the matching HTTP resource with the same
arguments, so the figures are the HTTP API's; what it adds is ``as_of`` (how fresh the mirror the
report was rebuilt from is)."""
from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field, StrictInt

from hublib import reports, syncjournal
from hublib.paging import page_limit

from ...schemas.assistant import (CycleTimeResultSchema, FlowResultSchema,
                                  SprintReportResultSchema, VelocityResultSchema)
from ..tooling import READ_ONLY, Cursor, Label, OptionalText, Toolbox, hub_of, identifier, limit

TOOLS = Toolbox()
# Items of a cycle-time page: fewer than over HTTP by default, an assistant reads every byte.
CYCLE_LIMIT = (100, reports.CYCLE_LIMIT_MAX)

SprintId = identifier('id спринта доски (project_sprints)')
TimeZone = Annotated[OptionalText, Field(description='часовой пояс IANA для границ суток, '
                                                     'по умолчанию UTC')]
Day = Annotated[OptionalText, Field(description='дата ГГГГ-ММ-ДД')]
DayOrTime = Annotated[OptionalText, Field(description='дата (начало суток в tz) или время ISO')]
Sprints = Annotated[StrictInt | None, Field(
    description=f'1–{reports.VELOCITY_MAX}, по умолчанию {reports.VELOCITY_DEFAULT}',
    json_schema_extra={'minimum': 1, 'maximum': reports.VELOCITY_MAX})]


def stamped(hub, report: dict) -> dict:
    """``report`` with ``as_of``: when the newest successful refresh of the mirror finished."""
    return {**report, 'as_of': syncjournal.mirror_as_of(hub)}


@TOOLS.tool('Отчёт о спринте', READ_ONLY, SprintReportResultSchema)
def sprint_report(ctx: Context, label: Label, sprint_id: SprintId, tz: TimeZone = None) -> dict:
    """Отчёт о спринте по журналу изменений: взятые в начале (committed), добавленные, убранные,
    выполненные и невыполненные задачи, суммы story points и burndown по дням. Спринт ещё не
    начат — ошибка. Как GET /projects/{label}/sprints/{sprint_id}/report."""
    hub = hub_of(ctx)
    return stamped(hub, reports.sprint_report(hub, label, sprint_id, tz=tz))


@TOOLS.tool('Накопительная диаграмма потока', READ_ONLY, FlowResultSchema)
def project_flow(ctx: Context, label: Label, since: Day = None, until: Day = None,
                 tz: TimeZone = None) -> dict:
    """По дням от since до until (по умолчанию 30 дней по сегодня): свои задачи проекта по
    колонкам доски их тогдашнего статуса; unmapped — статус вне колонок; не больше 366 дней.
    Как GET /projects/{label}/flow."""
    hub = hub_of(ctx)
    return stamped(hub, reports.project_flow(hub, label, since=since, until=until, tz=tz))


@TOOLS.tool('Время выполнения', READ_ONLY, CycleTimeResultSchema)
def cycle_time(ctx: Context, label: Label, since: DayOrTime = None, until: DayOrTime = None,
               tz: TimeZone = None, limit: limit(*CYCLE_LIMIT) = CYCLE_LIMIT[0],
               cursor: Cursor = None) -> dict:
    """Задачи проекта, выполненные в [since, until) (по умолчанию 90 дней): lead_days (от
    создания) и cycle_days (от начала работы), постранично (next_cursor → cursor); summary —
    число задач и перцентили p50/p85/p95 по всем задачам окна. Как GET /projects/{label}/cycle-time."""
    hub = hub_of(ctx)
    return stamped(hub, reports.cycle_time(hub, label, since=since, until=until, tz=tz,
                                           limit=page_limit(limit, *CYCLE_LIMIT), cursor=cursor))


@TOOLS.tool('Скорость команды', READ_ONLY, VelocityResultSchema)
def velocity(ctx: Context, label: Label,
             sprints: Sprints = reports.VELOCITY_DEFAULT) -> dict:
    """Последние закрытые спринты доски, старые первыми: взято и выполнено задач и story points,
    как в отчёте о каждом. Как GET /projects/{label}/velocity."""
    hub = hub_of(ctx)
    return stamped(hub, reports.velocity(
        hub, label, sprints=reports.VELOCITY_DEFAULT if sprints is None else sprints))
