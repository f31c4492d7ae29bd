"""The little JQL the demo's fake Jira understands: what the agent sends, answered as Jira would.

Clauses ``field op value`` joined by ``AND``/``OR``/``NOT`` and parentheses, then ``ORDER BY``.
Fields: ``project``, ``key``/``issuekey``, ``labels``, ``status``, ``issuetype``, ``assignee``,
``reporter``, ``creator``, ``created``, ``updated``; operators ``= != IN NOT IN > >= < <=``; values
bare, quoted, ``currentUser()``, ``EMPTY`` and relative dates (``-30d``, ``-2h``, ``-15m``).
Anything else is refused the way Jira refuses it: a 400 with ``errorMessages``. So is a ``key``
that names no issue («An issue with key 'X' does not exist for field 'key'.»), as Jira does.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable

_TOKEN = re.compile(r'\s*(?:(?P<string>"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')|(?P<op>!=|>=|<=|=|>|<|~)'
                    r'|(?P<paren>[(),])|(?P<word>[^\s(),=!<>~"\']+))')
FIELDS = {'project', 'key', 'issuekey', 'labels', 'status', 'issuetype', 'type', 'assignee',
          'reporter', 'creator', 'created', 'updated', 'summary'}
_RELATIVE = re.compile(r'^([+-]?\d+)([wdhm])$')


class JqlError(Exception):
    """A query Jira would refuse (HTTP 400)."""


@dataclass
class Query:
    test: Callable[[object], bool]
    order: list[tuple[str, bool]]          # (field, descending)
    keys: list[str]                        # keys the query names (Jira checks they exist)


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    while position < len(text):
        if text[position:].strip() == '':
            break
        match = _TOKEN.match(text, position)
        if not match:
            raise JqlError(f"Ошибка в запросе JQL: неожиданный символ в позиции {position + 1}.")
        kind = match.lastgroup
        value = match.group(kind)
        if kind == 'string':
            value = re.sub(r'\\(.)', r'\1', value[1:-1])
        tokens.append((kind, value))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str, now: datetime, user: str | None):
        self.tokens = _tokens(text)
        self.position = 0
        self.now = now
        self.user = user
        self.keys: list[str] = []

    def peek(self, offset: int = 0) -> tuple[str, str] | None:
        index = self.position + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def word(self, offset: int = 0) -> str:
        token = self.peek(offset)
        return token[1].lower() if token and token[0] == 'word' else ''

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise JqlError('Ошибка в запросе JQL: запрос неожиданно закончился.')
        self.position += 1
        return token

    def parse(self) -> Query:
        test = (lambda row: True) if self.peek() is None or self.word() == 'order' else self.expression()
        order = []
        if self.word() == 'order':
            self.take()
            if self.word() != 'by':
                raise JqlError("Ошибка в запросе JQL: ожидалось 'by' после 'order'.")
            self.take()
            while True:
                field = self.take()[1].lower()
                descending = False
                if self.word() in ('asc', 'desc'):
                    descending = self.take()[1].lower() == 'desc'
                order.append((field, descending))
                if self.peek() and self.peek()[0] == 'paren' and self.peek()[1] == ',':
                    self.take()
                    continue
                break
        if self.peek() is not None:
            raise JqlError(f"Ошибка в запросе JQL: лишнее '{self.peek()[1]}'.")
        return Query(test, order, self.keys)

    def expression(self):
        left = self.term()
        while self.word() == 'or':
            self.take()
            right = self.term()
            left = (lambda a, b: lambda row: a(row) or b(row))(left, right)
        return left

    def term(self):
        left = self.factor()
        while self.word() == 'and':
            self.take()
            right = self.factor()
            left = (lambda a, b: lambda row: a(row) and b(row))(left, right)
        return left

    def factor(self):
        if self.word() == 'not':
            self.take()
            inner = self.factor()
            return lambda row: not inner(row)
        token = self.peek()
        if token and token[0] == 'paren' and token[1] == '(':
            self.take()
            inner = self.expression()
            if self.take() != ('paren', ')'):
                raise JqlError("Ошибка в запросе JQL: ожидалась ')'.")
            return inner
        return self.clause()

    def clause(self):
        field = self.take()[1].lower()
        if field not in FIELDS:
            raise JqlError(f"Поле '{field}' не существует или у вас нет разрешения на его просмотр.")
        field = {'issuekey': 'key', 'type': 'issuetype'}.get(field, field)
        if self.word() == 'not' and self.word(1) == 'in':
            self.take(), self.take()
            operator = 'not in'
        elif self.word() in ('in', 'is'):
            operator = self.take()[1].lower()
            if operator == 'is' and self.word() == 'not':
                self.take()
                operator = 'is not'
        else:
            kind, operator = self.take()
            if kind != 'op':
                raise JqlError(f"Ошибка в запросе JQL: ожидался оператор после '{field}'.")
        values = self.values() if operator in ('in', 'not in') else [self.value()]
        if field == 'key':
            self.keys.extend(str(value).upper() for value in values if isinstance(value, str))
        return _predicate(field, operator, values)

    def values(self) -> list:
        if self.take() != ('paren', '('):
            raise JqlError("Ошибка в запросе JQL: ожидалась '(' после IN.")
        values = [self.value()]
        while self.peek() == ('paren', ','):
            self.take()
            values.append(self.value())
        if self.take() != ('paren', ')'):
            raise JqlError("Ошибка в запросе JQL: ожидалась ')'.")
        return values

    def value(self):
        kind, text = self.take()
        if kind == 'word' and text.lower() in ('empty', 'null'):
            return None
        if kind == 'word' and self.peek() == ('paren', '('):
            self.take()
            if self.take() != ('paren', ')') or text.lower() != 'currentuser':
                raise JqlError(f"Функция '{text}' не поддерживается.")
            return self.user
        if kind == 'word':
            relative = _RELATIVE.match(text)
            if relative:
                amount, unit = int(relative.group(1)), relative.group(2)
                step = {'w': timedelta(weeks=1), 'd': timedelta(days=1), 'h': timedelta(hours=1),
                        'm': timedelta(minutes=1)}[unit]
                return self.now + amount * step
        return text


def _predicate(field: str, operator: str, values: list):
    def get(row):
        return row.value(field)

    if field in ('created', 'updated'):
        bounds = [value if isinstance(value, datetime) else _date(value) for value in values]
        compare = {'>': lambda a, b: a > b, '>=': lambda a, b: a >= b, '<': lambda a, b: a < b,
                   '<=': lambda a, b: a <= b, '=': lambda a, b: a == b,
                   '!=': lambda a, b: a != b}.get(operator)
        if compare is None:
            raise JqlError(f"Оператор '{operator}' не поддерживается для поля '{field}'.")
        return lambda row: get(row) is not None and compare(get(row), bounds[0])
    wanted = {None if value is None else str(value).casefold() for value in values}

    def matches(row) -> bool:
        current = get(row)
        found = {None} if current in (None, []) else {
            str(item).casefold() for item in (current if isinstance(current, list) else [current])}
        return bool(found & wanted)

    if operator in ('=', 'in', 'is'):
        return matches
    if operator in ('!=', 'not in', 'is not'):
        return lambda row: not matches(row)
    raise JqlError(f"Оператор '{operator}' не поддерживается для поля '{field}'.")


def _date(text) -> datetime:
    try:
        moment = datetime.fromisoformat(str(text).replace('/', '-'))
    except ValueError:
        raise JqlError(f"Значение '{text}' для поля даты неверно.") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def parse(text: str, *, now: datetime | None = None, user: str | None = None) -> Query:
    """The query ``text``; JqlError (Jira's 400) when it is not in the subset above."""
    return _Parser(text, now or datetime.now(timezone.utc), user).parse()


__all__ = ['parse', 'Query', 'JqlError']
