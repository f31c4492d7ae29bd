"""The mirror: agent ingest (``/agent/state``, ``/agent/history``, ``/agent/boards``) and the
interfaces' reads (issues, changes, sync journal, project boards and sprints).

Ingest bodies go to hublib raw (it validates a page of 100 issues in plain Python); query strings
go raw as well, hublib checks them, so a bad ``limit`` is a 422 naming ``limit`` on every road.
"""
from __future__ import annotations

import falcon

from hublib import history, mirror, reads
from hublib.db import Hub

from ..openapi import operation
from ..schemas import object_body, query_values
from ..schemas import mirror as schemas

ISSUE_QUERY = ('project', 'status', 'assignee', 'neighbor', 'q', 'updated_since', 'limit', 'cursor')
CHANGES_QUERY = ('since', 'until', 'key', 'project', 'field', 'limit', 'cursor')
ISSUE_CHANGES_QUERY = ('since', 'until', 'field', 'limit', 'cursor')


class StateResource:
    DOC = {'post': operation('Загрузка состояния задач от агента', body=schemas.StateSchema,
                             response=schemas.StateResultSchema,
                             description='Страница задач выданной команды refresh; одна транзакция.')}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = object_body(req)
        resp.media = mirror.ingest_state(self.hub, body.get('agent'), body.get('command_id'),
                                         body.get('issues'))


class HistoryResource:
    DOC = {'post': operation('Приём журнала изменений от агента', body=schemas.HistorySchema,
                             response=schemas.HistoryResultSchema,
                             description='Вставка по (history_id, seq); сохранённая строка не меняется.')}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = object_body(req)
        resp.media = history.ingest_history(self.hub, body.get('agent'), body.get('command_id'),
                                            body.get('items'))


class BoardsResource:
    DOC = {'post': operation('Приём досок и спринтов от агента', body=schemas.BoardsSchema,
                             response=schemas.BoardsResultSchema)}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = object_body(req)
        resp.media = mirror.ingest_boards(self.hub, body.get('agent'), body.get('command_id'),
                                          body.get('boards'))


class IssuesResource:
    DOC = {'get': operation('Задачи зеркала', query=schemas.IssuesQuerySchema,
                            response=schemas.IssueListSchema,
                            description='Постранично по ключу; project= — разрез проекта, '
                                        'neighbor относительно проекта.')}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = reads.issues(self.hub, **query_values(req, ISSUE_QUERY))


class IssueResource:
    DOC = {'get': operation('Карточка задачи', response=schemas.IssueCardSchema,
                            description='Поля, заметка, связи в обе стороны, комментарии, '
                                        'вложения с состоянием, спринты.')}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_get(self, req: falcon.Request, resp: falcon.Response, key: str) -> None:
        resp.media = reads.issue_card(self.hub, key)


class IssueChangesResource:
    DOC = {'get': operation('Журнал изменений задачи', query=schemas.IssueChangesQuerySchema,
                            response=schemas.ChangeListSchema)}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_get(self, req: falcon.Request, resp: falcon.Response, key: str) -> None:
        resp.media = reads.issue_changes(self.hub, key, **query_values(req, ISSUE_CHANGES_QUERY))


class ChangesResource:
    DOC = {'get': operation('Лента изменений', query=schemas.ChangesQuerySchema,
                            response=schemas.ChangeListSchema,
                            description='Строки с at, по at, history_id, seq; since включительно, '
                                        'until — нет.')}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = reads.change_feed(self.hub, **query_values(req, CHANGES_QUERY))


class SyncRunsResource:
    DOC = {'get': operation('Журнал синхронизаций', query=schemas.PageQuerySchema,
                            response=schemas.SyncRunListSchema, description='Новые первыми.')}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = reads.sync_runs(self.hub, **query_values(req, ('limit', 'cursor')))


class ProjectBoardResource:
    DOC = {'get': operation('Доска проекта', response=schemas.BoardSchema,
                            description='Колонки со своими задачами проекта; выполнены — '
                                        'статусы последней колонки.')}

    def __init__(self, hub: Hub):
        self.hub = hub

    def on_get(self, req: falcon.Request, resp: falcon.Response, label: str) -> None:
        resp.media = reads.project_board(self.hub, label)


class ProjectSprintsResource:
    DOC = {'get': operation('Спринты доски проекта', response=schemas.SprintListSchema)}

    def __init__(self, hub: Hub):
        self.hub = hub

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
