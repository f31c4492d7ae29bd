"""Response schemas: what hublib returns, one module per feature, described once with marshmallow.

They generate the OpenAPI document's response schemas (``hubweb.openapi``, through apispec) and the
MCP tools' output schemas (``hubweb.schemas.json_schema``), and import no web framework: the MCP
server uses them without Falcon. Input schemas are not here: hublib owns validation
(``hublib.validation`` and the schemas next to each rule), and the document is generated from those
very schemas.
"""
from __future__ import annotations

from marshmallow import Schema, fields


# --- building the response schemas ---------------------------------------------------------------
# Responses are documentation of what hublib returns: many fields of a few kinds. These build a
# schema from field names by kind, so a schema reads as the list of its fields.

def strings(names: str, **options) -> dict[str, fields.Field]:
    """String fields, one per name in ``names`` (space separated)."""
    return {name: fields.String(**options) for name in names.split()}


def integers(names: str, **options) -> dict[str, fields.Field]:
    """Integer fields, one per name in ``names`` (space separated)."""
    return {name: fields.Integer(**options) for name in names.split()}


def response(name: str, *parts: dict[str, fields.Field], base: type[Schema] = Schema,
             **named: fields.Field) -> type[Schema]:
    """A response schema called ``name`` (its component name) with the fields of ``parts``."""
    declared: dict[str, fields.Field] = {}
    for part in parts:
        declared.update(part)
    declared.update(named)
    return base.from_dict(declared, name=name)


def page_of(name: str, item: type[Schema], *, paged: bool = True,
            **named: fields.Field) -> type[Schema]:
    """A collection answer ``{items: [item], next_cursor}`` (contract §10), with ``named``
    fields beside them."""
    listed = {'items': fields.List(fields.Nested(item), required=True)}
    if paged:
        listed['next_cursor'] = fields.String(allow_none=True)
    return response(name, listed, **named)
