"""The hot ingest validators accept and refuse exactly what their published schemas do (issue 11).

``mirror.issue_ok`` and ``history.item_ok`` check a page in plain Python because marshmallow costs
~90 µs an issue; ``IssueIn`` and ``HistoryItem`` are what the OpenAPI document publishes and what
names the fields of a refused item. hypothesis draws JSON values around the schemas — every field
with right and wrong types, boundaries of the 64-bit range, odd keys, extra keys — and the two
rules must agree on every one.
"""
from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import example, find, given, settings as hypothesis_settings, strategies as st

from hublib.history import HistoryItem, HistoryPage, item_ok, page_columns
from hublib.mirror import IssueIn, issue_ok
from hublib.timeutil import to_utc
from hublib.validation import INT64_MAX, INT64_MIN, ValidationError, errors_of

EDGE_INTS = st.sampled_from([0, -1, 1, INT64_MIN, INT64_MAX, INT64_MIN - 1, INT64_MAX + 1, 2 ** 70])
INTS = st.one_of(st.integers(), EDGE_INTS)
KEYS = st.one_of(st.sampled_from(['AURORA-1', 'A_1-20', 'aurora-1', 'AURORA-', 'AURORA-1\n',
                                  '-1', 'A-01', '', 'АВРОРА-1']),
                 st.from_regex(r'[A-Z][A-Z0-9_]{0,5}-[0-9]{1,4}', fullmatch=True))
SCALARS = st.one_of(st.none(), st.booleans(), INTS, st.floats(allow_nan=True), st.text(max_size=5),
                    KEYS)
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(st.text(max_size=3), inner,
                                                                     max_size=3)),
                    max_leaves=6)


def maybe(strategy):
    """Mostly a right value, now and then any JSON value."""
    return st.one_of(strategy, strategy, strategy, JSON)


def objects(fields: dict, required: tuple[str, ...] = ()) -> st.SearchStrategy:
    """Dicts with the ``required`` fields and any subset of the others (each mostly right),
    sometimes an extra key."""
    return st.fixed_dictionaries(
        {name: maybe(fields[name]) for name in required},
        optional={**{name: maybe(value) for name, value in fields.items() if name not in required},
                  'extra': JSON})


TEXT = st.one_of(st.none(), st.text(max_size=4))
# Jira times: readable ones in every shape of contract §3, and ones to_utc cannot read.
GOOD_TIMES = st.sampled_from(['2026-10-22T09:00:00.000+0300', '2026-10-22T06:00:00Z',
                              '2026-10-22 09:00:00.5-05:00', '2026-10-22T09:00'])
TIMES = st.one_of(st.none(), GOOD_TIMES, GOOD_TIMES, st.text(max_size=4), st.sampled_from([
    'garbage', '2026-02-30T10:00:00.000+0300', '2026-10-22T09:00:00.000+9999', '2026-10-22', '',
    '0001-01-01T00:00:00+01:00']))
IDS = st.one_of(st.text(max_size=3), INTS)
LINK = objects({'type': st.text(max_size=3), 'direction': st.sampled_from(['outward', 'inward', 'up']),
                'key': st.text(max_size=3)}, required=('type', 'direction', 'key'))
COMMENT = objects({'id': IDS, 'author': TEXT, 'created': TIMES, 'updated': TIMES, 'body': TEXT},
                  required=('id',))
ATTACHMENT = objects({'id': IDS, 'filename': TEXT, 'size': st.one_of(st.none(), INTS),
                      'mime_type': TEXT, 'author': TEXT, 'created': TIMES}, required=('id',))
ISSUE = objects({
    'key': KEYS, 'summary': TEXT, 'description': TEXT, 'status': TEXT, 'epic_key': TEXT,
    'id': TEXT, 'rank': TEXT, 'updated': TIMES, 'created': TIMES,
    'labels': st.one_of(st.none(), st.lists(maybe(st.text(max_size=3)), max_size=3)),
    'story_points': st.one_of(st.none(), INTS, st.floats(allow_nan=True, allow_infinity=True)),
    'neighbor': st.one_of(st.none(), st.booleans()),
    'links': st.one_of(st.none(), st.lists(maybe(LINK), max_size=3)),
    'comments': st.one_of(st.none(), st.lists(maybe(COMMENT), max_size=3)),
    'attachments': st.one_of(st.none(), st.lists(maybe(ATTACHMENT), max_size=3)),
    'sprint_ids': st.one_of(st.none(), st.lists(maybe(INTS), max_size=3)),
}, required=('key',))
HISTORY_FIELDS = {
    'history_id': IDS, 'seq': INTS, 'key': KEYS, 'created': TIMES, 'author': TEXT,
    'field_id': TEXT, 'field_name': TEXT, 'from_value': TEXT, 'from_string': TEXT,
    'to_value': TEXT, 'to_string': TEXT}
