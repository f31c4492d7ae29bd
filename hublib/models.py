"""Peewee models: the single source of the current schema (version 9).

A new database is created from these models; an old one is brought to the same shape by the
frozen steps in ``hublib.migrations`` (which never import this module). ``tests/lib/test_schema``
proves that both roads end in identical tables, columns and indexes, so every column here mirrors
the legacy DDL of contract §5 exactly: nullability, ``DEFAULT`` clauses and ``AUTOINCREMENT``.

Models are deliberately bound to no database. Every query names the hub's database explicitly
(``query.execute(hub.db)``), so two hubs in one process never share a binding and a forgotten
``execute(db)`` fails loudly instead of touching the wrong file.
"""
from __future__ import annotations

from typing import Iterable

from peewee import SQL, AutoField, CompositeKey, FloatField, IntegerField, Model, TextField
from playhouse.sqlite_ext import AutoIncrementField

SCHEMA_VERSION = 9


def _text(**kwargs) -> TextField:
    kwargs.setdefault('null', True)
    return TextField(**kwargs)


def _text_columns(count: int) -> tuple[TextField, ...]:
    """``count`` nullable TEXT columns. A model's columns keep the order their fields were made
    in, so ``a, b, c = _text_columns(3)`` declares them in that order, as the legacy DDL has them."""
    return tuple(_text() for _ in range(count))


def _int(**kwargs) -> IntegerField:
    kwargs.setdefault('null', True)
    return IntegerField(**kwargs)


def _counter() -> IntegerField:
    return IntegerField(default=0, constraints=[SQL('DEFAULT 0')])


def _references(table: str, column: str = 'id', **kwargs) -> IntegerField:
    # A plain column with an inline REFERENCES clause, as the legacy DDL has it: peewee's
    # ForeignKeyField would also add an index the legacy schema does not have.
    return IntegerField(constraints=[SQL(f'REFERENCES {table}({column})')], **kwargs)


class BaseModel(Model):
    class Meta:
        database = None
        # a model's table is its name in snake case: IssueAttachment -> issue_attachment
        legacy_table_names = False


class Issue(BaseModel):
    key = _text(primary_key=True)
    (id, issue_type, summary, description, status, priority, assignee, reporter, duedate,
     planned_start, planned_end, epic_key) = _text_columns(12)
    labels = TextField(default='[]', constraints=[SQL("DEFAULT '[]'")])
    sprint, jira_updated, fetched_at = _text_columns(3)
    neighbor = _counter()
    created, rank = _text_columns(2)
    story_points = FloatField(null=True)

    class Meta:
        # Project slices scan labels (json_each) and walk key/epic_key: a covering index keeps
        # that scan off the wide rows (descriptions). 50,000 issues: slice 41 -> 17 ms (small
        # project), 179 -> 145 ms (a project holding a third of the mirror).
        indexes = ((('labels', 'key', 'epic_key'), False),)


class IssueLink(BaseModel):
    source_key = TextField()
    target_key = TextField()
    link_type = TextField()

    class Meta:
        primary_key = CompositeKey('source_key', 'target_key', 'link_type')
        indexes = ((('target_key',), False),)


class IssueComment(BaseModel):
    key = TextField()
    comment_id = TextField()
    author, created, updated, body, created_at = _text_columns(5)

    class Meta:
        primary_key = CompositeKey('key', 'comment_id')


class IssueChange(BaseModel):
    history_id = TextField()
    seq = IntegerField()
    key = TextField()
    (at, created, author, field, field_id, field_name, from_value, from_string, to_value,
     to_string) = _text_columns(10)
    fetched_at = TextField()

    class Meta:
        primary_key = CompositeKey('history_id', 'seq')
        indexes = ((('at',), False), (('key', 'at'), False))


class IssueAttachment(BaseModel):
    attachment_id = _text(primary_key=True)
    key = TextField(index=True)
    filename = _text()
    size = _int()
    mime_type, author, created, created_at = _text_columns(4)


class AttachmentFile(BaseModel):
    attachment_id = _text(primary_key=True)
    file = TextField()
    size = _int()
    fetched_at = TextField()


class IssueNote(BaseModel):
    key = _text(primary_key=True)
    work_kind, done_text, rest_text, owner_note, updated_at, updated_by = _text_columns(6)


class IssueSprint(BaseModel):
    key = TextField()
    sprint_id = IntegerField(index=True)

    class Meta:
        primary_key = CompositeKey('key', 'sprint_id')


class JiraBoard(BaseModel):
    board_id = _int(primary_key=True)
    type, columns = _text_columns(2)
    kanban_backlog = _int()
    fetched_at = _text()


