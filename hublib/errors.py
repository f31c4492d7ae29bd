"""The hub's domain errors: a flat family of small classes.

Interfaces translate them (hubweb maps each class to one HTTP status in one table; the CLI prints
the message). Client input must only ever surface as one of these, never as a bare exception.
"""
from __future__ import annotations

import errno
import sqlite3


class HubError(Exception):
    """Base of every error the hub raises on purpose."""

    title = 'Ошибка хаба'

    def __init__(self, message: str | None = None):
        self.message = message or (self.__doc__ or '').strip()
        super().__init__(self.message)


class ValidationError(HubError):
    """Данные не прошли проверку."""

    title = 'Неверные данные'

    def __init__(self, fields: dict[str, list[str]] | str, message: str | None = None):
        if isinstance(fields, str):
            fields = {fields: [message or 'неверное значение']}
        self.fields = {name: list(msgs) for name, msgs in fields.items()}
        if message is None:
            message = '; '.join(f'{name}: {", ".join(msgs)}' for name, msgs in self.fields.items())
        super().__init__(message)


class NotFoundError(HubError):
    """Объект не найден."""

    title = 'Не найдено'


class ConflictError(HubError):
    """Действие противоречит текущему состоянию."""

    title = 'Конфликт'


class PayloadTooLargeError(HubError):
    """Слишком большой запрос."""

    title = 'Слишком большой запрос'


class StorageFullError(HubError):
    """на диске нет места: запись не выполнена, данные не изменились."""

    title = 'Нет места на диске'


# SQLITE_FULL (13): "database or disk is full", also raised at the PRAGMA max_page_count limit.
_SQLITE_FULL = 13
_DISK_FULL_ERRNOS = frozenset(filter(None, (errno.ENOSPC, getattr(errno, 'EDQUOT', None))))


def is_storage_full(error: BaseException) -> bool:
    """True when ``error``, or an error it was raised from or while handling, says no space is left.

    Peewee re-raises sqlite3's errors as its own (the original in ``args[0]`` and
    ``__context__``), and a failed rollback can follow the real error: the whole chain is read.
    """
    for current in _chain(error):
        code = getattr(current, 'sqlite_errorcode', 0) if isinstance(current, sqlite3.Error) else 0
        if code & 0xFF == _SQLITE_FULL:  # extended codes keep the primary one in the low byte
            return True
        if isinstance(current, OSError) and current.errno in _DISK_FULL_ERRNOS:
            return True
    return False


def _chain(error: BaseException):
    """``error`` and every error it was raised from or while handling, each once."""
    seen: set[int] = set()
    todo = [error]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [current.__cause__, current.__context__]
        todo += [arg for arg in current.args if isinstance(arg, BaseException)]


class BusyError(HubError):
    """хаб занят другой записью: повторите запрос через несколько секунд"""

    title = 'Хаб занят'
    # Seconds an interface is told to wait before it tries again (HTTP Retry-After).
    retry_after = 5


# SQLITE_BUSY (5): another connection holds the write lock past our busy timeout; SQLITE_LOCKED
# (6): the same within one process (shared cache).
_SQLITE_BUSY_CODES = frozenset((5, 6))


def is_busy(error: BaseException) -> bool:
    """True when ``error`` (or an error in its chain) says the database stayed locked."""
    return any(isinstance(current, sqlite3.Error)
               and getattr(current, 'sqlite_errorcode', 0) & 0xFF in _SQLITE_BUSY_CODES
               for current in _chain(error))


class DeadlineError(HubError):
    """запрос выполнялся слишком долго и остановлен: сузьте запрос (JQL, период) или повторите позже"""

    title = 'Запрос слишком долгий'
    # Seconds an interface is told to wait before it tries again (HTTP Retry-After): a read that
    # ran out of time will likely do so again while the hub is as loaded as it was.
    retry_after = 10

    def __init__(self, seconds: float | None = None, message: str | None = None):
        if message is None and seconds is not None:
            message = (f'запрос выполнялся дольше {seconds:g} с и остановлен: сузьте запрос '
                       '(JQL, период) или повторите позже')
        super().__init__(message)


class ClientGoneError(DeadlineError):
    """клиент отключился, не дождавшись ответа: чтение остановлено"""

    title = 'Клиент отключился'


# SQLITE_INTERRUPT (9): a statement ended by sqlite3_interrupt() or a progress handler.
_SQLITE_INTERRUPT = 9


def is_interrupted(error: BaseException) -> bool:
    """True when ``error`` (or an error in its chain) is SQLite's «interrupted»."""
    return any(isinstance(current, sqlite3.Error)
               and getattr(current, 'sqlite_errorcode', 0) & 0xFF == _SQLITE_INTERRUPT
               for current in _chain(error))


class SchemaError(HubError):
    """The database cannot be opened by this version of the hub."""

    title = 'Схема базы'


class MigrationError(SchemaError):
    """A migration step failed; the database was left at its old version."""
