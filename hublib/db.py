"""Opening the hub: data directory, SQLite connection, schema creation and migration.

``open_hub`` is the one entry point. It is safe to call from many processes at once on the same
data directory: creation and migration happen inside ``BEGIN IMMEDIATE`` after re-reading the
schema version, so exactly one caller does the work and the others find it done.
"""
from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from peewee import Database, SchemaManager, SqliteDatabase

from . import migrations
from .errors import MigrationError, SchemaError
from .models import MIRROR_TABLES, MODELS, SCHEMA_VERSION
from .timeutil import Clock, format_utc, parse_utc, system_clock

log = logging.getLogger('hublib')

DB_FILE = 'hub.sqlite'
BUSY_TIMEOUT_MS = 15000
PRAGMAS = (
    ('synchronous', 'normal'),
    ('foreign_keys', 1),
    ('busy_timeout', BUSY_TIMEOUT_MS),
)


# What an interface process (the MCP server) may never write, whatever bug it has (contract §14):
# the mirror, plus the tables only the agent's reports write (downloaded files, the sync journal).
# Index tables derived from the mirror (full-text, membership) belong here as they appear.
MIRROR_GUARD_TABLES = frozenset(MIRROR_TABLES + ('attachment_file', 'sync_run'))
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


class HubDatabase(SqliteDatabase):
    """peewee's SqliteDatabase (one connection per thread) that can guard every connection."""

    authorizer = None

    def _initialize_connection(self, conn: sqlite3.Connection) -> None:
        # peewee's hook for each new connection, i.e. for each thread's first query: a worker
        # thread that connects after the guard was set gets it as well as the opening thread.
        super()._initialize_connection(conn)
        if self.authorizer is not None:
            conn.set_authorizer(self.authorizer)

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

    def write(self):
        """A write transaction: ``BEGIN IMMEDIATE`` at the top level, a savepoint when nested."""
        return self.db.atomic('IMMEDIATE')

    def read(self):
        """A read transaction: one consistent snapshot for several queries."""
        return self.db.atomic()

    def close(self) -> None:
        """Close this thread's connection (other threads close their own)."""
        if not self.db.is_closed():
            self.db.close()


def default_data_dir() -> Path:
    """``$SDLC_HUB_DATA``, else ``./hub-data``."""
    return Path(os.environ.get('SDLC_HUB_DATA') or './hub-data')


def open_hub(data_dir: str | os.PathLike | None = None, *, clock: Clock = system_clock,
             guard_mirror: bool = False) -> Hub:
    """Open (create or migrate) the hub in ``data_dir`` and fill default settings.

    ``guard_mirror``: for interface processes (MCP). Once the schema is ready and the defaults
    are in, every connection of this hub refuses writes to ``MIRROR_GUARD_TABLES``; the schema
    work before that (a migration rewrites mirror rows) is the hub's own and is not guarded.
    """
    from . import settings  # settings imports this module for Hub

    data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
    db_path = data_dir / DB_FILE
    # Before anything is created or switched to WAL (which rewrites the header): a file of a
    # newer hub or of another program is refused with not one byte of the directory changed.
    _refuse_newer(_peek_version(db_path))
    for directory in (data_dir, data_dir / 'backups', data_dir / 'files'):
        directory.mkdir(parents=True, exist_ok=True)
        secure_directory(directory)
    try:
        _enable_wal(db_path)
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError):  # locked for too long: not the file's fault
            raise
        raise SchemaError(f'{db_path} не открывается как база SQLite: {exc}') from exc
    db = HubDatabase(str(db_path), pragmas=PRAGMAS, timeout=BUSY_TIMEOUT_MS / 1000,
                     check_same_thread=False)
    hub = Hub(data_dir=data_dir, db=db, clock=clock)
    try:
        hub.opened_at_version, _ = prepare_schema(hub)
        settings.ensure_defaults(hub)
    except BaseException:
        db.close()
        raise
    if guard_mirror:
        db.guard(mirror_guard)
    return hub


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
    has_settings = db.execute_sql(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'setting'").fetchone()
    if not has_settings:
        return None
    row = db.execute_sql("SELECT value FROM setting WHERE key = 'schema_version'").fetchone()
    if row is None:
        raise SchemaError('в базе нет schema_version: это не база хаба')
    try:
        version = json.loads(row[0])
    except (TypeError, ValueError):
        version = None
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise SchemaError(f'неверная schema_version в базе: {row[0]!r}')
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
    if db.execute_sql("SELECT 1 FROM sqlite_master WHERE type = 'table'").fetchone():
        raise SchemaError(FOREIGN_DATABASE)
    for model in MODELS:
        SchemaManager(model, database=db).create_all(safe=False)
    db.execute_sql('INSERT INTO setting (key, value) VALUES (?, ?), (?, ?)',
                   ('schema_version', json.dumps(SCHEMA_VERSION), 'settings_version', '1'))
    log.info('создана база %s, схема v%d', hub.db_path, SCHEMA_VERSION)


def _migrate(hub: Hub, old: int) -> None:
    stamp = parse_utc(hub.now()).strftime('%Y%m%d-%H%M%S')
    backup = hub.backups_dir / f'{stamp}-schema-v{old}.sqlite'
    # The copy is read through a second connection: the backup API cannot read through a
    # connection that holds the write lock, while a WAL reader sees exactly the committed old
    # state, which nobody else can change while we hold BEGIN IMMEDIATE.
    try:
        source = sqlite3.connect(str(hub.db_path), timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            copy_database(source, backup)
        finally:
            source.close()
        migrations.run_steps(hub.db, old, SCHEMA_VERSION, hub.now())
        hub.db.execute_sql("UPDATE setting SET value = ? WHERE key = 'schema_version'",
                           (json.dumps(SCHEMA_VERSION),))
    except Exception as exc:
        backup.unlink(missing_ok=True)
        log.exception('миграция схемы v%d -> v%d не удалась, база осталась v%d',
                      old, SCHEMA_VERSION, old)
        raise MigrationError(f'миграция схемы v{old} -> v{SCHEMA_VERSION} не удалась '
                             f'({type(exc).__name__}: {exc}); база осталась v{old}') from exc
    log.info('схема v%d -> v%d, копия %s', old, SCHEMA_VERSION, backup)


def copy_database(source: sqlite3.Connection, target: Path) -> None:
    """Consistent copy through the SQLite backup API (includes the WAL), temp name + rename."""
    temp = target.with_name(target.name + '.tmp')
    temp.unlink(missing_ok=True)
    try:
        copy = sqlite3.connect(str(temp))
        try:
            source.backup(copy)
            copy.execute('PRAGMA journal_mode=delete')
        finally:
            copy.close()
        with open(temp, 'rb') as handle:
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


__all__ = ['Hub', 'open_hub', 'prepare_schema', 'copy_database', 'secure_directory',
           'default_data_dir', 'MIRROR_GUARD_TABLES', 'mirror_guard']
