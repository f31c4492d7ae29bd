"""The mirror: agent ingest (``/agent/state``, ``/agent/history``, ``/agent/boards``) and the
interfaces' reads (issues, changes, sync journal, project boards and sprints).

Ingest bodies go to hublib raw (its fast validators check a page of 100 issues in plain Python);
query strings become typed values through hublib's query schemas.
"""
from __future__ import annotations

import falcon

from hublib import history, mirror, reads
from hublib.db import Hub

from ..openapi import operation
from ..media import load_query, object_body, typed_body
from ..schemas import mirror as schemas
from . import Call, Resource


class Ingest(Resource):
    """``POST`` of an agent's page: ``ingest(hub, agent, command_id, body[items])``.

    ``typed``: hublib's msgspec type of the page in the agent's usual shape, decoded in one pass
    (:func:`~hubweb.media.typed_body`); without it, or for a body of another shape, the JSON
    object goes to hublib as it is."""

    def __init__(self, hub: Hub, ingest, items: str, doc: dict, typed: type | None = None):
        super().__init__(hub)
        self.ingest, self.items, self.typed = ingest, items, typed
        self.DOC = {'post': doc}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = object_body(req) if self.typed is None else typed_body(req, self.typed)
        if type(body) is dict:
            resp.media = self.ingest(self.hub, body.get('agent'), body.get('command_id'),
                                     body.get(self.items))
        else:
            resp.media = self.ingest(self.hub, body.agent, body.command_id,
                                     getattr(body, self.items))


class IssuesCsv(Resource):
    """``GET /issues.csv``: hublib's chunks streamed as they come (contract §16).

    An export that fails after its first chunk: hublib's last chunk is the line ``# ошибка: …``
    and its error goes on out of the stream, after the headers; waitress then closes the
    connection without the chunked body's end (contract §20), so no client takes the file for
    complete. Nothing here catches it: the abort is the server's."""

    DOC = {'get': operation(
        'Задачи зеркала в CSV', query=reads.IssuesCsvQuery, response_content='text/csv',
        description='Все задачи запроса JQL (без limit), потоком: UTF-8 с BOM, запятые, кавычки '
                    'по RFC 4180, первая строка — столбцы fields; метки и спринты через ";". '
                    'Неверный запрос — 422 до первого байта. Сбой после первого байта — '
                    'последняя строка «# ошибка: …», и соединение закрывается без завершающего '
                    'блока: файл неполный.')}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        chunks = reads.issues_csv(self.hub, **load_query(reads.IssuesCsvQuery, req))
        resp.content_type = 'text/csv; charset=utf-8'
        resp.downloadable_as = 'issues.csv'
        resp.stream = (chunk.encode() for chunk in chunks)


def routes(hub: Hub) -> list[tuple[str, object]]:
    return [
        ('/agent/state', Ingest(hub, mirror.ingest_state, 'issues', operation(
            'Загрузка состояния задач от агента', body=mirror.StateBody,
            response=schemas.StateResultSchema,
            description='Страница задач выданной команды refresh; одна транзакция.'))),
        ('/agent/history', Ingest(hub, history.ingest_history, 'items', operation(
            'Приём журнала изменений от агента', body=history.HistoryBody,
            response=schemas.HistoryResultSchema,
            description='Вставка по (history_id, seq); сохранённая строка не меняется.'),
            typed=history.HistoryPage)),
        ('/agent/boards', Ingest(hub, mirror.ingest_boards, 'boards', operation(
            'Приём досок и спринтов от агента', body=mirror.BoardsBody,
            response=schemas.BoardsResultSchema))),
        ('/issues', Call(hub, reads.issues, query=reads.IssuesQuery, doc=operation(
            'Задачи зеркала', response=schemas.IssueListSchema,
            description='jql= — запрос JQL (docs/jql.md) с его ORDER BY; без ORDER BY в естественном '
                        'порядке ключей (AURORA-2 раньше AURORA-10), с ~ или text= — по '
                        'релевантности; project= — разрез проекта, neighbor относительно проекта; '
                        'остальные фильтры — через AND с запросом.'))),
        ('/issues/count', Call(hub, reads.issue_count, query=reads.IssueCountQuery, doc=operation(
            'Число задач запроса JQL', response=schemas.IssueCountSchema))),
        ('/issues/facets', Call(hub, reads.issue_facets, query=reads.IssueFacetsQuery,
                                doc=operation(
            'Значения полей среди задач запроса JQL', response=schemas.IssueFacetsSchema,
            description='status, assignee, issue_type, priority, labels: значения как в зеркале '
                        '(null — без значения) с числом задач, по убыванию числа. chosen= — '
                        'значения, выбранные в списках: каждый список считает задачи запроса, '
                        'подходящие под выбор остальных списков, без своего (одним запросом '
                        'для всех списков).'))),
        ('/issues.csv', IssuesCsv(hub)),
        ('/issues/{key}', Call(hub, reads.issue_card, doc=operation(
            'Карточка задачи', response=schemas.IssueCardSchema,
            description='Поля, заметка, связи в обе стороны, комментарии, вложения с состоянием, '
                        'спринты.'))),
        ('/issues/{key}/changes', Call(hub, reads.issue_changes, query=reads.IssueChangesQuery,
                                       doc=operation('Журнал изменений задачи',
                                                     response=schemas.ChangeListSchema))),
        ('/changes', Call(hub, reads.change_feed, query=reads.ChangesQuery, doc=operation(
            'Лента изменений', response=schemas.ChangeListSchema,
            description='Строки с at, по at, history_id, seq; since включительно, until — нет.'))),
        ('/sync-runs', Call(hub, reads.sync_runs, query=reads.PageQuery, doc=operation(
            'Журнал синхронизаций', response=schemas.SyncRunListSchema,
            description='Новые первыми; query — первые 200 символов (query_truncated), '
                        'целиком — в GET /sync-runs/{run_id}.'))),
        ('/sync-runs/{run_id}', Call(hub, reads.sync_run, ids={'run_id': reads.SYNC_RUN_NOT_FOUND},
                                     doc=operation('Запуск синхронизации с запросом целиком',
                                                   response=schemas.SyncRunSchema))),
        ('/projects/{label}/board', Call(hub, reads.project_board, query=reads.BoardQuery, doc=operation(
            'Доска проекта', response=schemas.BoardSchema,
            description='Колонки со своими задачами проекта (sprint= — только задачи спринта); '
                        f'карточки — первые {reads.CARDS_PER_COLUMN} задач колонки; выполнены — '
                        'статусы последней колонки.'))),
        ('/projects/{label}/sprints', Call(hub, reads.project_sprints, doc=operation(
            'Спринты доски проекта', response=schemas.SprintListSchema))),
    ]
