"""The OpenAPI 3 document, generated with apispec from the resources' ``DOC`` and their schemas.

Paths are registered explicitly from the app's own route list (falcon-apispec is unmaintained),
so the document and the routing table cannot drift apart; a test compares them.
"""
from __future__ import annotations

import re
import threading
from typing import Any, Iterable

import falcon
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from marshmallow import Schema

from hublib import idempotency, modules, settings
from hublib.db import Hub

from .auth import required_role
from .schemas.errors import ErrorSchema

ERROR_STATUSES = {'400': 'Тело запроса — не JSON', '401': 'Нет или неверный токен',
                  '403': 'Токен другой роли', '404': 'Не найдено', '409': 'Конфликт состояния',
                  '405': 'Метод не поддерживается', '413': 'Слишком большой запрос',
                  '415': 'Тело не JSON по Content-Type', '422': 'Ошибка проверки данных',
                  '500': 'Внутренняя ошибка',
                  '503': 'Хаб занят: другая запись держала базу (ничего не записано), чтение '
                         'шло дольше read_deadline_seconds или все обработчики были заняты; '
                         'повторите через Retry-After секунд',
                  '507': 'На диске нет места: ничего не записано'}
METHODS = ('get', 'put', 'post', 'delete', 'patch')
REPLAYED_HEADER = 'Idempotent-Replayed'
IDEMPOTENCY_HEADER = {
    'in': 'header', 'name': idempotency.HEADER, 'required': False,
    'schema': idempotency.KEY_SCHEMA,
    'description': 'Ключ идемпотентности: повтор с тем же ключом и тем же запросом в течение '
                   '24 часов получает тот же ответ, а действие не выполняется второй раз; тот же '
                   'ключ с другим запросом — 422. Запоминаются только успешные ответы.'}


def operation(summary: str, *, response: type[Schema] | Schema | None = None,
              body: type[Schema] | Schema | None = None, query: type[Schema] | None = None,
              path: dict[str, dict] | None = None, status: int | Iterable[int] = 200,
              description: str | None = None, request_content: str | None = None,
              response_content: str | None = None, many: bool = False,
              idempotent: bool = False, body_required: bool = True) -> dict[str, Any]:
    """Describe one responder for the document (kept as plain data on the resource's ``DOC``).

    ``path`` gives the JSON schema of path parameters that are more than any string (a pattern);
    ``response`` may map statuses to schemas (a dry run answers another shape);
    ``idempotent``: the write takes an ``Idempotency-Key`` header (``hublib.idempotency``);
    ``body_required=False``: the body may be left out (it is validated when present).
    """
    statuses = [status] if isinstance(status, int) else list(status)
    return {'summary': summary, 'response': response, 'body': body, 'query': query,
            'body_required': body_required,
            'path': path or {}, 'statuses': statuses, 'description': description,
            'request_content': request_content, 'response_content': response_content,
            'many': many, 'idempotent': idempotent}


def _operation_dict(uri: str, method: str, doc: dict[str, Any]) -> dict[str, Any]:
    role = required_role(uri.split('{')[0].rstrip('/') or uri)
    op: dict[str, Any] = {'summary': doc['summary'], 'responses': {}}
    if doc['description']:
        op['description'] = doc['description']
    if role:
        op['security'] = [{f'{role}Token': []}]
    parameters = [{'in': 'path', 'name': name, 'required': True,
                   'schema': doc['path'].get(name, {'type': 'string'})}
                  for name in re.findall(r'{(\w+)}', uri)]
    if doc['query'] is not None:
        parameters.append({'in': 'query', 'schema': doc['query']})
    if doc.get('idempotent'):
        parameters.append(IDEMPOTENCY_HEADER)
    if parameters:
        op['parameters'] = parameters
    if doc['body'] is not None:
        op['requestBody'] = {'required': doc.get('body_required', True),
                             'content': {'application/json': {'schema': doc['body']}}}
    elif doc['request_content']:
        op['requestBody'] = {'required': True, 'content': {
            doc['request_content']: {'schema': {'type': 'string', 'format': 'binary'}}}}
    for status in doc['statuses']:
        response: dict[str, Any] = {'description': falcon.code_to_http_status(status)[4:] or 'OK'}
        if doc['response_content']:
            response['content'] = {doc['response_content']: {
                'schema': {'type': 'string', 'format': 'binary'}}}
        elif doc['response'] is not None:
            schema = doc['response']
            if isinstance(schema, dict):  # a schema per status
                schema = schema[status]
            response['content'] = {'application/json': {'schema': schema}}
        if doc.get('idempotent'):
            response['headers'] = {REPLAYED_HEADER: {
                'description': 'true — повтор запроса с тем же ключом: ответ первого раза',
                'schema': {'type': 'string', 'enum': ['true']}}}
        op['responses'][str(status)] = response
    for status, text in ERROR_STATUSES.items():
        if status in ('401', '403', '503') and role is None:
            continue  # open paths: no token, no database, no worker pool that can be full
        if status == '507' and method == 'get':
            continue  # reads write nothing
        op['responses'].setdefault(status, {'description': text, 'content': {
            'application/json': {'schema': 'Error'}}})
    return op


