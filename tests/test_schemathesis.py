"""Property-based API test (issue 7): schemathesis generates requests from ``/openapi.json`` and
sends them in-process to the WSGI app; no answer is a 5xx and every answer matches its documented
schema — with the right token for each path and with the other role's token."""
from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from hublib import open_hub, projects, queue, settings
from hubweb import create_app
from hubweb.demo.fake_jira import KANBAN_BOARD, SCRUM_BOARD, FakeJira

pytestmark = pytest.mark.slow

EXAMPLES = 8  # per operation and token; keeps the whole file well under a minute
CHECKS = [not_a_server_error, response_schema_conformance]
OPEN_PATHS = ('/health', '/openapi.json')


def fill(hub) -> None:
    """A small but complete mirror so reads have something to answer with."""
    from hublib import files, history, mirror
    settings.update_settings(hub, {
        'project_key': 'AURORA',
        'issue_types': {'task': {'name': 'Задача', 'id': '1'}, 'epic': {'name': 'Эпик', 'id': '2'}},
        'link_types': {'blocks': 'Blocks'}})
    projects.create_project(hub, 'AWPCA', 'Аврора', SCRUM_BOARD)
    projects.create_project(hub, 'ORION', 'Орион', KANBAN_BOARD)
    queue.create_batch(hub, title='Загрузка', author='test',
                       commands=[{'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}}])
    command = queue.claim_command(hub, agent='jira', agent_version='t', settings_version=None,
                                  last_call_at=None)['command']
    jira = FakeJira(40, seed=9)
    issues = jira.issues(jira.all_keys())
    mirror.ingest_state(hub, 'jira', command['id'], issues)
    history.ingest_history(hub, 'jira', command['id'],
                           [item for issue in issues for item in jira.history(issue['key'])])
    mirror.ingest_boards(hub, 'jira', command['id'], jira.boards())
    queue.report_command(hub, command['id'], agent='jira', status='done', result={'issues': 40},
                         error=None, jira_calls=2, rate_limited=0)
    content = jira.attachment('8')
    digest = hashlib.sha256(content).hexdigest()
    (hub.files_dir / digest).write_bytes(content)
    files.record_download(hub, '8', digest, len(content))
    queue.create_batch(hub, title='Работа', author='test', commands=[
        {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'x'}},
        {'type': 'fetch_attachment', 'params': {'attachment_id': '4'}}])


# The schema must exist when the module is collected (schemathesis' lazy fixture loader does not
# work with this pytest), so the hub lives in a temporary directory made at import and removed
# by the module fixture below.
_DATA = Path(tempfile.mkdtemp(prefix='hub-schemathesis-'))
_HUB = open_hub(_DATA / 'hub-data')
fill(_HUB)
TOKENS = settings.tokens(_HUB)
schema = schemathesis.openapi.from_wsgi('/openapi.json', create_app(_HUB))


@pytest.fixture(scope='module', autouse=True)
def remove_hub():
    yield
    _HUB.close()
    shutil.rmtree(_DATA, ignore_errors=True)


def right_token(path: str, tokens: dict) -> str:
    return tokens['agent'] if path.startswith('/agent/') else tokens['client']


def wrong_token(path: str, tokens: dict) -> str:
    return tokens['client'] if path.startswith('/agent/') else tokens['agent']


def call_as(case, token: str):
    """Send ``case`` with ``token``: any generated Authorization header (any spelling) is replaced."""
    case.headers = {name: value for name, value in (case.headers or {}).items()
                    if name.lower() != 'authorization'}
    case.headers['Authorization'] = f'Bearer {token}'
    return case.call_and_validate(checks=CHECKS)


HYPOTHESIS = hypothesis_settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                                 suppress_health_check=list(HealthCheck))


@schema.parametrize()
@HYPOTHESIS
def test_api_with_the_right_token(case):
    response = call_as(case, right_token(case.path, TOKENS))
    assert response.status_code not in (401, 403), response.status_code


@schema.parametrize()
@HYPOTHESIS
def test_api_with_the_other_roles_token(case):
    response = call_as(case, wrong_token(case.path, TOKENS))
    # OPTIONS is answered without a token (falcon's default responder, for CORS preflights).
    if case.path not in OPEN_PATHS and case.method != 'OPTIONS':
        assert response.status_code == 403, response.status_code