HISTORY_ITEM = objects(HISTORY_FIELDS, required=('history_id', 'seq', 'key'))
# The agent's usual item (every key, a text id): the shape page_columns checks a column at a time.
USUAL_ITEM = st.fixed_dictionaries({
    **{name: st.one_of(strategy, strategy, strategy, strategy, JSON)
       for name, strategy in HISTORY_FIELDS.items()},
    'history_id': st.one_of(st.text(min_size=1, max_size=3), st.text(min_size=1, max_size=3),
                            st.text(min_size=1, max_size=3), IDS, JSON),
    'seq': st.one_of(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), INTS, JSON),
    'key': st.one_of(st.from_regex(r'[A-Z][A-Z0-9_]{0,5}-[0-9]{1,4}', fullmatch=True), KEYS)})
HISTORY_PAGE = st.lists(st.one_of(USUAL_ITEM, USUAL_ITEM, USUAL_ITEM, HISTORY_ITEM, JSON),
                        min_size=1, max_size=4)


def schema_accepts(schema, value) -> bool:
    return errors_of(schema, value, 'x') == {}


@hypothesis_settings(max_examples=600, deadline=None, derandomize=True)
@given(st.one_of(ISSUE, JSON))
def test_issue_ok_agrees_with_the_published_issue_schema(issue):
    assert issue_ok(issue) == schema_accepts(IssueIn(), issue), issue


@hypothesis_settings(max_examples=400, deadline=None, derandomize=True)
@given(st.one_of(HISTORY_ITEM, JSON))
def test_item_ok_agrees_with_the_published_history_schema(item):
    assert item_ok(item) == schema_accepts(HistoryItem(), item), item


def _item_by_item(page: list) -> tuple[list[tuple], list] | None:
    """What page_columns must give: each item's values (``None`` for a text left out, history
    ids as text) column by column and each item's time in hub UTC, or None when an item is
    refused."""
    if not all(map(item_ok, page)):
        return None
    rows = [tuple(item.get(name) for name in HISTORY_FIELDS) for item in page]
    return ([tuple(str(value) if index == 0 and type(value) is int else value for value in column)
             for index, column in enumerate(zip(*rows))],
            [to_utc(item.get('created')) for item in page])


def usual(**changed) -> dict:
    item = {'history_id': '10001', 'seq': 0, 'key': 'AURORA-1', 'created': '2026-10-22T09:00:00.000+0300',
            'author': 'ivanov', 'field_id': 'status', 'field_name': 'Status', 'from_value': '1',
            'from_string': 'Открыта', 'to_value': '3', 'to_string': 'В работе'}
    item.update(changed)
    return item


@hypothesis_settings(max_examples=300, deadline=None, derandomize=True)
@given(HISTORY_PAGE)
@example([usual(), usual(seq=1), usual(history_id='10002', key='AURORA-2', created=None)])
@example([usual(), usual(history_id='')])
@example([usual(), usual(seq=True)])
@example([usual(), usual(seq=-1)])
@example([usual(), usual(seq=INT64_MAX + 1)])
@example([usual(), usual(key='aurora-1')])
@example([usual(), usual(to_string=3)])
@example([usual(), usual(author=['ivanov'])])
@example([usual(), 'not an item'])
@example([usual(), usual(history_id=10002)])
@example([usual(), usual(created='2026-02-30T10:00:00.000+0300')])
@example([usual(created=None), usual(created='garbage')])
@example([usual(), {**usual(), 'created': 'garbage', 'extra': 1}])
@example([usual(), {name: value for name, value in usual().items() if name != 'author'}])
def test_a_page_checked_a_column_at_a_time_agrees_with_its_items(page):
    assert_columns_of(page, page)


