"""Fuzz: 200 seeded malformed bodies on every write endpoint of the app → 4xx, never 5xx."""
from __future__ import annotations

import json
import random

import pytest

SEED = 20261130
BODIES = 200
WRITE_METHODS = ('POST', 'PUT', 'PATCH')

STRINGS = ['', ' ', 'x', 'AURORA-1', 'new:1', 'new:x', 'jira', 'wiki', 'refresh', 'done',
           '../../etc/passwd', 'C:\\Windows', "'; DROP TABLE issue; --", '%s%n', '\x00', '\u202e',
           '😀' * 3, 'Задача', 'A\nB', '\t', 'null', '2026-13-45', '2026-10-22T09:00:00.000+0300',
           '0' * 64, 'ж' * 5000, 'x' * 70_000]
NUMBERS = [0, -1, 1, 2, 3, 17, 2**31, 2**53 + 1, 2**63 - 1, -2**63, 0.5, -0.0, 1e308, 1e-308]


def random_scalar(rng: random.Random):
    kind = rng.randrange(5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice(NUMBERS)
    return rng.choice(STRINGS)


def random_value(rng: random.Random, depth: int = 0):
    if depth > 3 or rng.random() < 0.5:
        return random_scalar(rng)
    if rng.random() < 0.5:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(STRINGS[:12]): random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def resolve(document: dict, schema: dict) -> dict:
    while '$ref' in schema:
        schema = document['components']['schemas'][schema['$ref'].rsplit('/', 1)[-1]]
    return schema


def guided_value(rng: random.Random, document: dict, schema: dict, depth: int = 0):
    """A value shaped like ``schema`` with random mutations: wrong types, nulls, extra keys."""
    schema = resolve(document, schema)
    if depth > 4 or rng.random() < 0.3:
        return random_value(rng, depth)
    kind = schema.get('type')
    if kind == 'object' or 'properties' in schema:
        properties = schema.get('properties', {})
        keys = [k for k in properties if rng.random() < 0.8]
        value = {key: guided_value(rng, document, properties[key], depth + 1) for key in keys}
        if 'agent' in properties and rng.random() < 0.7:
            value['agent'] = 'jira'
        if rng.random() < 0.2:
            value[rng.choice(STRINGS)] = random_value(rng)
        return value
    if kind == 'array':
        return [guided_value(rng, document, schema.get('items', {}), depth + 1)
                for _ in range(rng.randrange(4))]
    if kind == 'integer':
        return rng.choice(NUMBERS + [None, '1'])
    if kind == 'string':
        return rng.choice(STRINGS + [None, 5])
    return random_value(rng, depth)


def nested(depth: int) -> str:
    return '{"a": ' * depth + '1' + '}' * depth


RAW_BODIES = [b'', b'{', b'{"agent": "jira",', b'\xff\xfe\x00', b'{"a": "\xc3"}', b'[' * 5000,
              nested(31).encode(), nested(33).encode(), nested(2000).encode(),
              b'{"agent": "jira", "issues": [' + b'{},' * 2000 + b'{}]}',
              rb'{"agent": "\ud800"}', rb'{"\udfff": 1}', b'{"agent": "jira", "command_id": 1e999}',
              b'{"agent": "jira", "command_id": 123456789012345678901234567890}',
              b'{"agent": "jira", "command_id": NaN}', b'{"agent": "jira"}{"agent": "jira"}',
              '{"agent": "jira", "title": "%s"}'.encode() % ('я' * 100_000).encode()]


def bodies(rng: random.Random, document: dict, schema: dict | None) -> list[bytes]:
    result = list(RAW_BODIES)
    while len(result) < BODIES:
        if schema is not None and rng.random() < 0.6:
            value = guided_value(rng, document, schema)
        else:
            value = random_value(rng)
        result.append(json.dumps(value, ensure_ascii=rng.random() < 0.5).encode())
    return result


def request_schema(document: dict, template: str, method: str) -> dict | None:
    operation = document['paths'].get(template, {}).get(method.lower(), {})
    content = operation.get('requestBody', {}).get('content', {})
    return content.get('application/json', {}).get('schema')


@pytest.mark.slow
def test_malformed_bodies_never_cause_5xx(client, app_methods, tokens, hub):
    document = client.simulate_get('/openapi.json').json
    writes = [(t, m, p) for t, m, p in app_methods if m in WRITE_METHODS]
    assert any(t == '/settings' for t, _, _ in writes) and any(t == '/projects' for t, _, _ in writes)
    rng = random.Random(SEED)
    failures, statuses = [], []
    for template, method, path in writes:
        own = 'agent' if template.startswith('/agent/') else 'client'
        other = 'client' if own == 'agent' else 'agent'
        for index, body in enumerate(bodies(rng, document, request_schema(document, template, method))):
            # every body with the endpoint's own token; every tenth with the other role's too
            roles = (own, other) if index % 10 == 0 else (own,)
            for role in roles:
                headers = {'Authorization': f'Bearer {tokens[role]}',
                           'Content-Type': 'application/json'}
                response = client.simulate_request(method, path, headers=headers, body=body)
                statuses.append(response.status_code)
                if response.status_code >= 500 or (role == other and response.status_code != 403):
                    failures.append(f'{method} {path} [{role}] body#{index} {body[:120]!r} -> '
                                    f'{response.status_code} {response.text[:200]}')
    assert failures == []
    assert client.simulate_get('/health').json == {'status': 'ok', 'schema_version': 9}
    assert sum(400 <= s < 500 for s in statuses) / len(statuses) > 0.9
