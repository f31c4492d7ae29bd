"""Batches of agent commands (spec «Пакеты и команды», contract §9.1, §9.2, §9.4a, §9.6).

Interfaces create, cancel and read batches here; the hub queues its own batches (auto refresh,
attachment downloads, read your writes) with :func:`insert_batch`. A batch's status is computed
from its commands and ``cancelled_at`` at every read and never stored.

A batch is validated in three steps, each with its own answer:

1. its shape, by :func:`batch_schema` — the schema the API document is generated from (each
   command by the params schema of its type, ``issue_type``/``link_type``/``project`` among the
   configured keys): a ValidationError (422) naming ``commands[<i>].params.<field>``;
2. what one command says about another, which JSON Schema cannot: ``depends_on`` points to an
   earlier command, a temp key is created once and only used after the ``ensure_issue`` that
   creates it, and no other batch's unfinished ``ensure_issue`` owns that temp key (a temp key
   names one future issue hub-wide, contract §9.4b): a ValidationError (422) naming the field;
3. references to the hub's state (``fetch_attachment`` of an attachment not in the mirror): a
   ValidationError (422) naming ``commands[<i>].params.<field>`` like every command error
   (contract §9.1); only ``project``, which is not a command's, is a 404 when it names no project.
"""
from __future__ import annotations

import functools
import json
import math
from typing import Any, Mapping

import marshmallow
from peewee import JOIN, Case, fn

from . import fields, jsontext, modules, validators
from .db import Hub
from .errors import ConflictError, NotFoundError, ValidationError
from .models import (Batch, BatchFollowup, BatchRetry, Command, IssueNote, LateDone, SqlNames,
                     sql_list)
from .paging import cursor_field, decode_cursor, page
from .projects import require_project
from .settings import pacing, stored_settings
from .slices import natural_key
from .statuses import ACTIVE, BATCH_STATUSES, DONE_STATUSES, STATUSES
from .validation import (Bool, Int, LenientInt, Schema, StrippedText, Text, is_issue_key,
                         is_temp_key, load)

TITLE_MAX = 200
AUTHOR_MAX = 200
MAX_COMMANDS = 10000
LIMIT_DEFAULT = 50
LIMIT_MAX = 1000
ESTIMATE_MAX = 2**31 - 1
# The hub's own batches are signed by it.
HUB_AUTHOR = 'hub'
FOLLOWUP_TITLE = 'Обновление после записи'

BATCH_NOT_FOUND = 'пакета #{} нет'
ALREADY_FINISHED = 'пакет уже завершён'
COMMAND_NOT_FOUND = 'команды #{} нет'
DEPENDS_ON_MESSAGE = 'ожидается номер (seq, с 1) более ранней команды этого пакета'


# --- stored values -------------------------------------------------------------------------------

def command_dict(row: Mapping[str, Any]) -> dict:
    """A ``command`` row (column → value) as the API shows it: params and result decoded."""
    item = dict(row)
    item['params'] = jsontext.load(item['params']) or {}
    item['result'] = jsontext.load(item['result'])
    return item


def command(hub: Hub, command_id: int) -> dict:
    """One command (contract §9.1 ``GET /commands/{id}``); NotFoundError when there is none."""
    found = Command.select().where(Command.id == command_id).dicts().execute(hub.db)
    if not found:
        raise NotFoundError(COMMAND_NOT_FOUND.format(command_id))
    return command_dict(found[0])


# --- the schemas of a batch ----------------------------------------------------------------------

class CommandIn(fields.Field):
    """One command of a batch: its ``type`` picks the command schema that loads it.

    In the API document this is a ``oneOf`` of ``schemas`` (type name → command schema)
    discriminated by ``type``.
    """

    default_error_messages = {'invalid': 'ожидается объект {{type, params, depends_on?}}'}

    def __init__(self, schemas: Mapping[str, Schema], **kwargs):
        super().__init__(**kwargs)
        self.schemas = dict(schemas)

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, Mapping):
            raise self.make_error('invalid')
        name = value.get('type')
        schema = self.schemas.get(name) if isinstance(name, str) else None
        if schema is None:
            raise marshmallow.ValidationError(
                {'type': [f'неизвестный тип команды; ожидается один из: {", ".join(self.schemas)}']})
        return schema.load(value)


