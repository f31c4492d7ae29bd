"""Offline JQL (contract §16): the language. Text → tokens → tree (:func:`parse`, ``language``);
dates in the request's zone (``dates``); the tree → SQL conditions and sort expressions over the
mirror (:func:`compile_search`, ``sql``). One namespace for every caller: ``hublib.jql``.

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
- Date functions take their boundary of the current period first, then the increment moves it
  (``startOfMonth("+14d")``: the 15th); a bare number (``startOfMonth(-1)``) counts the
  function's own period; units ``y M w d h m``.
- ``endOfDay()`` and the other ends are the last second of the period.
- ``NOT`` is the negative operator (``normalized``): ``NOT assignee = x`` ⇔ ``assignee != x``;
  NOT of a clause without one (``CHANGED``, ``text ~``, ``hubProject``, ``resolution``) is its
  complement. ``WAS ("v")`` is ``WAS v``; ``= ("v")`` is refused pointing to ``IN``.
- Of several problems the first in the text is refused (``Query.problems``, the compiler's own).
- ``ORDER BY priority DESC``: the first value of ``priority_map`` first; names outside the map
  below every named one, by name A→Z either way.
- ``= EMPTY`` / ``!= EMPTY`` mean ``IS EMPTY`` / ``IS NOT EMPTY``; ``IN (…, EMPTY)`` also matches empty.
- ``WAS NOT v`` ⇔ not ``WAS v`` (the issue never held v, in the window when given).
- An issue's timeline starts at its creation: ``WAS`` with a window does not match an issue
  created after the window.
- Text fields sort by their casefolded value; ``rank`` by its text (Jira's lexorank);
  ``hubProject`` names a hub project by label (any case): an unknown one is a refusal.
- A sprint name that no mirrored sprint has matches nothing (the boards may not be fetched yet).
- Relevance: without ``ORDER BY`` the first ``~`` that is a top-level AND term ranks the issues;
  a ``~`` only inside OR or NOT filters and the order stays natural; any ``ORDER BY`` (even
  ``ORDER BY key``) wins over relevance.
- Limits (docs/jql.md, "Limits"): depth 16, 300 clauses, 10 sort keys (a field once), numbers of
  at most 18 digits, and a cost estimate that refuses a query sure to outrun the read deadline.
"""
from __future__ import annotations

from .dates import Clock, Span, sql_moment, zone
from .language import (FIELDS, KEYWORDS, MAX_CLAUSES, MAX_DEPTH, MAX_SORT_KEYS, SUPPORTED, And,
                       Clause, FieldSpec, Not, Or, Predicate, Query, Refused, Sort, Token, Value,
                       field_named, normalized, parse, tokenize, ASSIGNEE, NEIGHBOR_FIELD, Q_FIELD,
                       STATUS, TEXT, UPDATED)
from .sql import (DERIVED_INDEXES, FACET_INDEX, KEY_FACET_INDEX, Search, SortColumn, clause,
                  compile_search, distinct_values_sql, fold, found_by_key, mirror_size,
                  project_prefix,
                  register_functions, stored_values, utc_sql)
from ..errors import ValidationError

__all__ = ['parse', 'tokenize', 'normalized', 'compile_search', 'MAX_DEPTH', 'MAX_CLAUSES',
           'MAX_SORT_KEYS', 'Refused', 'clause', 'zone', 'Query', 'Clause', 'And', 'Or',
           'Not', 'Sort', 'Value', 'Predicate', 'FieldSpec', 'FIELDS', 'Search', 'SortColumn',
           'SUPPORTED', 'DERIVED_INDEXES', 'register_functions', 'utc_sql', 'sql_moment', 'fold',
           'Clock', 'Span', 'field_named', 'KEYWORDS', 'Token', 'ValidationError', 'STATUS',
           'ASSIGNEE', 'TEXT', 'UPDATED', 'Q_FIELD', 'NEIGHBOR_FIELD', 'stored_values',
           'found_by_key', 'project_prefix', 'FACET_INDEX', 'KEY_FACET_INDEX', 'mirror_size',
           'distinct_values_sql']
