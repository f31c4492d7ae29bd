"""The published contract of the command types (contract §9.2): each params schema, turned into
JSON Schema the way the API document is made (apispec, plus the ``OPENAPI`` keywords hublib's
fields and schemas carry), says exactly what ``create_batch`` accepts."""
from __future__ import annotations

import re

import pytest
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from hypothesis import given, settings as hypothesis_settings, strategies as st

from hublib import batches, modules
from hublib.errors import ValidationError
from hublib.validation import WHITESPACE, load

SETTINGS = {'issue_types': {'task': {'name': 'Задача'}, 'epic': {'name': 'Эпик'}},
            'link_types': {'blocks': 'Blocks'}}


def openapi_keywords(self, field, ret, **kwargs) -> dict:
    # What the document generator does with hublib's fields (hubweb.openapi on main).
    extra = getattr(field, 'OPENAPI', None)
    if not extra:
        return {}
    if 'type' not in extra:
        ret.pop('type', None)
    return dict(extra)


def json_schemas() -> dict[str, dict]:
    plugin = MarshmallowPlugin()
    spec = APISpec(title='t', version='1', openapi_version='3.0.3', plugins=[plugin])
    plugin.converter.add_attribute_function(openapi_keywords)
    found = {}
    for name, schema in modules.params_schemas(SETTINGS).items():
        found[name] = {**plugin.converter.schema2jsonschema(schema),
                       **getattr(schema, 'OPENAPI', {})}
    return found


def test_each_limit_is_in_the_published_schema():
    schemas = json_schemas()
    assert all(schema['additionalProperties'] is False for schema in schemas.values())
    refresh, ensure = schemas['refresh'], schemas['ensure_issue']
    # exactly one of jql or keys (a null counts as not given)
    assert refresh['oneOf'] == [
        {'required': ['jql'], 'properties': {'jql': {'type': 'string'}},
         'not': {'required': ['keys'], 'properties': {'keys': {'type': 'array'}}}},
        {'required': ['keys'], 'properties': {'keys': {'type': 'array'}},
         'not': {'required': ['jql'], 'properties': {'jql': {'type': 'string'}}}}]
    assert refresh['properties']['keys']['minItems'] == 1
    assert refresh['properties']['board_id']['minimum'] == 1
    assert refresh['properties']['jql']['maxLength'] == 32000
    assert set(ensure['required']) == {'issue_type', 'summary'}
    assert set(ensure['properties']['issue_type']['enum']) == {'task', 'epic'}
    assert 'pattern' in ensure['properties']['summary']
    assert ensure['properties']['duedate']['format'] == 'date'
    assert ensure['properties']['description']['maxLength'] == 32000
    assert ensure['not']['required'] == ['key', 'temp_key']
    assert schemas['ensure_link']['properties']['link_type']['enum'] == ['blocks']
    assert set(schemas['add_comment']['required']) == {'key', 'body'}
    assert schemas['fetch_attachment']['properties']['attachment_id']['oneOf'] == [
        {'type': 'string', 'pattern': '^[0-9]{1,19}$'},
        {'type': 'integer', 'minimum': 0, 'maximum': 2 ** 63 - 1}]


def ecma_match(pattern: str, value: str) -> bool:
    # JSON Schema reads ``$`` as the very end (ECMA); Python's also allows a newline before it.
    return re.search(re.sub(r'\$$', r'\\Z', pattern), value) is not None


def accepted(type_name: str, params: dict) -> bool:
    try:
        load(modules.params_schemas(SETTINGS)[type_name], params)
    except ValidationError:
        return False
    return True


# Texts near the limits: whitespace of every kind str.strip() removes, and other characters.
SPACES = [chr(c) for c in range(0x110000) if chr(c).isspace()]
TEXTS = st.one_of(
    st.text(alphabet=st.sampled_from(SPACES + ['ж', 'a', '\u200b', '\ufeff']), max_size=40),
    st.builds(lambda a, n, b: a + 'ж' * n + b, st.text(st.sampled_from(SPACES), max_size=3),
              st.integers(250, 258), st.text(st.sampled_from(SPACES), max_size=3)))


@pytest.mark.parametrize('type_name, field, base, rule', [
    # the contract's rules in plain Python: stripped 1..255 characters; not only whitespace
    ('ensure_issue', 'summary', {'issue_type': 'task'}, lambda text: 0 < len(text.strip()) <= 255),
    ('transition', 'status', {'key': 'AURORA-1'}, lambda text: 0 < len(text.strip()) <= 255),
    ('add_comment', 'body', {'key': 'AURORA-1'}, lambda text: text.strip() != ''),
])
def test_published_pattern_of_a_text_agrees_with_the_rule_and_the_server(type_name, field, base,
                                                                         rule):
    pattern = json_schemas()[type_name]['properties'][field]['pattern']

    @hypothesis_settings(max_examples=150, deadline=None, database=None, derandomize=True)
    @given(TEXTS)
    def agree(text):
        verdicts = (rule(text), ecma_match(pattern, text),
                    accepted(type_name, {**base, field: text}))
        assert len(set(verdicts)) == 1, (repr(text), verdicts)
    agree()


def test_whitespace_is_what_str_strip_removes():
    assert re.fullmatch(f'[{WHITESPACE}]*', ''.join(SPACES))
    assert not any(re.fullmatch(f'[{WHITESPACE}]', ch) for ch in ('\u200b', '\ufeff', 'ж', 'a'))


@pytest.mark.parametrize('value', ['AURORA-1', 'new:1', 'A_1-0', 'AURORA-1\n', 'aurora-1', 'new:',
                                   'new:1 ', 'NEW:1', 'AURORA-'])
def test_published_key_pattern_agrees_with_the_server(value):
    pattern = json_schemas()['add_comment']['properties']['key']['pattern']
    assert ecma_match(pattern, value) == accepted('add_comment', {'key': value, 'body': 'x'})


def test_batch_schema_has_every_command_type_and_the_batch_limits(hub):
    schema = batches.batch_schema(hub)
    commands = schema.fields['commands']
    assert list(commands.inner.schemas) == list(modules.COMMAND_TYPES)
    lengths = [(v.min, v.max) for v in commands.validators]
    assert lengths == [(1, None), (None, 10000)]
    # any label: one that names no project is a 404 of the creation, not a malformed body
    assert schema.fields['project'].validators == []