@functools.lru_cache(maxsize=64)
def _command_class(name: str, params: type[Schema]) -> type[Schema]:
    # One class per (type, params schema class), so a document naming it twice sees one component.
    class_name = ''.join(part.capitalize() for part in name.split('_')) + 'Command'
    return Schema.from_dict({
        'type': fields.String(required=True, validate=validators.OneOf([name])),
        'params': fields.Nested(params, required=True),
        'depends_on': Int(minimum=1, allow_none=True, load_default=None, metadata={
            'description': 'seq (с 1) более ранней команды этого пакета'}),
    }, name=class_name)


def command_schemas(settings: Mapping[str, Any]) -> dict[str, Schema]:
    """Per command type, the schema of one command of a batch ``{type, params, depends_on?}``
    under ``settings`` (the ``oneOf`` members of :class:`CommandIn`)."""
    return {name: _command_class(name, type(params))()
            for name, params in modules.params_schemas(settings).items()}


def batch_schema_for(settings: Mapping[str, Any]) -> Schema:
    """The body of ``POST /batches`` under ``settings`` (its configured issue and link types).

    ``project`` is any label here: a label that names no project is a reference to state (404,
    like ``GET /issues?project=``), not a malformed body, so the document does not list labels
    that a request elsewhere may create or remove.
    """
    return Schema.from_dict({
        'title': StrippedText(required=True, max_length=TITLE_MAX,
                              blank='обязательное поле: название пакета'),
        'author': Text(max_length=AUTHOR_MAX, allow_none=True, load_default=None),
        'project': fields.String(allow_none=True, load_default=None,
                                 metadata={'description': 'метка проекта (404, если его нет)'}),
        'commands': fields.List(CommandIn(command_schemas(settings)), required=True, validate=[
            validators.Length(min=1, error='ожидается непустой список команд'),
            validators.Length(max=MAX_COMMANDS, error=f'больше {MAX_COMMANDS} команд в одном пакете')]),
        'dry_run': Bool(load_default=False, metadata={
            'description': 'true — только проверить: ответ 200 с пакетом, как он был бы поставлен '
                           '(без id), ничего не сохранено'}),
    }, name='BatchCreate')()


def batch_schema(hub: Hub) -> Schema:
    """The body of ``POST /batches`` as this hub accepts it now (current settings and projects)."""
    with hub.read():
        return batch_schema_for(stored_settings(hub))


def _cross_command_errors(commands: list[dict]) -> dict[str, list[str]]:
    """Rules between the commands of one batch (step 2 of the module docstring)."""
    errors: dict[str, list[str]] = {}
    creators: dict[str, int] = {}  # temp key → position of the ensure_issue that creates it
    for index, item in enumerate(commands):
        prefix = f'commands[{index}]'
        if item['depends_on'] is not None and item['depends_on'] > index:
            errors[f'{prefix}.depends_on'] = [DEPENDS_ON_MESSAGE]
        params = item['params']
        for name in modules.command_type(item['type']).key_fields:
            if is_temp_key(params.get(name)) and params[name] not in creators:
                errors[f'{prefix}.params.{name}'] = [
                    f'временный ключ {params[name]} не заводит ни одна более ранняя команда '
                    'ensure_issue этого пакета']
        temp_key = params.get('temp_key')
        if temp_key is not None:
            if temp_key in creators:
                errors[f'{prefix}.params.temp_key'] = [
                    f'временный ключ {temp_key} уже заводит команда {creators[temp_key] + 1}']
            else:
                creators[temp_key] = index
    return errors


# --- temp keys hub-wide (contract §9.4b) -----------------------------------------------------------

_TEMP_KEY = fn.json_extract(Command.params, '$.temp_key')


def temp_key_owners(hub: Hub) -> dict[str, int]:
    """Temp key → the batch whose unfinished (queued or claimed) ``ensure_issue`` owns it.

    Read through the status index: unfinished commands are the queue's short end, not its history.
    """
    return dict(Command.select(_TEMP_KEY, Command.batch_id)
                .where(Command.status.in_(ACTIVE) & (Command.type == 'ensure_issue')
                       & _TEMP_KEY.is_null(False))
                .tuples().execute(hub.db))


