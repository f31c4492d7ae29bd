"""The hub's database: data directory, SQLite connection, schema creation and migration.

``hublib.startup.open_hub`` is the entry point that puts these together. Creation and migration
are safe from many processes at once on the same data directory: they happen inside
``BEGIN IMMEDIATE`` after re-reading the schema version, so exactly one caller does the work and
the others find it done.
"""
from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from peewee import SQL, Database, Query, SchemaManager, SqliteDatabase

from . import migrations
from .errors import (BusyError, ClientGoneError, DeadlineError, HubError, MigrationError,
                     NotFoundError, SchemaError, StorageFullError, is_busy, is_interrupted,
                     is_storage_full)
from .models import GUARDED_TABLES, INTERNAL_MODELS, MODELS, SCHEMA_VERSION, Setting
from .timeutil import Clock, format_utc, parse_utc, system_clock

log = logging.getLogger('hublib')

DB_FILE = 'hub.sqlite'
BUSY_TIMEOUT_MS = 15000
PRAGMAS = (
    ('synchronous', 'normal'),
    ('foreign_keys', 1),
    # an INSERT OR REPLACE fires the delete triggers of the row it replaces: the slice facet
    # counts (hublib.facet_counts) must see it leave
    ('recursive_triggers', 1),
)


# What an interface process (the MCP server) may never write, whatever bug it has (contract §14):
# the mirror and what is derived from it (``models.GUARDED_TABLES``); notes and the queue stay
# writable.
MIRROR_GUARD_TABLES = frozenset(GUARDED_TABLES)
_GUARDED_ACTIONS = (sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE)


def mirror_guard(action: int, arg1: str | None, arg2: str | None, db_name: str | None,
                 trigger: str | None) -> int:
    """SQLite authorizer: deny inserts, updates and deletes on ``MIRROR_GUARD_TABLES``.

    SQLite asks at statement preparation, so a refused write fails before it runs ("not
    authorized") and the surrounding transaction rolls back like after any other error.
    """
    if action in _GUARDED_ACTIONS and arg1 is not None and arg1.lower() in MIRROR_GUARD_TABLES:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


# How often SQLite asks the read budget whether to go on: every this many virtual-machine steps.
# The handler is Python, so each look takes the GIL; a statement of the hub's hardest queries
# runs ~3 M steps a second (a 300-clause «status WAS» query at 20,000 issues: a look every
# 3.6 ms at the median, 26 ms at most), a plain scan ~12 M (every 0.8 ms): a deadline is kept to
# a few milliseconds and a read pays well under 1 % for it.
PROGRESS_STEPS = 10_000


class ReadBudget(threading.local):
    """How long this thread's reads may still run, and whether anyone still waits for them.

    Set for one request or tool call by :meth:`Hub.bounded` and read by the progress handler
    every connection of the database carries. Writes are never cut short (``writing``): a write
    is one transaction that either commits or leaves nothing, and an agent resends a page it got
    no answer for, so ending one half-way would only make the same work run again.
    """

    deadline: float | None = None  # time.monotonic() at which reads end; None: no limit
    seconds: float | None = None
    cancelled: Callable[[], bool] | None = None  # true once the client has gone
    writing = 0
    ended: DeadlineError | None = None  # why the handler ended the last statement

    def over(self) -> int:
        """The progress handler: non-zero ends the running statement («interrupted»)."""
        if self.deadline is None or self.writing:
            return 0
        if self.cancelled is not None and self.cancelled():
            self.ended = ClientGoneError()
            return 1
        if time.monotonic() >= self.deadline:
            self.ended = DeadlineError(self.seconds)
            return 1
        return 0

    def error_for(self, exc: BaseException) -> DeadlineError | None:
        """The hub's error for ``exc`` when it is a statement this budget ended, else None."""
        return self.ended if self.ended is not None and is_interrupted(exc) else None


