"""A simulated jira agent: the real agent protocol over HTTP (contract §§8, 9), a fake Jira behind it.

Standard library only (``urllib``), so it runs anywhere the hub runs and exercises the hub exactly as
a real agent would: ``POST /agent/claim``, execute against :class:`~hubweb.demo.fake_jira.FakeJira`,
push state, history and boards, upload files, ``POST /agent/commands/{id}/report`` with
``jira_calls`` and ``rate_limited``.

Faults it can inject, each with its own probability (``Faults``):

- ``lose_report``: the command is executed but the report never reaches the hub (the agent believes
  it was sent). The hub redelivers the command at the next claim; the agent executes it again;
  Jira-side effects are idempotent per command id, like a real agent that first looks for what it
  created.
- ``crash_before_report``: the agent "dies" after executing and before reporting, losing its memory
  (settings, caches); it "restarts" at once and claims again.
- ``duplicate_report``: the report is sent twice (a retry after a lost response).
- ``rate_limit``: a Jira call answers 429; the agent waits ``pacing.interval_ms`` (scaled), retries
  and counts the call in ``rate_limited``.

Pauses (``pause_seconds`` of a delivery, ``interval_ms`` between calls) are multiplied by
``time_scale``: 1.0 behaves like a polite agent, 0.0 (tests, benchmarks) never sleeps.
"""
from __future__ import annotations

import hashlib
import http.client
import json
import logging
import random
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

from .fake_jira import FakeJira, JiraError

log = logging.getLogger('hubweb.demo')

PAGE_SIZE = 100
AGENT_VERSION = 'sim-15'


class HubHTTPError(Exception):
    """The hub answered with an HTTP error status."""

    def __init__(self, status: int, body: Any, method: str, path: str):
        self.status = status
        self.body = body
        super().__init__(f'{method} {path} -> {status}: {body}')


class SimulatedCrash(Exception):
    """The agent 'died' (fault injection); the run loop restarts it."""


@dataclass
class Faults:
    """Fault probabilities, each in [0, 1]."""

    lose_report: float = 0.0
    crash_before_report: float = 0.0
    duplicate_report: float = 0.0
    rate_limit: float = 0.0


class HubClient:
    """A tiny JSON-over-HTTP client of the hub (stdlib only), one bearer token."""

    def __init__(self, url: str, token: str, timeout: float = 30.0):
        self.url = url.rstrip('/')
        self.token = token
        self.timeout = timeout

    def request(self, method: str, path: str, body: Any = None, raw: bytes | None = None,
                ok: tuple[int, ...] = ()) -> tuple[int, Any]:
        """Send one request; return ``(status, decoded JSON or None)``; raise HubHTTPError ≥ 400."""
        data = raw if raw is not None else (
            json.dumps(body, ensure_ascii=False).encode() if body is not None else None)
        headers = {'Authorization': f'Bearer {self.token}'}
        if raw is not None:
            headers['Content-Type'] = 'application/octet-stream'
        elif body is not None:
            headers['Content-Type'] = 'application/json'
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as response:
                return response.status, _decode(response.read())
        except urllib.error.HTTPError as error:
            payload = _decode(error.read())
            if error.code in ok:
                return error.code, payload
            raise HubHTTPError(error.code, payload, method, path) from None

    def get(self, path: str) -> Any:
        return self.request('GET', path)[1]

    def post(self, path: str, body: Any) -> Any:
        return self.request('POST', path, body)[1]


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode('utf-8', 'replace')


