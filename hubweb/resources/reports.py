"""Reports from the change history (contract §17): a sprint's report, cumulative flow, cycle time
and velocity of a project. Each is one hublib call with the typed query of its hublib schema."""
from __future__ import annotations

from hublib import reports
from hublib.db import Hub

from ..openapi import operation
from ..schemas import reports as schemas
from . import Call

SPRINT_ID = {'sprint_id': 'спринта {} нет на доске проекта'}

SPRINT_REPORT = operation(
    'Отчёт о спринте', response=schemas.SprintReportSchema,
    description='Взятые в спринт, добавленные, убранные, выполненные и невыполненные задачи, суммы '
                'их story points и burndown по дням в tz, восстановленные по журналу изменений. '
                'Спринта нет на доске проекта — 404; спринт ещё не начат — 409.')
FLOW = operation(
    'Накопительная диаграмма потока', response=schemas.FlowSchema,
    description='По дням от since до until включительно (по умолчанию 30 дней по сегодня в tz): '
                'свои задачи проекта, существовавшие на конец дня, по колонкам доски их '
                'тогдашнего статуса; период не длиннее 366 дней.')
CYCLE_TIME = operation(
    'Время выполнения задач', response=schemas.CycleTimeSchema,
    description='Свои задачи проекта, выполненные на until, последний вход которых в статус '
                '«готово» попал в [since, until) (по умолчанию последние 90 дней): lead и cycle '
                'time в днях, перцентили p50/p85/p95 по ближайшему рангу.')
VELOCITY = operation(
    'Скорость команды', response=schemas.VelocitySchema,
    description='Последние закрытые спринты доски, старые первыми: взято и выполнено задач и '
                'story points — как в отчёте о каждом из них.')


def routes(hub: Hub) -> list[tuple[str, object]]:
    return [
        ('/projects/{label}/sprints/{sprint_id}/report', Call(
            hub, reports.sprint_report, query=reports.SprintReportQuery, ids=SPRINT_ID,
            doc=SPRINT_REPORT)),
        ('/projects/{label}/flow', Call(hub, reports.project_flow, query=reports.FlowQuery,
                                        doc=FLOW)),
        ('/projects/{label}/cycle-time', Call(hub, reports.cycle_time,
                                              query=reports.CycleTimeQuery, doc=CYCLE_TIME)),
        ('/projects/{label}/velocity', Call(hub, reports.velocity, query=reports.VelocityQuery,
                                            doc=VELOCITY)),
    ]
