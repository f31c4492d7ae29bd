"""The fake Jira REST server for tests: the demo's (``hubweb.demo.jira_rest``) plus what only tests
need — every request recorded with its moment, rate-limit storms (429/503 with ``Retry-After``,
Data Center's token-bucket headers), a search index that lags behind creations, and a clock.

    jira = TestJira(FakeJira(60, seed=5), deployment='Cloud')
    server = serve(jira)                       # hubweb.demo.jira_rest.serve: a waitress thread
    jira.storm(3, retry_after='2')             # the next 3 requests answer 429
    ... run the agent against server.url ...
    jira.writes()                              # every POST/PUT, in order
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

import orjson

from hubweb.demo.fake_jira import AGENT_LOGIN, USERS, FakeJira
from hubweb.demo.jira_rest import CLOUD, SERVER, Answer, JiraRest, serve

TOKEN = 'test-jira-token'
USER = USERS[AGENT_LOGIN][1]


@dataclass
class Request:
    """One request as the fake Jira saw it."""

    moment: float
    method: str
    path: str
    params: dict
    body: object
    status: int = 0

    @property
    def write(self) -> bool:
        return self.method in ('POST', 'PUT', 'DELETE')


@dataclass
class Storm:
    """The next ``count`` requests (matching ``path``) answer ``status`` with ``headers``."""

    count: int
    status: int = 429
    headers: dict = field(default_factory=dict)
    path: str | None = None


class TestJira(JiraRest):
    """:class:`JiraRest` that records, storms, lags and tells time by ``clock`` (a function
    returning seconds; the agent's fake clock in rate-limit tests)."""

    __test__ = False  # not a pytest class

    def __init__(self, jira: FakeJira, *, deployment: str = SERVER, clock: Callable[[], float] = None,
                 **kwargs):
        kwargs.setdefault('token', TOKEN)
        kwargs.setdefault('user', USER)
        super().__init__(jira, deployment=deployment, **kwargs)
        self.clock = clock or time.monotonic
        self.requests: list[Request] = []
        self.storms: list[Storm] = []
        self.bucket: dict | None = None
        self.lag = 0.0
        self._created_at: dict[str, float] = {}
        self._lock = threading.Lock()

    # --- faults -----------------------------------------------------------------------------------

    def storm(self, count: int, *, status: int = 429, retry_after: str | None = '1',
              reason: str | None = None, path: str | None = None, **headers: str) -> None:
        """The next ``count`` requests (to ``path``, when given) answer ``status``."""
        sent = {name.replace('_', '-'): value for name, value in headers.items()}
        if retry_after is not None:
            sent['Retry-After'] = retry_after
        if reason is not None:
            sent['RateLimit-Reason'] = reason
        self.storms.append(Storm(count, status, sent, path))

    def token_bucket(self, remaining: int, interval: int = 1, fill: int = 10, limit: int = 100) -> None:
        """Data Center's rate-limit headers on every answer, ``remaining`` tokens left."""
        self.bucket = {'X-RateLimit-Limit': str(limit), 'X-RateLimit-Remaining': str(remaining),
                       'X-RateLimit-Interval-Seconds': str(interval),
                       'X-RateLimit-FillRate': str(fill), 'retry-after': '0'}

    @property
    def cache_searches(self) -> bool:  # a lagging index changes answers without a write
        return not self.lag

    def searchable(self, key: str) -> bool:
        created = self._created_at.get(key)
        return created is None or self.clock() - created >= self.lag

    # --- the wire ---------------------------------------------------------------------------------

    def respond(self, method: str, path: str, params: dict, body: bytes,
                authorization: str | None) -> Answer:
        request = Request(self.clock(), method, path, params,
                          orjson.loads(body) if body else None)
        with self._lock:
            self.requests.append(request)
            storm = next((item for item in self.storms if item.count > 0
                          and (item.path is None or item.path == path)), None)
            if storm is not None:
                storm.count -= 1
        if storm is not None:
            answer = Answer(storm.status, {'errorMessages': ['Rate limit exceeded.'], 'errors': {}},
                            dict(storm.headers))
        else:
            answer = super().respond(method, path, params, body, authorization)
            if self.bucket is not None:
                answer.headers = {**(answer.headers or {}), **self.bucket}
        request.status = answer.status
        return answer

    def create_issue(self, body: dict) -> Answer:
        answer = super().create_issue(body)
        self._created_at[answer.body['key']] = self.clock()
        return answer

    # --- what happened ----------------------------------------------------------------------------

    def writes(self, path_part: str = '') -> list[Request]:
        """The write requests (answered 2xx), optionally those whose path contains ``path_part``."""
        with self._lock:
            return [request for request in self.requests if request.write
                    and 200 <= request.status < 300 and path_part in request.path]

    def calls(self, path: str | None = None) -> list[Request]:
        with self._lock:
            return [request for request in self.requests if path is None or request.path == path]


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


__all__ = ['TestJira', 'Request', 'serve', 'TOKEN', 'USER', 'CLOUD', 'SERVER']
