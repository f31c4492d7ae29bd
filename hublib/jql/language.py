"""JQL's text: tokens, the tree, the field table and the parser (``hublib.jql``; contract §16)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import ValidationError

# SQLite refuses an expression deeper than 1,000 levels; a query of a person or an assistant never
# comes near these, and a hostile one is a 422 instead of a 500 (or Python's recursion limit).
MAX_DEPTH, MAX_CLAUSES = 50, 300
KEYWORDS = frozenset('AND OR NOT EMPTY NULL ORDER BY IN IS WAS CHANGED FROM TO AFTER BEFORE ON '
                     'DURING'.split())
_WORD_EXTRA = frozenset('_-.:/@*+')
_OPERATORS = ('!=', '!~', '>=', '<=', '=', '>', '<', '~')


def refusal(message: str, position: int) -> ValidationError:
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
                raise refusal(f'незакрытая кавычка {char}', start + 1)
            tokens.append(Token('string', ''.join(parts), start + 1))
            index += 1
        elif char in '!=<>~':
            operator = next((op for op in _OPERATORS if text.startswith(op, index)), None)
            if operator is None:
                raise refusal(f'неожиданный символ "{char}"', index + 1)
            tokens.append(Token('op', operator, index + 1))
            index += len(operator)
        elif char.isalnum() or char in _WORD_EXTRA:
            start = index
            while index < size and (text[index].isalnum() or text[index] in _WORD_EXTRA):
                index += 1
            tokens.append(Token('word', text[start:index], start + 1))
        else:
            raise refusal(f'неожиданный символ "{char}"', index + 1)
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
HISTORY_OPERATORS = frozenset(('was', 'was not', 'was in', 'was not in', 'changed'))


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
    FieldSpec('status', 'choice', _EQ | _EMPTY | HISTORY_OPERATORS, 'status', history='status',
              sortable=True),
    FieldSpec('statusCategory', 'category', frozenset(('=', '!='))),
    FieldSpec('resolution', 'resolution', frozenset(('=',)) | _EMPTY),
    FieldSpec('priority', 'choice', _EQ | _EMPTY | HISTORY_OPERATORS, 'priority', history='priority',
              sortable=True),
    FieldSpec('issuetype', 'choice', _EQ, 'issue_type', ('type',), sortable=True),
    FieldSpec('assignee', 'choice', _EQ | _EMPTY | HISTORY_OPERATORS, 'assignee', history='assignee',
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
        raise refusal(f'неизвестное поле "{name}"', position)
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
            return refusal('незакрытая скобка "("', self.opened[-1])
        if token.kind == 'end':
            return refusal(f'запрос оборвался: ожидается {what}', token.position)
        if token.kind == ')':
            return refusal('лишняя скобка ")"', token.position)
        return refusal(f'ожидается {what}, а не "{token.text}"', token.position)

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
                raise refusal('лишняя скобка ")"', self.token.position)
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
            raise refusal(f'слишком глубокая вложенность (больше {MAX_DEPTH})', token.position)
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
                raise refusal(f'ожидается поле, а не функция {token.text}()', token.position)
            return field_named(token.text, token.position), token
        raise self.expected('поле')

    def clause(self) -> Clause:
        self.clauses += 1
        if self.clauses > MAX_CLAUSES:
            raise refusal(f'слишком много условий (больше {MAX_CLAUSES})', self.token.position)
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
            raise refusal(f'оператор "{shown}" не применим к полю {spec.name}', token.position)
        return Clause(spec, operator, tuple(values), tuple(predicates), name.position,
                      token.position)

    def predicates(self, allowed: tuple[str, ...]) -> list[Predicate]:
        found = []
        names = ('FROM', 'TO', 'BY', 'AFTER', 'BEFORE', 'ON', 'DURING')
        while self.token.keyword(*names):
            token = self.take()
            name = token.text.upper()
            if name not in allowed:
                raise refusal(f'WAS не принимает {name}', token.position)
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
                        raise refusal('незакрытая скобка "("', opening.position)
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
        return self.listed(token, may_be_empty=False)

    def listed(self, opening, *, may_be_empty: bool) -> tuple[Value, ...]:
        """The values after ``opening`` (a "(" already taken), comma-separated, and its ")"."""
        self.opened.append(opening.position)
        items = []
        if not (may_be_empty and self.token.kind == ')'):
            items.append(self.value())
            while self.token.kind == ',':
                self.take()
                items.append(self.value())
        if self.token.kind != ')':
            if self.token.kind == 'end':
                raise refusal('незакрытая скобка "("', opening.position)
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
            raise refusal(f'"{token.text}" — ключевое слово: значение возьмите в кавычки',
                         token.position)
        self.take()
        return Value(token.text, token.position)

    def function(self) -> Value:
        token = self.take()
        folded = token.text.casefold()
        if folded in UNAVAILABLE_FUNCTIONS:
            raise refusal(f'функция {token.text}() недоступна в зеркале', token.position)
        if folded not in FUNCTIONS:
            raise refusal(f'неизвестная функция {token.text}()', token.position)
        arguments = self.listed(self.take(), may_be_empty=True)
        return Value(token.text, token.position, function=FUNCTIONS[folded], arguments=arguments)

    def sort(self) -> Sort:
        spec, name = self.field()
        if not spec.sortable:
            raise refusal(f'по полю "{name.text}" нельзя сортировать', name.position)
        descending = False
        if self.token.kind == 'word' and self.token.text.upper() in ('ASC', 'DESC'):
            descending = self.take().text.upper() == 'DESC'
        return Sort(spec, descending, name.position)


def parse(text: str | None) -> Query:
    """The tree of a JQL query; ValidationError (``jql``) with the token and its position."""
    if text is None or not text.strip():
        return Query(None)
    return _Parser(text).query()
