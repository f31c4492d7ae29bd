"""A refresh names at most 10,000 keys (422 naming ``commands[i].params.keys``), and the sync
journal's list keeps its rows small: ``query`` cut to 200 characters with ``query_truncated``;
the whole query is on the single run (``reads.sync_run``)."""
from __future__ import annotations

import pytest

from hublib import queue, reads
from hublib.errors import NotFoundError, ValidationError

KEYS_MAX = 10000


@pytest.fixture
def hub(hub, queue_settings):
    return queue_settings(hub)


def keys(count: int) -> list[str]:
    return [f'AURORA-{n}' for n in range(1, count + 1)]


def test_refresh_of_more_than_10000_keys_is_422_naming_the_keys(hub):
    with pytest.raises(ValidationError) as refused:
        queue.create_batch(hub, title='t', commands=[
            {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'x'}},
            {'type': 'refresh', 'params': {'keys': keys(KEYS_MAX + 1)}}])
    assert list(refused.value.fields) == ['commands[1].params.keys']
    assert queue.batches(hub)['items'] == []


def test_refresh_of_10000_keys_is_accepted(hub):
    created = queue.create_batch(hub, title='t', commands=[
        {'type': 'refresh', 'params': {'keys': keys(KEYS_MAX)}}])
    assert len(created['commands'][0]['params']['keys']) == KEYS_MAX


def run_of(hub, params: dict) -> int:
    queue.create_batch(hub, title='t', commands=[{'type': 'refresh', 'params': params}])
    command = queue.claim_command(hub, agent='jira')['command']
    queue.report_command(hub, command['id'], agent='jira', status='done')
    return command['id']


def test_sync_run_list_cuts_long_queries_and_the_single_run_has_it_whole(hub):
    run_of(hub, {'keys': keys(3)})
    run_of(hub, {'keys': keys(KEYS_MAX)})
    long_query = ','.join(keys(KEYS_MAX))
    newest, oldest = reads.sync_runs(hub)['items']
    assert (newest['query'], newest['query_truncated']) == (long_query[:200], True)
    assert (oldest['query'], oldest['query_truncated']) == ('AURORA-1,AURORA-2,AURORA-3', False)
    single = reads.sync_run(hub, newest['id'])
    assert (single['query'], single['query_truncated']) == (long_query, False)
    assert {name: value for name, value in single.items() if name not in ('query',)} == \
        {name: value for name, value in newest.items() if name not in ('query', 'query_truncated')} \
        | {'query_truncated': False}
    with pytest.raises(NotFoundError):
        reads.sync_run(hub, 999)
