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
from ..schemas import load_query, object_body
from ..schemas import mirror as schemas
from . import Resource


class StateResource(Resource):
    DOC = {'post': operation('Загрузка состояния задач от агента', body=mirror.StateBody,
                             response=schemas.StateResultSchema,
                             description='Страница задач выданной команды refresh; одна транзакция.')}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = object_body(req)
        resp.media = mirror.ingest_state(self.hub, body.get('agent'), body.get('command_id'),
                                         body.get('issues'))


class HistoryResource(Resource):
    DOC = {'post': operation('Приём журнала изменений от агента', body=history.HistoryBody,
                             response=schemas.HistoryResultSchema,
                             description='Вставка по (history_id, seq); сохранённая строка не меняется.')}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = object_body(req)
        resp.media = history.ingest_history(self.hub, body.get('agent'), body.get('command_id'),
                                            body.get('items'))


class BoardsResource(Resource):
    DOC = {'post': operation('Приём досок и спринтов от агента', body=mirror.BoardsBody,
                             response=schemas.BoardsResultSchema)}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = object_body(req)
        resp.media = mirror.ingest_boards(self.hub, body.get('agent'), body.get('command_id'),
                                          body.get('boards'))


class IssuesResource(Resource):
    DOC = {'get': operation('Задачи зеркала', query=reads.IssuesQuery,
                            response=schemas.IssueListSchema,
                            description='В естественном порядке ключей (AURORA-2 раньше AURORA-10), '
                                        'с text= — по релевантности; project= — разрез проекта, '
                                        'neighbor относительно проекта.')}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = reads.issues(self.hub, **load_query(reads.IssuesQuery, req))


class IssueResource(Resource):
    DOC = {'get': operation('Карточка задачи', response=schemas.IssueCardSchema,
                            description='Поля, заметка, связи в обе стороны, комментарии, '
                                        'вложения с состоянием, спринты.')}

    def on_get(self, req: falcon.Request, resp: falcon.Response, key: str) -> None:
        resp.media = reads.issue_card(self.hub, key)


class IssueChangesResource(Resource):
    DOC = {'get': operation('Журнал изменений задачи', query=reads.IssueChangesQuery,
                            response=schemas.ChangeListSchema)}

    def on_get(self, req: falcon.Request, resp: falcon.Response, key: str) -> None:
        resp.media = reads.issue_changes(self.hub, key, **load_query(reads.IssueChangesQuery, req))


class ChangesResource(Resource):
    DOC = {'get': operation('Лента изменений', query=reads.ChangesQuery,
                            response=schemas.ChangeListSchema,
                            description='Строки с at, по at, history_id, seq; since включительно, '
                                        'until — нет.')}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = reads.change_feed(self.hub, **load_query(reads.ChangesQuery, req))


class SyncRunsResource(Resource):
    DOC = {'get': operation('Журнал синхронизаций', query=reads.PageQuery,
                            response=schemas.SyncRunListSchema, description='Новые первыми.')}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = reads.sync_runs(self.hub, **load_query(reads.PageQuery, req))


class ProjectBoardResource(Resource):
    DOC = {'get': operation('Доска проекта', response=schemas.BoardSchema,
                            description='Колонки со своими задачами проекта; выполнены — '
                                        'статусы последней колонки.')}

    def on_get(self, req: falcon.Request, resp: falcon.Response, label: str) -> None:
        resp.media = reads.project_board(self.hub, label)


class ProjectSprintsResource(Resource):
    DOC = {'get': operation('Спринты доски проекта', response=schemas.SprintListSchema)}

    def on_get(self, req: falcon.Request, resp: falcon.Response, label: str) -> None:
        resp.media = reads.project_sprints(self.hub, label)


def routes(hub: Hub) -> list[tuple[str, object]]:
    return [
        ('/agent/state', StateResource(hub)),
        ('/agent/history', HistoryResource(hub)),
        ('/agent/boards', BoardsResource(hub)),
        ('/issues', IssuesResource(hub)),
        ('/issues/{key}', IssueResource(hub)),
        ('/issues/{key}/changes', IssueChangesResource(hub)),
        ('/changes', ChangesResource(hub)),
        ('/sync-runs', SyncRunsResource(hub)),
        ('/projects/{label}/board', ProjectBoardResource(hub)),
        ('/projects/{label}/sprints', ProjectSprintsResource(hub)),
    ]
