"""schemathesis hooks for ``tests/test_schemathesis.py`` (loaded with ``SCHEMATHESIS_HOOKS``).

The OpenAPI document states every rule JSON Schema can state. A few rules of the hub tie one part
of a request to another or to what the server issued earlier, which no JSON Schema can say; a
request generated as *valid* would break them by chance and be refused with a 422 that the
document could not have predicted. These hooks make positive (schema-valid) requests also keep
those rules, and leave negative ones untouched:

- ``cursor`` is a token the server issued with a page (``next_cursor``), not a value to invent;
- ``PUT /agent/files/{sha256}``: the name is the SHA-256 of the body;
- ``POST /batches``: ``depends_on`` names an earlier command of the batch; a temp key (``new:N``)
  in a key field is one an earlier ``ensure_issue`` of the batch creates, and each temp key is
  created once — in the whole hub while its batch is unfinished (contract §9.4b), so every created
  temp key gets a number no earlier request used; a ``fetch_attachment`` names an attachment the
  mirror holds;
- ``Idempotency-Key``: a key names one request; the same key with another request is a 422, so
  every request gets a key of its own;
- ``PUT /settings`` keeps the Jira configuration the run started with (``issue_types``,
  ``link_types``): the document lists the configured ones, and schemathesis reads it once.
- the reports (contract §17): ``tz`` names a zone of the IANA database (no pattern can list
  them), and ``since`` comes before ``until`` at most 366 days apart.
- ``jql`` is a query of a language (contract §16), ``tz`` an IANA zone name and ``fields`` a list
  of CSV columns: a valid request carries one of a few real queries, a real zone and real
  columns (what any other text gets is ``tests/web/test_jql.py``'s property test: 200 or 422).

One failure is dropped (:func:`filter_failure`), no fault of the API: a dry run (``POST /batches``
with ``"dry_run": true``: 200, a preview whose ``id`` is null) creates nothing, yet the stateful
phase infers a link from that answer's ``id`` to ``GET /batches/{batch_id}`` and asks for
``/batches/None``; its 404 is the right answer, not a created batch gone missing (ST302). A batch
that was created has a numeric id, and its ST302 is still reported.
"""
from __future__ import annotations

import hashlib
import itertools
import re
import uuid

import schemathesis
from schemathesis.transport.serialization import serialize_binary

TEMP_KEY = re.compile(r'^new:[0-9]+$')
JQL_PATHS = ('/issues', '/issues/count', '/issues/facets', '/issues.csv')
JQL_SAMPLES = ('', 'status = Открыта ORDER BY updated DESC', 'assignee IS EMPTY AND created >= -7d',
               'text ~ отчёт', 'sprint in openSprints() OR labels = AWPCA ORDER BY priority DESC')
KEY_FIELDS = ('key', 'epic_key', 'source_key', 'target_key')
REAL_KEY = 'AURORA-1'
REAL_ATTACHMENT = '4'  # in the mirror test_schemathesis.fill builds
IDEMPOTENCY_KEY = 'Idempotency-Key'
# temp keys of the run: far above what a generated example names, never twice
_fresh_temp_keys = (f'new:{number}' for number in itertools.count(10**9))


def _positive(case) -> bool:
    meta = getattr(case, 'meta', None)
    return meta is not None and meta.generation.mode.is_positive


def _keep_batch_rules(commands: list) -> None:
    owned: dict[str, str] = {}  # temp key as generated → the fresh one it became
    for index, command in enumerate(commands):
        if not isinstance(command, dict):
            continue
        depends_on = command.get('depends_on')
        if isinstance(depends_on, int) and not 1 <= depends_on <= index:
            command['depends_on'] = None
        params = command.get('params')
        if not isinstance(params, dict):
            continue
        if command.get('type') == 'fetch_attachment' and 'attachment_id' in params:
            params['attachment_id'] = REAL_ATTACHMENT
        for name in KEY_FIELDS:
            value = params.get(name)
            if isinstance(value, str) and TEMP_KEY.match(value):
                params[name] = owned.get(value, REAL_KEY)
        temp_key = params.get('temp_key') if command.get('type') == 'ensure_issue' else None
        if isinstance(temp_key, str):
            if temp_key in owned:
                del params['temp_key']
            else:
                owned[temp_key] = params['temp_key'] = next(_fresh_temp_keys)


def _keep_report_rules(query: dict) -> None:
    if 'tz' in query:
        query['tz'] = 'Europe/Moscow'
    if 'since' in query or 'until' in query:
        query['since'], query['until'] = '2026-11-01', '2026-11-30'


@schemathesis.hook
def before_call(ctx, case, kwargs):
    if not _positive(case):
        return
    if isinstance(case.query, dict):
        case.query.pop('cursor', None)
    if case.headers is not None and IDEMPOTENCY_KEY in case.headers:  # a CaseInsensitiveDict
        case.headers[IDEMPOTENCY_KEY] = uuid.uuid4().hex
    path = case.operation.path
    if path in JQL_PATHS and isinstance(case.query, dict):
        if 'jql' in case.query:
            case.query['jql'] = JQL_SAMPLES[len(str(case.query['jql'])) % len(JQL_SAMPLES)]
        if case.query.get('tz'):
            case.query['tz'] = 'Europe/Moscow'
        if case.query.get('fields'):
            case.query['fields'] = 'key,summary,labels,sprint'
    if path == '/agent/files/{sha256}':
        body = serialize_binary(case.body) if case.body is not None else b''
        case.path_parameters = {**(case.path_parameters or {}),
                                'sha256': hashlib.sha256(body).hexdigest()}
    elif path == '/batches' and case.method.upper() == 'POST' and isinstance(case.body, dict) \
            and isinstance(case.body.get('commands'), list):
        _keep_batch_rules(case.body['commands'])
    elif path.startswith('/projects/{label}/') and isinstance(case.query, dict):
        _keep_report_rules(case.query)
    elif path == '/settings' and case.method.upper() == 'PUT' and isinstance(case.body, dict):
        case.body.pop('issue_types', None)
        case.body.pop('link_types', None)


@schemathesis.hook
def filter_failure(ctx, failure, case, response):
    """False (dropped) for an ST302 whose link gave no batch id: the parent was a dry run."""
    return not (getattr(failure, 'code', None) == 'ST302'
                and case.operation.path.startswith('/batches/{batch_id}')
                and str((case.path_parameters or {}).get('batch_id')) == 'None')