def _taken_temp_keys(hub: Hub, commands: list[dict]) -> dict[str, list[str]]:
    """``commands[i].params.temp_key`` of each ``ensure_issue`` whose temp key another batch's
    unfinished ``ensure_issue`` owns: a second owner would share its note (spec «Служебные
    заметки») and, when both finish, move it to the wrong issue."""
    wanted = [(index, item['params']['temp_key']) for index, item in enumerate(commands)
              if item['type'] == 'ensure_issue' and item['params'].get('temp_key') is not None]
    owners = temp_key_owners(hub) if wanted else {}
    return {f'commands[{index}].params.temp_key': [
                f'временный ключ {temp_key} уже занят пакетом {owners[temp_key]}']
            for index, temp_key in wanted if temp_key in owners}


def _noted_temp_keys(hub: Hub) -> list[str]:
    # A prefix range of the primary key ('new:' ≤ key < 'new;'), not a scan of every note.
    return [key for (key,) in IssueNote.select(IssueNote.key)
            .where((IssueNote.key >= 'new:') & (IssueNote.key < 'new;')).tuples().execute(hub.db)
            if is_temp_key(key)]


TEMP_KEYS_MAX = 100


class TempKeysQuery(Schema):
    """Query of ``GET /temp-keys/next``."""

    count = LenientInt(minimum=1, maximum=TEMP_KEYS_MAX, load_default=1, metadata={
        'description': f'сколько свободных ключей подряд нужно (до {TEMP_KEYS_MAX}), по '
                       'умолчанию 1'})


def next_temp_key(hub: Hub, *, count: int = 1) -> dict:
    """The smallest free temp key (contract §9.4b): ``{"temp_key": "new:<n>", "temp_keys": [...]}``.

    Free: no unfinished ``ensure_issue`` owns it and no note is stored under it (a note under a
    temp key is someone's future issue, even before its batch is queued). ``temp_keys`` holds the
    ``count`` smallest free keys, the first of them ``temp_key``, for a form with several new
    issues. Nothing is reserved: the key is taken when a batch that creates it is queued.
    """
    count = load(TempKeysQuery, {'count': count})['count']
    with hub.read():
        taken = {int(key[4:]) for key in (*temp_key_owners(hub), *_noted_temp_keys(hub))
                 if is_temp_key(key)}
    free: list[str] = []
    number = 1
    while len(free) < count:
        if number not in taken:
            free.append(f'new:{number}')
        number += 1
    return {'temp_key': free[0], 'temp_keys': free}


def _missing_references(hub: Hub, commands: list[dict]) -> dict[str, str]:
    return {f'commands[{index}].params.{name}': message
            for index, item in enumerate(commands)
            for name, message in modules.command_type(item['type']).missing_references(
                hub, item['params']).items()}


def _validated(hub: Hub, body: Mapping[str, Any]) -> dict:
    values = load(batch_schema_for(stored_settings(hub)), body)
    values.pop('dry_run')
    errors = _cross_command_errors(values['commands'])
    for name, messages in _taken_temp_keys(hub, values['commands']).items():
        errors.setdefault(name, messages)
    if errors:
        raise ValidationError(errors)
    if values['project'] is not None:
        require_project(hub, values['project'])
    missing = _missing_references(hub, values['commands'])
    if missing:
        raise ValidationError({name: [message] for name, message in missing.items()})
    return values


# --- creating and cancelling ---------------------------------------------------------------------

def create_batch(hub: Hub, *, title: str, commands: list[dict], author: str | None = None,
                 project: str | None = None, dry_run: bool = False) -> dict:
    """Validate a batch and queue it; the batch with its commands (contract §9.1).

    Errors name a command by its 0-based position in ``commands`` (``commands[1].params.summary``)
    while ``depends_on`` counts 1-based (``seq``), as the contract says. With ``dry_run`` the
    batch is validated exactly the same and returned as it would be queued, without ids
    (``depends_on`` is then the seq of the dependency) and with nothing stored.
    """
    return submit_batch(hub, {'title': title, 'author': author, 'project': project,
                              'commands': commands}, dry_run=dry_run)


def is_dry_run(body: object) -> bool:
    """Whether a ``POST /batches`` body asks only for a preview (``"dry_run": true``)."""
    return isinstance(body, Mapping) and body.get('dry_run') is True