def field_openapi(self, field, ret: dict, **kwargs) -> dict:
    """hublib's own fields say which JSON-schema keywords they enforce (``OPENAPI``); a field
    that is one of several types (``oneOf``) has no single ``type``. A field that picks its schema
    by a discriminator (``batches.CommandIn``: ``schemas`` by command type) is a ``oneOf`` of
    those schemas."""
    if ret.get('enum') == []:  # one of nothing (no issue type configured yet): no value is valid
        ret.pop('enum')
        return {'not': {}}
    schemas = getattr(field, 'schemas', None)
    if isinstance(schemas, dict) and schemas:
        refs = {name: self.resolve_nested_schema(schema) for name, schema in schemas.items()}
        ret.pop('type', None)
        return {'oneOf': list(refs.values()), 'discriminator': {
            'propertyName': 'type', 'mapping': {name: ref['$ref'] for name, ref in refs.items()}}}
    extra = getattr(field, 'OPENAPI', None)
    if not extra:
        return {}
    if 'type' not in extra:
        ret.pop('type', None)
        ret.pop('format', None)
    return dict(extra)


def build_document(routes: Iterable[tuple[str, object]], *, version: str,
                   hub: Hub) -> dict[str, Any]:
    """The OpenAPI document of every (uri template, resource) pair.

    A body given as a function of the hub (``batches.batch_schema``: the configured issue and link
    types) is that function's schema for ``hub`` now; every command type's result schema is a
    component too (``RefreshResult``, ``EnsureIssueResult``, …), for agent authors.
    """
    plugin = MarshmallowPlugin()
    spec = APISpec(title='sdlc-hub', version=version, openapi_version='3.0.3',
                   plugins=[plugin],
                   info={'description': 'Зеркало Jira, служебные заметки и очередь команд агента.'})
    plugin.converter.add_attribute_function(field_openapi)
    spec.components.schema('Error', schema=ErrorSchema)
    for role in ('agent', 'client'):
        spec.components.security_scheme(f'{role}Token', {'type': 'http', 'scheme': 'bearer'})
    for schema in {type(schema): schema for schema in modules.result_schemas().values()}.values():
        spec.components.schema(type(schema).__name__, schema=schema)
    for uri, resource in routes:
        doc = getattr(resource, 'DOC', {})
        operations = {method: _operation_dict(uri, method, _for_hub(doc[method], hub))
                      for method in METHODS if method in doc}
        spec.path(path=uri, operations=operations)
    document = spec.to_dict()
    # keywords a schema states for the whole object (``jira.RefreshParams``: one of jql or keys)
    for key, name in plugin.converter.refs.items():
        document['components']['schemas'][name].update(getattr(key[0], 'OPENAPI', {}))
    for uri, resource in routes:
        for method, doc in getattr(resource, 'DOC', {}).items():
            if method in METHODS and doc.get('query') is not None:
                _json_parameters(document['paths'][uri][method], doc['query'])
    return document


def _json_parameters(operation: dict[str, Any], query: type[Schema] | Schema) -> None:
    """A query parameter whose text is JSON (a field with ``OPENAPI_JSON``, the schema of the value
    the text holds: ``chosen`` of ``/issues/facets``) is documented as such: ``content:
    application/json`` instead of a ``schema`` of any string, so that a client, or a generator of
    test requests, writes the JSON the hub reads."""
    fields = query._declared_fields if isinstance(query, type) else query.fields
    for parameter in operation.get('parameters', []):
        field = fields.get(parameter.get('name')) if parameter.get('in') == 'query' else None
        value_schema = getattr(field, 'OPENAPI_JSON', None)
        if value_schema is not None:
            parameter.pop('schema', None)
            parameter['content'] = {'application/json': {'schema': value_schema}}


def _for_hub(doc: dict[str, Any], hub: Hub) -> dict[str, Any]:
    body = doc['body']
    if callable(body) and not isinstance(body, type):
        return {**doc, 'body': body(hub)}
    return doc


class OpenApiResource:
    """``GET /openapi.json``: the document of the hub as it is configured now.

    Which issue and link types a batch may name is configuration, so the document is rebuilt
    when ``settings_version`` moves (every settings change bumps it) and kept otherwise.
    """

    DOC = {'get': operation('OpenAPI-описание API',
                            description='Документ OpenAPI 3 всех эндпоинтов хаба; типы задач и '
                                        'связей в командах — настроенные сейчас.')}

    def __init__(self, hub: Hub, routes: list[tuple[str, object]], version: str):
        self.hub, self.routes, self.version = hub, routes, version
        self._built: tuple[object, dict[str, Any]] | None = None
        self._lock = threading.Lock()

    def document(self) -> dict[str, Any]:
        """The current document (built again after a settings change)."""
        stamp = settings.setting(self.hub, 'settings_version')
        with self._lock:
            if self._built is None or self._built[0] != stamp:
                self._built = (stamp, build_document(self.routes, version=self.version,
                                                     hub=self.hub))
            return self._built[1]

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.document()
