"""How fresh an answer is (contract §14a): ``as_of`` — the end of the newest successful refresh —
on search, card and report results, and each search item's own ``fetched_at``."""
from __future__ import annotations

import pytest

from hublib import queue

pytestmark = pytest.mark.anyio


async def test_search_and_card_carry_as_of_and_items_carry_fetched_at(client, filled, clock):
    search = (await client.call_tool('search_issues', {'limit': 3})).structured_content
    assert search['as_of'] == '2026-11-30T10:00:00+00:00'  # fill_hub's refresh ended then
    assert [item['fetched_at'] for item in search['items']] == ['2026-11-30T10:00:00+00:00'] * 3
    card = (await client.call_tool('get_issue', {'key': 'AURORA-1'})).structured_content
    assert card['as_of'] == search['as_of']
    assert card['fetched_at'] == '2026-11-30T10:00:00+00:00'


async def test_as_of_follows_a_newer_refresh_and_ignores_a_failed_one(client, filled, clock,
                                                                     claimed_refresh):
    clock.advance(hours=2)
    failed = claimed_refresh(filled, {'keys': ['AURORA-1']})
    queue.report_command(filled, failed, agent='jira', status='failed', result=None,
                         error='Jira недоступна', jira_calls=1, rate_limited=0)
    card = (await client.call_tool('get_issue', {'key': 'AURORA-1'})).structured_content
    assert card['as_of'] == '2026-11-30T10:00:00+00:00'
    clock.advance(hours=1)
    done = claimed_refresh(filled, {'keys': ['AURORA-1']})
    queue.report_command(filled, done, agent='jira', status='done', result={}, error=None,
                         jira_calls=1, rate_limited=0)
    search = (await client.call_tool('search_issues', {})).structured_content
    assert search['as_of'] == '2026-11-30T13:00:00+00:00'


async def test_as_of_is_null_before_the_first_refresh(hub):
    from mcp import Client

    from hubweb.mcp_server import create_mcp_server
    # a hub with no sync run at all (the fixture's hub, not filled)
    async with Client(create_mcp_server(hub)) as fresh:
        result = await fresh.call_tool('search_issues', {})
    assert result.structured_content == {'items': [], 'next_cursor': None, 'as_of': None}
