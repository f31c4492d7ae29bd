"""Jira's REST API v2 (Cloud and Data Center) as the agent uses it: paced, counted, patient.

Every request goes through :meth:`JiraClient.call`:
- **pacing**: at least ``interval`` seconds between the starts of two requests (the hub's
  ``pacing.interval_ms``); a token bucket that Jira reports empty (``X-RateLimit-Remaining: 0``,
  Data Center) or nearly empty (``X-RateLimit-NearLimit: true``, Cloud) holds the next request;
- **rate limits**: 429, and 503 «сервис недоступен», are waited out for ``Retry-After`` (seconds
  or an HTTP date; else Cloud's ``X-RateLimit-Reset``; else 2, 4, 8 … s), then the same request
  is sent again — at most :data:`MAX_RETRIES` times; each such answer counts in ``rate_limited``;
  a 502/504 from a proxy in front of Jira is retried the same way without counting;
- **counting**: ``calls`` counts every request sent (retries and downloads included), so the report's
  ``jira_calls`` is exact; ``last_call_at`` is the moment of the last one.
"""
from __future__ import annotations

import base64
import email.utils
import logging
import re
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any, Iterator, Mapping, Sequence

import orjson

from .clock import Clock
from .transport import Response, Transport, TransportError, query

log = logging.getLogger('hubweb.jira_agent')

CLOUD = 'Cloud'
MAX_RETRIES = 5
BACKOFF_MAX = 60.0
SEARCH_PAGE = 100
CHANGELOG_PAGE = 100
COMMENT_PAGE = 100
SPRINT_PAGE = 50
# A property the agent puts on what it creates, found again by a redelivered command.
MARKER = 'sdlc-hub'


class JiraError(Exception):
    """Jira refused a request (or kept refusing it): the command fails with this message."""

    def __init__(self, message: str, status: int | None = None, body: Any = None):
        super().__init__(message)
        self.status = status
        self.body = body


class JiraAuthError(JiraError):
    """401: the Jira token is wrong or expired; no command can succeed until it is fixed."""


class JiraUnavailable(Exception):
    """Jira gave no answer (down, unreachable): a write's outcome is unknown."""


def error_text(body: Any) -> str:
    """Jira's ``errorMessages`` and ``errors`` as one line."""
    if isinstance(body, dict):
        parts = [str(message) for message in body.get('errorMessages') or ()]
        parts += [f'{name}: {message}' for name, message in (body.get('errors') or {}).items()]
        if parts:
            return '; '.join(parts)
        if body.get('message'):
            return str(body['message'])
    text = str(body or '').strip()
    return ' '.join(text.split())[:300]


@dataclass
class Counters:
    """Requests of the command in hand: ``calls`` sent, ``rate_limited`` answered 429/503."""

    calls: int = 0
    rate_limited: int = 0