def assert_columns_of(items: list, page: list) -> None:
    """``page_columns(items)`` gives what ``page``'s items give one by one: the same columns and
    times, or a refusal."""
    expected = _item_by_item(page)
    if expected is None:
        with pytest.raises(ValidationError):
            page_columns(items)
    else:
        assert page_columns(items) == expected


def typed_items(page: list) -> list | None:
    """The items of ``{"agent": "jira", "items": page}`` decoded as a :class:`HistoryPage` (what
    hubweb does with a body first), or None when the body is not of that shape."""
    body = json.dumps({'agent': 'jira', 'items': page})
    try:
        return msgspec.json.decode(body, type=HistoryPage).items
    except msgspec.MsgspecError:
        return None


@hypothesis_settings(max_examples=300, deadline=None, derandomize=True)
@given(HISTORY_PAGE)
@example([usual(), usual(seq=1), usual(history_id='10002', key='AURORA-2', created=None)])
@example([usual(), usual(key='aurora-1')])
@example([usual(), usual(created='2026-02-30T10:00:00.000+0300')])
@example([usual(created=None), usual(created='garbage')])
@example([usual(), {name: value for name, value in usual().items() if name != 'author'}])
def test_a_page_decoded_typed_agrees_with_its_items(page):
    """Whatever a body decodes into typed items, page_columns gives what the general way gives
    for its JSON objects: the same columns and times, or a refusal."""
    typed = typed_items(page)
    if typed is not None:  # else not the usual shape: hubweb takes the general way, proven above
        assert_columns_of(typed, page)


@pytest.mark.parametrize('changed, field', [
    ({'history_id': 10002}, 'history_id'), ({'history_id': ''}, 'history_id'),
    ({'seq': True}, 'seq'), ({'seq': -1}, 'seq'), ({'seq': 1.0}, 'seq'),
    ({'seq': INT64_MAX + 1}, 'seq'), ({'to_string': 3}, 'to_string'),
    ({'author': ['ivanov']}, 'author'), ({'extra': 1}, 'extra')])
def test_a_body_of_another_shape_is_not_decoded_typed(changed, field):
    """Anything but the usual shape goes the general way, whose errors name the field."""
    assert typed_items([usual(), usual(**changed)]) is None, field
    assert typed_items([usual(), usual(seq=1)]) is not None


@pytest.mark.parametrize('changed, field', [({'key': 'aurora-1'}, 'key')])
def test_a_typed_page_refused_names_the_field_as_the_general_way(changed, field):
    typed = typed_items([usual(), usual(seq=1, **changed)])
    assert typed is not None
    with pytest.raises(ValidationError) as typed_error:
        page_columns(typed)
    with pytest.raises(ValidationError) as general_error:
        page_columns([usual(), usual(seq=1, **changed)])
    assert typed_error.value.fields == general_error.value.fields
    assert f'items[1].{field}' in typed_error.value.fields, typed_error.value.fields


@pytest.mark.parametrize('created', ['2026-02-30T10:00:00.000+0300', 'garbage', ''])
def test_a_typed_page_with_an_unreadable_time_gets_the_general_ways_columns(created):
    """Not a refusal (seed 001: stored, ``at`` NULL): both ways give the same columns and a None
    time for that item."""
    page = [usual(), usual(seq=1, created=created)]
    typed = typed_items(page)
    assert typed is not None
    columns, at = page_columns(typed)
    assert (columns, at) == page_columns(page)
    assert at == ['2026-10-22T06:00:00+00:00', None] and columns[3][1] == created


def test_the_strategies_reach_both_answers():
    """A property that only ever saw accepted (or refused) values would prove nothing."""
    quick = hypothesis_settings(database=None, derandomize=True)
    assert issue_ok(find(ISSUE, lambda issue: issue_ok(issue) and len(issue) >= 4, settings=quick))
    assert not issue_ok(find(ISSUE, lambda issue: not issue_ok(issue) and 'key' in issue,
                             settings=quick))
    assert item_ok(find(HISTORY_ITEM, item_ok, settings=quick))
    assert find(HISTORY_PAGE, lambda page: bool(typed_items(page)) and _item_by_item(page),
                settings=quick)
    # a typed page refused (its key) and one accepted with a time to_utc cannot read (at None)
    # are the explicit examples' part
