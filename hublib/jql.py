"""Offline JQL (contract §16): the language. Text → tokens → tree (:func:`parse`); the tree and
the request's time zone → SQL conditions and sort expressions over the mirror (:func:`compile_search`).

``hublib.reads`` runs what this module builds (pages, counts, facets, CSV); ``~`` reaches FTS5
through ``hublib.search`` only. Every refusal is a ``ValidationError({'jql': [message]})`` whose
message names the token and its 1-based position («неизвестное поле "asignee", позиция 1»).

Parser decision (issue 20): a hand-written recursive descent, not ``lark``. Measured with
``scripts/bench_jql_parser.py`` (the same grammar in lark 1.3.1, LALR) on the shared 2-core
machine under heavy load: six typical queries parse in 0.27–1.5 ms here against 1.3–8.5 ms with
lark (4–5x), whose parser also takes ~470 ms to build at import. And §16's refusals are ours to
word and place: lark accepts ``asignee = x``, ``status ~ x`` and ``status = AND`` (the field
table and the keyword rule are checks of ours either way) and puts an unclosed ``(`` at the end
of the query instead of at the parenthesis. The grammar is small (two precedence levels, no left
recursion): the descent is ~250 lines and the hub gains no dependency.

Decisions where §16 is silent (also in docs/jql.md):
- Comparisons of dates: ``=``/``!=`` use the value's span (a day for ``"2026-11-30"``, a minute for
  ``"2026-11-30 14:05"``, a second for ``-7d``, ``now()`` and the other functions); ``< <= > >=``
  compare with its start. Window bounds of history predicates: ``AFTER d`` ⇔ at ≥ start of d,
  ``BEFORE d`` ⇔ at < start of d (the two split time in two).
- ``due``, ``"planned start"``, ``"planned end"`` hold dates: a date is the start of that day in ``tz``.
- A relative offset of several parts (``"-1w 2d"``): a part without a sign takes the sign of the
  part before it (−9 days).
- Date functions with a bare number (``startOfMonth(-1)``) move by the function's own unit.
- ``endOfDay()`` and the other ends are the last second of the period.
- ``= EMPTY`` / ``!= EMPTY`` mean ``IS EMPTY`` / ``IS NOT EMPTY``; ``IN (…, EMPTY)`` also matches empty.
- ``WAS NOT v`` ⇔ not ``WAS v`` (the issue never held v, in the window when given).
- An issue's timeline starts at its creation: ``WAS`` with a window does not match an issue
  created after the window.
- Text fields sort by their casefolded value; ``rank`` by its text (Jira's lexorank);
  ``hubProject`` names a hub project by label (any case): an unknown one is a refusal.
- A sprint name that no mirrored sprint has matches nothing (the boards may not be fetched yet).
- Relevance: without ``ORDER BY`` the first ``~`` that is a top-level AND term ranks the issues;
  a ``~`` only inside OR or NOT filters and the order stays natural.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any, Iterable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from . import search as fulltext
from .errors import ValidationError
from .models import (Issue, IssueChange, IssueLink, IssueMember, IssueNote, IssueSprint, JiraSprint,
                     Project, SqlNames)
from .settings import DEFAULT_CLOSED_STATUSES, setting
from .slices import NATURAL_KEY_SQL, natural_key
from .timeutil import format_utc, to_utc

# SQLite refuses an expression deeper than 1,000 levels; a query of a person or an assistant never
# comes near these, and a hostile one is a 422 instead of a 500 (or Python's recursion limit).
MAX_DEPTH, MAX_CLAUSES = 50, 300
KEYWORDS = frozenset('AND OR NOT EMPTY NULL ORDER BY IN IS WAS CHANGED FROM TO AFTER BEFORE ON '
                     'DURING'.split())
_WORD_EXTRA = frozenset('_-.:/@*+')
_OPERATORS = ('!=', '!~', '>=', '<=', '=', '>', '<', '~')


def _error(message: str, position: int) -> ValidationError:
    return ValidationError({'jql': [f'{message}, позиция {position}']})


# --- tokens ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Token:
    """One token: ``kind`` is ``word``, ``string``, ``op``, ``(``, ``)``, ``,`` or ``end``."""

    kind: str
    text: str
    position: int  # 1-based, of its first character

    def keyword(self, *names: str) -> bool:
        return self.kind == 'word' and self.text.upper() in names


def tokenize(text: str) -> list[Token]:
    """The tokens of a query, ``end`` last; an unclosed quote or a stray character is refused."""
    tokens: list[Token] = []
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char.isspace():
            index += 1
        elif char in '(),':
            tokens.append(Token(char, char, index + 1))
            index += 1
        elif char in '"\'':
            start, index, parts = index, index + 1, []
            while index < size and text[index] != char:
                if text[index] == '\\' and index + 1 < size and text[index + 1] in '"\'\\':
                    index += 1
                parts.append(text[index])
                index += 1
            if index >= size:
                raise _error(f'незакрытая кавычка {char}', start + 1)
            tokens.append(Token('string', ''.join(parts), start + 1))
            index += 1
        elif char in '!=<>~':
            operator = next((op for op in _OPERATORS if text.startswith(op, index)), None)
            if operator is None:
                raise _error(f'неожиданный символ "{char}"', index + 1)
            tokens.append(Token('op', operator, index + 1))
            index += len(operator)
        elif char.isalnum() or char in _WORD_EXTRA:
            start = index
            while index < size and (text[index].isalnum() or text[index] in _WORD_EXTRA):
                index += 1
            tokens.append(Token('word', text[start:index], start + 1))
        else:
            raise _error(f'неожиданный символ "{char}"', index + 1)
    tokens.append(Token('end', '', size + 1))
    return tokens


# --- the tree --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Value:
    """A value as written: a word, a quoted string, ``EMPTY`` or a function call."""

    text: str
    position: int
    quoted: bool = False
    empty: bool = False
    function: str | None = None       # canonical name of a function call
    arguments: tuple['Value', ...] = ()
    moment: datetime | None = None    # a moment given by code (updated_since=), not by text

    def shown(self) -> str:
        return f'{self.text}()' if self.function else self.text


@dataclass(frozen=True)
class Predicate:
    """A history predicate: ``FROM TO BY AFTER BEFORE ON DURING`` and its value(s)."""

    name: str
    values: tuple[Value, ...]
    position: int


@dataclass(frozen=True)
class Clause:
    """``field operator value(s) [predicates]``; ``operator`` is canonical (lower case)."""

    field: 'FieldSpec'
    operator: str
    values: tuple[Value, ...] = ()
    predicates: tuple[Predicate, ...] = ()
    position: int = 0            # of the field name
    operator_position: int = 0


@dataclass(frozen=True)
class And:
    items: tuple


@dataclass(frozen=True)
class Or:
    items: tuple


@dataclass(frozen=True)
class Not:
    item: Any


@dataclass(frozen=True)
class Sort:
    field: 'FieldSpec'
    descending: bool
    position: int


@dataclass(frozen=True)
class Query:
    """A parsed query: the condition (``None``: every issue) and the order (may be empty)."""

    where: Any
    order: tuple[Sort, ...] = ()


# --- fields ----------------------------------------------------------------------------------------

_EQ = frozenset(('=', '!=', 'in', 'not in'))
_EMPTY = frozenset(('is empty', 'is not empty'))
_COMPARE = frozenset(('<', '<=', '>', '>='))
_HISTORY = frozenset(('was', 'was not', 'was in', 'was not in', 'changed'))


@dataclass(frozen=True)
class FieldSpec:
    """A JQL field: its canonical name, aliases, kind (how it compiles), column and operators."""

    name: str
    kind: str
    operators: frozenset
    column: str | None = None
    aliases: tuple[str, ...] = ()
    history: str | None = None      # issue_change.field of WAS/CHANGED
    sortable: bool = False


FIELDS = (
    FieldSpec('key', 'key', _EQ | _COMPARE, 'key', ('issue', 'issuekey'), sortable=True),
    FieldSpec('project', 'project', _EQ),
    FieldSpec('hubProject', 'hub_project', frozenset(('=', 'in'))),
    FieldSpec('summary', 'text', frozenset(('~', '!~')) | _EMPTY, 'summary', sortable=True),
    FieldSpec('description', 'text', frozenset(('~', '!~')) | _EMPTY, 'description'),
    FieldSpec('comment', 'text', frozenset(('~', '!~'))),
    FieldSpec('text', 'text', frozenset(('~',))),
    FieldSpec('status', 'choice', _EQ | _EMPTY | _HISTORY, 'status', history='status',
              sortable=True),
    FieldSpec('statusCategory', 'category', frozenset(('=', '!='))),
    FieldSpec('resolution', 'resolution', frozenset(('=',)) | _EMPTY),
    FieldSpec('priority', 'choice', _EQ | _EMPTY | _HISTORY, 'priority', history='priority',
              sortable=True),
    FieldSpec('issuetype', 'choice', _EQ, 'issue_type', ('type',), sortable=True),
    FieldSpec('assignee', 'choice', _EQ | _EMPTY | _HISTORY, 'assignee', history='assignee',
              sortable=True),
    FieldSpec('reporter', 'choice', _EQ | _EMPTY, 'reporter', sortable=True),
    FieldSpec('labels', 'labels', _EQ | _EMPTY, 'labels', ('label',)),
    FieldSpec('created', 'moment', _EQ - {'in', 'not in'} | _COMPARE | _EMPTY, 'created',
              ('createdDate',), sortable=True),
    FieldSpec('updated', 'moment', _EQ - {'in', 'not in'} | _COMPARE | _EMPTY, 'jira_updated',
              ('updatedDate',), sortable=True),
    FieldSpec('due', 'date', _EQ - {'in', 'not in'} | _COMPARE | _EMPTY, 'duedate',
              ('duedate',), sortable=True),
    FieldSpec('planned start', 'date', _EQ - {'in', 'not in'} | _COMPARE | _EMPTY,
              'planned_start', ('plannedStart',), sortable=True),
    FieldSpec('planned end', 'date', _EQ - {'in', 'not in'} | _COMPARE | _EMPTY, 'planned_end',
              ('plannedEnd',), sortable=True),
    FieldSpec('Epic Link', 'choice', _EQ | _EMPTY, 'epic_key', ('epic', 'parent')),
    FieldSpec('sprint', 'sprint', _EQ | _EMPTY),
    FieldSpec('Story Points', 'number', _EQ - {'in', 'not in'} | _COMPARE | _EMPTY,
              'story_points', ('storyPoints',), sortable=True),
    FieldSpec('note', 'note', _EMPTY),
    FieldSpec('rank', 'rank', frozenset(), 'rank', sortable=True),
)
_BY_NAME = {name.casefold(): spec for spec in FIELDS for name in (spec.name, *spec.aliases)}
# Filters of GET /issues that JQL has no word for: clauses of the same tree, built by reads.
Q_FIELD = FieldSpec('q', 'substring', frozenset(('~',)))
NEIGHBOR_FIELD = FieldSpec('neighbor', 'neighbor', frozenset(('=',)))
HUB_PROJECT = _BY_NAME['hubproject']
TEXT = _BY_NAME['text']
UPDATED = _BY_NAME['updated']
STATUS = _BY_NAME['status']
ASSIGNEE = _BY_NAME['assignee']

# Jira functions the mirror has no data for (users, watchers, versions, …): refused by name.
UNAVAILABLE_FUNCTIONS = frozenset(name.casefold() for name in (
    'currentUser', 'currentLogin', 'membersOf', 'watchedIssues', 'votedIssues', 'issueHistory',
    'updatedBy', 'lastLogin', 'projectsLeadByUser', 'projectsWhereUserHasPermission',
    'projectsWhereUserHasRole', 'componentsLeadByUser', 'releasedVersions', 'unreleasedVersions',
    'earliestUnreleasedVersion', 'latestReleasedVersion', 'standardIssueTypes',
    'subtaskIssueTypes', 'cascadeOption', 'issuesWithRemoteLinksByGlobalId', 'approved',
    'approver', 'breached', 'completed', 'elapsed', 'everBreached', 'paused', 'remaining',
    'running', 'withinCalendarHours', 'myApproval', 'myPending', 'pending', 'pendingBy',
    'organizationMembers', 'linkedIssuesOf', 'parentEpic', 'portfolioChildIssuesOf'))
DATE_FUNCTIONS = ('now', 'startOfDay', 'endOfDay', 'startOfWeek', 'endOfWeek', 'startOfMonth',
                  'endOfMonth', 'startOfYear', 'endOfYear')
SPRINT_FUNCTIONS = {'openSprints': 'active', 'closedSprints': 'closed', 'futureSprints': 'future'}
FUNCTIONS = {name.casefold(): name for name in (*DATE_FUNCTIONS, *SPRINT_FUNCTIONS, 'linkedIssues')}

SUPPORTED = (
    'Поля JQL: key (issue), project, hubProject (разрез проекта хаба), summary, description, '
    'comment, text (~), status, statusCategory (= Done), resolution (= Unresolved, IS EMPTY), '
    'priority, issuetype (type), assignee, reporter, labels, created, updated, due, '
    '"planned start", "planned end", "Epic Link" (epic), sprint (openSprints(), closedSprints(), '
    'futureSprints()), "Story Points", note (IS EMPTY), issue IN linkedIssues(KEY[, "тип"]). '
    'Операторы: = != > >= < <= ~ !~ IN, NOT IN, IS [NOT] EMPTY, WAS [NOT] [IN], CHANGED с FROM TO '
    'BY AFTER BEFORE ON DURING (status, priority, assignee); AND, OR, NOT, скобки, ORDER BY. '
    'Даты: "2026-11-30", "2026-11-30 14:05", -7d, -2w, now(), startOfDay() … endOfYear(). '
    'Отказ (422 с позицией): currentUser(), membersOf(), watchedIssues() и другие функции без '
    'данных в зеркале, неизвестные поля и операторы.')


def field_named(name: str, position: int) -> FieldSpec:
    """The field called ``name`` (any case, any alias); refused when unknown."""
    spec = _BY_NAME.get(name.casefold())
    if spec is None:
        raise _error(f'неизвестное поле "{name}"', position)
    return spec


# --- parser ----------------------------------------------------------------------------------------

class _Parser:
    def __init__(self, text: str):
        self.tokens = tokenize(text)
        self.index = 0
        self.opened: list[int] = []  # positions of the parentheses still open
        self.depth = self.clauses = 0

    @property
    def token(self) -> Token:
        return self.tokens[self.index]

    def take(self) -> Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def expected(self, what: str) -> ValidationError:
        token = self.token
        if token.kind == 'end' and self.opened:
            return _error('незакрытая скобка "("', self.opened[-1])
        if token.kind == 'end':
            return _error(f'запрос оборвался: ожидается {what}', token.position)
        if token.kind == ')':
            return _error('лишняя скобка ")"', token.position)
        return _error(f'ожидается {what}, а не "{token.text}"', token.position)

    def query(self) -> Query:
        where = None
        if not self.at_order_by():
            if self.token.kind != 'end':
                where = self.disjunction()
        order: list[Sort] = []
        if self.at_order_by():
            self.take()
            self.take()
            order.append(self.sort())
            while self.token.kind == ',':
                self.take()
                order.append(self.sort())
        if self.token.kind != 'end':
            if self.token.kind == ')':
                raise _error('лишняя скобка ")"', self.token.position)
            raise self.expected('AND, OR или ORDER BY')
        return Query(where, tuple(order))

    def at_order_by(self) -> bool:
        return self.token.keyword('ORDER') and self.tokens[self.index + 1].keyword('BY')

    def disjunction(self):
        items = [self.conjunction()]
        while self.token.keyword('OR'):
            self.take()
            items.append(self.conjunction())
        return items[0] if len(items) == 1 else Or(tuple(items))

    def conjunction(self):
        items = [self.term()]
        while self.token.keyword('AND'):
            self.take()
            items.append(self.term())
        return items[0] if len(items) == 1 else And(tuple(items))

    def term(self):
        token = self.token
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _error(f'слишком глубокая вложенность (больше {MAX_DEPTH})', token.position)
        try:
            return self._term(token)
        finally:
            self.depth -= 1

    def _term(self, token: Token):
        if token.keyword('NOT'):
            self.take()
            return Not(self.term())
        if token.kind == '(':
            self.take()
            self.opened.append(token.position)
            inner = self.disjunction()
            if self.token.kind != ')':
                raise self.expected('AND, OR или ")"')
            self.opened.pop()
            self.take()
            return inner
        return self.clause()

    def field(self) -> tuple[FieldSpec, Token]:
        token = self.token
        if token.kind == 'string' or (token.kind == 'word' and token.text.upper() not in KEYWORDS):
            self.take()
            if self.token.kind == '(' and token.kind == 'word':
                raise _error(f'ожидается поле, а не функция {token.text}()', token.position)
            return field_named(token.text, token.position), token
        raise self.expected('поле')

    def clause(self) -> Clause:
        self.clauses += 1
        if self.clauses > MAX_CLAUSES:
            raise _error(f'слишком много условий (больше {MAX_CLAUSES})', self.token.position)
        spec, name = self.field()
        token = self.token
        operator, values, predicates = None, (), ()
        if token.kind == 'op':
            self.take()
            operator = token.text
            value = self.value()
            if value.empty and operator in ('=', '!='):
                operator = 'is empty' if operator == '=' else 'is not empty'
            else:
                values = (value,)
        elif token.keyword('IN'):
            self.take()
            operator, values = 'in', self.values()
        elif token.keyword('NOT') and self.tokens[self.index + 1].keyword('IN'):
            self.take()
            self.take()
            operator, values = 'not in', self.values()
        elif token.keyword('IS'):
            self.take()
            negated = self.token.keyword('NOT')
            if negated:
                self.take()
            if not self.token.keyword('EMPTY', 'NULL'):
                raise self.expected('EMPTY')
            self.take()
            operator = 'is not empty' if negated else 'is empty'
        elif token.keyword('WAS'):
            self.take()
            operator = 'was'
            if self.token.keyword('NOT'):
                self.take()
                operator += ' not'
            if self.token.keyword('IN'):
                self.take()
                operator += ' in'
                values = self.values()
            else:
                values = (self.value(),)
            predicates = self.predicates(('BY', 'AFTER', 'BEFORE', 'ON', 'DURING'))
        elif token.keyword('CHANGED'):
            self.take()
            operator = 'changed'
            predicates = self.predicates(('FROM', 'TO', 'BY', 'AFTER', 'BEFORE', 'ON', 'DURING'))
        else:
            raise self.expected(f'оператор после поля {name.text}')
        if operator not in spec.operators:
            shown = operator.upper() if operator[0].isalpha() else operator
            raise _error(f'оператор "{shown}" не применим к полю {spec.name}', token.position)
        return Clause(spec, operator, tuple(values), tuple(predicates), name.position,
                      token.position)

    def predicates(self, allowed: tuple[str, ...]) -> list[Predicate]:
        found = []
        names = ('FROM', 'TO', 'BY', 'AFTER', 'BEFORE', 'ON', 'DURING')
        while self.token.keyword(*names):
            token = self.take()
            name = token.text.upper()
            if name not in allowed:
                raise _error(f'WAS не принимает {name}', token.position)
            if name == 'DURING':
                opening = self.token
                if opening.kind != '(':
                    raise self.expected('( после DURING')
                self.take()
                self.opened.append(opening.position)
                first = self.value()
                if self.token.kind != ',':
                    raise self.expected('"," между датами DURING')
                self.take()
                second = self.value()
                if self.token.kind != ')':
                    if self.token.kind == 'end':
                        raise _error('незакрытая скобка "("', opening.position)
                    raise self.expected('")"')
                self.opened.pop()
                self.take()
                found.append(Predicate('during', (first, second), token.position))
            else:
                found.append(Predicate(name.lower(), (self.value(),), token.position))
        return found

    def values(self) -> tuple[Value, ...]:
        token = self.token
        if token.kind == 'word' and self.tokens[self.index + 1].kind == '(':
            return (self.value(),)  # a function giving a list: openSprints(), linkedIssues(…)
        if token.kind != '(':
            raise self.expected('список в скобках')
        self.take()
        self.opened.append(token.position)
        items = [self.value()]
        while self.token.kind == ',':
            self.take()
            items.append(self.value())
        if self.token.kind != ')':
            if self.token.kind == 'end':
                raise _error('незакрытая скобка "("', token.position)
            raise self.expected('"," или ")"')
        self.opened.pop()
        self.take()
        return tuple(items)

    def value(self) -> Value:
        token = self.token
        if token.kind == 'string':
            self.take()
            return Value(token.text, token.position, quoted=True)
        if token.kind != 'word':
            raise self.expected('значение')
        if self.tokens[self.index + 1].kind == '(':
            return self.function()
        upper = token.text.upper()
        if upper in ('EMPTY', 'NULL'):
            self.take()
            return Value(token.text, token.position, empty=True)
        if upper in KEYWORDS:
            raise _error(f'"{token.text}" — ключевое слово: значение возьмите в кавычки',
                         token.position)
        self.take()
        return Value(token.text, token.position)

    def function(self) -> Value:
        token = self.take()
        folded = token.text.casefold()
        if folded in UNAVAILABLE_FUNCTIONS:
            raise _error(f'функция {token.text}() недоступна в зеркале', token.position)
        if folded not in FUNCTIONS:
            raise _error(f'неизвестная функция {token.text}()', token.position)
        opening = self.take()
        self.opened.append(opening.position)
        arguments = []
        if self.token.kind != ')':
            arguments.append(self.value())
            while self.token.kind == ',':
                self.take()
                arguments.append(self.value())
        if self.token.kind != ')':
            if self.token.kind == 'end':
                raise _error('незакрытая скобка "("', opening.position)
            raise self.expected('"," или ")"')
        self.opened.pop()
        self.take()
        return Value(token.text, token.position, function=FUNCTIONS[folded],
                     arguments=tuple(arguments))

    def sort(self) -> Sort:
        spec, name = self.field()
        if not spec.sortable:
            raise _error(f'по полю "{name.text}" нельзя сортировать', name.position)
        descending = False
        if self.token.kind == 'word' and self.token.text.upper() in ('ASC', 'DESC'):
            descending = self.take().text.upper() == 'DESC'
        return Sort(spec, descending, name.position)


def parse(text: str | None) -> Query:
    """The tree of a JQL query; ValidationError (``jql``) with the token and its position."""
    if text is None or not text.strip():
        return Query(None)
    return _Parser(text).query()


# --- time ------------------------------------------------------------------------------------------

def zone(name: str | None) -> ZoneInfo | timezone:
    """The request's time zone: an IANA name (``tz=``), UTC when absent; refused naming ``tz``."""
    if name is None or name == '' or name.upper() == 'UTC':
        return timezone.utc
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError, TypeError):
        raise ValidationError({'tz': [f'неизвестный часовой пояс "{name}": ожидается имя IANA, '
                                      'например Europe/Moscow']}) from None