def submit_batch(hub: Hub, body: Mapping[str, Any], *, dry_run: bool = False) -> dict:
    """:func:`create_batch` of a JSON object as a client sent it (``POST /batches``), checked
    once by the batch schema: an unknown or missing field is a 422 naming it. ``dry_run`` here
    or ``"dry_run": true`` in the body: the preview, nothing stored."""
    if dry_run or is_dry_run(body):
        with hub.read():
            return _preview(hub, _validated(hub, body))
    with hub.write():
        values = _validated(hub, body)
        return _batch(hub, insert_batch(hub, **values), with_commands=True)


def _estimate(hub: Hub, commands: list[dict]) -> int:
    # Each distinct command is estimated once: a refresh by jql counts the mirror's own issues, and
    # 10,000 of them in one batch took 10 s counting 10,000 times, 0.19 s now (2-core VM, busy).
    estimates: dict[tuple[str, str], int] = {}
    calls = 0
    for item in commands:
        key = (item['type'], json.dumps(item['params'], sort_keys=True, default=str))
        if key not in estimates:
            estimates[key] = modules.command_type(item['type']).estimate(hub, item['params'])
        calls += estimates[key]
    return min(math.ceil(calls * pacing(hub)['interval_ms'] / 1000), ESTIMATE_MAX)


def _preview(hub: Hub, values: dict) -> dict:
    commands = [{'id': None, 'batch_id': None, 'seq': seq, 'type': item['type'],
                 'params': item['params'], 'status': 'queued', 'claimed_at': None,
                 'deliveries': 0, 'finished_at': None, 'result': None, 'error': None,
                 'jira_calls': 0, 'rate_limited': 0, 'pause_seconds': None,
                 'depends_on': item['depends_on']}
                for seq, item in enumerate(values['commands'], start=1)]
    counts = dict.fromkeys(STATUSES, 0)
    counts['queued'] = len(commands)
    return {'id': None, 'title': values['title'], 'author': values['author'],
            'project': values['project'], 'created_at': hub.now(), 'cancelled_at': None,
            'estimate_seconds': _estimate(hub, values['commands']), 'status': 'queued',
            'counts': counts, 'retry_of': None, 'retried_by': None, 'commands': commands,
            'dry_run': True}


# A batch's commands in one executemany: 10,000 commands are queued in 0.2 s, where peewee's
# insert_many spent 1.5 s building its statements (measured on the 2-core VM).
_COMMAND = SqlNames(Command)
_INSERT_COMMAND = _COMMAND.insert('id', 'batch_id', 'seq', 'type', 'params', 'depends_on')


def insert_batch(hub: Hub, *, title: str, author: str | None, project: str | None,
                 commands: list[dict]) -> int:
    """Queue commands (``type``, ``params``, optional 1-based ``depends_on``) as a new batch; its id.

    The caller holds the write transaction and has validated the commands, or built them itself:
    the hub's own batches (auto refresh, read your writes) come here directly, so that no
    client-input limit can ever refuse them.
    """
    batch_id = Batch.insert(title=title, author=author, created_at=hub.now(), project=project,
                            estimate_seconds=_estimate(hub, commands)).execute(hub.db)
    # Ids are given, not left to AUTOINCREMENT, so that ``depends_on`` (a 1-based seq) can point
    # at its command's id in one executemany: nothing above the first new id exists while we hold
    # the write lock (AUTOINCREMENT never hands out a smaller one).
    first = Command.insert(batch_id=batch_id, seq=1, type=commands[0]['type'],
                           params=jsontext.dump(commands[0]['params'])).execute(hub.db)
    hub.db.cursor().executemany(_INSERT_COMMAND, [
        (first + seq - 1, batch_id, seq, item['type'], jsontext.dump(item['params']),
         first + item['depends_on'] - 1 if item.get('depends_on') else None)
        for seq, item in enumerate(commands, start=1)][1:])
    return batch_id


class CancelRequest(Schema):
    """Body of ``POST /batches/{id}/cancel``: optional, and an empty object when given."""