class JiraSprint(BaseModel):
    sprint_id = _int(primary_key=True)
    board_id = _int(index=True)
    name, state, start_date, end_date, complete_date, goal = _text_columns(6)


class Batch(BaseModel):
    id = AutoIncrementField(null=True)
    title = TextField()
    author = _text()
    created_at = TextField()
    cancelled_at = _text()
    estimate_seconds = _int()
    project = _text()


class Command(BaseModel):
    id = AutoIncrementField(null=True)
    batch_id = _references('batch')
    seq = IntegerField()
    type = TextField()
    params = TextField(default='{}', constraints=[SQL("DEFAULT '{}'")])
    status = TextField(default='queued', constraints=[SQL("DEFAULT 'queued'")])
    claimed_at, finished_at, result, error = _text_columns(4)
    jira_calls, rate_limited = _counter(), _counter()
    pause_seconds = _int()
    depends_on = _references('command', null=True, index=True)
    deliveries = _counter()

    class Meta:
        indexes = ((('status',), False), (('batch_id', 'seq'), False))


class SyncRun(BaseModel):
    id = AutoIncrementField(null=True)
    started_at = TextField()
    finished_at = _text()
    kind = TextField()
    query = _text()
    issues_count, links_count, jira_calls, rate_limited = (_counter() for _ in range(4))
    command_id = _references('command', null=True, index=True)
    history_at = _text()


class AgentStatus(BaseModel):
    agent = _text(primary_key=True)
    last_seen_at, agent_version = _text_columns(2)
    settings_version, current_command_id = _int(), _int()
    last_call_at = _text()


class Setting(BaseModel):
    key = _text(primary_key=True)
    value = _text()


class Project(BaseModel):
    label = _text(primary_key=True)
    name = TextField()
    created_at = TextField()


class JiraProject(BaseModel):
    label = TextField(primary_key=True, null=True, constraints=[SQL('REFERENCES project(label)')])
    board_id = _int()
    board_type = _text()


MODELS = (Issue, IssueLink, IssueComment, IssueChange, IssueAttachment, AttachmentFile, IssueNote,
          IssueSprint, JiraBoard, JiraSprint, Batch, Command, SyncRun, AgentStatus, Setting, Project,
          JiraProject)


# --- the hub's own tables ------------------------------------------------------------------------
# Bookkeeping and derived indexes the data-model spec does not list. They are not part of any
# schema version: ``hublib.startup`` creates (and, for derived ones, fills) them at every open when
# they are missing, so a fresh file, a migrated one and a v9 file from an earlier release all end
# up with the same tables. None of them is a source of truth for Jira data.

class IssueMember(BaseModel):
    """Derived: project slices (spec «Проекты»), one row per (project label, issue in its slice).

    Kept current by state ingest in the same transaction; ``sort_key`` is the issue's natural key
    order (``hublib.slices.natural_key``), so a slice page is one index range of (label, sort_key).
    """

    label = TextField()
    key = TextField()
    sort_key = TextField()
    neighbor = IntegerField()

    class Meta:
        primary_key = CompositeKey('label', 'key')
        without_rowid = True
        # (label, sort_key): a slice page; (key, neighbor): ingest's recompute; (label, neighbor,
        # sort_key, key): own issues or neighbours of a project in natural order (boards, sprints,
        # ?neighbor=) and the counts of GET /projects, covered by the index alone (a board of
        # 17,000 issues at 50,000: 77 -> 48 ms, the counts 9 -> 6 ms).
        indexes = ((('label', 'sort_key'), True), (('key', 'neighbor'), False),
                   (('label', 'neighbor', 'sort_key', 'key'), False))


class SliceCount(BaseModel):
    """Derived: how many own issues and neighbours each project's slice has, kept by the same
    changes that keep ``issue_member``, so ``GET /projects`` reads a row, not a slice (at 200,000
    issues counting the slices took 76 ms)."""

    label = TextField(primary_key=True)
    own_count = IntegerField()
    neighbor_count = IntegerField()


class SliceFacet(BaseModel):
    """Derived: how many issues of each project's slice hold each combination of the facet
    columns (status, assignee, issue type, priority, labels; NULL stored as ''), so the facets of
    a whole slice read a few hundred rows, not the slice. Kept by triggers on ``issue_member``
    (membership, whatever writes it) and by state ingest, the one writer of an issue's facet
    columns (``hublib.facet_counts``)."""

    label = TextField()
    status = TextField()
    assignee = TextField()
    issue_type = TextField()
    priority = TextField()
    labels = TextField()
    count = IntegerField()

    class Meta:
        primary_key = CompositeKey('label', 'status', 'assignee', 'issue_type', 'priority', 'labels')
        without_rowid = True