class JiraClient:
    """One Jira site. ``user`` given: Basic with the user's e-mail and API token (Cloud);
    without: ``Authorization: Bearer <personal access token>`` (Data Center)."""

    def __init__(self, url: str, token: str, *, user: str | None = None, clock: Clock | None = None,
                 transport: Transport | None = None, interval: float = 0.5):
        self.url = url.rstrip('/')
        if user:
            pair = base64.b64encode(f'{user}:{token}'.encode()).decode()
            self._auth = f'Basic {pair}'
        else:
            self._auth = f'Bearer {token}'
        self.clock = clock or Clock()
        self.transport = transport or Transport()
        self.interval = interval
        self.counters = Counters()
        self.last_call_at: datetime | None = None
        self.deployment: str | None = None
        self.myself: dict = {}
        self._next_start = 0.0   # monotonic moment before which no request starts (pacing)
        self._hold_until = 0.0   # the same, from Jira's own rate-limit headers

    def __repr__(self) -> str:  # never the token
        return f'JiraClient({self.url!r}, deployment={self.deployment!r})'

    @property
    def cloud(self) -> bool:
        return self.deployment == CLOUD

    # --- one request ---------------------------------------------------------------------------

    def call(self, method: str, path: str, params: Mapping[str, Any] | None = None,
             body: Any = None, *, ok: Sequence[int] = (), follow_redirects: bool = False,
             sink: IO[bytes] | None = None, url: str | None = None) -> Response:
        """Send ``method path?params`` (or ``url``) with ``body`` as JSON; the answer, or JiraError
        for a status ≥ 400 not in ``ok`` (after the waits and retries above)."""
        target = url or self.url + path + query(params or {})
        headers = {'Authorization': self._auth, 'Accept': 'application/json'}
        data = None
        if body is not None:
            data = orjson.dumps(body)
            headers['Content-Type'] = 'application/json'
        if method != 'GET':
            headers['X-Atlassian-Token'] = 'no-check'  # Jira's XSRF check, for writes
        for attempt in range(MAX_RETRIES + 1):
            self._pace()
            self.counters.calls += 1
            self.last_call_at = self.clock.now()
            position = sink.tell() if sink is not None else None
            try:
                response = self.transport.request(method, target, headers=headers, body=data,
                                                  retry_stale=method == 'GET',
                                                  follow_redirects=follow_redirects, sink=sink)
            except TransportError as error:
                raise JiraUnavailable(f'Jira недоступна: {error}') from None
            self._note_limits(response)
            status = response.status
            if status in (429, 503, 502, 504):
                if status in (429, 503):
                    self.counters.rate_limited += 1
                wait = self._retry_after(response, attempt)
                if attempt == MAX_RETRIES:
                    break
                log.warning('Jira ответила %s на %s %s%s: ждём %.0f с (повтор %d из %d)', status,
                            method, path or target.split('?', 1)[0],
                            _reason_suffix(response), wait, attempt + 1, MAX_RETRIES)
                if sink is not None:
                    sink.seek(position)
                    sink.truncate()
                self.clock.sleep(wait)
                continue
            if status == 401:
                raise JiraAuthError('Jira не приняла токен (401): проверьте JIRA_TOKEN'
                                    + (' и --jira-user' if self._auth.startswith('Basic') else ''),
                                    status, response.json())
            if status >= 400 and status not in ok:
                body_json = response.json()
                raise JiraError(f'Jira ответила {status} на {method} {path or "запрос"}: '
                                f'{error_text(body_json)}', status, body_json)
            return response
        raise JiraError(f'Jira ответила {response.status} на {method} {path or "запрос"} '
                        f'{MAX_RETRIES + 1} раз подряд{_reason_suffix(response)}; команда не '
                        f'выполнена', response.status, response.json())

    def get(self, path: str, params: Mapping[str, Any] | None = None, **kwargs) -> Any:
        return self.call('GET', path, params, **kwargs).json()

    def _pace(self) -> None:
        now = self.clock.monotonic()
        start = max(self._next_start, self._hold_until)
        # always asked, even for no wait: a stop request ends the command before its next request
        self.clock.sleep(max(0.0, start - now))
        if start > now:
            now = self.clock.monotonic()
        self._next_start = now + self.interval

    def _retry_after(self, response: Response, attempt: int) -> float:
        """Seconds to wait before sending a refused request again."""
        value = response.header('Retry-After')
        if value:
            value = value.strip()
            if re.fullmatch(r'\d+(\.\d+)?', value):
                return float(value)
            try:
                moment = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                moment = None
            if moment is not None and moment.tzinfo is not None:
                return max(0.0, (moment - self.clock.now()).total_seconds())
        reset = response.header('X-RateLimit-Reset')
        if reset:
            try:
                moment = datetime.fromisoformat(reset.strip().replace('Z', '+00:00'))
                if moment.tzinfo is not None:
                    return max(0.0, (moment - self.clock.now()).total_seconds())
            except ValueError:
                pass
        return min(BACKOFF_MAX, 2.0 ** (attempt + 1))

    def _note_limits(self, response: Response) -> None:
        """Hold the next request when Jira says the bucket is empty or nearly so."""
        remaining = response.header('X-RateLimit-Remaining')
        hold = 0.0
        if remaining is not None and remaining.strip() in ('0', '0.0') and response.status < 400:
            retry = response.header('Retry-After')
            interval = response.header('X-RateLimit-Interval-Seconds')
            for value in (retry, interval):
                try:
                    hold = max(hold, float(value or 0))
                except ValueError:
                    pass
            hold = hold or 1.0
        elif (response.header('X-RateLimit-NearLimit') or '').strip().lower() == 'true':
            hold = 1.0
        if hold:
            self._hold_until = max(self._hold_until, self.clock.monotonic() + hold)

    # --- the site ------------------------------------------------------------------------------

    def connect(self) -> dict:
        """``serverInfo`` (Cloud or Data Center) and ``myself`` (the token works); the server info."""
        info = self.get('/rest/api/2/serverInfo') or {}
        self.deployment = str(info.get('deploymentType') or 'Server')
        try:
            self.myself = self.get('/rest/api/2/myself') or {}
        except JiraAuthError:
            raise
        except JiraError as error:  # the account is only needed to recognise its own comments
            log.warning('Jira не ответила, кто мы (/myself): %s', error)
            self.myself = {}
        return info

    # --- reads ---------------------------------------------------------------------------------

    def search(self, jql: str, fields: Sequence[str], *, expand: str | None = None,
               page_size: int = SEARCH_PAGE) -> Iterator[list[dict]]:
        """Pages of raw issues matching ``jql``: Cloud ``/search/jql`` by ``nextPageToken``, Data
        Center ``/search`` by ``startAt``."""
        names = ','.join(fields)
        if self.cloud:
            token, seen = None, set()
            while True:
                page = self.get('/rest/api/2/search/jql', {
                    'jql': jql, 'nextPageToken': token, 'maxResults': page_size, 'fields': names,
                    'expand': expand}) or {}
                issues = page.get('issues') or []
                if issues:
                    yield issues
                token = page.get('nextPageToken')
                if page.get('isLast') or not token or token in seen or not issues:
                    return
                seen.add(token)
        else:
            start = 0
            while True:
                page = self.get('/rest/api/2/search', {
                    'jql': jql, 'startAt': start, 'maxResults': page_size, 'fields': names,
                    'expand': expand}) or {}
                issues = page.get('issues') or []
                if issues:
                    yield issues
                start = int(page.get('startAt') or start) + len(issues)
                total = page.get('total')
                if not issues or (isinstance(total, int) and start >= total):
                    return

    def changelog(self, key: str, start: int = 0) -> Iterator[list[dict]]:
        """Pages of an issue's change histories (Cloud ``/issue/{key}/changelog``)."""
        while True:
            page = self.get(f'/rest/api/2/issue/{key}/changelog',
                            {'startAt': start, 'maxResults': CHANGELOG_PAGE}) or {}
            values = page.get('values') or []
            if values:
                yield values
            start = int(page.get('startAt') or start) + len(values)
            total = page.get('total')
            if not values or page.get('isLast') or (isinstance(total, int) and start >= total):
                return

    def comments(self, key: str) -> list[dict]:
        """Every comment of ``key`` (``/issue/{key}/comment`` pages)."""
        found: list[dict] = []
        start = 0
        while True:
            page = self.get(f'/rest/api/2/issue/{key}/comment',
                            {'startAt': start, 'maxResults': COMMENT_PAGE}) or {}
            values = page.get('comments') or []
            found.extend(values)
            start = int(page.get('startAt') or start) + len(values)
            total = page.get('total')
            if not values or not isinstance(total, int) or start >= total:
                return found

    def statuses(self) -> dict[str, str]:
        """Status id → name."""
        return {str(status.get('id')): status.get('name')
                for status in self.get('/rest/api/2/status') or () if isinstance(status, dict)}

    def board(self, board_id: int) -> dict:
        return self.get(f'/rest/agile/1.0/board/{board_id}') or {}

    def board_configuration(self, board_id: int) -> dict:
        return self.get(f'/rest/agile/1.0/board/{board_id}/configuration') or {}

    def sprints(self, board_id: int) -> list[dict]:
        """Every sprint of a board, all states."""
        found: list[dict] = []
        start = 0
        while True:
            page = self.get(f'/rest/agile/1.0/board/{board_id}/sprint',
                            {'startAt': start, 'maxResults': SPRINT_PAGE}) or {}
            values = page.get('values') or []
            found.extend(values)
            start = int(page.get('startAt') or start) + len(values)
            if not values or page.get('isLast', True):
                return found

    def issue(self, key: str, fields: Sequence[str]) -> dict | None:
        """The issue with ``fields``; None when Jira does not know it."""
        response = self.call('GET', f'/rest/api/2/issue/{key}', {'fields': ','.join(fields)},
                             ok=(404,))
        return response.json() if response.status != 404 else None

    def property(self, path: str) -> dict | None:
        """The value of entity property :data:`MARKER` under ``path`` (``/issue/X``,
        ``/comment/10001``), None when it has none."""
        response = self.call('GET', f'/rest/api/2{path}/properties/{MARKER}', ok=(404,))
        if response.status == 404:
            return None
        answer = response.json()
        value = answer.get('value') if isinstance(answer, dict) else None
        return value if isinstance(value, dict) else {}

    def set_property(self, path: str, value: dict) -> None:
        self.call('PUT', f'/rest/api/2{path}/properties/{MARKER}', body=value)

    # --- writes --------------------------------------------------------------------------------

    def create_issue(self, fields: dict, marker: dict | None) -> str:
        """Create an issue; ``marker`` goes in the same request as its :data:`MARKER` property
        (Cloud documents ``properties`` on create; Data Center is sent none, see commands)."""
        body: dict[str, Any] = {'fields': fields}
        if marker is not None:
            body['properties'] = [{'key': MARKER, 'value': marker}]
        answer = self.call('POST', '/rest/api/2/issue', body=body).json() or {}
        key = answer.get('key') if isinstance(answer, dict) else None
        if not isinstance(key, str) or not key:
            raise JiraError(f'Jira создала задачу, но не вернула её ключ: {error_text(answer)}')
        return key

    def edit_issue(self, key: str, fields: dict) -> None:
        self.call('PUT', f'/rest/api/2/issue/{key}', body={'fields': fields})

    def add_comment(self, key: str, body: str, marker: dict | None) -> dict:
        payload: dict[str, Any] = {'body': body}
        if marker is not None:
            payload['properties'] = [{'key': MARKER, 'value': marker}]
        answer = self.call('POST', f'/rest/api/2/issue/{key}/comment', body=payload).json()
        return answer if isinstance(answer, dict) else {}

    def link(self, link_type: str, source: str, target: str) -> None:
        # Jira's request names the issue on the link's inward end ``inwardIssue``: the source,
        # the one that "blocks"; GET then shows the target as the source's ``outwardIssue``.
        self.call('POST', '/rest/api/2/issueLink', body={
            'type': {'name': link_type}, 'inwardIssue': {'key': source},
            'outwardIssue': {'key': target}})

    def transitions(self, key: str) -> list[dict]:
        answer = self.get(f'/rest/api/2/issue/{key}/transitions') or {}
        return [item for item in answer.get('transitions') or () if isinstance(item, dict)]

    def transition(self, key: str, transition_id: str) -> None:
        self.call('POST', f'/rest/api/2/issue/{key}/transitions',
                  body={'transition': {'id': transition_id}})

    def find_user(self, text: str) -> dict | None:
        """Cloud: the user whose e-mail or display name is ``text`` exactly (casefolded)."""
        wanted = text.casefold()
        for user in self.get('/rest/api/2/user/search', {'query': text, 'maxResults': 50}) or ():
            if isinstance(user, dict) and wanted in (str(user.get('emailAddress') or '').casefold(),
                                                     str(user.get('displayName') or '').casefold(),
                                                     str(user.get('accountId') or '').casefold()):
                return user
        return None

    def attachment(self, attachment_id: str) -> dict | None:
        response = self.call('GET', f'/rest/api/2/attachment/{attachment_id}', ok=(404,))
        return response.json() if response.status != 404 else None

    def download(self, url: str, sink: IO[bytes]) -> None:
        """The content at ``url`` (an attachment's ``content``) into ``sink``; redirects followed,
        the token never sent to another host."""
        self.call('GET', '', url=url, follow_redirects=True, sink=sink)


def _reason_suffix(response: Response) -> str:
    reason = response.header('RateLimit-Reason')
    return f' ({reason})' if reason else ''


__all__ = ['JiraClient', 'JiraError', 'JiraAuthError', 'JiraUnavailable', 'Counters', 'CLOUD',
           'MARKER', 'error_text']