def cancel_batch(hub: Hub, batch_id: int) -> dict:
    """Cancel a batch: ``cancelled_at`` once, queued commands → cancelled. Idempotent.

    Decision (contract §15a): a batch whose commands are all terminal and that was never
    cancelled has finished: ConflictError «пакет уже завершён», nothing changes (it must not read
    «отменён» afterwards). A batch cancelled before is answered as it is, again and again.
    """
    with hub.write():
        now = hub.now()
        found = Batch.select(Batch.cancelled_at).where(Batch.id == batch_id).tuples() \
            .execute(hub.db)
        if not found:
            raise NotFoundError(BATCH_NOT_FOUND.format(batch_id))
        if found[0][0] is None and not Command.select().where(
                (Command.batch_id == batch_id) & Command.status.in_(ACTIVE)).exists(hub.db):
            raise ConflictError(ALREADY_FINISHED)
        Batch.update(cancelled_at=fn.COALESCE(Batch.cancelled_at, now)) \
            .where(Batch.id == batch_id).execute(hub.db)
        cancelled = (Command.update(status='cancelled', finished_at=now)
                     .where((Command.batch_id == batch_id) & (Command.status == 'queued'))
                     .execute(hub.db))
        if cancelled:
            follow_writes(hub, batch_id)
        return _batch(hub, batch_id, with_commands=True)


# --- retry of failed commands (contract §9.4b) -----------------------------------------------------

RETRY_PREFIX = 'Повтор: '


class RetryBody(Schema):
    """Body of ``POST /batches/{id}/retry``."""

    author = Text(max_length=AUTHOR_MAX, allow_none=True, load_default=None,
                  metadata={'description': 'кто ставит повтор'})


def retry_batch(hub: Hub, batch_id: int, *, author: str | None = None) -> dict:
    """Queue «Повтор: <title>»: copies of the batch's failed commands and of the skipped ones
    that needed them; the new batch (``retry_of`` = the batch it copies).

    ConflictError (409) while the batch is queued or running, when none of its commands failed,
    and when the copies no longer pass the checks of a new batch (another batch's unfinished
    ``ensure_issue`` took a temp key meanwhile, an issue type is no longer configured): the
    request is right, the hub's state refuses it. See :func:`retry_commands` for what is copied.

    A batch is retried once (issue 30: three clicks made three copies of the same commands). Once
    it has a retry, a retry of it is a 409 naming that retry — while the retry is still running,
    and when it ended without a failed command. Decision (the contract leaves it open): when the
    last retry of the chain (a retry may have its own) ended with a failed command, the request
    retries *that* retry, and the answer's ``retry_of`` names it. What a user wants is the work
    that still failed done again; copying the original's failed commands a second time would
    send Jira again what the retry has already done.
    """
    args = load(RetryBody, {'author': author})
    with hub.write():
        batch_id = _batch_to_retry(hub, batch_id)
        original = _batch(hub, batch_id, with_commands=True)
        if original['status'] not in ('done', 'cancelled'):
            raise ConflictError(f'пакет #{batch_id} ещё выполняется: повторить можно только '
                                'завершённый пакет')
        late_done = {command_id for (command_id,) in LateDone.select(LateDone.command_id)
                     .join(Command, on=(Command.id == LateDone.command_id))
                     .where(Command.batch_id == batch_id).tuples().execute(hub.db)}
        copies = retry_commands(original['commands'], late_done)
        if not copies:
            raise ConflictError(f'в пакете #{batch_id} нет неудавшихся команд: повторять нечего')
        body = {'title': (RETRY_PREFIX + original['title'])[:TITLE_MAX], 'author': args['author'],
                'project': original['project'], 'commands': copies}
        try:
            values = _validated(hub, body)
        except ValidationError as error:
            raise ConflictError(f'повторить пакет #{batch_id} нельзя: {error.message}') from None
        retry_id = insert_batch(hub, **values)
        BatchRetry.insert(batch_id=retry_id, retry_of=batch_id).execute(hub.db)
        return _batch(hub, retry_id, with_commands=True)


def _retries_of(hub: Hub, batch_id: int) -> list[int]:
    """The retries of a batch, newest first (one since issue 30; older hubs may hold more)."""
    return [retry for (retry,) in BatchRetry.select(BatchRetry.batch_id)
            .where(BatchRetry.retry_of == batch_id).order_by(BatchRetry.batch_id.desc())
            .tuples().execute(hub.db)]