class HubDatabase(SqliteDatabase):
    """Peewee's SQLite database (one connection per thread), with a rollback that knows SQLite
    may have done it already, an optional authorizer on every connection, and a read budget
    (:class:`ReadBudget`) whose progress handler every connection carries."""

    authorizer = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.budget = ReadBudget()

    def execute_sql(self, sql, params=None):
        try:
            return super().execute_sql(sql, params)
        except Exception as exc:
            ended = self.budget.error_for(exc)
            if ended is None:
                raise
            raise ended from exc

    def rollback(self) -> None:
        # On SQLITE_FULL (and I/O errors) SQLite may roll the whole transaction back by itself;
        # peewee's transaction then sends ROLLBACK again, which fails with «cannot rollback - no
        # transaction is active» and buries the real error under a second traceback.
        if not self.is_closed() and not self.connection().in_transaction:
            return
        super().rollback()

    def _initialize_connection(self, conn: sqlite3.Connection) -> None:
        # peewee's hook for each new connection, i.e. for each thread's first query: a worker
        # thread that connects after the guard was set gets it as well as the opening thread.
        super()._initialize_connection(conn)
        if self.authorizer is not None:
            conn.set_authorizer(self.authorizer)
        conn.set_progress_handler(self.budget.over, PROGRESS_STEPS)

    def guard(self, authorizer) -> None:
        """Install ``authorizer`` on the open connection of this thread and on every later one."""
        self.authorizer = authorizer
        if not self.is_closed():
            self.connection().set_authorizer(authorizer)


@dataclass
class Hub:
    """An open hub: its paths, its database and its clock. Pass it to every hublib operation."""

    data_dir: Path
    db: Database
    clock: Clock = field(default=system_clock)
    # Schema version the file had before this open (None: created now); set by open_hub.
    opened_at_version: int | None = None
    # Hub time of the first write that failed for lack of space since the last one that
    # committed (None: the last write committed). Per process; /health reports it.
    storage_full_since: str | None = None

    @property
    def db_path(self) -> Path:
        return self.data_dir / DB_FILE

    @property
    def backups_dir(self) -> Path:
        return self.data_dir / 'backups'

    @property
    def files_dir(self) -> Path:
        return self.data_dir / 'files'

    def now(self) -> str:
        """Current hub time (UTC, seconds)."""
        return format_utc(self.clock())

    @contextmanager
    def write(self) -> Iterator[None]:
        """A write transaction: ``BEGIN IMMEDIATE`` at the top level, a savepoint when nested.

        A full disk is an expected condition, not a bug: the block is rolled back (by SQLite or
        by us, once), nothing of it is written, and StorageFullError is raised instead of the
        driver's error; ``storage_full_since`` holds until a top-level write commits. So is a
        lock another process held longer than the busy timeout: BusyError, nothing written.
        """
        top = not self.db.in_transaction()
        budget = self.db.budget
        budget.writing += 1
        try:
            with self.db.atomic('IMMEDIATE'):
                yield
        except HubError:
            raise  # deliberate (a nested block's StorageFullError, a MigrationError, ...)
        except Exception as exc:
            if is_busy(exc):
                raise BusyError() from exc
            if not is_storage_full(exc):
                raise
            if self.storage_full_since is None:
                self.storage_full_since = self.now()
            raise StorageFullError() from exc
        finally:
            budget.writing -= 1
        if top:
            self.storage_full_since = None

    @contextmanager
    def read(self) -> Iterator[None]:
        """A read transaction: one consistent snapshot for several queries. A statement the
        read budget (:meth:`bounded`) ended, here or while its rows were fetched, comes out as
        DeadlineError (ClientGoneError when the client left)."""
        try:
            with self.db.atomic():
                yield
        except HubError:
            raise
        except Exception as exc:
            ended = self.db.budget.error_for(exc)
            if ended is None:
                raise
            raise ended from exc

    @contextmanager
    def bounded(self, seconds: float | None,
                cancelled: Callable[[], bool] | None = None) -> Iterator[None]:
        """Within the block, this thread's reads end after ``seconds`` in all (DeadlineError) or
        as soon as ``cancelled()`` is true (ClientGoneError: whoever asked has gone); writes run
        to their end. Serving adapters wrap each request or tool call in it; scripts and the CLI
        read unbounded."""
        budget = self.db.budget
        saved = budget.deadline, budget.seconds, budget.cancelled, budget.ended
        budget.deadline = None if seconds is None else time.monotonic() + seconds
        budget.seconds, budget.cancelled, budget.ended = seconds, cancelled, None
        try:
            yield
        finally:
            budget.deadline, budget.seconds, budget.cancelled, budget.ended = saved

    def check_budget(self) -> None:
        """Raise DeadlineError (ClientGoneError) when this thread's read budget is spent: for
        long Python work between statements, which the progress handler does not see."""
        budget = self.db.budget
        if budget.over():
            raise budget.ended

    def rollback_leftover(self, what: str) -> None:
        """Roll back (and log) a transaction a call left open on this thread's connection: the
        adapters keep a connection per thread across requests and tool calls, and hublib's
        transactions end inside the call that opened them, so this only ever catches a bug."""
        if not self.db.is_closed() and self.db.connection().in_transaction:
            log.error('transaction left open by %s: rolled back', what)
            self.db.connection().rollback()

    def close(self) -> None:
        """Close this thread's connection (other threads close their own)."""
        if not self.db.is_closed():
            self.db.close()


