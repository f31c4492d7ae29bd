"""The hub's Russian messages live on its own classes (``hublib.fields``, ``hublib.validators``,
``validation.Schema``): importing hublib changes nothing of marshmallow for the rest of the
process (STYLE 16)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import marshmallow
import pytest
from marshmallow import fields as marshmallow_fields
from marshmallow import validate as marshmallow_validate

from hublib import fields, validators
from hublib.errors import ValidationError
from hublib.validation import FIELD_MESSAGES, Schema, Text, load

ROOT = Path(__file__).resolve().parents[2]

# marshmallow's messages as the process has them: every field class's defaults, the Schema's,
# and the message attributes of every validator class.
SNAPSHOT = '''
import inspect, json, marshmallow
from marshmallow import fields, validate
def snapshot():
    found = {'Schema': [marshmallow.Schema._default_error_messages,
                        marshmallow.Schema.error_messages]}
    for name, cls in sorted(vars(fields).items()):
        if inspect.isclass(cls) and issubclass(cls, fields.Field):
            found[f'fields.{name}'] = dict(cls.default_error_messages)
    for name, cls in sorted(vars(validate).items()):
        if inspect.isclass(cls) and issubclass(cls, validate.Validator):
            found[f'validate.{name}'] = {attribute: value for attribute, value in vars(cls).items()
                                         if attribute.startswith(('message', 'default_message'))}
    return found
'''
IMPORT_EVERYTHING = '''
import importlib, pkgutil, hublib, hubweb
for package in (hublib, hubweb):
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + '.'):
        importlib.import_module(module.name)
'''


def test_importing_the_hub_leaves_marshmallow_messages_as_shipped():
    code = (SNAPSHOT + 'before = snapshot()\n' + IMPORT_EVERYTHING
            + 'print(json.dumps([before, snapshot()], ensure_ascii=False))\n')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    before, after = json.loads(result.stdout)
    assert before['fields.String'] == {'invalid': 'Not a valid string.',
                                       'invalid_utf8': 'Not a valid utf-8 string.'}
    assert before['validate.Range']['message_min'] == 'Must be {min_op} {{min}}.'
    assert after == before


def test_a_hub_schema_answers_in_russian_and_a_plain_one_in_english():
    class Hub(Schema):
        name = fields.String(required=True)
        count = fields.Integer(validate=validators.Range(min=1))
        kind = fields.String(validate=validators.OneOf(['a', 'b']))

    class Plain(marshmallow.Schema):
        name = marshmallow_fields.String(required=True)
        count = marshmallow_fields.Integer(validate=marshmallow_validate.Range(min=1))

    with pytest.raises(ValidationError) as raised:
        load(Hub, {'count': 0, 'kind': 'c', 'extra': 1})
    assert raised.value.fields == {
        'name': ['обязательное поле'], 'count': ['должно быть не меньше 1'],
        'kind': ['ожидается одно из: a, b'], 'extra': ['неизвестное поле']}
    with pytest.raises(marshmallow.ValidationError) as plain:
        Plain().load({'count': 0, 'extra': 1})
    assert plain.value.messages == {'name': ['Missing data for required field.'],
                                    'count': ['Must be greater than or equal to 1.'],
                                    'extra': ['Unknown field.']}


@pytest.mark.parametrize('field, value, message', [
    (fields.String(), 5, 'ожидается строка'),
    (fields.Integer(), 'x', 'ожидается целое число'),
    (fields.Float(), 'x', 'ожидается число'),
    (fields.Boolean(), 'x', 'ожидается true или false'),
    (fields.List(fields.String()), 'x', 'ожидается список'),
    (fields.Dict(), 'x', 'ожидается объект'),
    (Text(max_length=2), 'abc', 'длина больше 2'),
    (fields.String(allow_none=False), None, 'значение не может быть null'),
])
def test_every_hub_field_class_has_its_russian_message(field, value, message):
    with pytest.raises(ValidationError) as raised:
        load(Schema.from_dict({'value': field}), {'value': value})
    assert raised.value.fields == {'value': [message]}


def test_field_messages_stay_keyed_by_marshmallows_classes():
    # the MCP adapter words the SDK's argument errors with these
    assert FIELD_MESSAGES[marshmallow_fields.Field]['required'] == 'обязательное поле'
    assert FIELD_MESSAGES[marshmallow_fields.Mapping]['invalid'] == 'ожидается объект'
    assert fields.FIELD_MESSAGES is FIELD_MESSAGES
