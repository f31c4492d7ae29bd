"""An unreadable time in an agent's page over HTTP: 422 naming ``items[3].created``, nothing
written (the library rule: ``tests/lib/test_ingest_times.py``)."""
from __future__ import annotations

from .test_errors import assert_error_shape


def test_history_page_with_an_unreadable_time_is_422_naming_the_item(client, agent_headers, hub):
    items = [{'history_id': str(n), 'seq': 0, 'key': 'AURORA-1',
              'created': '2026-10-22T09:00:00.000+0300'} for n in range(5)]
    items[3]['created'] = '2026-02-30T09:00:00.000+0300'
    response = client.simulate_post('/agent/history', headers=agent_headers,
                                    json={'agent': 'jira', 'items': items})
    body = assert_error_shape(response, 422)
    assert list(body['fields']) == ['items[3].created']
    assert hub.db.execute_sql('SELECT count(*) FROM issue_change').fetchone()[0] == 0