class Prepared:
    """A Peewee query turned into SQL once, then run many times with other values.

    Peewee spends its time building SQL (~0.1 ms a query, more than SQLite takes to answer a
    lookup by key), so a read that runs on every request builds its queries at import::

        LINKS = Prepared(lambda p: IssueLink.select(...).where(IssueLink.source_key == p('key')))
        LINKS.dicts(hub, key='AURORA-1')

    ``p(name)`` is a placeholder for a text value (Peewee passes it through the field's
    conversion, so it is a string); at run time each parameter that is a placeholder takes the
    value of that name (a name may appear several times), every other parameter stays.
    """

    def __init__(self, build: Callable[[Callable[[str], str]], Query]):
        self.sql, params = build(_placeholder).sql()
        self._params = tuple(params)
        self._names = tuple(_PLACEHOLDERS.get(param) if type(param) is str else None
                            for param in params)
        if not any(self._names):
            raise ValueError('a prepared query needs a placeholder: build it with p(name)')

    def _values(self, values: dict) -> list:
        return [param if name is None else values[name]
                for param, name in zip(self._params, self._names)]

    def tuples(self, hub: Hub, **values: object) -> list[tuple]:
        return hub.db.execute_sql(self.sql, self._values(values)).fetchall()

    def dicts(self, hub: Hub, **values: object) -> list[dict]:
        cursor = hub.db.execute_sql(self.sql, self._values(values))
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]


def json_list(p: Callable[[str], str], name: str) -> SQL:
    """The values of the placeholder ``name``, a JSON list, as an ``IN`` operand
    (``Issue.key.in_(json_list(p, 'keys'))``): one prepared statement serves any number of
    values (no IN list of host parameters built per call, no chunks under SQLite's limit), each
    value one lookup of the column's index."""
    return SQL('(SELECT value FROM json_each(?))', [p(name)])


_PLACEHOLDERS: dict[str, str] = {}


def _placeholder(name: str) -> str:
    value = f'\x00prepared:{name}\x00'
    _PLACEHOLDERS[value] = name
    return value


def default_data_dir() -> Path:
    """``$SDLC_HUB_DATA``, else ``./hub-data``."""
    return Path(os.environ.get('SDLC_HUB_DATA') or './hub-data')


def check_data_dir(data_dir: Path) -> None:
    """Refuse a data directory that is a file, or lies under one («… — не каталог»)."""
    for path in (data_dir, *data_dir.parents):
        if path.exists():
            if not path.is_dir():
                raise HubError(f'{path} — не каталог')
            return


def hub_exists(data_dir: str | os.PathLike) -> bool:
    """True when ``data_dir`` holds a hub database (a non-empty ``hub.sqlite``)."""
    db_path = Path(data_dir) / DB_FILE
    return db_path.is_file() and db_path.stat().st_size > 0


def require_hub(data_dir: Path) -> None:
    """NotFoundError «нет базы хаба в …» unless ``data_dir`` holds a hub; creates nothing."""
    if not hub_exists(data_dir):
        raise NotFoundError(f'нет базы хаба в {data_dir.resolve()}: нет файла {DB_FILE}')


def refuse_unusable_file(data_dir: Path) -> None:
    """SchemaError for a ``hub.sqlite`` of a newer hub, of another program, or not SQLite at all,
    found by a read-only look: called before anything is created (and before :func:`connect`
    switches the file to WAL, which rewrites its header), so nothing is touched."""
    _refuse_newer(_peek_version(data_dir / DB_FILE))


def prepare_directories(data_dir: Path) -> None:
    """Create ``<data>``, ``backups/`` and ``files/`` when missing and make them private."""
    for directory in (data_dir, data_dir / 'backups', data_dir / 'files'):
        directory.mkdir(parents=True, exist_ok=True)
        secure_directory(directory)