def _batch_to_retry(hub: Hub, batch_id: int) -> int:
    """The batch a retry of ``batch_id`` copies: itself while it has no retry, else the last retry
    of its chain when that one ended with a failed command; otherwise a ConflictError naming the
    retry (see :func:`retry_batch`)."""
    retries = _retries_of(hub, batch_id)
    if not retries:
        return batch_id
    last = retries[0]
    while True:
        later = _retries_of(hub, last)
        if not later:
            break
        last = later[0]
    found = _batch_rows(hub, [Batch.id == last])[0]
    named = f'пакетом #{retries[0]}' + (f' (последний повтор — #{last})' if last != retries[0]
                                         else '')
    if found['status'] not in ('done', 'cancelled'):
        raise ConflictError(f'пакет #{batch_id} уже повторён {named}, и повтор ещё выполняется')
    if not found['counts']['failed']:
        raise ConflictError(f'пакет #{batch_id} уже повторён {named}, и повтор прошёл без '
                            'неудавшихся команд')
    return last


def retry_commands(commands: list[dict], late_done: set[int] = frozenset()) -> list[dict]:
    """The commands of a retry of a batch whose commands (in seq order) are ``commands``.

    Copied: every ``failed`` command (one the agent reported done after all, ``late_done``, is
    not: Jira has it), and every ``skipped`` command that needed a copied one — through
    ``depends_on`` or through a temp key its ``ensure_issue`` creates — transitively; and every
    command the hub skipped (never delivered) that everything it needed would now let run: the
    ones an ``ensure_issue`` held up by ending done without ``result.key``, once a later report
    brought the key (contract §9.4).

    Decisions the contract leaves open:

    - a copy's ``depends_on`` names the copy of its dependency; a dependency that is not copied
      ended done, so the copy depends on nothing (its work is in Jira);
    - a temp key whose ``ensure_issue`` is not copied but returned a key is replaced by that key
      in the copy (the issue exists; a temp key needs its creator in the same batch);
    - a command that also needed something neither copied nor done (a cancelled command, an
      ``ensure_issue`` that never returned a key and is not copied) is not copied, nor what needs
      it: the person who stopped that part should decide again.
    """
    by_id = {item['id']: item for item in commands}
    creators = {item['params']['temp_key']: item for item in commands
                if item['type'] == 'ensure_issue' and is_temp_key(item['params'].get('temp_key'))}

    def needs(item: dict) -> list[dict]:
        needed = [by_id[item['depends_on']]] if item['depends_on'] in by_id else []
        for name in modules.command_type(item['type']).key_fields:
            creator = creators.get(item['params'].get(name))
            if creator is not None and creator['seq'] < item['seq']:
                needed.append(creator)
        return needed

    def created_key(item: dict) -> str | None:
        key = item['result'].get('key') if isinstance(item['result'], dict) else None
        return key if is_issue_key(key) else None

    def settled(item: dict) -> bool:  # what a copy may rely on without copying it
        if item['type'] == 'ensure_issue' and item['params'].get('temp_key'):
            return created_key(item) is not None
        return item['status'] in DONE_STATUSES or item['id'] in late_done

    def held_up(item: dict) -> bool:  # skipped by the hub for what it has got since
        needed = needs(item)
        return (item['status'] == 'skipped' and not item.get('deliveries') and bool(needed)
                and all(settled(other) for other in needed))

    chosen: set[int] = set()
    for item in commands:  # dependencies come earlier (seq), so one pass is transitive
        if item['id'] in late_done:
            continue
        if item['status'] == 'failed' or held_up(item) or (item['status'] == 'skipped' and any(
                needed['id'] in chosen for needed in needs(item))):
            chosen.add(item['id'])
    for item in commands:
        if item['id'] in chosen and not all(needed['id'] in chosen or settled(needed)
                                            for needed in needs(item)):
            chosen.discard(item['id'])
    copies: list[dict] = []
    seq_of: dict[int, int] = {}
    for item in commands:
        if item['id'] not in chosen:
            continue
        params = dict(item['params'])
        for name in modules.command_type(item['type']).key_fields:
            creator = creators.get(params.get(name))
            if creator is not None and creator['id'] not in chosen:
                params[name] = created_key(creator)
        copies.append({'type': item['type'], 'params': params,
                       'depends_on': seq_of.get(item['depends_on'])})
        seq_of[item['id']] = len(copies)
    return copies


