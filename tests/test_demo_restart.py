"""``serve --demo`` restarted on its directory queues its two batches once, not once per start."""
from __future__ import annotations

from hublib import queue
from hubweb.demo import prepare_demo


def test_prepare_demo_twice_queues_the_demo_batches_once(hub):
    first = prepare_demo(hub)
    assert [batch['title'] for batch in first] == ['Демо: полная загрузка', 'Демо: завести задачи']
    before = queue.batches(hub)['items']
    assert prepare_demo(hub) == []  # a restart: settings and projects as they are, no new batch
    assert queue.batches(hub)['items'] == before
