"""Tools of the command queue: the agents, the batches, and the three that write the queue (the
agent runs their commands in the real Jira later). Each makes the hublib call of the matching HTTP
resource."""
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field, StrictBool, StrictStr, WithJsonSchema

from hublib import batches, idempotency, queue
from hublib.batches import BATCH_STATUSES
from hublib.modules import COMMAND_TYPES
from hublib.paging import page_limit

from ...schemas.assistant import QueuedBatchSchema
from ...schemas.queue import AgentListSchema, BatchListSchema, BatchSchema, TempKeySchema
from ..tooling import (IDEMPOTENCY_FIELD, QUEUE_WRITE, READ_ONLY, Author, BatchId, Cursor,
                       IdempotencyKey, Toolbox, hub_of, limit)

TOOLS = Toolbox()

BATCHES_LIMIT = (20, 100)

COMMAND_SCHEMA = {
    'type': 'object', 'required': ['type', 'params'], 'additionalProperties': False,
    'properties': {
        'type': {'enum': list(COMMAND_TYPES)},
        'params': {'type': 'object'},
        'depends_on': {'type': ['integer', 'null'], 'minimum': 1}}}
# Any: every check (list, types, params of each command type) is hublib's, with its field paths.
Commands = Annotated[Any, WithJsonSchema({
    'type': 'array', 'minItems': 1, 'maxItems': batches.MAX_COMMANDS, 'items': COMMAND_SCHEMA})]


@TOOLS.tool('Агенты', READ_ONLY, AgentListSchema)
def agent_status(ctx: Context) -> dict:
    """Агенты модулей (jira, wiki): online — на связи за последние 5 минут; redelivered —
    команды, выданные повторно. Как GET /agents."""
    return queue.agents(hub_of(ctx))


@TOOLS.tool('Пакеты команд', READ_ONLY, BatchListSchema)
def list_batches(ctx: Context,
                 status: Annotated[StrictStr | None, Field(
                     json_schema_extra={'enum': [*BATCH_STATUSES, None]})] = None,
                 project: Annotated[StrictStr | None, Field(description='метка проекта')] = None,
                 limit: limit(*BATCHES_LIMIT) = BATCHES_LIMIT[0],
                 cursor: Cursor = None) -> dict:
    """Пакеты команд агенту, новые первыми, со статусом и счётчиками команд. Как GET /batches."""
    return queue.batches(hub_of(ctx), status=status, project=project,
                         limit=page_limit(limit, *BATCHES_LIMIT), cursor=cursor)


@TOOLS.tool('Пакет команд', READ_ONLY, BatchSchema)
def get_batch(ctx: Context, batch_id: BatchId) -> dict:
    """Пакет с командами: статус каждой, число выдач агенту, ошибка, результат.
    Как GET /batches/{id}."""
    return queue.batch(hub_of(ctx), batch_id)


@TOOLS.tool('Свободный временный ключ', READ_ONLY, TempKeySchema)
def next_temp_key(ctx: Context) -> dict:
    """Наименьший свободный временный ключ new:<n> для ensure_issue новой задачи (temp_key);
    ключ не резервируется. Как GET /temp-keys/next."""
    return batches.next_temp_key(hub_of(ctx))


@TOOLS.tool('Поставить пакет команд', QUEUE_WRITE, QueuedBatchSchema)
def queue_batch(ctx: Context,
                title: Annotated[StrictStr, Field(description='название, до 200 символов')],
                author: Author, commands: Commands,
                project: Annotated[StrictStr | None, Field(description='метка проекта')] = None,
                dry_run: Annotated[StrictBool, Field(
                    description='true — только проверить и показать')] = False,
                idempotency_key: IdempotencyKey = None) -> dict:
    """Поставить пакет команд агенту; он выполнит их в настоящей Jira по очереди. Сначала вызови
    с dry_run: true и покажи пользователю, что будет сделано.
    Команды (type → params):
    refresh — jql (строка) или keys (список ключей): обновить зеркало;
    ensure_issue — issue_type (task, epic, bug), summary; необязательно key (существующая) или
      temp_key (new:<n>, свободный — next_temp_key), description, priority, assignee, duedate,
      planned_start, planned_end (ГГГГ-ММ-ДД), epic_key, labels;
    ensure_link — source_key, target_key (ключи или временные), link_type (ключ link_types);
    add_comment — key, body;  transition — key, status;  fetch_attachment — attachment_id.
    depends_on — seq (с 1) более ранней команды, чей результат нужен.
    Ошибки называют поле: commands[1].params.summary. Как POST /batches."""
    body = {'title': title, 'author': author, 'commands': commands,
            **({'project': project} if project is not None else {}),
            **({'dry_run': True} if dry_run else {})}
    answer = idempotency.queue_batch(hub_of(ctx), body, key=idempotency_key,
                                     field=IDEMPOTENCY_FIELD)
    return answer.body if dry_run else {**answer.body, 'dry_run': False}


@TOOLS.tool('Отменить пакет', QUEUE_WRITE, BatchSchema)
def cancel_batch(ctx: Context, batch_id: BatchId, idempotency_key: IdempotencyKey = None) -> dict:
    """Отменить пакет: команды в очереди отменяются, выданные агенту завершатся его отчётом.
    Как POST /batches/{id}/cancel."""
    return idempotency.cancel_batch(hub_of(ctx), batch_id, key=idempotency_key,
                                    field=IDEMPOTENCY_FIELD).body


@TOOLS.tool('Повторить неудавшиеся', QUEUE_WRITE, BatchSchema)
def retry_batch(ctx: Context, batch_id: BatchId, author: Author,
                idempotency_key: IdempotencyKey = None) -> dict:
    """Новый пакет «Повтор: …» из неудавшихся команд завершённого пакета (и пропущенных из-за
    них); retry_of — исходный пакет. Пакет повторяется один раз: уже повторённый — ошибка с
    номером повтора (retried_by), а если повтор сам завершился с неудачей — повторяется он.
    Как POST /batches/{id}/retry."""
    return idempotency.retry_batch(hub_of(ctx), batch_id, {'author': author},
                                   key=idempotency_key, field=IDEMPOTENCY_FIELD).body