# --- read your writes (contract §9.4a) ------------------------------------------------------------

_FOLLOWUP = SqlNames(BatchFollowup)
# Run at every terminal step of a write command (the hot report path), so two index lookups
# (6 µs): the unfinished write is searched from the batch's end, where it is while the batch runs
# (an EXISTS would scan from the start: 80 µs in a batch of 1,000 at its 900th command).
_WRITES_PENDING = (
    f'SELECT (SELECT 1 FROM {_FOLLOWUP} WHERE {_FOLLOWUP.batch_id} = :batch) '
    f'OR (SELECT 1 FROM {_COMMAND} WHERE {_COMMAND.batch_id} = :batch '
    f'AND {_COMMAND.status} IN ({sql_list(ACTIVE)}) '
    f'AND {_COMMAND.type} IN ({sql_list(modules.WRITE_TYPES)}) '
    f'ORDER BY {_COMMAND.seq} DESC LIMIT 1)')


def follow_writes(hub: Hub, batch_id: int) -> int | None:
    """Queue «Обновление после записи» once the batch's writes are over; its id, or None.

    When no write command of the batch is queued or claimed any more and at least one ended
    ``done``/``confirmed_by_state`` (or was reported done late, ``models.LateDone``), one
    ``refresh {keys}`` over every key those commands touched (natural key order) goes into a hub
    batch of the same project. ``batch_followup`` records it in the same transaction, so it
    happens once per batch whatever reports come later. The caller holds the write transaction
    and calls this whenever a write command of the batch becomes terminal or is reported done
    late.

    Decision: a batch whose done writes touched no known key (an ``ensure_issue`` reported
    without ``result.key``) gets no refresh and no record; a later late report may still bring one.
    """
    if hub.db.execute_sql(_WRITES_PENDING, {'batch': batch_id}).fetchone()[0]:
        return None
    writes = list(Command.select(Command.id, Command.type, Command.status, Command.params,
                                 Command.result, LateDone.command_id.alias('late'))
                  .join(LateDone, JOIN.LEFT_OUTER, on=(LateDone.command_id == Command.id))
                  .where((Command.batch_id == batch_id) & Command.type.in_(modules.WRITE_TYPES))
                  .order_by(Command.seq).dicts().execute(hub.db))
    keys = _touched_keys([command_dict(row) for row in writes
                          if row['status'] in DONE_STATUSES or row['late'] is not None])
    if not keys:
        return None
    project = Batch.select(Batch.project).where(Batch.id == batch_id).scalar(hub.db)
    followup = insert_batch(hub, title=FOLLOWUP_TITLE, author=HUB_AUTHOR, project=project,
                            commands=[{'type': 'refresh', 'params': {'keys': keys}}])
    BatchFollowup.insert(batch_id=batch_id, followup_batch_id=followup).execute(hub.db)
    return followup


def _touched_keys(done: list[dict]) -> list[str]:
    """Keys the done write commands touched, temp keys resolved, in natural order, once each."""
    created = {item['params']['temp_key']: item['result']['key'] for item in done
               if item['params'].get('temp_key') and isinstance(item['result'], dict)
               and is_issue_key(item['result'].get('key'))}
    keys: set[str] = set()
    for item in done:
        result = item['result'] if isinstance(item['result'], dict) else {}
        if item['type'] == 'ensure_issue':
            touched = [result.get('key'), item['params'].get('key')]
        else:
            touched = [item['params'].get(name)
                       for name in modules.command_type(item['type']).key_fields]
        keys.update(created.get(key, key) for key in touched)
    return sorted((key for key in keys if is_issue_key(key)), key=natural_key)


# --- reading -------------------------------------------------------------------------------------

class BatchesQuery(Schema):
    """Filters of ``GET /batches``."""

    status = fields.String(validate=validators.OneOf(BATCH_STATUSES),
                           metadata={'description': 'вычисленный статус пакета'})
    project = fields.String(metadata={'description': 'метка проекта'})
    limit = LenientInt(minimum=1, maximum=LIMIT_MAX, load_default=LIMIT_DEFAULT,
                       metadata={'description': f'по умолчанию {LIMIT_DEFAULT}'})
    cursor = cursor_field()


