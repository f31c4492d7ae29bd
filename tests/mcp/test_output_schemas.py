"""One source for each response shape: the marshmallow schemas of ``hubweb.schemas`` give the
OpenAPI document its components and the MCP tools their ``outputSchema`` (compact JSON Schema)."""
from __future__ import annotations

import jsonschema
import pytest
from marshmallow import Schema, fields, validate

from hubweb.mcp_server import ALL_TOOLS
from hubweb.schemas.json_schema import json_schema
from hubweb.schemas.mirror import IssueCardSchema

pytestmark = pytest.mark.anyio


async def test_every_json_tool_publishes_the_schema_of_its_response_schema(client):
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    for spec in ALL_TOOLS:
        if spec.output is None:  # content blocks (read_attachment)
            assert listed[spec.name].output_schema is None
        else:
            assert listed[spec.name].output_schema == json_schema(spec.output), spec.name


class Item(Schema):
    name = fields.String(required=True, metadata={'description': 'не попадает в схему'})


class Sample(Schema):
    id = fields.Integer(required=True)
    state = fields.String(validate=validate.OneOf(('ready', 'none')), allow_none=True)
    kind = fields.String(metadata={'enum': ['scrum', 'kanban', None]}, allow_none=True)
    score = fields.Float()
    flag = fields.Boolean()
    tags = fields.List(fields.String())
    parent = fields.Nested(Item, allow_none=True)
    children = fields.List(fields.Nested(Item))
    many = fields.Nested(Item, many=True)
    extra = fields.Dict()
    anything = fields.Raw()
    secret = fields.String(load_only=True)


def test_json_schema_of_a_marshmallow_schema_is_compact_and_exact():
    item = {'type': 'object', 'properties': {'name': {'type': 'string'}}, 'required': ['name']}
    assert json_schema(Sample) == {'type': 'object', 'required': ['id'], 'properties': {
        'id': {'type': 'integer'},
        'state': {'type': ['string', 'null'], 'enum': ['ready', 'none', None]},
        'kind': {'type': ['string', 'null'], 'enum': ['scrum', 'kanban', None]},
        'score': {'type': 'number'}, 'flag': {'type': 'boolean'},
        'tags': {'type': 'array', 'items': {'type': 'string'}},
        'parent': {**item, 'type': ['object', 'null']},
        'children': {'type': 'array', 'items': item},
        'many': {'type': 'array', 'items': item},
        'extra': {'type': 'object'}, 'anything': {}}}
    schema = json_schema(Sample)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate({'id': 1, 'state': None, 'parent': None, 'children': [{'name': 'x'}],
                         'unknown': 'allowed'}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({'id': 1, 'state': 'gone'}, schema)


def test_the_card_schema_takes_what_hublib_returns(filled):
    from hublib import reads
    jsonschema.validate(reads.issue_card(filled, 'AURORA-1'), json_schema(IssueCardSchema))
