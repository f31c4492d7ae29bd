"""The values chosen in the facet lists of an issues list, and the lists counted with them.

The issues view offers a list of values for status, assignee, issue type and priority; a person
ticks values in several lists. Each list then counts the issues of the query that also match
every *other* list's choice, never its own: with Статус = «В работе», «На проверке» the
Исполнитель list counts only issues in those statuses, while the Статус list still counts every
status among the issues of the chosen assignees, so a second status can be added
(docs/web-ui.md). ``reads.issue_facets`` takes the choices (``chosen``) beside the query and
answers every list from the same one grouped scan: each (status, assignee, type, priority,
labels) combination is counted in the lists whose other choices it meets.

A choice compares as JQL's ``field IN (…)`` does (docs/jql.md): the choice fields casefolded,
labels exactly; ``None`` (or ``""``) chooses the issues without a value (``IS EMPTY``). An empty
list chooses nothing (as if the list were not given).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import marshmallow

from . import fields
from .facet_counts import COLUMNS as NAMES
from .jql import fold

CHOICE_FIELDS = NAMES[:-1]  # status, assignee, issue_type, priority; then labels
MAX_VALUES = 1000  # values a list may choose; a person ticks a few


@dataclass(frozen=True)
class Choice:
    """What one list chooses: ``values`` (casefolded, labels as given) and whether ``empty``."""

    values: frozenset
    empty: bool
    exact: bool = False  # labels: JQL compares them as written
    # the answer for each stored value met: a scan's combinations repeat a few values (1,814
    # combinations of the whole 50,000-issue mirror, 5 statuses), casefolded once each
    known: dict = field(default_factory=dict, compare=False, repr=False)

    def admits(self, value: str | None) -> bool:
        """The issue whose field holds ``value`` (as stored; '' or None: no value) is chosen."""
        answer = self.known.get(value)
        if answer is None:
            answer = self.known[value] = (
                self.empty if not value
                else (value if self.exact else fold(value)) in self.values)
        return answer

    def admits_labels(self, labels: tuple) -> bool:
        """The issue with these labels is chosen: one of them is, or it has none and ``empty``."""
        if not labels:
            return self.empty
        return any(label in self.values for label in labels)


Chosen = dict[str, Choice]


def _checked(name: str, values: object) -> list:
    if not isinstance(values, list):
        raise marshmallow.ValidationError({name: ['ожидается список значений']})
    if len(values) > MAX_VALUES:
        raise marshmallow.ValidationError({name: [f'не больше {MAX_VALUES} значений']})
    if any(value is not None and type(value) is not str for value in values):
        raise marshmallow.ValidationError({name: ['значения — строки или null (без значения)']})
    return values


class ChosenField(fields.Field):
    """The chosen values per list: a mapping (Python) or its JSON text (a query string), like
    ``{"status": ["В работе", "На проверке"], "assignee": [null]}``; loads as that mapping, the
    lists that choose nothing left out (loading it again gives the same)."""

    OPENAPI = {'type': 'string', 'example': '{"status": ["В работе", "На проверке"], '
                                            '"assignee": [null]}'}
    # the value the JSON text holds (a query parameter of JSON content in the OpenAPI document)
    OPENAPI_JSON = {'type': 'object', 'additionalProperties': False, 'properties': {
        name: {'type': 'array', 'maxItems': MAX_VALUES,
               'items': {'type': 'string', 'nullable': True}} for name in NAMES},
        'example': {'status': ['В работе', 'На проверке'], 'assignee': [None]}}
    # doubled braces: marshmallow formats its messages
    default_error_messages = {'invalid': 'ожидается JSON-объект: {{"status": ["В работе"], …}}'}

    def _deserialize(self, value, attr, data, **kwargs) -> dict[str, list]:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):
                raise self.make_error('invalid') from None
        if not isinstance(value, Mapping):
            raise self.make_error('invalid')
        unknown = [name for name in value if name not in NAMES]
        if unknown:
            raise marshmallow.ValidationError({str(unknown[0]): [
                'неизвестный список: допустимы ' + ', '.join(NAMES)]})
        return {name: _checked(name, values) for name, values in value.items() if values != []}


def choices(chosen: Mapping[str, list]) -> Chosen:
    """The loaded ``chosen`` (:class:`ChosenField`) as the :class:`Choice` of each list."""
    return {name: Choice(frozenset(value if name == 'labels' else fold(value)
                                   for value in values if value),
                         any(not value for value in values), name == 'labels')
            for name, values in chosen.items()}


def misses(chosen: Chosen, values: tuple, labels: tuple) -> list[str]:
    """The lists whose choice a combination (the four choice fields' values, its labels) fails."""
    failed = [name for name, value in zip(CHOICE_FIELDS, values)
              if name in chosen and not chosen[name].admits(value)]
    if 'labels' in chosen and not chosen['labels'].admits_labels(labels):
        failed.append('labels')
    return failed


__all__ = ['Choice', 'Chosen', 'ChosenField', 'CHOICE_FIELDS', 'NAMES', 'MAX_VALUES', 'choices',
           'misses']
