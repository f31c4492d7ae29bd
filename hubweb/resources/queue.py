"""The command queue: batches and commands for interfaces, claim and report for agents, and the
agents' status (contract §9).

hublib validates batches, claims and reports with its own schemas, so every road (HTTP, MCP,
scripts) gets the same 422 naming the same field. Here a path id becomes an int (anything else is
the 404 of a missing one) and the query string becomes the typed values of hublib's query schema.
"""
from __future__ import annotations

import falcon

from hublib import batches, claims, idempotency
from hublib.db import Hub
from hublib.validation import load

from ..openapi import operation
from ..schemas import load_query, object_body, optional_object_body, path_int
from ..schemas import queue as schemas
from . import Call, Resource, idempotency_key, respond_with

BATCH_ID = {'batch_id': batches.BATCH_NOT_FOUND}
COMMAND_ID = {'command_id': batches.COMMAND_NOT_FOUND}


class BatchesResource(Resource):
    DOC = {
        'get': operation('Пакеты команд', query=batches.BatchesQuery,
                         response=schemas.BatchListSchema,
                         description='Новые сначала; status вычисляется из команд; '
                                     'курсор — next_cursor.'),
        # the body's schema depends on the settings (configured issue and link types)
        'post': operation('Поставить пакет команд', body=batches.batch_schema,
                          response={201: schemas.BatchSchema, 200: schemas.BatchPreviewSchema},
                          status=(201, 200), idempotent=True,
                          description='Каждая команда проверяется схемой своего типа; ошибка — '
                                      '422 с полем вида commands[1].params.summary, ничего не '
                                      'создано. depends_on — номер более ранней команды; '
                                      'временный ключ new:N в полях-ключах заводит более ранняя '
                                      'ensure_issue этого пакета; временный ключ, который '
                                      'заводит незавершённая ensure_issue другого пакета, — 422 '
                                      '(GET /temp-keys/next даёт свободный); вложения нет в '
                                      'зеркале — 422. Проекта нет — 404. "dry_run": true — 200 с '
                                      'пакетом, как он был бы поставлен, ничего не сохранено.'),
    }

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = batches.batches(self.hub, **load_query(batches.BatchesQuery, req))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        respond_with(resp, idempotency.queue_batch(self.hub, object_body(req),
                                                   key=idempotency_key(req)))


class CancelResource(Resource):
    DOC = {'post': operation('Отменить пакет', body=batches.CancelRequest, body_required=False,
                             response=schemas.BatchSchema, idempotent=True,
                             description='queued → cancelled; выданные завершатся отчётом. Повтор '
                                         'ничего не меняет; пакет, завершённый без отмены, — 409 '
                                         '«пакет уже завершён». Тело необязательно: {} или нет.')}

    def on_post(self, req: falcon.Request, resp: falcon.Response, batch_id: str) -> None:
        load(batches.CancelRequest, optional_object_body(req))  # a body, when sent, is checked
        respond_with(resp, idempotency.cancel_batch(
            self.hub, path_int(batch_id, batches.BATCH_NOT_FOUND), key=idempotency_key(req)))


class RetryResource(Resource):
    DOC = {'post': operation(
        'Повторить неудавшиеся команды пакета', body=batches.RetryBody, body_required=False,
        response=schemas.BatchSchema, status=201, idempotent=True,
        description='Новый пакет «Повтор: <название>» из копий команд failed и зависевших от них '
                    'skipped (depends_on и временные ключи пересчитаны); retry_of — id исходного. '
                    '409, если пакет ещё выполняется или неудавшихся команд нет. Тело '
                    'необязательно.')}

    def on_post(self, req: falcon.Request, resp: falcon.Response, batch_id: str) -> None:
        respond_with(resp, idempotency.retry_batch(
            self.hub, path_int(batch_id, batches.BATCH_NOT_FOUND), optional_object_body(req),
            key=idempotency_key(req)))


class ClaimResource(Resource):
    DOC = {'post': operation('Взять следующую команду (агент)', body=claims.ClaimBody,
                             response=schemas.ClaimResultSchema,
                             description='Одна транзакция BEGIN IMMEDIATE: довыдача потерянной '
                                         '(до 3 раз), автообновление, следующая команда.')}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = claims.submit_claim(self.hub, object_body(req))


class ReportResource(Resource):
    DOC = {'post': operation('Отчёт агента о команде', body=claims.ReportBody,
                             response=schemas.ReportResultSchema,
                             description='Поздний отчёт о failed/cancelled: статус прежний, '
                                         'late = true; повтор отчёта ничего не меняет.')}

    def on_post(self, req: falcon.Request, resp: falcon.Response, command_id: str) -> None:
        resp.media = claims.submit_report(
            self.hub, path_int(command_id, batches.COMMAND_NOT_FOUND), object_body(req))


def routes(hub: Hub) -> list[tuple[str, object]]:
    return [
        ('/batches', BatchesResource(hub)),
        ('/batches/{batch_id}', Call(hub, batches.batch, ids=BATCH_ID, doc=operation(
            'Пакет с командами', response=schemas.BatchSchema))),
        ('/batches/{batch_id}/cancel', CancelResource(hub)),
        ('/batches/{batch_id}/retry', RetryResource(hub)),
        ('/temp-keys/next', Call(hub, batches.next_temp_key, query=batches.TempKeysQuery,
                                 doc=operation(
            'Свободный временный ключ', response=schemas.TempKeySchema,
            description='Наименьший new:<n>, который не заводит незавершённая ensure_issue и под '
                        'которым нет заметки; temp_keys — count таких ключей подряд. Ключ не '
                        'резервируется: его занимает пакет, который его заводит.'))),
        ('/commands/{command_id}', Call(hub, batches.command, ids=COMMAND_ID, doc=operation(
            'Команда', response=schemas.CommandSchema))),
        ('/agent/claim', ClaimResource(hub)),
        ('/agent/commands/{command_id}/report', ReportResource(hub)),
        ('/agents', Call(hub, claims.agents, doc=operation(
            'Статус агентов модулей', response=schemas.AgentListSchema,
            description='online — последний запрос моложе 5 минут; redelivered — выданные больше '
                        'одного раза.'))),
    ]
