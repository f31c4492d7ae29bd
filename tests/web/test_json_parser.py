"""The request JSON parser (hubweb.media.loads): orjson first, the standard parser for the rest;
and the response writer (hubweb.media.dumps).

Both must give every body the same answer: the same value, or the same kind of error. The two
parsers differ on integers beyond 64 bits (orjson reads a float), NaN/Infinity, 1e400, lone
surrogates and very deep nesting; those all take the standard path.
"""
from __future__ import annotations

import json
import math

import falcon
import pytest
from hypothesis import given, settings, strategies as st

from hublib.errors import ValidationError
from hubweb.media import MAX_DEPTH, _standard_loads, dumps, loads


def outcome(parse, data):
    try:
        value = parse(data)
    except ValidationError as error:
        return ('422', error.args)
    except falcon.HTTPBadRequest:
        return ('400 surrogate',)
    except ValueError:
        return ('400',)
    return ('value', json.dumps(value, sort_keys=True), _types(value))


def _types(value):
    """The Python types inside ``value`` (an int must stay an int, not become a float)."""
    if isinstance(value, dict):
        return {key: _types(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_types(item) for item in value]
    return type(value).__name__


WIDE_INTEGERS = st.one_of(st.integers(), st.integers(min_value=2 ** 63 - 3, max_value=2 ** 64 + 3),
                          st.integers(min_value=-2 ** 63 - 3, max_value=-2 ** 63 + 3),
                          st.integers(min_value=10 ** 30, max_value=10 ** 40))
SCALARS = st.one_of(st.none(), st.booleans(), WIDE_INTEGERS,
                    st.floats(allow_nan=False, allow_infinity=False), st.text())
DOCUMENTS = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=5), inner, max_size=5)),
    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(DOCUMENTS)
def test_both_parsers_agree_on_any_json_document(document):
    data = json.dumps(document, ensure_ascii=False).encode()
    assert outcome(loads, data) == outcome(_standard_loads, data)


@pytest.mark.parametrize('text', [
    '18446744073709551616', '[18446744073709551616]', '{"a": -9223372036854775809}',
    '{"a": [1, {"b": 123456789012345678901234567890}]}', '9' * 5000, '1e400', '[-1e400]',
    'NaN', '{"a": Infinity}', r'"\ud800"', r'{"\udfff": 1}', r'"\ud83d\ude00"', '[1,]', '{bad',
    '', ' ', '\ufeff{}', '"\x01"', '{"a": 1, "a": 2}', '1.5e308', '[' * 40 + ']' * 40,
    '[' * 2000 + ']' * 2000, '[' * MAX_DEPTH + ']' * MAX_DEPTH, '{"a": 1e19}', '-0', '0.1e-400',
])
def test_both_parsers_agree_on_the_edges(text):
    data = text.encode('utf-8', 'surrogatepass')
    assert outcome(loads, data) == outcome(_standard_loads, data)


def test_integers_beyond_64_bits_stay_integers():
    value = loads(b'{"a": [18446744073709551616, -9223372036854775809]}')
    assert value == {'a': [2 ** 64, -2 ** 63 - 1]}
    assert all(type(item) is int for item in value['a'])


def test_invalid_utf8_is_malformed():
    with pytest.raises(ValueError):
        loads(b'{"a": "\xff"}')


def test_a_float_stays_finite():
    assert math.isfinite(loads(b'1.7976931348623157e308'))


SAFE_INTEGERS = st.integers(min_value=-2 ** 63, max_value=2 ** 63 - 1)
RESPONSES = st.recursive(
    st.one_of(st.none(), st.booleans(), SAFE_INTEGERS,
              st.floats(allow_nan=False, allow_infinity=False), st.text()),
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(st.one_of(st.text(max_size=5), SAFE_INTEGERS),
                                            inner, max_size=5)),
    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(RESPONSES)
def test_responses_say_what_json_dumps_said(value):
    assert json.loads(dumps(value)) == json.loads(json.dumps(value, ensure_ascii=False))


def test_responses_are_utf8_with_string_keys():
    assert dumps({1: 'ёлка', 'a': (1.5, None)}) == '{"1":"ёлка","a":[1.5,null]}'.encode()
