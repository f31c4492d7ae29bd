"""JQL's tree as SQL over the mirror: conditions over ``i`` (issue) and ``m`` (the slice), sort
expressions, and the derived indexes they need. FTS5 text comes from ``hublib.search``."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable

from .. import search as fulltext
from ..errors import ValidationError
from ..models import (Issue, IssueChange, IssueLink, IssueMember, IssueNote, IssueSprint,
                      JiraSprint, Project, SqlNames)
from ..settings import DEFAULT_CLOSED_STATUSES, read_deadline_seconds, setting
from ..slices import NATURAL_KEY_SQL, natural_key
from ..timeutil import format_utc, to_utc
from ..validation import is_issue_key, lookup_key
from .dates import Clock, sql_moment, zone
from .language import (DATE_FUNCTIONS, MAX_DIGITS, SPRINT_FUNCTIONS, And, Clause, FieldSpec, Not,
                       Or, Predicate, Query, Refused, Sort, Value, HISTORY_OPERATORS, first,
                       normalized, refusal, shown)

# --- SQL -------------------------------------------------------------------------------------------

_ISSUE, _CHANGE, _MEMBER, _LINK, _NOTE, _ISSUE_SPRINT, _SPRINT, _PROJECT = map(SqlNames, (
    Issue, IssueChange, IssueMember, IssueLink, IssueNote, IssueSprint, JiraSprint, Project))


def utc_sql(column: str) -> str:
    """A Jira time column as UTC text ``YYYY-MM-DD HH:MM:SS`` in plain SQL (an index can hold it).

    SQLite's ``datetime()`` reads ISO-8601 with ``Z`` or ``±HH:MM``; Jira writes ``+0300``, so
    the colon is put in first. The twin of ``timeutil.to_utc`` for the times Jira and the agent
    send: ``tests/lib/test_jql.py`` proves they agree (hypothesis) on every such shape.
    """
    text = f'upper({column})'
    return (f"datetime(CASE WHEN {text} GLOB '*[+-][0-9][0-9][0-9][0-9]' THEN "
            f"substr({text}, 1, length({text}) - 2) || ':' || substr({text}, -2) ELSE {text} END)")


# Choice columns compared and ordered through their stored spellings (``_Compiler.stored``):
# each has an index leading on it, so its distinct values are read by a skip scan, one index
# seek per value, and ``column IN (spellings)`` is an index range.
# Status leads issue_facet: its entries are in the order of the facets' GROUP BY (the four
# choices, labels; key for the slice join), so counting them needs no sorter. 50,000 issues, CPU ms
# on the loaded machine: facets of the whole mirror 206 -> 21-28, of a slice with `status IN`
# 76 -> 31 (a whole slice of 36,681: 202 -> ~160, a probe of the slice per issue).
# Cost: at 200,000 issues the four indexes take 27 MiB (issue_facet 16; the issue table 72) and
# build at open in 5.9 s wall / 1.7 s CPU (1,000,000: ~135 MiB, ~30 s, estimated); state ingest of
# 10,000 issues in pages of 100, CPU 5.0 -> 5.2 s (wall 9.6 -> 12.2 s, noisy on the shared machine).
INDEXED_CHOICES = ('status', 'assignee', 'issue_type', 'priority')
FACET_COLUMNS = (*INDEXED_CHOICES, 'labels', 'key')
# ORDER BY a choice walks its stored values in the order's rank, each value a range of
# issue_choice_walk_<name> in natural key order, and stops when the page is full (reads.
# _by_choice): 50,000 issues, `ORDER BY status DESC`, first page of 100, CPU 67-80 -> 2-3 ms.
# On coalesce(column, ''): NULL and '' (both empty, last in either direction) are one range, and
# the planner never takes these for a plain `status IN (…)`, which issue_facet serves covered and
# in its GROUP BY's order (with a plain (status, natural key) index the facets of a status read
# every row of it). Cost: ~3 MiB each at 50,000 issues (the issue table 18 MiB), built at open
# in ~0.2 s CPU each.
ORDER_INDEX = 'issue_choice_walk_{}'
KEY_FACET_INDEX = 'issue_key_facet'
FACET_INDEX = 'issue_facet'
CHOICE_INDEXES = (
    f'CREATE INDEX IF NOT EXISTS {FACET_INDEX} ON {_ISSUE} '
    f'({", ".join(getattr(_ISSUE, name) for name in FACET_COLUMNS)})',
    *(f'CREATE INDEX IF NOT EXISTS issue_choice_{name} ON {_ISSUE} ({getattr(_ISSUE, name)})'
      for name in INDEXED_CHOICES[1:]),
    *(f'CREATE INDEX IF NOT EXISTS {ORDER_INDEX.format(name)} ON {_ISSUE} '
      f"(coalesce({getattr(_ISSUE, name)}, ''), {NATURAL_KEY_SQL.format(key=_ISSUE.key)})"
      for name in INDEXED_CHOICES),
    # facets of issues found by key (`text ~`: the full-text matches' keys; hubProject, sprint,
    # linkedIssues) read each issue's facet columns from this index, not from its wide row (a
    # long description pushes them to overflow pages): 50,000 issues, facets of `text ~
    # "отчёт"` (9,954 matches), CPU 40 -> 30 ms (same run, in process). ~4.5 MiB at 50,000.
    f'CREATE INDEX IF NOT EXISTS {KEY_FACET_INDEX} ON {_ISSUE} '
    f'({_ISSUE.key}, {", ".join(getattr(_ISSUE, name) for name in FACET_COLUMNS[:-1])})')


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
# ORDER BY created walks issue_created_utc (UTC created and key: 8 MiB at 200,000 issues; built at
# open in 1.3 s CPU, 13 s wall on the shared machine): 200,000 issues, first page of 100, CPU:
# `ORDER BY created DESC` 3.3–3.5 s -> 7 ms, `created ASC` 1.5 s -> 7 ms, `project = AURORA
# ORDER BY created DESC` 3.3 s -> 6 ms, `status = Готово ORDER BY created DESC` 1.5 s -> 6 ms.
#
# CHANGED reads the change rows of one field in a window (``status CHANGED TO "Готово" AFTER -14d``):
# 200,000 issues / 2,000,000 change rows, 55,000 rows in the last 14 days, a quarter of them of
# status; CPU ms of the first page on the loaded machine: 110 with the `at` index alone (a row read
# per change), 68 with (field, at) (86 MiB), 36 with this covering one (131 MiB, 9 % of the file;
# built once at open: ~30 s at that size).
DERIVED_INDEXES = (
    f'CREATE INDEX IF NOT EXISTS issue_updated_utc ON {_ISSUE} ({utc_sql(_ISSUE.jira_updated)}, '
    f'{_ISSUE.status}, {_ISSUE.assignee}, {_ISSUE.priority}, {_ISSUE.issue_type}, '
    f'{_ISSUE.labels}, {_ISSUE.key})',
    f'CREATE INDEX IF NOT EXISTS issue_created_utc ON {_ISSUE} ({utc_sql(_ISSUE.created)}, '
    f'{_ISSUE.key})',
    f'CREATE INDEX IF NOT EXISTS issue_change_field_at ON {_CHANGE} '
    f'({_CHANGE.field}, {_CHANGE.at}, {_CHANGE.to_string}, {_CHANGE.key})',
    *CHOICE_INDEXES,
)


def distinct_values_sql(column: str) -> str:
    """SQL of the distinct non-empty text values ``x`` of the issue column ``column`` (an
    ``INDEXED_CHOICES`` one) as stored, in binary order: a skip scan of its index (min, then the
    next greater, …), one index seek per value."""
    return (f"WITH RECURSIVE v(x) AS (SELECT min({column}) FROM {_ISSUE} WHERE {column} > '' "
            f"UNION ALL SELECT (SELECT min({column}) FROM {_ISSUE} WHERE {column} > v.x) FROM v "
            f"WHERE v.x IS NOT NULL) SELECT x FROM v WHERE typeof(x) = 'text'")


def stored_values(hub, column: str, limit: int | None = None) -> list[str]:
    """Distinct non-empty values of the issue column ``column`` as stored
    (:func:`distinct_values_sql`); the first ``limit`` of them when given."""
    sql = distinct_values_sql(column) + (f' LIMIT {int(limit)}' if limit is not None else '')
    return [value for (value,) in hub.db.execute_sql(sql)]


def mirror_size(hub) -> int:
    """About how many issues the mirror holds: the issue table's highest rowid (one index step;
    issues are rarely deleted), what a plan or a cost estimate weighs."""
    return hub.db.execute_sql(f'SELECT max(rowid) FROM {_ISSUE}').fetchone()[0] or 0


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
    indexed: bool = False  # the issue table has an index in this order (created, updated)


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
    # the issue column of the order when it is one indexed choice (``ORDER BY status DESC``):
    # a page may walk the column's values in rank order (reads._by_choice)
    choice: str | None = None
    # the Jira project keys of the query when ``project = P`` (or ``in``) is its one condition:
    # the team's own project is nearly the whole mirror (reads.issue_facets scans for it)
    projects: tuple[str, ...] = ()


_KEY = re.compile(r'([A-Z][A-Z0-9_]*)-(\d+)')

# The cost estimate (contract §20: a query the hub can tell will not finish within the read
# deadline is refused up front, «запрос слишком тяжёлый: …»). What grows with the mirror is what
# runs for each issue or each document: a history clause reads the issue's own change rows, a
# full-text term its posting list (a short prefix: every term it begins). In CPU µs per issue of
# the mirror, lower bounds of what each took at 100,000 issues on the shared 2-core machine
# (scripts/bench_jql_cost.py, counts in process): history clauses about half (WAS 7.5-8.6, WAS in
# a window 7.9-8.2, CHANGED 2.1-5.4, CHANGED in a window 0.37), a one-letter prefix half (`а*`
# 0.69), longer prefixes and words what a rare one costs (900 two-letter prefixes 0.013 each on
# average; a common one, `да*` 0.98 or «данных» 0.49, is as dear as a one-letter prefix): only a
# query sure to run past the deadline is refused, the rest is left to the deadline itself. Plain
# columns, lists of keys and sorts cost too little to count.
COSTS = {'was': 4.0, 'was_window': 4.0, 'changed': 1.0, 'changed_window': 0.2,
         'word': 0.01, 'prefix1': 0.3, 'prefix2': 0.005, 'prefix': 0.001}
# SQLite's limit of bound variables is 32,766 (since 3.32): a query that would bind more is
# refused before SQLite says so with an error (10,000 characters hold at most ~5,000 values).
MAX_PARAMETERS = 30_000


def text_cost(clause: Clause) -> float:
    """The estimated cost of a ``~`` clause (µs per document, :data:`COSTS`): each distinct term
    of its values, a prefix by its length."""
    cost = 0.0
    for word, prefix in fulltext.match_terms([value.text for value in clause.values]):
        cost += COSTS[('prefix1' if len(word) == 1 else 'prefix2' if len(word) == 2 else 'prefix')
                      if prefix else 'word']
    return cost


_NATURAL_I = NATURAL_KEY_SQL.format(key='i.key')


class _Compiler:
    """Turns clauses into SQL text with named parameters (``:j0``, ``:j1`` …)."""

    def __init__(self, hub, clock: Clock, params: dict[str, Any], *, sliced: bool,
                 natural: str | None, walked: bool = False):
        self.hub, self.clock, self.params, self.sliced = hub, clock, params, sliced
        # a page walks an order (see spellings); a count or facets has none
        self.walked = walked
        # the natural-order column the page walks (None: another order): a project's keys are
        # a range of it, so a project filter narrows the walk instead of testing every row
        self.natural = natural
        self._closed: list[str] | None = None
        self._stored: dict[str, list[str]] = {}
        self._few: dict[str, list[str] | None] = {}
        self.refusals: list[ValidationError] = []
        # the estimated cost (µs of CPU per issue of the mirror) and the clauses that make it
        self.cost = 0.0
        self.heavy: list[Clause] = []

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

    def stored(self, column: str) -> list[str]:
        """The distinct non-empty values of an issue column as stored (a few: statuses, people,
        types), read in the caller's read transaction, so that a casefolded comparison becomes
        a plain ``IN`` of spellings an index serves instead of a Python casefold of every row."""
        if column not in self._stored:
            self._stored[column] = stored_values(self.hub, column)
        return self._stored[column]

    def closed_status(self) -> str:
        """The issue's status is one of ``closed_statuses`` (casefolded), as the stored spellings
        of those statuses: not a Python casefold of every row's status (``sprint in openSprints()
        AND resolution = Unresolved``, 200,000 issues, count 14 -> 8 ms CPU)."""
        return self.spellings(_ISSUE.status, self.closed())

    def spellings(self, column: str, folded: Iterable[object]) -> str:
        """``column IN (…)`` of the stored spellings whose casefold is one of ``folded``.

        A page (``walked``) tests the rows its order's walk meets (``+``: SQLite stays on the
        walk's index, natural key, updated or created, and stops with the page) instead of
        collecting every issue of the choice by the choice index and sorting them all; a count
        or facets takes the choice index. 200,000 issues, first page of 100, CPU on a quiet
        machine: ``status = Готово`` 95 -> 4 ms, ``… ORDER BY created DESC`` 401 -> 6 ms,
        ``project = AURORA AND status IN (…) AND assignee = ivanov ORDER BY updated DESC``
        126 -> 6 ms; their counts with the index 4–13 ms (26–47 ms without)."""
        wanted = set(folded)
        spelled = [value for value in self.stored(column) if fold(value) in wanted]
        walk = '+' if self.walked else ''
        return f'{walk}i.{column} IN ({self.params_of(spelled)})'

    def weigh(self, clause: Clause, cost: str | float) -> None:
        """Add a clause's estimated cost (a kind of :data:`COSTS`, or µs per issue)."""
        cost = COSTS[cost] if isinstance(cost, str) else cost
        if cost:
            self.cost += cost
            self.heavy.append(clause)

    # --- the tree -------------------------------------------------------------------------------

    def node(self, node) -> str:
        """SQL of a condition in :func:`normalized` shape. A clause the compiler refuses is
        recorded (``refusals``) and the compiling goes on: the query is refused naming the first
        problem in the text, whichever pass found it."""
        if isinstance(node, And):
            return '(' + ' AND '.join(self.node(item) for item in node.items) + ')'
        if isinstance(node, Or):
            return '(' + ' OR '.join(self.node(item) for item in node.items) + ')'
        if isinstance(node, Refused):
            return '0'  # refused by the parser already (Query.problems)
        try:
            if isinstance(node, Not):
                # a clause with no negative operator (CHANGED, text ~, hubProject, resolution):
                # its complement. NULL (an unknown comparison) is "no" on both sides.
                return f'NOT ifnull({self.clause(node.item)}, 0)'
            return self.clause(node)
        except ValidationError as error:
            self.refusals.append(error)
            return '0'

    def clause(self, clause: Clause) -> str:
        kind = clause.field.kind
        if clause.operator in HISTORY_OPERATORS:
            return self.history(clause)
        for value in clause.values:
            if value.function is not None and not (
                    (kind == 'sprint' and value.function in SPRINT_FUNCTIONS)
                    or (kind in ('moment', 'date') and value.function in DATE_FUNCTIONS)
                    or (kind == 'key' and value.function == 'linkedIssues'
                        and clause.operator in ('in', 'not in'))):
                raise refusal(f'функция {value.text}() не применима к полю {clause.field.name}',
                             value.position)
            if value.empty and clause.operator not in ('in', 'not in'):
                raise refusal(f'EMPTY не применимо с оператором {clause.operator}',
                             value.position)
        return getattr(self, '_' + kind)(clause)

    # --- plain columns --------------------------------------------------------------------------

    @staticmethod
    def empty(column: str) -> str:
        return f"({column} IS NULL OR {column} = '')"

    @staticmethod
    def filled(column: str) -> str:
        return f"({column} IS NOT NULL AND {column} != '')"

    @staticmethod
    def presence(operator: str, filled: str, empty: str | None = None) -> str | None:
        """``IS EMPTY`` / ``IS NOT EMPTY`` of a field that holds a value where ``filled`` does
        (``empty``: its negation, when it can be said in a form an index serves); None for any
        other operator."""
        if operator == 'is empty':
            return empty or f'NOT {filled}'
        if operator == 'is not empty':
            return filled
        return None

    def column_presence(self, operator: str, column: str) -> str | None:
        """:meth:`presence` of a text column, where ``''`` is empty like NULL."""
        return self.presence(operator, self.filled(column), self.empty(column))

    def _choice(self, clause: Clause) -> str:
        name = getattr(_ISSUE, clause.field.column)
        column = f'i.{name}'
        operator = clause.operator
        if (present := self.column_presence(operator, column)) is not None:
            return present
        texts = [value.text for value in clause.values if not value.empty]
        with_empty = any(value.empty for value in clause.values)
        epics = [lookup_key(text) for text in texts]
        if clause.field.column == 'epic_key' and all(map(is_issue_key, epics)):
            # an epic is an issue key, which the mirror holds as Jira writes it (upper-case):
            # the epic_key index finds its issues instead of a casefold of every row (50,000
            # issues, an epic's first 50 on its card: 69 -> 3 ms CPU on the loaded machine)
            listed = f'{column} IN ({self.params_of(epics)})'
        elif clause.field.column in INDEXED_CHOICES:
            listed = self.spellings(name, map(fold, texts))
        else:
            listed = f'hub_fold({column}) IN ({self.params_of(map(fold, texts))})'
        if operator in ('=', 'in'):
            return f'({listed} OR {self.empty(column)})' if with_empty else listed
        return f'({self.filled(column)} AND NOT {listed})'

    def _key(self, clause: Clause) -> str:
        operator = clause.operator
        if operator in ('in', 'not in') and any(v.function for v in clause.values):
            if len(clause.values) > 1:
                raise refusal('linkedIssues() — единственное значение списка',
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
            raise refusal(f'ожидается ключ задачи, например AURORA-7, а не "{shown(value.text)}"',
                          value.position)
        if len(match.group(2)) > MAX_DIGITS:
            raise refusal(f'слишком большой номер задачи "{shown(value.text)}"', value.position)
        prefix = match.group(1)
        return (f'(i.key > {self.param(prefix + "-")} AND i.key < {self.param(prefix + ".")} '
                f'AND {_NATURAL_I} {operator} {self.param(natural_key(value.text))})')

    def linked(self, value: Value) -> str:
        if value.function != 'linkedIssues' or not 1 <= len(value.arguments) <= 2 \
                or any(argument.function or argument.empty for argument in value.arguments):
            raise refusal('ожидается linkedIssues(КЛЮЧ) или linkedIssues(КЛЮЧ, "тип связи")',
                         value.position)
        key = self.param(value.arguments[0].text)
        kind = ''
        if len(value.arguments) == 2:
            link_type = self.param(fold(value.arguments[1].text))
            kind = f' AND hub_fold(l.{_LINK.link_type}) = {link_type}'
        return (f'SELECT l.{_LINK.target_key} FROM {_LINK} l '
                f'WHERE l.{_LINK.source_key} = {key}{kind} '
                f'UNION SELECT l.{_LINK.source_key} FROM {_LINK} l '
                f'WHERE l.{_LINK.target_key} = {key}{kind}')

    def _project(self, clause: Clause) -> str:
        # A project's keys are one range of the natural order (and of the key): "P-" <= k < "P.".
        # Under another order the range must not lead the plan (a big project is the whole
        # mirror: 200,000 rows sorted instead of an index walked), so it is a plain test there.
        # A count or facets walk no order: the key itself, which SQLite may find in its indexes
        # and tests cheaply (the natural order's column is an expression of eight functions;
        # evaluated on each of 50,000 issues it was most of the facets' 184 ms).
        column = (self.natural or '+i.key') if self.walked else 'i.key'
        ranges = []
        for value in clause.values:
            prefix = None if value.empty else project_prefix(value.text)
            if prefix is None:
                ranges.append('0')  # a project key is ASCII: nothing else can match
                continue
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
                raise refusal(f'неизвестный проект хаба "{value.text}"', value.position)
            found.append(labels[fold(value.text)])
        return (f'i.key IN (SELECT s.{_MEMBER.key} FROM {_MEMBER} s WHERE s.{_MEMBER.label} IN '
                f'({self.params_of(found)}))')

    def _text(self, clause: Clause) -> str:
        if clause.operator in ('is empty', 'is not empty'):  # a column's text, not `text ~`
            return self.column_presence(clause.operator, f'i.{getattr(_ISSUE, clause.field.column)}')
        expression = match_of(clause)
        if expression is None:
            return '0' if clause.operator == '~' else '1'
        self.weigh(clause, text_cost(clause))
        keys = fulltext.matching_keys(self.param(expression))
        return f'i.key IN ({keys})' if clause.operator == '~' else f'i.key NOT IN ({keys})'

    def _substring(self, clause: Clause) -> str:
        needle = self.param(fold(clause.values[0].text))
        return f'(hub_contains(i.key, {needle}) OR hub_contains(i.summary, {needle}))'

    def _neighbor(self, clause: Clause) -> str:
        owner = 'm' if self.sliced else 'i'
        return f'{owner}.neighbor = {self.param(int(clause.values[0].text == "true"))}'

    def _category(self, clause: Clause) -> str:
        value = clause.values[0]
        if fold(value.text) != 'done':
            raise refusal(f'statusCategory сравнивается только с Done, а не с "{value.text}"',
                         value.position)
        done = self.closed_status()
        if clause.operator == '=':
            return done
        return f'({self.filled("i." + _ISSUE.status)} AND NOT {done})'

    def _resolution(self, clause: Clause) -> str:
        if clause.operator == '=' and fold(clause.values[0].text) != 'unresolved':
            value = clause.values[0]
            raise refusal(f'resolution сравнивается только с Unresolved, а не с "{value.text}"',
                         value.position)
        done = f'ifnull({self.closed_status()}, 0)'
        return done if clause.operator == 'is not empty' else f'NOT {done}'

    def _labels(self, clause: Clause) -> str:
        column = f'i.{_ISSUE.labels}'
        listed = f"({column} IS NOT NULL AND {column} NOT IN ('', '[]'))"
        if (present := self.presence(clause.operator, listed)) is not None:
            return present
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
        column = f'i.{getattr(_ISSUE, clause.field.column)}'
        operator = clause.operator
        if (present := self.column_presence(operator, column)) is not None:
            return present
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
        column = f'i.{getattr(_ISSUE, clause.field.column)}'
        operator = clause.operator
        if (present := self.column_presence(operator, column)) is not None:
            return present
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
        column = f'i.{_ISSUE.story_points}'
        if (present := self.presence(clause.operator, f'{column} IS NOT NULL')) is not None:
            return present
        value = clause.values[0]
        try:
            if len(value.text) > 2 * MAX_DIGITS:  # no story point is written with more
                raise ValueError(value.text)
            number = float(value.text)
            if number != number or number in (float('inf'), float('-inf')):
                raise ValueError
        except ValueError:
            raise refusal(f'ожидается число, а не "{shown(value.text)}"', value.position) from None
        return f'{column} {clause.operator} {self.param(number)}'

    def _sprint(self, clause: Clause) -> str:
        member = f'i.key IN (SELECT s.{_ISSUE_SPRINT.key} FROM {_ISSUE_SPRINT} s)'
        if (present := self.presence(clause.operator, member)) is not None:
            return present
        sprints = list(JiraSprint.select(JiraSprint.sprint_id, JiraSprint.name, JiraSprint.state)
                       .tuples().execute(self.hub.db))
        ids: set[int] = set()
        for value in clause.values:
            if value.empty:
                continue
            if value.function is not None:
                state = SPRINT_FUNCTIONS[value.function]
                if value.arguments:
                    raise refusal(f'функция {value.text}() не принимает аргументов',
                                 value.position)
                ids.update(sprint for sprint, _, kind in sprints if fold(kind) == state)
            elif not value.quoted and value.text.isascii() and value.text.isdigit():
                if len(value.text) > 18:
                    raise refusal(f'слишком большой номер спринта "{shown(value.text)}"',
                                  value.position)
                ids.add(int(value.text))
            else:
                ids.update(sprint for sprint, name, _ in sprints if fold(name) == fold(value.text))
        within = (f'i.key IN (SELECT s.{_ISSUE_SPRINT.key} FROM {_ISSUE_SPRINT} s '
                  f'WHERE s.{_ISSUE_SPRINT.sprint_id} IN ({self.params_of(sorted(ids))}))')
        if clause.operator in ('=', 'in'):
            if any(value.empty for value in clause.values):
                return f'({within} OR NOT {member})'
            return within
        return f'({member} AND NOT {within})'

    def _note(self, clause: Clause) -> str:
        noted = f'i.key IN (SELECT n2.{_NOTE.key} FROM {_NOTE} n2)'
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

    # _OWN_ROWS: WAS and CHANGED without a window test each issue the page walks against its own
    # change rows (the (key, at) index, ~10 rows an issue; ``+field`` keeps SQLite off the
    # (field, at) index, which it would otherwise scan for every issue) and stop when the page
    # is full. They used to collect every change row of the field first: 200,000 issues /
    # 2,000,000 change rows, first page of 100, CPU on the shared machine: `status CHANGED`
    # 0.93–1.03 s -> 1–2 ms, `status WAS Готово` 3.3–3.7 s -> 2–3 ms, `status CHANGED TO Готово`
    # ~1.0 s -> 4 ms. A value no issue ever had walks the whole mirror either way (~3.5 s).
    # WAS with a window reads the same rows (``+field`` in its subqueries, which SQLite otherwise
    # ran as a scan of the window's rows of the field for every issue): `status WAS Готово
    # DURING (-30d, -20d)` over 300 s -> 16 ms CPU, `status WAS Готово BY ivanov` -> 32 ms.
    # With a window (AFTER, BEFORE, ON, DURING) CHANGED still collects the window's rows: the
    # (field, at, to_string, key) index holds them.
    def history(self, clause: Clause) -> str:
        spec = clause.field
        for value in clause.values:  # checked in the order of the text: values, then predicates
            if value.function is not None:
                raise refusal(f'функция {value.text}() не применима к WAS', value.position)
        for predicate in clause.predicates:
            for value in predicate.values:
                if value.function is not None and (predicate.name in ('from', 'to', 'by')
                                                   or value.function not in DATE_FUNCTIONS):
                    raise refusal(f'функция {value.text}() не применима в {predicate.name.upper()}',
                                 value.position)
        name = self.param(spec.history)
        low, high = self.window(clause)
        by = [p for p in clause.predicates if p.name == 'by']
        windowed = low is not None or high is not None
        self.weigh(clause, 'changed_window' if clause.operator == 'changed' and windowed else
                   'changed' if clause.operator == 'changed' else
                   'was_window' if windowed or by else 'was')
        if clause.operator == 'changed':
            where = [f'c.{_CHANGE.field} = {name}']
            for predicate in clause.predicates:
                if predicate.name == 'from':
                    where.append(self.matches(f'c.{_CHANGE.from_string}', predicate.values))
                elif predicate.name == 'to':
                    where.append(self.matches(f'c.{_CHANGE.to_string}', predicate.values))
                elif predicate.name == 'by':
                    author = self.param(fold(predicate.values[0].text))
                    where.append(f'hub_fold(c.{_CHANGE.author}) = {author}')
            if low is None and high is None:
                # no window: the issue's own change rows (see _OWN_ROWS)
                where[0] = f'c.{_CHANGE.key} = i.{_ISSUE.key} AND +c.{_CHANGE.field} = {name}'
                return f'EXISTS (SELECT 1 FROM {_CHANGE} c WHERE {" AND ".join(where)})'
            if low is not None:
                where.append(f'c.{_CHANGE.at} >= {self.param(format_utc(low))}')
            if high is not None:
                where.append(f'c.{_CHANGE.at} < {self.param(format_utc(high))}')
            return f'i.key IN (SELECT c.{_CHANGE.key} FROM {_CHANGE} c WHERE {" AND ".join(where)})'
        held = self.was(clause, name, low, high, by)
        return held if clause.operator in ('was', 'was in') else f'NOT ifnull({held}, 0)'

    def was(self, clause: Clause, name: str, low, high, by: list[Predicate]) -> str:
        column = f'i.{getattr(_ISSUE, clause.field.column)}'
        values = clause.values
        if low is None and high is None and not by:
            changed = (f'EXISTS (SELECT 1 FROM {_CHANGE} c WHERE c.{_CHANGE.key} = i.{_ISSUE.key} '
                       f'AND +c.{_CHANGE.field} = {name} AND '
                       f'({self.matches(f"c.{_CHANGE.from_string}", values)} OR '
                       f'{self.matches(f"c.{_CHANGE.to_string}", values)}))')
            return f'({self.matches(column, values)} OR {changed})'
        # every subquery here reads one issue's own rows (see _OWN_ROWS: ``+field``)
        same = (f'c.{_CHANGE.key} = i.key AND +c.{_CHANGE.field} = {name} '
                f'AND c.{_CHANGE.at} IS NOT NULL')
        # (A) set to v by a change inside or before the window and not changed again before it
        started = [same, self.matches(f'c.{_CHANGE.to_string}', values)]
        if by:
            author = self.param(fold(by[0].values[0].text))
            started.append(f'hub_fold(c.{_CHANGE.author}) = {author}')
        if high is not None:
            started.append(f'c.{_CHANGE.at} < {self.param(format_utc(high))}')
        if low is not None:
            started.append(f'NOT EXISTS (SELECT 1 FROM {_CHANGE} d '
                           f'WHERE d.{_CHANGE.key} = i.key AND '
                           f'+d.{_CHANGE.field} = {name} AND d.{_CHANGE.at} > c.{_CHANGE.at} AND '
                           f'd.{_CHANGE.at} <= {self.param(format_utc(low))})')
        parts = [f'EXISTS (SELECT 1 FROM {_CHANGE} c WHERE {" AND ".join(started)})']
        if not by:
            created = ''
            if high is not None:
                created_utc = utc_sql(f'i.{_ISSUE.created}')
                created = (f' AND ({created_utc} IS NULL OR '
                           f'{created_utc} < {self.param(sql_moment(high))})')
            # (B) held from creation until the first change
            first = [same, self.matches(f'c.{_CHANGE.from_string}', values),
                     f'NOT EXISTS (SELECT 1 FROM {_CHANGE} e WHERE e.{_CHANGE.key} = i.key AND '
                     f'+e.{_CHANGE.field} = {name} AND e.{_CHANGE.at} < c.{_CHANGE.at})']
            if low is not None:
                first.append(f'c.{_CHANGE.at} > {self.param(format_utc(low))}')
            parts.append(f'(EXISTS (SELECT 1 FROM {_CHANGE} c '
                         f'WHERE {" AND ".join(first)}){created})')
            # (C) never changed: the current value all along
            parts.append(f'(NOT EXISTS (SELECT 1 FROM {_CHANGE} c WHERE {same}) AND '
                         f'{self.matches(column, values)}{created})')
        return '(' + ' OR '.join(parts) + ')'

    # --- order ------------------------------------------------------------------------------

    def sort(self, sort: Sort) -> list[SortColumn]:
        spec = sort.field
        way = sort.descending
        if spec.kind == 'key':
            return [SortColumn('m.sort_key' if self.sliced else _NATURAL_I, way)]
        column = f'i.{getattr(_ISSUE, spec.column)}'
        if spec.kind == 'moment':
            return [SortColumn(utc_sql(column), way, indexed=True)]
        if spec.name == 'priority':
            # priorities of one rank (those the map does not name) by name A→Z either way
            name = self.folded(spec.column)
            return [SortColumn(self.priority_rank(column, name), way), SortColumn(name, False)]
        if spec.kind in ('choice', 'text'):
            return [SortColumn(self.folded(spec.column), way)]
        if spec.kind == 'number':
            return [SortColumn(column, way)]
        return [SortColumn(f"NULLIF({column}, '')", way)]

    def folded(self, name: str) -> str:
        """The sort value of the issue column ``name`` (:func:`folded`). A choice column with at
        most :data:`FEW_SPELLINGS` stored spellings (statuses, types, priorities: the everyday
        case) says their casefolds as a CASE of SQL literals, no Python call per row and no
        parameter (a sort of 16,000 of 20,000 issues by status: 74 ms CPU with the call, 50
        with the CASE); any other spelling, and a column of more, casefolds per row."""
        column = f'i.{getattr(_ISSUE, name)}'
        spellings = self.few_spellings(name) if name in INDEXED_CHOICES else None
        if not spellings:
            return folded(column)
        cases = ' '.join(f'WHEN {_literal(value)} THEN {_literal(fold(value))}'
                         for value in spellings)
        return f'CASE {column} {cases} ELSE {folded(column)} END'

    def few_spellings(self, name: str) -> list[str] | None:
        """The stored spellings of a choice column when there are at most
        :data:`FEW_SPELLINGS` of them (a skip scan that stops after one more), else None."""
        if name not in self._few:
            found = stored_values(self.hub, getattr(_ISSUE, name), FEW_SPELLINGS + 1)
            self._few[name] = (found if len(found) <= FEW_SPELLINGS
                               and not any('\x00' in value for value in found) else None)
        return self._few[name]

    def priority_rank(self, column: str, sort_value: str) -> str:
        """The rank of a priority as Jira sorts it: ``priority_map``'s values in the order the
        client wrote the map go from the most important to the least, so the first value ranks
        highest (``ORDER BY priority DESC`` lists it first); a priority the map does not name
        ranks below every named one (0; such ones by name A→Z in either direction: the next
        sort column); no priority is NULL (last both ways). ``sort_value`` is the priority's
        casefold (:meth:`folded`). The map's values are bound, one parameter each (a setting of a
        few names, not the mirror's values)."""
        stored = setting(self.hub, 'priority_map', {})
        names: list[str] = []
        for name in (stored.values() if isinstance(stored, dict) else ()):
            if isinstance(name, str) and fold(name) not in names:
                names.append(fold(name))
        cases = ' '.join(f'WHEN {self.param(name)} THEN {len(names) - index}'
                         for index, name in enumerate(names))
        known = f'CASE {sort_value} {cases} ELSE 0 END' if names else '0'
        return f'CASE WHEN {self.empty(column)} THEN NULL ELSE {known} END'


# A choice column of at most this many stored spellings sorts by a CASE of their casefolds
# (_Compiler.folded): a few dozen tests of a row's value are cheaper than a Python call.
FEW_SPELLINGS = 32


def _literal(text: str) -> str:
    """``text`` as an SQL string literal (no NUL: _Compiler.few_spellings keeps those out)."""
    return "'" + text.replace("'", "''") + "'"


def folded(column: str) -> str:
    """The sort value of a text or choice column: its Unicode casefold, NULL when empty (last in
    either direction). One Python call per sorted row, whatever the number of distinct values:
    the order binds no parameter per value (it was a CASE of every stored spelling, two
    parameters each, which SQLite tested one by one for each row: 4,000 assignees, 391 s for a
    first page, and a 500 past SQLite's 32,766 variables; scripts/bench_choice_order.py)."""
    return f"hub_fold(NULLIF({column}, ''))"


def match_of(clause: Clause) -> str | None:
    """The FTS5 expression of a ``~``/``!~`` clause: one value's match, or (a clause that
    :func:`normalized` merged from OR-ed ``~`` of one field) any of its values' matches, one
    MATCH for all; None when no value holds a word."""
    return fulltext.match_any([value.text for value in clause.values],
                              fulltext.COLUMN_OF.get(clause.field.name))


def compile_search(hub, query: Query, *, tz: str | None = None, extra: Iterable = (),
                   label: str | None = None, now: datetime | None = None,
                   rank: bool = True) -> Search:
    """SQL of ``query`` AND-ed with ``extra`` clauses (the other filters of GET /issues), over the
    slice of ``label`` when given. Reads the settings, projects and sprints it needs (the caller
    holds the read transaction). ``rank=False``: a ``~`` only filters, and nothing walks an order
    (counts, facets)."""
    clock = Clock(now if now is not None else hub.clock(), zone(tz))
    search = Search(label=label)
    where = None if query.where is None else normalized(query.where)
    terms = ([] if where is None else list(where.items) if isinstance(where, And) else [where])
    terms += list(extra)
    order = list(query.order)
    explicit = bool(order)  # an ORDER BY always wins over relevance, even ORDER BY key
    if order and order[0].field.kind == 'key' and not order[0].descending:
        order = []  # key ascending is the natural order, whatever follows it
    if rank and not explicit:
        ranked = next((term for term in terms if isinstance(term, Clause)
                       and term.operator == '~' and term.field.kind == 'text'), None)
        if ranked is not None:
            search.match = match_of(ranked)
            if search.match is None:
                search.conditions.append('0')
            terms.remove(ranked)
    natural = None
    if not order and search.match is None:
        natural = 'm.sort_key' if label is not None else _NATURAL_I
    compiler = _Compiler(hub, clock, search.params, sliced=label is not None, natural=natural,
                         walked=rank)
    if search.match is not None:
        compiler.weigh(ranked, text_cost(ranked))
    for term in terms:
        search.conditions.append(compiler.node(term))
    problem = first(*query.problems, *compiler.refusals)
    if problem is not None:
        raise problem
    _refuse_heavy(hub, compiler, search.params)
    if (len(terms) == 1 and isinstance(terms[0], Clause) and terms[0].field.kind == 'project'
            and terms[0].operator in ('=', 'in')):
        search.projects = tuple(prefix for value in terms[0].values if not value.empty
                                and (prefix := project_prefix(value.text)) is not None)
    for sort in order:
        search.order.extend(compiler.sort(sort))
    if len(order) == 1 and order[0].field.column in INDEXED_CHOICES:
        search.choice = getattr(_ISSUE, order[0].field.column)
    return search


def _refuse_heavy(hub, compiler: _Compiler, params: dict) -> None:
    """Refuse a query that will surely not finish within the read deadline (the estimate of
    :data:`COSTS` over the mirror's size), or that binds more values than SQLite takes."""
    where = compiler.heavy[0].position if compiler.heavy else 1
    if len(params) > MAX_PARAMETERS:
        raise refusal(f'запрос слишком тяжёлый: больше {MAX_PARAMETERS} значений', 1)
    if not compiler.cost:
        return
    size = mirror_size(hub)
    seconds = compiler.cost * size / 1e6
    deadline = read_deadline_seconds(hub)
    if seconds > deadline:
        shown_seconds = f'{seconds:.0f}' if seconds >= 10 else f'{seconds:.2g}'
        history = sum(1 for clause in compiler.heavy if clause.operator in HISTORY_OPERATORS)
        texts = len(compiler.heavy) - history
        what = ', '.join(part for part in (
            f'условий по истории изменений: {history}' if history else '',
            f'полнотекстовых условий: {texts}' if texts else '') if part)
        raise refusal(f'запрос слишком тяжёлый: по оценке не меньше {shown_seconds} с на '
                      f'{size} задачах зеркала при пределе чтения {deadline:g} с ({what}); '
                      'сузьте запрос или разбейте его на несколько', where)


def project_prefix(name: str | None) -> str | None:
    """A Jira project's key as its issues' keys begin (``aurora`` → ``AURORA``); None for no
    name or one that is not ASCII (no issue key can begin with it)."""
    folded = fold(name) if name else None
    return folded.upper() if folded and folded.isascii() else None


def found_by_key(search: Search) -> bool:
    """Whether a condition of ``search`` is a list of keys (``i.key IN (…)``: ``~``, sprint,
    hubProject, linkedIssues, key): SQLite then finds the issues by key, and the facets read
    their columns from ``KEY_FACET_INDEX``. Without statistics the planner takes the key's
    unique index and reads each wide row instead, so the facets name the index."""
    return any(condition.startswith('i.key IN (') for condition in search.conditions)


def clause(spec: FieldSpec, operator: str, value: str | datetime) -> Clause:
    """A clause built by code: a filter of GET /issues that is not JQL text (a moment for dates)."""
    if isinstance(value, datetime):
        return Clause(spec, operator, (Value(format_utc(value), 0, moment=value),))
    return Clause(spec, operator, (Value(value, 0, quoted=True),))