_DATE = re.compile(r'(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[ T](\d{1,2}):(\d{2}))?')
_OFFSET_PART = re.compile(r'\s*([+-]?)(\d+)([wdhm])')
_UNITS = {'w': timedelta(weeks=1), 'd': timedelta(days=1), 'h': timedelta(hours=1),
          'm': timedelta(minutes=1)}


@dataclass(frozen=True)
class Span:
    """A date value as a half-open interval of aware moments: ``[start, end)``."""

    start: datetime
    end: datetime


def _relative(text: str) -> timedelta | None:
    try:
        return _offset(text)
    except OverflowError:  # -99999999999d: no date at all
        return None


def _offset(text: str) -> timedelta | None:
    position, total, sign = 0, timedelta(), 1
    text = text.strip()
    if not text:
        return None
    while position < len(text):
        match = _OFFSET_PART.match(text, position)
        if match is None:
            return None
        if match.group(1):
            sign = -1 if match.group(1) == '-' else 1
        total += sign * int(match.group(2)) * _UNITS[match.group(3)]
        position = match.end()
    return total


def _add_months(moment: datetime, months: int) -> datetime:
    month = moment.month - 1 + months
    return moment.replace(year=moment.year + month // 12, month=month % 12 + 1)


class Clock:
    """Dates of one request: ``now`` and the time zone of day, week, month and year boundaries."""

    def __init__(self, now: datetime, tz):
        self.tz = tz
        self.now = now.astimezone(tz)

    def _local(self, year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
        # fold=0 and a round trip through UTC: a wall time skipped by a DST change moves forward
        moment = datetime(year, month, day, hour, minute, tzinfo=self.tz)
        return moment.astimezone(timezone.utc).astimezone(self.tz)

    def day_start(self, moment: datetime) -> datetime:
        local = moment.astimezone(self.tz)
        return self._local(local.year, local.month, local.day)

    def period(self, name: str, moment: datetime, shift: int) -> tuple[datetime, datetime]:
        """Start and (exclusive) end of the day/week/month/year of ``moment``, moved ``shift``."""
        local = moment.astimezone(self.tz)
        if name == 'Day':
            start = self._local(local.year, local.month, local.day)
            start = self._shift_days(start, shift)
            return start, self._shift_days(start, 1)
        if name == 'Week':
            monday = local.date() - timedelta(days=local.weekday())
            start = self._shift_days(self._local(monday.year, monday.month, monday.day), 7 * shift)
            return start, self._shift_days(start, 7)
        if name == 'Month':
            first = _add_months(local.replace(day=1), shift)
            start = self._local(first.year, first.month, 1)
            after = _add_months(first, 1)
            return start, self._local(after.year, after.month, 1)
        start = self._local(local.year + shift, 1, 1)
        return start, self._local(local.year + shift + 1, 1, 1)

    def _shift_days(self, start: datetime, days: int) -> datetime:
        day = start.astimezone(self.tz).date() + timedelta(days=days)
        return self._local(day.year, day.month, day.day)

    def span(self, value: Value) -> Span:
        """The interval a date value names; refused when it is no date (or none SQL can hold)."""
        span = self._span(value)
        try:
            # every bound SQL will see, in UTC, a day away from datetime's ends
            if all(1 <= moment.astimezone(timezone.utc).year <= 9998
                   for moment in (span.start, span.end)):
                return span
        except (OverflowError, ValueError):
            pass
        raise _error(f'неверная дата "{value.shown()}"', value.position)

    def _span(self, value: Value) -> Span:
        if value.moment is not None:
            moment = value.moment if value.moment.tzinfo else value.moment.replace(
                tzinfo=timezone.utc)
            return Span(moment, moment + timedelta(seconds=1))
        if value.function is not None:
            return self._function(value)
        if value.empty:
            raise _error('ожидается дата, а не EMPTY', value.position)
        text = value.text.strip()
        match = _DATE.fullmatch(text)
        if match:
            year, month, day, hour, minute = (int(part) if part else None for part in match.groups())
            try:
                date(year, month, day)
                if hour is None:
                    start = self._local(year, month, day)
                    return Span(start, self._shift_days(start, 1))
                if not (0 <= hour <= 23 and 0 <= minute <= 59):
                    raise ValueError
                start = self._local(year, month, day, hour, minute)
                return Span(start, start + timedelta(minutes=1))
            except (ValueError, OverflowError):
                raise _error(f'неверная дата "{value.text}"', value.position) from None
        offset = _relative(text)
        if offset is None:
            raise _error(f'неверная дата "{value.text}"', value.position)
        try:
            moment = self.now + offset
        except OverflowError:
            raise _error(f'неверная дата "{value.text}"', value.position) from None
        return Span(moment, moment + timedelta(seconds=1))

    def _function(self, value: Value) -> Span:
        name = value.function
        if name not in DATE_FUNCTIONS:
            raise _error(f'функция {value.text}() не даёт дату', value.position)
        if len(value.arguments) > 1:
            raise _error(f'функция {value.text}() принимает не больше одного аргумента',
                         value.position)
        moment, shift = self.now, 0
        if value.arguments:
            argument = value.arguments[0]
            text = argument.text.strip()
            offset = None if argument.function or argument.empty else _relative(text)
            if offset is not None:
                moment = moment + offset
            elif re.fullmatch(r'[+-]?\d{1,4}', text) and name != 'now':
                shift = int(text)
            else:
                raise _error(f'неверное смещение "{argument.text}"', argument.position)
        try:
            if name == 'now':
                return Span(moment, moment + timedelta(seconds=1))
            edge, period = ('start', name[7:]) if name.startswith('startOf') else ('end', name[5:])
            start, end = self.period(period, moment, shift)
        except (ValueError, OverflowError):
            raise _error(f'неверное смещение у {value.text}()', value.position) from None
        moment = start if edge == 'start' else end - timedelta(seconds=1)
        return Span(moment, moment + timedelta(seconds=1))


# --- SQL -------------------------------------------------------------------------------------------

I, C, M, L, N, S, SP, P = (SqlNames(Issue), SqlNames(IssueChange), SqlNames(IssueMember),
                           SqlNames(IssueLink), SqlNames(IssueNote), SqlNames(IssueSprint),
                           SqlNames(JiraSprint), SqlNames(Project))


def utc_sql(column: str) -> str:
    """A Jira time column as UTC text ``YYYY-MM-DD HH:MM:SS`` in plain SQL (an index can hold it).

    SQLite's ``datetime()`` reads ISO-8601 with ``Z`` or ``±HH:MM``; Jira writes ``+0300``, so
    the colon is put in first. The twin of ``timeutil.to_utc`` for the times Jira and the agent
    send: ``tests/lib/test_jql.py`` proves they agree (hypothesis) on every such shape.
    """
    text = f'upper({column})'
    return (f"datetime(CASE WHEN {text} GLOB '*[+-][0-9][0-9][0-9][0-9]' THEN "
            f"substr({text}, 1, length({text}) - 2) || ':' || substr({text}, -2) ELSE {text} END)")


def sql_moment(moment: datetime) -> str:
    """An aware moment as :func:`utc_sql` spells it."""
    return moment.astimezone(timezone.utc).strftime('%Y-%m-%d %H:%M:%S')


# Derived indexes that JQL needs (created at open with slices.DERIVED_INDEXES' statements).
# ORDER BY updated walks this index, and the filters people put beside it (status, assignee,
# priority, labels, project by key) are tested on its entries before the wide issue row is read.
# 50,000 issues, first page of 100, CPU ms on the loaded 2-core machine: `project = AURORA AND
# status IN (a, b) AND assignee = u ORDER BY updated DESC` 16.6 (no index: a sort of every issue)
# -> 10.9; `labels = L AND updated >= -30d ORDER BY priority DESC, updated DESC` 25.7 -> 9.3
# (with the bare expression index: 16.6 and 25.7, every entry read its row). It also covers the
# facets (status, assignee, priority, issue type of every matching issue): 366 -> 250 ms CPU for
# the whole mirror of 50,000.
#
# CHANGED reads the change rows of one field in a window (``status CHANGED TO "Готово" AFTER -14d``):
# 200,000 issues / 2,000,000 change rows, 55,000 rows in the last 14 days, a quarter of them of
# status; CPU ms of the first page on the loaded machine: 110 with the `at` index alone (a row read
# per change), 68 with (field, at) (86 MiB), 36 with this covering one (131 MiB, 9 % of the file;
# built once at open: ~30 s at that size).
DERIVED_INDEXES = (
    f'CREATE INDEX IF NOT EXISTS issue_updated_utc ON {I} ({utc_sql(I.jira_updated)}, '
    f'{I.status}, {I.assignee}, {I.priority}, {I.issue_type}, {I.labels}, {I.key})',
    f'CREATE INDEX IF NOT EXISTS issue_change_field_at ON {C} ({C.field}, {C.at}, {C.to_string}, '
    f'{C.key})',
)


def fold(value: object) -> object:
    """Unicode casefold of a text (the ``hub_fold`` SQL function); anything else as it is."""
    return value.casefold() if type(value) is str else value


def register_functions(db) -> None:
    """Python functions SQL needs (per connection, idempotent): casefold, Jira time to UTC, a
    casefolded substring. SQLite's lower() is ASCII-only; these are deterministic."""
    connection = db.connection()
    connection.create_function('hub_fold', 1, fold, deterministic=True)
    connection.create_function('hub_to_utc', 1, to_utc, deterministic=True)
    connection.create_function(
        'hub_contains', 2,
        lambda text, needle: 1 if text is not None and needle in text.casefold() else 0,
        deterministic=True)


# --- the tree as SQL -------------------------------------------------------------------------------

@dataclass(frozen=True)
class SortColumn:
    """One column of an order: an SQL expression over ``i`` (empty values are NULL) and its way."""

    sql: str
    descending: bool


@dataclass
class Search:
    """A compiled query: AND-ed SQL conditions over ``i`` (issue) and ``m`` (the slice, when
    ``label``), their parameters, the order (empty: natural key order, or relevance when
    ``match`` is set) and the FTS5 expression whose bm25 ranks the issues."""

    conditions: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    label: str | None = None
    order: list[SortColumn] = field(default_factory=list)
    match: str | None = None


_KEY = re.compile(r'([A-Z][A-Z0-9_]*)-(\d+)')
_NATURAL_I = NATURAL_KEY_SQL.format(key='i.key')


class _Compiler:
    """Turns clauses into SQL text with named parameters (``:j0``, ``:j1`` …)."""

    def __init__(self, hub, clock: Clock, params: dict[str, Any], *, sliced: bool,
                 natural: str | None):
        self.hub, self.clock, self.params, self.sliced = hub, clock, params, sliced
        # the natural-order column the page walks (None: another order): a project's keys are
        # a range of it, so a project filter narrows the walk instead of testing every row
        self.natural = natural
        self._closed: list[str] | None = None

    def param(self, value: object) -> str:
        name = f'j{len(self.params)}'
        self.params[name] = value
        return ':' + name

    def params_of(self, values: Iterable[object]) -> str:
        return ', '.join(self.param(value) for value in values)

    # --- settings and names the mirror knows ------------------------------------------------

    def closed(self) -> list[str]:
        if self._closed is None:
            stored = setting(self.hub, 'closed_statuses', list(DEFAULT_CLOSED_STATUSES))
            self._closed = [fold(status) for status in stored if isinstance(status, str)] \
                if isinstance(stored, list) else []
        return self._closed

    # --- the tree -------------------------------------------------------------------------------

    def node(self, node) -> str:
        if isinstance(node, And):
            return '(' + ' AND '.join(self.node(item) for item in node.items) + ')'
        if isinstance(node, Or):
            return '(' + ' OR '.join(self.node(item) for item in node.items) + ')'
        if isinstance(node, Not):
            # NULL (an unknown comparison) is "no" on both sides: q and NOT q split the mirror
            return f'NOT ifnull({self.node(node.item)}, 0)'
        return self.clause(node)

    def clause(self, clause: Clause) -> str:
        kind = clause.field.kind
        if clause.operator in _HISTORY:
            return self.history(clause)
        for value in clause.values:
            if value.function is not None and not (
                    (kind == 'sprint' and value.function in SPRINT_FUNCTIONS)
                    or (kind in ('moment', 'date') and value.function in DATE_FUNCTIONS)
                    or (kind == 'key' and value.function == 'linkedIssues'
                        and clause.operator in ('in', 'not in'))):
                raise _error(f'функция {value.text}() не применима к полю {clause.field.name}',
                             value.position)
            if value.empty and clause.operator not in ('in', 'not in'):
                raise _error(f'EMPTY не применимо с оператором {clause.operator}',
                             value.position)
        return getattr(self, '_' + kind)(clause)

    # --- plain columns --------------------------------------------------------------------------

    @staticmethod
    def empty(column: str) -> str:
        return f"({column} IS NULL OR {column} = '')"

    @staticmethod
    def filled(column: str) -> str:
        return f"({column} IS NOT NULL AND {column} != '')"

    def _choice(self, clause: Clause) -> str:
        column = f'i.{getattr(I, clause.field.column)}'
        operator = clause.operator
        if operator == 'is empty':
            return self.empty(column)
        if operator == 'is not empty':
            return self.filled(column)
        values = [fold(value.text) for value in clause.values if not value.empty]
        with_empty = any(value.empty for value in clause.values)
        listed = f'hub_fold({column}) IN ({self.params_of(values)})'
        if operator in ('=', 'in'):
            return f'({listed} OR {self.empty(column)})' if with_empty else listed
        return f'({self.filled(column)} AND hub_fold({column}) NOT IN ({self.params_of(values)}))'

    def _key(self, clause: Clause) -> str:
        operator = clause.operator
        if operator in ('in', 'not in') and any(v.function for v in clause.values):
            if len(clause.values) > 1:
                raise _error('linkedIssues() — единственное значение списка',
                             clause.values[0].position)
            linked = self.linked(clause.values[0])
            return f'i.key {"IN" if operator == "in" else "NOT IN"} ({linked})'
        values = [value.text for value in clause.values if not value.empty]
        if operator in ('=', 'in'):
            return f'i.key IN ({self.params_of(values)})'
        if operator in ('!=', 'not in'):
            return f'i.key NOT IN ({self.params_of(values)})'
        value = clause.values[0]
        match = _KEY.fullmatch(value.text)
        if match is None:
            raise _error(f'ожидается ключ задачи, например AURORA-7, а не "{value.text}"',
                         value.position)
        prefix = match.group(1)
        return (f'(i.key > {self.param(prefix + "-")} AND i.key < {self.param(prefix + ".")} '
                f'AND {_NATURAL_I} {operator} {self.param(natural_key(value.text))})')

    def linked(self, value: Value) -> str:
        if value.function != 'linkedIssues' or not 1 <= len(value.arguments) <= 2 \
                or any(argument.function or argument.empty for argument in value.arguments):
            raise _error('ожидается linkedIssues(КЛЮЧ) или linkedIssues(КЛЮЧ, "тип связи")',
                         value.position)
        key = self.param(value.arguments[0].text)
        kind = ''
        if len(value.arguments) == 2:
            kind = f' AND hub_fold(l.{L.link_type}) = {self.param(fold(value.arguments[1].text))}'
        return (f'SELECT l.{L.target_key} FROM {L} l WHERE l.{L.source_key} = {key}{kind} '
                f'UNION SELECT l.{L.source_key} FROM {L} l WHERE l.{L.target_key} = {key}{kind}')

    def _project(self, clause: Clause) -> str:
        # A project's keys are one range of the natural order (and of the key): "P-" <= k < "P.".
        # Under another order the range must not lead the plan (a big project is the whole
        # mirror: 200,000 rows sorted instead of an index walked), so it is a plain test there.
        column = self.natural or '+i.key'
        ranges = []
        for value in clause.values:
            folded = fold(value.text)
            if value.empty or not folded.isascii():
                ranges.append('0')  # a project key is ASCII: nothing else can match
                continue
            prefix = folded.upper()
            ranges.append(f'({column} >= {self.param(prefix + "-")} '
                          f'AND {column} < {self.param(prefix + ".")})')
        matched = '(' + ' OR '.join(ranges) + ')'
        return matched if clause.operator in ('=', 'in') else f'NOT {matched}'

    def _hub_project(self, clause: Clause) -> str:
        labels = {fold(label): label for (label,) in
                  Project.select(Project.label).tuples().execute(self.hub.db)}
        found = []
        for value in clause.values:
            if fold(value.text) not in labels:
                raise _error(f'неизвестный проект хаба "{value.text}"', value.position)
            found.append(labels[fold(value.text)])
        return (f'i.key IN (SELECT s.{M.key} FROM {M} s WHERE s.{M.label} IN '
                f'({self.params_of(found)}))')

    def _text(self, clause: Clause) -> str:
        column = clause.field.column
        if clause.operator in ('is empty', 'is not empty'):
            sql_column = f'i.{getattr(I, column)}'
            return self.empty(sql_column) if clause.operator == 'is empty' \
                else self.filled(sql_column)
        expression = fulltext.match_expression(clause.values[0].text,
                                               fulltext.COLUMN_OF.get(clause.field.name))
        if expression is None:
            return '0' if clause.operator == '~' else '1'
        matched = f'i.key IN ({fulltext.matching_keys(self.param(expression))})'
        return matched if clause.operator == '~' else f'NOT {matched}'

    def _substring(self, clause: Clause) -> str:
        needle = self.param(fold(clause.values[0].text))
        return f'(hub_contains(i.key, {needle}) OR hub_contains(i.summary, {needle}))'

    def _neighbor(self, clause: Clause) -> str:
        owner = 'm' if self.sliced else 'i'
        return f'{owner}.neighbor = {self.param(int(clause.values[0].text == "true"))}'

    def _category(self, clause: Clause) -> str:
        value = clause.values[0]
        if fold(value.text) != 'done':
            raise _error(f'statusCategory сравнивается только с Done, а не с "{value.text}"',
                         value.position)
        done = f'hub_fold(i.{I.status}) IN ({self.params_of(self.closed())})'
        return done if clause.operator == '=' else f'({self.filled("i." + I.status)} AND NOT {done})'

    def _resolution(self, clause: Clause) -> str:
        if clause.operator == '=' and fold(clause.values[0].text) != 'unresolved':
            value = clause.values[0]
            raise _error(f'resolution сравнивается только с Unresolved, а не с "{value.text}"',
                         value.position)
        done = f'ifnull(hub_fold(i.{I.status}) IN ({self.params_of(self.closed())}), 0)'
        return done if clause.operator == 'is not empty' else f'NOT {done}'

    def _labels(self, clause: Clause) -> str:
        column = f'i.{I.labels}'
        listed = f"({column} IS NOT NULL AND {column} NOT IN ('', '[]'))"
        if clause.operator == 'is empty':
            return f'NOT {listed}'
        if clause.operator == 'is not empty':
            return listed
        held = []
        for value in clause.values:
            if value.empty:
                continue
            encoded = self.param(json.dumps(value.text, ensure_ascii=False))
            # instr first: a cheap test on the text (as ingest writes it) that spares json_each
            # most rows; a list written with escapes (\\u0441…, by another tool) goes to json_each
            held.append(f"CASE WHEN (instr({column}, {encoded}) > 0 OR instr({column}, '\\') > 0) "
                        f'AND json_valid({column}) THEN EXISTS (SELECT 1 FROM json_each({column}) '
                        f'WHERE value = {self.param(value.text)}) ELSE 0 END')
        any_held = '(' + ' OR '.join(held or ['0']) + ')'
        if clause.operator in ('=', 'in'):
            if any(value.empty for value in clause.values):
                return f'({any_held} OR NOT {listed})'
            return any_held
        return f'({listed} AND NOT {any_held})'

    def _moment(self, clause: Clause) -> str:
        column = f'i.{getattr(I, clause.field.column)}'
        operator = clause.operator
        if operator == 'is empty':
            return self.empty(column)
        if operator == 'is not empty':
            return self.filled(column)
        span = self.clock.span(clause.values[0])
        expression = utc_sql(column)
        start, end = self.param(sql_moment(span.start)), self.param(sql_moment(span.end))
        if operator == '=':
            return f'({expression} >= {start} AND {expression} < {end})'
        if operator == '!=':
            return f'({expression} < {start} OR {expression} >= {end})'
        return f'{expression} {operator} {start}'

    def day_of(self, moment: datetime) -> tuple[str, bool]:
        """``moment``'s date in the request's zone and whether it is that day's start."""
        local = moment.astimezone(self.clock.tz)
        return local.date().isoformat(), self.clock.day_start(moment) == moment

    def _date(self, clause: Clause) -> str:
        column = f'i.{getattr(I, clause.field.column)}'
        operator = clause.operator
        if operator == 'is empty':
            return self.empty(column)
        if operator == 'is not empty':
            return self.filled(column)
        span = self.clock.span(clause.values[0])
        day = f'substr({column}, 1, 10)'

        def starts(op: str, moment: datetime) -> str:
            # the day's start (in tz) compared with a moment, as a comparison of dates
            text, midnight = self.day_of(moment)
            date_op = {'<': '<' if midnight else '<=', '<=': '<=', '>': '>',
                       '>=': '>=' if midnight else '>'}[op]
            return f'{day} {date_op} {self.param(text)}'
        inside = f'({self.filled(column)} AND {starts(">=", span.start)} AND {starts("<", span.end)})'
        if operator == '=':
            return inside
        if operator == '!=':
            return f'({self.filled(column)} AND NOT {inside})'
        return f'({self.filled(column)} AND {starts(operator, span.start)})'

    def _number(self, clause: Clause) -> str:
        column = f'i.{I.story_points}'
        if clause.operator == 'is empty':
            return f'{column} IS NULL'
        if clause.operator == 'is not empty':
            return f'{column} IS NOT NULL'
        value = clause.values[0]
        try:
            number = float(value.text)
            if number != number or number in (float('inf'), float('-inf')):
                raise ValueError
        except ValueError:
            raise _error(f'ожидается число, а не "{value.text}"', value.position) from None
        return f'{column} {clause.operator} {self.param(number)}'

    def _sprint(self, clause: Clause) -> str:
        member = f'i.key IN (SELECT s.{S.key} FROM {S} s)'
        if clause.operator == 'is empty':
            return f'NOT {member}'
        if clause.operator == 'is not empty':
            return member
        sprints = list(JiraSprint.select(JiraSprint.sprint_id, JiraSprint.name, JiraSprint.state)
                       .tuples().execute(self.hub.db))
        ids: set[int] = set()
        for value in clause.values:
            if value.empty:
                continue
            if value.function is not None:
                state = SPRINT_FUNCTIONS[value.function]
                if value.arguments:
                    raise _error(f'функция {value.text}() не принимает аргументов',
                                 value.position)
                ids.update(sprint for sprint, _, kind in sprints if fold(kind) == state)
            elif not value.quoted and value.text.isascii() and value.text.isdigit():
                if len(value.text) > 18:
                    raise _error(f'слишком большой номер спринта "{value.text}"', value.position)
                ids.add(int(value.text))
            else:
                ids.update(sprint for sprint, name, _ in sprints if fold(name) == fold(value.text))
        within = (f'i.key IN (SELECT s.{S.key} FROM {S} s WHERE s.{S.sprint_id} IN '
                  f'({self.params_of(sorted(ids))}))')
        if clause.operator in ('=', 'in'):
            if any(value.empty for value in clause.values):
                return f'({within} OR NOT {member})'
            return within
        return f'({member} AND NOT {within})'

    def _note(self, clause: Clause) -> str:
        noted = f'i.key IN (SELECT n2.{N.key} FROM {N} n2)'
        return noted if clause.operator == 'is not empty' else f'NOT {noted}'

    # --- history ----------------------------------------------------------------------------

    def matches(self, column: str, values: Iterable[Value]) -> str:
        values = list(values)
        texts = [fold(value.text) for value in values if not value.empty]
        parts = [f'hub_fold({column}) IN ({self.params_of(texts)})'] if texts else []
        if any(value.empty for value in values):
            parts.append(self.empty(column))
        return '(' + ' OR '.join(parts) + ')'

    def window(self, clause: Clause) -> tuple[datetime | None, datetime | None]:
        low = high = None
        for predicate in clause.predicates:
            if predicate.name in ('from', 'to', 'by'):
                continue
            spans = [self.clock.span(value) for value in predicate.values]
            if predicate.name == 'after':
                start, end = spans[0].start, None
            elif predicate.name == 'before':
                start, end = None, spans[0].start
            elif predicate.name == 'on':
                start = self.clock.day_start(spans[0].start)
                end = self.clock.period('Day', start, 1)[0]
            else:
                start, end = spans[0].start, spans[1].end
            if start is not None:
                low = start if low is None else max(low, start)
            if end is not None:
                high = end if high is None else min(high, end)
        return low, high

    def history(self, clause: Clause) -> str:
        spec = clause.field
        name = self.param(spec.history)
        low, high = self.window(clause)
        by = [p for p in clause.predicates if p.name == 'by']
        for predicate in clause.predicates:
            for value in predicate.values:
                if value.function is not None and (predicate.name in ('from', 'to', 'by')
                                                   or value.function not in DATE_FUNCTIONS):
                    raise _error(f'функция {value.text}() не применима в {predicate.name.upper()}',
                                 value.position)
        if clause.operator == 'changed':
            where = [f'c.{C.field} = {name}']
            for predicate in clause.predicates:
                if predicate.name == 'from':
                    where.append(self.matches(f'c.{C.from_string}', predicate.values))
                elif predicate.name == 'to':
                    where.append(self.matches(f'c.{C.to_string}', predicate.values))
                elif predicate.name == 'by':
                    where.append(f'hub_fold(c.{C.author}) = {self.param(fold(predicate.values[0].text))}')
            if low is not None:
                where.append(f'c.{C.at} >= {self.param(format_utc(low))}')
            if high is not None:
                where.append(f'c.{C.at} < {self.param(format_utc(high))}')
            return f'i.key IN (SELECT c.{C.key} FROM {C} c WHERE {" AND ".join(where)})'
        for value in clause.values:
            if value.function is not None:
                raise _error(f'функция {value.text}() не применима к WAS', value.position)
        held = self.was(clause, name, low, high, by)
        return held if clause.operator in ('was', 'was in') else f'NOT ifnull({held}, 0)'

    def was(self, clause: Clause, name: str, low, high, by: list[Predicate]) -> str:
        column = f'i.{getattr(I, clause.field.column)}'
        values = clause.values
        if low is None and high is None and not by:
            changed = (f'i.key IN (SELECT c.{C.key} FROM {C} c WHERE c.{C.field} = {name} AND '
                       f'({self.matches(f"c.{C.from_string}", values)} OR '
                       f'{self.matches(f"c.{C.to_string}", values)}))')
            return f'({self.matches(column, values)} OR {changed})'
        same = f'c.{C.key} = i.key AND c.{C.field} = {name} AND c.{C.at} IS NOT NULL'
        # (A) set to v by a change inside or before the window and not changed again before it
        started = [same, self.matches(f'c.{C.to_string}', values)]
        if by:
            started.append(f'hub_fold(c.{C.author}) = {self.param(fold(by[0].values[0].text))}')
        if high is not None:
            started.append(f'c.{C.at} < {self.param(format_utc(high))}')
        if low is not None:
            started.append(f'NOT EXISTS (SELECT 1 FROM {C} d WHERE d.{C.key} = i.key AND '
                           f'd.{C.field} = {name} AND d.{C.at} > c.{C.at} AND '
                           f'd.{C.at} <= {self.param(format_utc(low))})')
        parts = [f'EXISTS (SELECT 1 FROM {C} c WHERE {" AND ".join(started)})']
        if not by:
            created = ''
            if high is not None:
                created_utc = utc_sql(f'i.{I.created}')
                created = (f' AND ({created_utc} IS NULL OR '
                           f'{created_utc} < {self.param(sql_moment(high))})')
            # (B) held from creation until the first change
            first = [same, self.matches(f'c.{C.from_string}', values),
                     f'NOT EXISTS (SELECT 1 FROM {C} e WHERE e.{C.key} = i.key AND '
                     f'e.{C.field} = {name} AND e.{C.at} < c.{C.at})']
            if low is not None:
                first.append(f'c.{C.at} > {self.param(format_utc(low))}')
            parts.append(f'(EXISTS (SELECT 1 FROM {C} c WHERE {" AND ".join(first)}){created})')
            # (C) never changed: the current value all along
            parts.append(f'(NOT EXISTS (SELECT 1 FROM {C} c WHERE {same}) AND '
                         f'{self.matches(column, values)}{created})')
        return '(' + ' OR '.join(parts) + ')'

    # --- order ------------------------------------------------------------------------------

    def sort(self, sort: Sort) -> list[SortColumn]:
        spec = sort.field
        way = sort.descending
        if spec.kind == 'key':
            return [SortColumn('m.sort_key' if self.sliced else _NATURAL_I, way)]
        column = f'i.{getattr(I, spec.column)}'
        if spec.kind == 'moment':
            return [SortColumn(utc_sql(column), way)]
        if spec.name == 'priority':
            stored = setting(self.hub, 'priority_map', {})
            names: list[str] = []
            for name in (stored.values() if isinstance(stored, dict) else ()):
                if isinstance(name, str) and fold(name) not in names:
                    names.append(fold(name))
            cases = ' '.join(f'WHEN {self.param(name)} THEN {index}'
                             for index, name in enumerate(names))
            position = (f"CASE WHEN {self.empty(column)} THEN NULL "
                        f"ELSE CASE hub_fold({column}) {cases} ELSE {len(names)} END END"
                        if names else f"CASE WHEN {self.empty(column)} THEN NULL ELSE 0 END")
            return [SortColumn(position, way), SortColumn(f"hub_fold(NULLIF({column}, ''))", way)]
        if spec.kind in ('choice', 'text'):
            return [SortColumn(f"hub_fold(NULLIF({column}, ''))", way)]
        if spec.kind == 'number':
            return [SortColumn(column, way)]
        return [SortColumn(f"NULLIF({column}, '')", way)]


def compile_search(hub, query: Query, *, tz: str | None = None, extra: Iterable = (),
                   label: str | None = None, now: datetime | None = None,
                   rank: bool = True) -> Search:
    """SQL of ``query`` AND-ed with ``extra`` clauses (the other filters of GET /issues), over the
    slice of ``label`` when given. Reads the settings, projects and sprints it needs (the caller
    holds the read transaction). ``rank=False``: a ``~`` only filters (counts, facets)."""
    clock = Clock(now if now is not None else hub.clock(), zone(tz))
    search = Search(label=label)
    terms = ([] if query.where is None else
             list(query.where.items) if isinstance(query.where, And) else [query.where])
    terms += list(extra)
    order = list(query.order)
    if order and order[0].field.kind == 'key' and not order[0].descending:
        order = []  # key ascending is the natural order, whatever follows it
    if rank and not order:
        ranked = next((term for term in terms if isinstance(term, Clause)
                       and term.operator == '~' and term.field.kind == 'text'), None)
        if ranked is not None:
            search.match = fulltext.match_expression(
                ranked.values[0].text, fulltext.COLUMN_OF.get(ranked.field.name))
            if search.match is None:
                search.conditions.append('0')
            terms.remove(ranked)
    natural = None
    if not order and search.match is None:
        natural = 'm.sort_key' if label is not None else _NATURAL_I
    compiler = _Compiler(hub, clock, search.params, sliced=label is not None, natural=natural)
    for term in terms:
        search.conditions.append(compiler.node(term))
    for sort in order:
        search.order.extend(compiler.sort(sort))
    return search


def clause(spec: FieldSpec, operator: str, value: str | datetime) -> Clause:
    """A clause built by code: a filter of GET /issues that is not JQL text (a moment for dates)."""
    if isinstance(value, datetime):
        return Clause(spec, operator, (Value(format_utc(value), 0, moment=value),))
    return Clause(spec, operator, (Value(value, 0, quoted=True),))


__all__ = ['parse', 'tokenize', 'compile_search', 'clause', 'zone', 'Query', 'Clause', 'And', 'Or',
           'Not', 'Sort', 'Value', 'Predicate', 'FieldSpec', 'FIELDS', 'Search', 'SortColumn',
           'SUPPORTED', 'DERIVED_INDEXES', 'register_functions', 'utc_sql', 'sql_moment', 'fold',
           'Clock', 'Span', 'field_named', 'KEYWORDS']