class IssueSearch(BaseModel):
    """Derived: a stable document id per issue for the full-text index (``hublib.search``)."""

    docid = AutoField()
    key = TextField(unique=True)


class RefreshWritten(BaseModel):
    """Bookkeeping: the keys the current delivery of a refresh wrote (exact neighbour marking)."""

    command_id = IntegerField()
    key = TextField()

    class Meta:
        primary_key = CompositeKey('command_id', 'key')
        without_rowid = True


class BatchFollowup(BaseModel):
    """Bookkeeping: the «Обновление после записи» batch queued for a batch's writes (one at most)."""

    batch_id = IntegerField(primary_key=True)
    followup_batch_id = IntegerField()


class LateDone(BaseModel):
    """Bookkeeping: a command the hub had already failed or cancelled when the agent reported it
    done after all. Its status stays (contract §9.4); read your writes counts it as done."""

    command_id = IntegerField(primary_key=True)


class BatchRetry(BaseModel):
    """Bookkeeping: a batch made by «повторить неудавшиеся» and the batch it retries
    (``retry_of`` in the batch's representation, contract §9.4b)."""

    batch_id = IntegerField(primary_key=True)
    retry_of = IntegerField(index=True)


class IdempotentRequest(BaseModel):
    """Bookkeeping: a write sent with an ``Idempotency-Key`` and the answer the hub gave it
    (contract §9.4b), kept 24 hours per token role (``hublib.idempotency``)."""

    role = TextField()
    key = TextField()
    method = TextField()
    path = TextField()
    body_hash = TextField()
    status = IntegerField()
    response = TextField()
    created_at = TextField()

    class Meta:
        primary_key = CompositeKey('role', 'key')
        # the sweep of expired keys takes the oldest first
        indexes = ((('created_at',), False),)


INTERNAL_MODELS = (IssueMember, SliceCount, SliceFacet, IssueSearch, RefreshWritten, BatchFollowup,
                   LateDone, BatchRetry, IdempotentRequest)

# Tables only the agent's side writes (spec «Зеркало задачи», «Доски, спринты…», contract §14).
MIRROR_TABLES = ('issue', 'issue_link', 'issue_comment', 'issue_attachment', 'issue_change',
                 'issue_sprint', 'jira_board', 'jira_sprint', 'attachment_file', 'sync_run')
# What ingest derives from them. An interface process (MCP) refuses writes to both with an
# authorizer; notes and the queue's tables stay writable.
DERIVED_TABLES = ('issue_member', 'slice_count', 'slice_facet', 'refresh_written', 'issue_search',
                  'issue_fts')
GUARDED_TABLES = MIRROR_TABLES + DERIVED_TABLES


class SqlNames:
    """The names of a model for SQL written by hand.

    A hot path (ingest, claim and report, issue pages and the card) cannot afford peewee's query
    building on every call (~0.1–0.4 ms a query, more than SQLite takes to answer it), so its
    statements are built once, at import, and run many times, with the measured figure in a
    comment beside them: a query peewee can say is a peewee query compiled once
    (``db.Prepared``); a statement it cannot (``executemany`` upserts, FTS5, set-based statements
    over ``json_each``) is a module constant written as an f-string of these names and run with
    ``hub.db.execute_sql`` or ``cursor.executemany``. ``str(names)`` is the table,
    ``names.status`` a column, :meth:`insert` the common ``INSERT … VALUES (?, …)``. A field the
    model does not have fails at import, so a rename here cannot leave a stale statement behind.
    Everything else queries the models through peewee as it is.
    """

    def __init__(self, model: type[Model]):
        self._model = model

    def __str__(self) -> str:
        return self._model._meta.table_name

    def __getattr__(self, name: str) -> str:
        try:
            return self._model._meta.fields[name].column_name
        except KeyError:
            raise AttributeError(f'{self._model.__name__} has no field {name!r}') from None

    def columns(self) -> tuple[str, ...]:
        """Every column, in the model's field order."""
        return tuple(field.column_name for field in self._model._meta.sorted_fields)

    def insert(self, *fields: str, conflict: str = '') -> str:
        """``INSERT [OR <conflict>] INTO <table> (<columns of fields>) VALUES (?, …)``."""
        columns = [getattr(self, name) for name in fields]
        verb = f'INSERT OR {conflict}' if conflict else 'INSERT'
        return (f'{verb} INTO {self} ({", ".join(columns)}) '
                f'VALUES ({", ".join("?" * len(columns))})')


def sql_list(values: Iterable[str]) -> str:
    """Constant names (statuses, command types) as an SQL list: ``'queued', 'claimed'``."""
    return ', '.join(f"'{value}'" for value in values)