def connect(data_dir: Path, *, clock: Clock = system_clock,
            busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> Hub:
    """A Hub on ``<data>/hub.sqlite`` (WAL, pragmas), for a file :func:`refuse_unusable_file`
    has accepted (``open_hub`` checks it first). ``busy_timeout_ms``: how long a write waits for
    another connection's lock before it gives up (BusyError)."""
    db_path = data_dir / DB_FILE
    try:
        _enable_wal(db_path)
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError):  # locked for too long: not the file's fault
            raise
        raise SchemaError(f'{db_path} не открывается как база SQLite: {exc}') from exc
    db = HubDatabase(str(db_path), pragmas=PRAGMAS + (('busy_timeout', busy_timeout_ms),),
                     timeout=busy_timeout_ms / 1000, check_same_thread=False)
    return Hub(data_dir=data_dir, db=db, clock=clock)


def secure_directory(directory: Path) -> None:
    """Make ``directory`` private (0700): the database holds the tokens. Warn when impossible."""
    try:
        os.chmod(directory, 0o700)
        if os.name == 'posix' and (directory.stat().st_mode & 0o777) != 0o700:
            raise OSError('mode did not stick')
    except OSError as exc:
        log.warning('не удалось выставить права 0700 на %s: %s', directory, exc)