# The status rule of contract §9.1 over a batch's command counts: one expression that both the
# single-batch view and the status filter of the list use.
_COUNTS = {status: fn.COALESCE(fn.SUM(Command.status == status), 0) for status in STATUSES}
_STATUS = Case(None, (
    ((fn.COUNT(Command.id) > 0) & (_COUNTS['queued'] == fn.COUNT(Command.id)), 'queued'),
    (_COUNTS['queued'] + _COUNTS['claimed'] > 0, 'running'),
    (Batch.cancelled_at.is_null(False), 'cancelled')), 'done')


BATCH_FIELDS = tuple(Batch._meta.sorted_field_names)
# The newest retry of a batch (``retried_by``): a scalar subquery, not a join, which would count
# each command once per retry.
_RETRY = BatchRetry.alias('retry')
_RETRIED_BY = (_RETRY.select(fn.MAX(_RETRY.batch_id)).where(_RETRY.retry_of == Batch.id))


def _batch_rows(hub: Hub, conditions: list, *, status: str | None = None,
                limit: int = 1) -> list[dict]:
    query = (Batch.select(*Batch._meta.sorted_fields, _STATUS.alias('status'),
                          BatchRetry.retry_of.alias('retry_of'), _RETRIED_BY.alias('retried_by'),
                          *(count.alias(name) for name, count in _COUNTS.items()))
             .join(Command, JOIN.LEFT_OUTER, on=(Command.batch_id == Batch.id))
             .join_from(Batch, BatchRetry, JOIN.LEFT_OUTER, on=(BatchRetry.batch_id == Batch.id)))
    if conditions:
        query = query.where(*conditions)
    query = query.group_by(Batch.id).order_by(Batch.id.desc()).limit(limit)
    if status is not None:
        query = query.having(_STATUS == status)
    return [{**{name: row[name] for name in BATCH_FIELDS + ('status',)},
             'counts': {name: row[name] for name in STATUSES}, 'retry_of': row['retry_of'],
             'retried_by': row['retried_by']}
            for row in query.dicts().execute(hub.db)]


def _batch(hub: Hub, batch_id: int, *, with_commands: bool) -> dict:
    found = _batch_rows(hub, [Batch.id == batch_id])
    if not found:
        raise NotFoundError(BATCH_NOT_FOUND.format(batch_id))
    item = found[0]
    if with_commands:
        item['commands'] = [command_dict(row) for row in Command.select()
                            .where(Command.batch_id == batch_id).order_by(Command.seq)
                            .dicts().execute(hub.db)]
    return item


def batch(hub: Hub, batch_id: int) -> dict:
    """One batch with its status, counts and commands."""
    with hub.read():
        return _batch(hub, batch_id, with_commands=True)


def batches(hub: Hub, *, status: str | None = None, project: str | None = None,
            limit: int = LIMIT_DEFAULT, cursor: str | None = None) -> dict:
    """Batches newest first, filtered by computed status and project; keyset pagination by id."""
    args = load(BatchesQuery, {name: value for name, value in
                               (('status', status), ('project', project), ('limit', limit),
                                ('cursor', cursor)) if value is not None})
    after = decode_cursor(args.get('cursor'), (int,))
    conditions = []
    if 'project' in args:
        conditions.append(Batch.project == args['project'])
    if after is not None:
        conditions.append(Batch.id < after[0])
    with hub.read():
        rows = _batch_rows(hub, conditions, status=args.get('status'), limit=args['limit'] + 1)
    rows, next_cursor = page(rows, args['limit'], lambda row: [row['id']])
    return {'items': rows, 'next_cursor': next_cursor}


__all__ = ['create_batch', 'submit_batch', 'is_dry_run', 'retry_batch', 'retry_commands',
           'next_temp_key', 'temp_key_owners', 'TempKeysQuery', 'RetryBody', 'insert_batch', 'cancel_batch', 'batch', 'batches', 'command',
           'batch_schema', 'batch_schema_for', 'command_schemas', 'follow_writes', 'BatchesQuery',
           'CancelRequest', 'CommandIn', 'command_dict', 'HUB_AUTHOR']
