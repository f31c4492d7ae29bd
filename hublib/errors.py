"""The hub's domain errors: a flat family of small classes.

Interfaces translate them (hubweb maps each class to one HTTP status in one table; the CLI prints
the message). Client input must only ever surface as one of these, never as a bare exception.
"""
from __future__ import annotations


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


class SchemaError(HubError):
    """The database cannot be opened by this version of the hub."""

    title = 'Схема базы'


class MigrationError(SchemaError):
    """A migration step failed; the database was left at its old version."""