class SimAgent:
    """A jira agent against a fake Jira. ``run()`` claims and executes until told to stop."""

    def __init__(self, url: str, token: str, jira: FakeJira | None = None, *,
                 faults: Faults | None = None, seed: int = 1, time_scale: float = 0.0,
                 poll_interval: float = 0.5, command_delay: float = 0.0, module: str = 'jira',
                 page_size: int = PAGE_SIZE, send_history: bool = True, timeout: float = 30.0):
        self.client = HubClient(url, token, timeout=timeout)
        self.jira = jira or FakeJira(seed=seed)
        self.faults = faults or Faults()
        self.random = random.Random(seed)
        self.time_scale = time_scale
        self.poll_interval = poll_interval
        self.command_delay = command_delay
        self.module = module
        self.page_size = page_size
        self.send_history = send_history
        self.stats: Counter = Counter()
        self.last_jira_call_at: str | None = None
        self.settings_version: int | None = None
        self.settings: dict = {}
        self.stop_event = threading.Event()
        self._calls = 0
        self._rate_limited = 0

    # --- protocol ---------------------------------------------------------------------------

    def claim(self) -> dict | None:
        """``POST /agent/claim``; the delivered command or None."""
        answer = self.client.post('/agent/claim', {
            'agent': self.module, 'agent_version': AGENT_VERSION,
            'settings_version': self.settings_version, 'last_jira_call_at': self.last_jira_call_at})
        self.stats['claims'] += 1
        version = answer.get('settings_version')
        if version is not None and version != self.settings_version:
            self.load_settings(version)
        return answer.get('command')

    def load_settings(self, version: int | None = None) -> None:
        """Read ``/agent/settings`` (pacing, link types); keep going with defaults if it fails."""
        try:
            self.settings = self.client.get(f'/agent/settings?agent={self.module}') or {}
            self.settings_version = self.settings.get('settings_version', version)
        except (HubHTTPError, OSError) as error:
            log.debug('настройки агента не прочитаны: %s', error)
            self.settings_version = version

    def report(self, command_id: int, status: str, result: Any = None, error: str | None = None) -> Any:
        """``POST /agent/commands/{id}/report`` with this execution's call counters."""
        body = {'agent': self.module, 'status': status, 'result': result, 'error': error,
                'jira_calls': self._calls, 'rate_limited': self._rate_limited}
        code, answer = self.client.request('POST', f'/agent/commands/{command_id}/report', body,
                                           ok=(404, 409))
        self.stats[f'report_{code}'] += 1
        return answer

    # --- Jira calls with pacing and 429s ----------------------------------------------------

    def _sleep(self, seconds: float) -> None:
        if seconds > 0 and self.time_scale > 0:
            self.stop_event.wait(seconds * self.time_scale)

    def jira_call(self, operation: Callable[[], Any]) -> Any:
        """One Jira call: paced, retried after simulated 429s, counted."""
        pacing = self.settings.get('pacing') or {}
        interval = (pacing.get('interval_ms') or 500) / 1000
        while True:
            self._sleep(interval)
            self._calls += 1
            self.last_jira_call_at = time.strftime('%Y-%m-%dT%H:%M:%S+00:00', time.gmtime())
            if self.faults.rate_limit and self.random.random() < self.faults.rate_limit:
                self._rate_limited += 1
                self.stats['rate_limited'] += 1
                self._sleep(interval * 2)
                continue
            return operation()

    # --- command execution ------------------------------------------------------------------

    def execute(self, command: dict) -> tuple[str, Any, str | None]:
        """Run ``command`` against the fake Jira; return ``(status, result, error)``."""
        handler = getattr(self, f'_do_{command["type"]}', None)
        if handler is None:
            return 'failed', None, f'неизвестный тип команды {command["type"]}'
        try:
            return 'done', handler(command), None
        except JiraError as error:
            return 'failed', None, str(error)

    def _do_refresh(self, command: dict) -> dict:
        params = command['params']
        if params.get('keys'):
            keys = self.jira_call(lambda: self.jira.search(
                'key in ({})'.format(', '.join(params['keys']))))
        else:
            keys = self.jira_call(lambda: self.jira.search(params.get('jql') or ''))
        wanted = set(keys)
        issues_sent = links_sent = changes_sent = 0
        neighbours: dict[str, None] = {}
        for start in range(0, len(keys), self.page_size):
            page = self.jira_call(lambda: self.jira.issues(keys[start:start + self.page_size]))
            for issue in page:
                issue['neighbor'] = False
                for link in issue['links']:
                    if link['key'] not in wanted:
                        neighbours[link['key']] = None
            issues_sent, links_sent, changes_sent = self._push_page(
                command['id'], page, issues_sent, links_sent, changes_sent)
        if params.get('jql'):
            outside = [key for key in neighbours if self.jira.exists(key)]
            for start in range(0, len(outside), self.page_size):
                page = self.jira_call(lambda: self.jira.issues(outside[start:start + self.page_size]))
                for issue in page:
                    issue['neighbor'] = True
                issues_sent, links_sent, changes_sent = self._push_page(
                    command['id'], page, issues_sent, links_sent, changes_sent)
            boards = self.jira_call(self.jira.boards)
            self.client.post('/agent/boards', {'agent': self.module, 'command_id': command['id'],
                                               'boards': boards})
            self.stats['boards_posts'] += 1
        result = {'issues': issues_sent, 'links': links_sent}
        if self.send_history:
            result['history'] = {'issues': issues_sent, 'changes': changes_sent, 'incomplete': []}
        return result

    def _push_page(self, command_id: int, page: list[dict], issues: int, links: int,
                   changes: int) -> tuple[int, int, int]:
        if not page:
            return issues, links, changes
        answer = self.client.post('/agent/state', {'agent': self.module, 'command_id': command_id,
                                                   'issues': page})
        self.stats['state_posts'] += 1
        issues += answer.get('issues', len(page)) if isinstance(answer, dict) else len(page)
        links += sum(len(issue['links']) for issue in page)
        if self.send_history:
            items = self.jira_call(lambda: [item for issue in page
                                            for item in self.jira.history(issue['key'])])
            if items:
                self.client.post('/agent/history', {'agent': self.module, 'command_id': command_id,
                                                    'items': items})
                self.stats['history_posts'] += 1
                changes += len(items)
        return issues, links, changes

    def _issue_type_name(self, logical: str | None) -> str | None:
        types = self.settings.get('issue_types') or {}
        spec = types.get(logical) if isinstance(types, dict) else None
        return (spec or {}).get('name') or logical

    def _do_ensure_issue(self, command: dict) -> dict:
        params = dict(command['params'])
        params['issue_type_name'] = self._issue_type_name(params.get('issue_type'))
        # The command id is the idempotency token: a redelivered command finds the issue it made.
        token = None if params.get('key') else ('issue', command['id'])
        self.jira_call(lambda: None)  # look up create metadata, as the real agent does
        self.jira_call(lambda: None)  # search for an issue this command already created
        key = self.jira_call(lambda: self.jira.ensure_issue(params, token=token))
        return {'key': key}

    def _do_ensure_link(self, command: dict) -> dict:
        params = command['params']
        link_types = self.settings.get('link_types') or {}
        jira_type = link_types.get(params['link_type'], params['link_type'])
        created = self.jira_call(lambda: self.jira.ensure_link(
            params['source_key'], params['target_key'], jira_type))
        return {'created': created, 'link_type': jira_type}

    def _do_add_comment(self, command: dict) -> dict:
        params = command['params']
        comment_id = self.jira_call(lambda: self.jira.add_comment(
            params['key'], params['body'], token=command['id']))
        return {'comment_id': comment_id}

    def _do_transition(self, command: dict) -> dict:
        params = command['params']
        before = self.jira_call(lambda: self.jira.transition(params['key'], params['status']))
        return {'from': before, 'to': params['status']}

    def _do_fetch_attachment(self, command: dict) -> dict:
        content = self.jira_call(lambda: self.jira.attachment(command['params']['attachment_id']))
        digest = hashlib.sha256(content).hexdigest()
        self.client.request('PUT', f'/agent/files/{digest}', raw=content)
        self.stats['files_put'] += 1
        return {'sha256': digest, 'size': len(content)}

    # --- the loop ---------------------------------------------------------------------------

    def step(self) -> dict | None:
        """Claim once; execute and report what was delivered. Returns the command or None."""
        command = self.claim()
        if command is None:
            return None
        self._calls = self._rate_limited = 0
        self._sleep(command.get('pause_seconds') or 0)
        if self.command_delay:
            self.stop_event.wait(self.command_delay)
        try:
            status, result, error = self.execute(command)
        except HubHTTPError as error:
            # The hub refused a push (e.g. 409: the refresh was cancelled or given up meanwhile).
            self.stats['push_refused'] += 1
            status, result, error = 'failed', None, f'хаб отклонил данные: HTTP {error.status}'
        self.stats['executed'] += 1
        self.stats[f'executed_{command["type"]}'] += 1
        if self.faults.crash_before_report and self.random.random() < self.faults.crash_before_report:
            raise SimulatedCrash(command['id'])
        if self.faults.lose_report and self.random.random() < self.faults.lose_report:
            self.stats['lost_reports'] += 1
            return command
        self.report(command['id'], status, result, error)
        if self.faults.duplicate_report and self.random.random() < self.faults.duplicate_report:
            self.stats['duplicate_reports'] += 1
            self.report(command['id'], status, result, error)
        return command

    def restart(self) -> None:
        """What a crashed agent loses: settings, counters of the command in hand."""
        self.stats['crashes'] += 1
        self.settings, self.settings_version = {}, None
        self._calls = self._rate_limited = 0

    def run(self, until: float | None = None, max_commands: int | None = None,
            stop_when_idle: bool = False) -> Counter:
        """Claim/execute/report until ``time.monotonic() >= until``, ``max_commands`` executions,
        idleness (with ``stop_when_idle``) or ``stop()``. Unreachable hub: wait and retry."""
        if self.settings_version is None:
            self.load_settings()
        executed = 0
        while not self.stop_event.is_set():
            if until is not None and time.monotonic() >= until:
                break
            if max_commands is not None and executed >= max_commands:
                break
            try:
                command = self.step()
            except SimulatedCrash:
                executed += 1
                self.restart()
                continue
            except (OSError, http.client.HTTPException, HubHTTPError) as error:
                # Hub down, restarting or failing: a real agent keeps polling. A 4xx to a claim
                # or a report is a wrong token, URL or protocol: polling would not fix it.
                if isinstance(error, HubHTTPError) and error.status < 500:
                    raise
                self.stats['hub_errors'] += 1
                log.warning('хаб недоступен: %s', error)
                self.stop_event.wait(self.poll_interval)
                continue
            if command is None:
                if stop_when_idle:
                    break
                self.stop_event.wait(self.poll_interval)
            else:
                executed += 1
        return self.stats

    def stop(self) -> None:
        self.stop_event.set()

    def start(self, **run_args) -> threading.Thread:
        """Run in a daemon thread."""
        thread = threading.Thread(target=self.run, kwargs=run_args, name='sim-agent', daemon=True)
        thread.start()
        return thread


__all__ = ['SimAgent', 'Faults', 'HubClient', 'HubHTTPError', 'SimulatedCrash']