def _enable_wal(db_path: Path) -> None:
    # journal_mode is a property of the file, set once; switching needs a moment with no other
    # reader, which several processes opening the file together may not give at first try.
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        conn = sqlite3.connect(str(db_path), timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            mode = conn.execute('PRAGMA journal_mode=wal').fetchone()[0]
            if mode == 'wal':
                return
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
        finally:
            conn.close()
        time.sleep(0.05)


def _stored_version(db: Database) -> int | None:
    if not db.table_exists(Setting._meta.table_name):
        return None
    found = Setting.select(Setting.value).where(Setting.key == 'schema_version').tuples() \
        .execute(db)
    if not found:
        raise SchemaError('в базе нет schema_version: это не база хаба')
    try:
        version = json.loads(found[0][0])
    except (TypeError, ValueError):
        version = None
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise SchemaError(f'неверная schema_version в базе: {found[0][0]!r}')
    return version


FOREIGN_DATABASE = 'в базе есть таблицы, но нет таблицы setting: это не база хаба'


def _peek_version(db_path: Path) -> int | None:
    # Read-only look so that a file from a newer hub or another program is refused with not one
    # byte changed; anything odd here is left for the full check on the real connection.
    if not db_path.exists():
        return None
    try:
        conn = sqlite3.connect(db_path.resolve().as_uri() + '?mode=ro', uri=True,
                               timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error:
        return None
    try:
        tables = {name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and 'setting' not in tables:
            raise SchemaError(FOREIGN_DATABASE)
        row = conn.execute("SELECT value FROM setting WHERE key = 'schema_version'").fetchone()
        return int(json.loads(row[0])) if row else None
    except sqlite3.Error as exc:
        if getattr(exc, 'sqlite_errorname', None) in ('SQLITE_NOTADB', 'SQLITE_CORRUPT'):
            raise SchemaError(f'{db_path} не открывается как база SQLite: {exc}') from exc
        return None
    except (ValueError, TypeError):
        return None
    finally:
        conn.close()


def _refuse_newer(version: int | None) -> None:
    if version is not None and version > SCHEMA_VERSION:
        raise SchemaError(f'схема базы v{version} новее, чем знает этот хаб (v{SCHEMA_VERSION}); '
                          'обновите sdlc-hub')


def prepare_schema(hub: Hub) -> tuple[int | None, int]:
    """Create the schema on a new file or migrate an old one; return (old version, new version)."""
    db = hub.db
    version = _stored_version(db)
    _refuse_newer(version)
    if version == SCHEMA_VERSION:
        return version, version
    with hub.write():
        version = _stored_version(db)  # another process may have done it while we waited
        _refuse_newer(version)
        if version is None:
            _create_schema(hub)
        elif version < SCHEMA_VERSION:
            _migrate(hub, version)
    return version, SCHEMA_VERSION


def _create_schema(hub: Hub) -> None:
    db = hub.db
    if db.get_tables():
        raise SchemaError(FOREIGN_DATABASE)
    for model in MODELS:
        SchemaManager(model, database=db).create_all(safe=False)
    Setting.insert_many([('schema_version', json.dumps(SCHEMA_VERSION)), ('settings_version', '1')],
                        fields=[Setting.key, Setting.value]).execute(db)
    log.info('создана база %s, схема v%d', hub.db_path, SCHEMA_VERSION)


def _migrate(hub: Hub, old: int) -> None:
    stamp = parse_utc(hub.now()).strftime('%Y%m%d-%H%M%S')
    backup = hub.backups_dir / f'{stamp}-schema-v{old}.sqlite'
    try:
        copy_database(hub.db_path, backup)
        migrations.run_steps(hub.db, old, SCHEMA_VERSION, hub.now())
        Setting.update(value=json.dumps(SCHEMA_VERSION)) \
            .where(Setting.key == 'schema_version').execute(hub.db)
    except Exception as exc:
        backup.unlink(missing_ok=True)
        log.exception('миграция схемы v%d -> v%d не удалась, база осталась v%d',
                      old, SCHEMA_VERSION, old)
        raise MigrationError(f'миграция схемы v{old} -> v{SCHEMA_VERSION} не удалась '
                             f'({type(exc).__name__}: {exc}); база осталась v{old}') from exc
    log.info('схема v%d -> v%d, копия %s', old, SCHEMA_VERSION, backup)


def create_internal_tables(hub: Hub) -> list[str]:
    """Create the hub's own tables (``models.INTERNAL_MODELS``) that are missing; their names."""
    missing = [model for model in INTERNAL_MODELS if not hub.db.table_exists(model._meta.table_name)]
    for model in missing:
        SchemaManager(model, database=hub.db).create_all(safe=True)
    return [model._meta.table_name for model in missing]


def copy_database(db_path: Path, target: Path) -> None:
    """A consistent, self-contained copy of the database at ``target`` (temp name, fsync, rename).

    The copy is read through a connection of its own: the SQLite backup API reads one snapshot,
    WAL included, whatever the hub's connections are doing (a migration holds the write lock on
    its own connection, which the backup API could not read through; a WAL reader sees exactly the
    committed state). Never a plain file copy of a WAL database. No partial file is left behind.
    """
    temp = target.with_name(target.name + '.tmp')
    _remove_with_sidecars(temp)
    try:
        source = sqlite3.connect(str(db_path), timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            copy = sqlite3.connect(str(temp))
            try:
                source.backup(copy)
            finally:
                copy.close()
        finally:
            source.close()
        with open(temp, 'r+b') as handle:
            _out_of_wal(handle)
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        _remove_with_sidecars(temp)  # a full disk may leave a -journal, -wal or -shm beside it
        raise
    fsync_directory(target.parent)


def _out_of_wal(handle) -> None:
    # The backup API copies the source's header, WAL mode included, and a copy must be one file
    # that opens without a -wal beside it. ``PRAGMA journal_mode=delete`` on the copy would open
    # it in WAL first: a -wal and a -shm that need disk space, and on a nearly full disk the
    # switch fails («disk I/O error», not SQLITE_FULL) and leaves them. The switch itself is
    # bytes 18 and 19 of the header (1: rollback journal, 2: WAL; sqlite.org/fileformat.html,
    # «File format version numbers»): written in place, in the file just copied, needing no space.
    handle.seek(18)
    if handle.read(2) == b'\x02\x02':
        handle.seek(18)
        handle.write(b'\x01\x01')
        handle.flush()


def _remove_with_sidecars(path: Path) -> None:
    for name in (path.name, *(path.name + suffix for suffix in ('-journal', '-wal', '-shm'))):
        path.with_name(name).unlink(missing_ok=True)


def fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (POSIX); Windows cannot open a directory, nor needs to."""
    if os.name != 'posix':
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


__all__ = ['Hub', 'connect', 'prepare_directories', 'prepare_schema', 'create_internal_tables',
           'copy_database', 'fsync_directory', 'secure_directory', 'default_data_dir',
           'check_data_dir', 'hub_exists', 'require_hub', 'refuse_unusable_file', 'HubDatabase',
           'MIRROR_GUARD_TABLES', 'mirror_guard', 'Prepared', 'json_list']
