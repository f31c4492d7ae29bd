"""Rate limits and pacing (docs/agent.md «Темп и ограничения Jira»): a 429 or 503 is waited out for
its Retry-After (seconds or an HTTP date) and the request sent again, at most five times; the
token bucket Jira reports empty holds the next request; ``interval_ms`` spaces requests; every
request is counted. The agent runs on a clock that moves only when it sleeps, and the fake Jira
records each request's moment on that clock: the assertions are on those moments."""
from __future__ import annotations

import logging

import pytest

from hubweb.jira_agent import JiraClient, JiraError
from tests.agent.conftest import SteppingClock
from tests.support.jira_rest import TOKEN

SEARCH = '/rest/api/2/search'


@pytest.fixture
def site(jira_site):
    clock = SteppingClock()
    model, app, server = jira_site('Server', issues=30, clock=lambda: clock.elapsed)
    client = JiraClient(server.url, TOKEN, clock=clock, interval=0.0)
    client.deployment = 'Server'
    return client, app, clock


def search_all(client) -> list[str]:
    return [issue['key'] for page in client.search('project = AURORA', ['summary'], page_size=10)
            for issue in page]


def moments(app, path=SEARCH) -> list[float]:
    return [request.moment for request in app.calls(path)]


def test_a_429_storm_is_waited_out_for_retry_after_each_time(site):
    client, app, clock = site
    app.storm(3, retry_after='30', reason='jira-burst-based')
    assert len(search_all(client)) == 30
    times = moments(app)
    assert [request.status for request in app.calls(SEARCH)] == [429, 429, 429, 200, 200, 200]
    assert [later - earlier for earlier, later in zip(times, times[1:4])] == [30.0, 30.0, 30.0]
    assert (client.counters.calls, client.counters.rate_limited) == (6, 3)


def test_retry_after_as_an_http_date_is_waited_until_that_moment(site):
    client, app, clock = site
    app.storm(1, retry_after='Tue, 01 Dec 2026 10:00:45 GMT')  # the clock starts at 10:00:00
    search_all(client)
    first, second = moments(app)[:2]
    assert second - first == 45.0


def test_a_503_with_retry_after_counts_as_rate_limited_and_a_502_is_retried_uncounted(site):
    client, app, clock = site
    app.storm(1, status=503, retry_after='7')
    app.storm(1, status=502, retry_after=None)
    search_all(client)
    assert [request.status for request in app.calls(SEARCH)][:3] == [503, 502, 200]
    assert client.counters.rate_limited == 1 and client.counters.calls == 5
    first, second, third = moments(app)[:3]
    assert (second - first, third - second) == (7.0, 4.0)  # 502 without Retry-After: 2, 4, 8 … s


def test_without_retry_after_the_reset_moment_then_a_doubling_backoff_is_used(site):
    client, app, clock = site
    app.storm(1, retry_after=None, X_RateLimit_Reset='2026-12-01T10:00:12Z')
    app.storm(3, retry_after=None)
    search_all(client)
    times = moments(app)
    assert [later - earlier for earlier, later in zip(times, times[1:5])] == [12.0, 4.0, 8.0, 16.0]


def test_at_most_five_retries_then_the_call_fails_in_russian(site):
    client, app, clock = site
    app.storm(6, retry_after='1')
    with pytest.raises(JiraError, match='6 раз подряд') as raised:
        search_all(client)
    assert raised.value.status == 429
    assert len(app.calls(SEARCH)) == 6 and client.counters.rate_limited == 6
    app.storm(5, retry_after='1')
    assert len(search_all(client)) == 30  # five retries are allowed


def test_an_empty_token_bucket_holds_the_next_request_without_counting_it(site):
    client, app, clock = site
    app.token_bucket(remaining=0, interval=5)
    search_all(client)
    times = moments(app)
    assert all(later - earlier >= 5.0 for earlier, later in zip(times, times[1:]))
    assert client.counters.rate_limited == 0
    app.token_bucket(remaining=40, interval=5)
    before = len(times)
    search_all(client)
    times = moments(app)[before:]
    assert times[-1] - times[0] == 0.0  # tokens left: no wait


def test_interval_ms_spaces_the_requests(site):
    client, app, clock = site
    client.interval = 0.5
    search_all(client)
    times = moments(app)
    assert [round(later - earlier, 3) for earlier, later in zip(times, times[1:])] == [0.5, 0.5]


def test_the_wait_is_logged_with_jiras_reason_and_never_the_token(site, caplog):
    client, app, clock = site
    app.storm(1, retry_after='3', reason='jira-quota-global-based')
    with caplog.at_level(logging.WARNING, logger='hubweb.jira_agent'):
        search_all(client)
    assert 'jira-quota-global-based' in caplog.text and 'ждём 3 с' in caplog.text
    assert TOKEN not in caplog.text
