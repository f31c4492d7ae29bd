"""JQL's text: tokens, the tree, the field table and the parser (``hublib.jql``; contract §16)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ..errors import ValidationError

# Limits of a query (docs/jql.md, "Limits"), checked while parsing, before any SQL is built.
# Depth: parentheses and NOT, counted together along the deepest path (a clause alone is depth
# 1). NOT is pushed down to the clauses (``normalized``), so the SQL nests one level per
# alternation of AND and OR; SQLite's parser, whose stack holds 100 entries in the builds Python
# ships, took 19 such levels around the heaviest clause (WAS in a window, in a slice's page with
# an order) and refused 20 with «parser stack overflow» (a 500). 16 leaves 15 groups and a margin
# of 4 levels; tests/lib/test_jql_limits.py answers the deepest query allowed with the heaviest
# clause of every kind on every entry point.
# Clauses: an OR chain is left-deep in SQLite's expression tree (its limit is 1,000 levels) and
# each clause binds a few parameters (the limit is 32,766): 300 is far inside both.
# Sort keys: a field once, at most 10 (each a column of the page's sorter and its cursor).
MAX_DEPTH, MAX_CLAUSES, MAX_SORT_KEYS = 16, 300, 10
# A number in a query has at most this many digits: any more is no date offset, sprint, key or
# story point the mirror can hold (and Python refuses to read an int of over 4,300 digits).
MAX_DIGITS = 18
KEYWORDS = frozenset('AND OR NOT EMPTY NULL ORDER BY IN IS WAS CHANGED FROM TO AFTER BEFORE ON '
                     'DURING'.split())
_WORD_EXTRA = frozenset('_-.:/@*+')
_OPERATORS = ('!=', '!~', '>=', '<=', '=', '>', '<', '~')


def refusal(message: str, position: int) -> ValidationError:
    """The refusal of a query: a ValidationError naming ``jql``, the message ending with the
    1-based position of the offending token; ``position`` is kept on the error, so that of
    several problems the first one can be named (:func:`first`)."""
    error = ValidationError({'jql': [f'{message}, позиция {position}']})
    error.position = position
    return error


def first(*errors: ValidationError | None) -> ValidationError | None:
    """The refusal that comes first in the text (on a tie, the one given first)."""
    found = [error for error in errors if error is not None]
    return min(found, key=lambda error: getattr(error, 'position', 0)) if found else None


def shown(text: str, size: int = 40) -> str:
    """A value of the query as a message quotes it: a long one cut (a 5,000-digit number is not
    echoed back whole)."""
    return text if len(text) <= size else text[:size] + '…'


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
class Refused:
    """A clause the parser refused without losing its place in the text (an unknown field, an
    operator the field does not take, a function the mirror cannot answer): the query is refused,
    naming whichever problem comes first, once the compiler has checked what precedes it."""

    error: ValidationError


@dataclass(frozen=True)
class Query:
    """A parsed query: the condition (``None``: every issue), the order (may be empty) and the
    problems the parser found that did not stop it (in text order; the compiler refuses the query
    naming the first problem of all, its own included: ``compile_search``)."""

    where: Any
    order: tuple[Sort, ...] = ()
    problems: tuple[ValidationError, ...] = ()


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
    'NOT — отрицательный оператор, как в Jira: NOT assignee = x то же, что assignee != x (задачи '
    'без исполнителя не подходят ни под то, ни под другое). ORDER BY priority DESC — сначала '
    'самые важные (первые в priority_map). '
    'Даты: "2026-11-30", "2026-11-30 14:05", -7d, -2w, now(), startOfDay() … endOfYear(); '
    'смещение функции отсчитывается от границы периода: startOfMonth("+14d") — 15-е число. '
    'Пределы: вложенность скобок и NOT до 16, условий до 300, полей в ORDER BY до 10. '
    'Отказ (422 с позицией): currentUser(), membersOf(), watchedIssues() и другие функции без '
    'данных в зеркале, неизвестные поля и операторы, запрос слишком тяжёлый для зеркала.')


def field_named(name: str, position: int) -> FieldSpec:
    """The field called ``name`` (any case, any alias); refused when unknown."""
    spec = _BY_NAME.get(name.casefold())
    if spec is None:
        raise refusal(f'неизвестное поле "{name}"', position)
    return spec


# --- parser ----------------------------------------------------------------------------------------

_PREDICATES = ('FROM', 'TO', 'BY', 'AFTER', 'BEFORE', 'ON', 'DURING')
_WAS_PREDICATES = ('BY', 'AFTER', 'BEFORE', 'ON', 'DURING')


class _Parser:
    """Recursive descent over the tokens. A problem that leaves the grammar intact (an unknown
    field, an operator the field does not take, a function the mirror has no data for, an order
    the query cannot take) is recorded and parsing goes on, so that the query is refused naming
    the first problem in the text, not the first one a pass happened to meet; a problem of the
    grammar itself stops it at once (see :func:`parse`)."""

    def __init__(self, text: str):
        self.tokens = tokenize(text)
        self.index = 0
        self.opened: list[int] = []  # positions of the parentheses still open
        self.depth = self.clauses = 0
        self.problems: list[ValidationError] = []

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
        return refusal(f'ожидается {what}, а не "{shown(token.text)}"', token.position)

    def query(self) -> Query:
        where = None
        if not self.at_order_by():
            if self.token.kind != 'end':
                where = self.disjunction()
        order: list[Sort] = []
        if self.at_order_by():
            self.take()
            self.take()
            self.sort(order)
            while self.token.kind == ',':
                self.take()
                self.sort(order)
        if self.token.kind != 'end':
            if self.token.kind == ')':
                raise refusal('лишняя скобка ")"', self.token.position)
            raise self.expected('AND, OR или ORDER BY')
        return Query(where, tuple(order), tuple(self.problems))

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

    def field(self) -> tuple[FieldSpec | None, Token]:
        """The field named by the next token; ``None`` for a name no field has (recorded)."""
        token = self.token
        if token.kind == 'string' or (token.kind == 'word' and token.text.upper() not in KEYWORDS):
            self.take()
            if self.token.kind == '(' and token.kind == 'word':
                raise refusal(f'ожидается поле, а не функция {shown(token.text)}()',
                              token.position)
            spec = _BY_NAME.get(token.text.casefold())
            if spec is None:
                self.problems.append(refusal(f'неизвестное поле "{shown(token.text)}"',
                                             token.position))
            return spec, token
        raise self.expected('поле')

    def clause(self) -> Clause | Refused:
        self.clauses += 1
        if self.clauses > MAX_CLAUSES:
            raise refusal(f'слишком много условий (больше {MAX_CLAUSES})', self.token.position)
        known = len(self.problems)
        spec, name = self.field()
        token = self.token
        operator, values, predicates = None, (), ()
        if token.kind == 'op':
            self.take()
            operator = token.text
            value = self.value(operator)
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
                values = (self.value('WAS'),)
            predicates = self.predicates(_WAS_PREDICATES)
        elif token.keyword('CHANGED'):
            self.take()
            operator = 'changed'
            predicates = self.predicates(_PREDICATES)
        else:
            raise self.expected(f'оператор после поля {shown(name.text)}')
        if spec is not None and operator not in spec.operators:
            shown_operator = operator.upper() if operator[0].isalpha() else operator
            self.problems.append(refusal(
                f'оператор "{shown_operator}" не применим к полю {spec.name}', token.position))
        if len(self.problems) > known:
            return Refused(self.problems[known])
        return Clause(spec, operator, tuple(values), tuple(predicates), name.position,
                      token.position)

    def predicates(self, allowed: tuple[str, ...]) -> list[Predicate]:
        found = []
        while self.token.keyword(*_PREDICATES):
            token = self.take()
            name = token.text.upper()
            if name not in allowed:
                self.problems.append(refusal(f'WAS не принимает {name}', token.position))
            if name == 'DURING':
                opening = self.token
                if opening.kind != '(':
                    raise self.expected('( после DURING')
                self.take()
                self.opened.append(opening.position)
                first_date = self.value()
                if self.token.kind != ',':
                    raise self.expected('"," между датами DURING')
                self.take()
                second_date = self.value()
                if self.token.kind != ')':
                    if self.token.kind == 'end':
                        raise refusal('незакрытая скобка "("', opening.position)
                    raise self.expected('")"')
                self.opened.pop()
                self.take()
                found.append(Predicate('during', (first_date, second_date), token.position))
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

    def value(self, operator: str | None = None) -> Value:
        """One value. After ``WAS`` (``WAS NOT``) a list of one value is that value, as Jira
        reads ``status WAS ("В работе")``; after another operator a list is refused, pointing to
        ``IN`` (Jira answers the same: the operator "=" takes no list)."""
        token = self.token
        if token.kind == 'string':
            self.take()
            return Value(token.text, token.position, quoted=True)
        if token.kind == '(' and operator is not None:
            self.take()
            listed = self.listed(token, may_be_empty=False)
            if operator == 'WAS' and len(listed) == 1:
                return listed[0]
            instead = {'WAS': 'WAS IN (…)', '=': 'IN (…)', '!=': 'NOT IN (…)'}.get(operator)
            self.problems.append(refusal(
                f'оператор "{operator}" сравнивает с одним значением, а не со списком'
                + (f': для списка — {instead}' if instead else ''), token.position))
            return listed[0]
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
            self.problems.append(refusal(f'функция {shown(token.text)}() недоступна в зеркале',
                                         token.position))
        elif folded not in FUNCTIONS:
            self.problems.append(refusal(f'неизвестная функция {shown(token.text)}()',
                                         token.position))
        arguments = self.listed(self.take(), may_be_empty=True)
        return Value(token.text, token.position, function=FUNCTIONS.get(folded, token.text),
                     arguments=arguments)

    def sort(self, order: list[Sort]) -> None:
        """One sort key of ORDER BY, added to ``order``; recorded as a problem: a field that has
        no order, a field already in the order (whatever alias names it), the eleventh key."""
        spec, name = self.field()
        descending = False
        if self.token.kind == 'word' and self.token.text.upper() in ('ASC', 'DESC'):
            descending = self.take().text.upper() == 'DESC'
        if spec is None:
            return
        if not spec.sortable:
            self.problems.append(refusal(f'по полю "{shown(name.text)}" нельзя сортировать',
                                         name.position))
        elif any(sort.field is spec for sort in order):
            self.problems.append(refusal(
                f'поле "{shown(name.text)}" уже есть в ORDER BY: сортировать по полю можно один раз',
                name.position))
        elif len(order) == MAX_SORT_KEYS:
            self.problems.append(refusal(
                f'в ORDER BY больше {MAX_SORT_KEYS} полей', name.position))
        else:
            order.append(Sort(spec, descending, name.position))


def parse(text: str | None) -> Query:
    """The tree of a JQL query. A problem of the grammar is a ValidationError (``jql``) naming
    the token and its position at once (or an earlier problem, if one was recorded before it);
    the others are in ``Query.problems``, refused by ``compile_search`` in text order together
    with its own checks (the first problem of the query is the one named)."""
    if text is None or not text.strip():
        return Query(None)
    parser = _Parser(text)
    try:
        return parser.query()
    except ValidationError as error:
        raise first(*parser.problems, error) from None


# --- meaning: NOT pushed down, equivalent shapes made one ----------------------------------------

# The negative of each operator (Jira: «field != value is the same as NOT field = value»): NOT of a
# clause is the clause with it, where the field takes it. Neither side matches an empty value.
NEGATIVE = {'=': '!=', '!=': '=', 'in': 'not in', 'not in': 'in', '<': '>=', '>=': '<',
            '>': '<=', '<=': '>', '~': '!~', '!~': '~', 'is empty': 'is not empty',
            'is not empty': 'is empty', 'was': 'was not', 'was not': 'was', 'was in': 'was not in',
            'was not in': 'was in'}
# Clauses that one clause can say together (what a list operand means), for OR (``any``) and for
# AND of negatives (``none``): ``status WAS a OR status WAS b`` ⇔ ``status WAS IN (a, b)``,
# ``labels != a AND labels != b`` ⇔ ``labels NOT IN (a, b)``, ``summary ~ a OR summary ~ b`` ⇔
# one full-text match of either (a ``~`` clause with several values: any of them).
_ANY = {'=': 'in', 'in': 'in', 'was': 'was in', 'was in': 'was in', '~': '~'}
_NONE = {'!=': 'not in', 'not in': 'not in', 'was not': 'was not in', 'was not in': 'was not in',
         '!~': '!~'}


def normalized(node):
    """The condition a query means, in the shape the compiler reads (the parse tree stays as
    written): ``NOT`` pushed down to the clauses by De Morgan's laws, a negated clause turned
    into its negative operator (``NOT assignee = x`` ⇔ ``assignee != x``; where the field has no
    negative operator — ``CHANGED``, ``text ~``, ``hubProject``, ``resolution`` — ``NOT`` stays
    over the clause and means its complement); ``AND`` in ``AND`` and ``OR`` in ``OR``
    flattened; a clause written twice said once; clauses of one field that one list says
    (:data:`_ANY`, :data:`_NONE`) merged into it, their values in text order."""
    return _normalized(node, False)


def _normalized(node, negate: bool):
    if isinstance(node, Not):
        return _normalized(node.item, not negate)
    if isinstance(node, (And, Or)):
        kind = type(node) if not negate else (Or if isinstance(node, And) else And)
        items: list = []
        for item in node.items:
            item = _normalized(item, negate)
            items.extend(item.items if isinstance(item, kind) else (item,))
        items = _merged(items, _ANY if kind is Or else _NONE)
        return items[0] if len(items) == 1 else kind(tuple(items))
    if negate and not isinstance(node, Refused):
        if isinstance(node, Clause):
            opposite = NEGATIVE.get(node.operator)
            if opposite in node.field.operators:
                return replace(node, operator=opposite)
        return Not(node)
    return node


def _meaning(node) -> tuple | None:
    """What a clause says, without where it was written (None: not a clause)."""
    if isinstance(node, Not):
        inner = _meaning(node.item)
        return None if inner is None else ('not', inner)
    if not isinstance(node, Clause):
        return None
    return (node.field.name, node.operator, tuple(map(_value_meaning, node.values)),
            tuple((p.name, tuple(map(_value_meaning, p.values))) for p in node.predicates))


def _value_meaning(value: Value) -> tuple:
    return (value.text, value.quoted, value.empty, value.function,
            tuple(map(_value_meaning, value.arguments)), value.moment)


def _merged(items: list, lists: dict[str, str]) -> list:
    """``items`` of one AND or OR with repeats dropped and the clauses one list says merged (the
    first of them keeps its place)."""
    out: list = []
    seen: set = set()
    groups: dict[tuple, int] = {}  # (field, list operator, predicates) → index in out
    for item in items:
        meaning = _meaning(item)
        if meaning is not None:
            if meaning in seen:
                continue
            seen.add(meaning)
        operator = lists.get(item.operator) if isinstance(item, Clause) else None
        if (operator is None or operator not in item.field.operators
                or any(value.function for value in item.values)):
            out.append(item)
            continue
        group = (item.field.name, operator, meaning[3])
        if group not in groups:
            groups[group] = len(out)
            out.append(item)
            continue
        at = groups[group]
        kept = out[at]
        out[at] = replace(kept, operator=operator, values=kept.values + item.values)
    return out
