"""The agent's loop (docs/agent-protocol.md «The loop»): claim → execute → report, forever.

- settings are read at start and again whenever a claim answers another ``settings_version``;
- a delivery's ``pause_seconds`` is waited before its first Jira request;
- the report carries the command's exact ``jira_calls`` and ``rate_limited``;
- nothing is reported when the outcome is unknown: Jira stopped answering (a write may or may not
  have landed) or the agent was stopped; the hub hands the command out again and the redelivery
  finds what the first delivery did (:mod:`.commands`);
- an idle agent claims every ``poll_interval`` seconds (the claim is also its heartbeat); a hub
  that is down is waited for; a token the hub or Jira refuses stops the agent (:class:`FatalError`).
"""
from __future__ import annotations

import logging
import time

from .clock import Clock, Stopped, utc_text
from .commands import Executor
from .hub import HubAuthError, HubClient, HubHTTPError
from .jira import JiraAuthError, JiraClient, JiraError, JiraUnavailable
from .transport import TransportError

log = logging.getLogger('hubweb.jira_agent')

# Protocol level the agent speaks: comments (v10), attachments (v14), boards, rank, story points (v15).
PROTOCOL_VERSION = '15'
AGENT_VERSION = f'{PROTOCOL_VERSION} (sdlc-hub agent)'
JIRA_WAIT_MAX = 60.0


class FatalError(Exception):
    """The agent cannot work: the message says why, in one line (CLI: exit code 1)."""


class Agent:
    """A Jira agent of ``module`` between ``hub`` and ``jira``."""

    def __init__(self, hub: HubClient, jira: JiraClient, *, module: str = 'jira',
                 clock: Clock | None = None, poll_interval: float = 3.0, index_lag: float = 5.0,
                 version: str = AGENT_VERSION):
        self.hub = hub
        self.jira = jira
        self.module = module
        self.clock = clock or jira.clock
        self.poll_interval = poll_interval
        self.version = version
        self.executor = Executor(jira, hub, module=module, clock=self.clock, index_lag=index_lag)
        self.settings_version: int | None = None
        self.connected = False
        self.executed = 0

    @property
    def settings(self) -> dict:
        return self.executor.settings

    # --- start -----------------------------------------------------------------------------------

    def connect(self) -> None:
        """Reach both sides once: Jira's ``serverInfo`` and ``myself``, the hub's agent settings.
        FatalError (one line, Russian) when either is unreachable or refuses its token."""
        try:
            info = self.jira.connect()
        except JiraUnavailable as error:
            raise FatalError(str(error)) from None
        except JiraAuthError as error:
            raise FatalError(str(error)) from None
        except JiraError as error:
            raise FatalError(f'Jira {self.jira.url} не ответила как Jira: {error}') from None
        try:
            self.load_settings()
        except TransportError as error:
            raise FatalError(f'хаб недоступен: {error}') from None
        except HubAuthError as error:
            raise FatalError(f'хаб не принял токен агента ({error.status}): проверьте '
                             'SDLC_HUB_AGENT_TOKEN или --hub-token-file') from None
        except HubHTTPError as error:
            raise FatalError(f'хаб ответил ошибкой: {error}') from None
        self.connected = True
        log.info('агент %s: Jira %s (%s %s), хаб %s, модуль %s', self.version, self.jira.url,
                 self.jira.deployment, info.get('version') or '', self.hub.url, self.module)

    def load_settings(self) -> None:
        settings = self.hub.request('GET', f'/agent/settings?agent={self.module}')[1] or {}
        self.executor.settings = settings
        self.settings_version = settings.get('settings_version')
        pacing = settings.get('pacing') if isinstance(settings.get('pacing'), dict) else {}
        interval = pacing.get('interval_ms')
        self.jira.interval = (interval if isinstance(interval, int) and interval >= 0 else 500) / 1000

    # --- the loop --------------------------------------------------------------------------------

    def run(self, *, once: bool = False) -> None:
        """Claim and execute until stopped (``once``: until a claim hands out nothing)."""
        if not self.connected:
            self.connect()
        while True:
            try:
                command = self.claim()  # a hub that is down is waited for (HubClient.call)
            except Stopped:
                return
            except HubAuthError as error:
                raise FatalError(f'хаб отверг токен агента ({error.status})') from None
            except HubHTTPError as error:  # the URL is no hub's, or the protocol differs
                raise FatalError(f'хаб не выдал команду: {error}') from None
            if command is None:
                if once or not self._pause(self.poll_interval):
                    return
                continue
            try:
                self.handle(command)
            except Stopped:
                log.info('команда #%s прервана остановкой агента; хаб выдаст её снова',
                         command['id'])
                return

    def _pause(self, seconds: float) -> bool:
        try:
            self.clock.sleep(seconds)
        except Stopped:
            return False
        return True

    def claim(self) -> dict | None:
        """``POST /agent/claim``; the settings again when their version moved."""
        last = self.jira.last_call_at
        answer = self.hub.call('POST', '/agent/claim', {
            'agent': self.module, 'agent_version': self.version,
            'settings_version': self.settings_version,
            'last_jira_call_at': utc_text(last) if last else None}) or {}
        if answer.get('settings_version') != self.settings_version:
            self.load_settings()
        return answer.get('command')

    def handle(self, command: dict) -> None:
        """Execute one delivery and report it (or leave it to a redelivery when unsure)."""
        self.jira.counters.calls = self.jira.counters.rate_limited = 0
        started = time.monotonic()
        pause = command.get('pause_seconds') or 0
        if pause:
            log.info('команда #%s: пауза %s с перед запросами к Jira', command['id'], pause)
            self.clock.sleep(pause)
        try:
            status, result, error = self.executor.execute(command)
        except JiraUnavailable as error:
            log.warning('команда #%s %s не завершена, Jira не отвечает: %s; хаб выдаст её снова',
                        command['id'], command['type'], error)
            self._wait_for_jira()
            return
        except JiraAuthError as error:
            raise FatalError(str(error)) from None
        except HubAuthError as error:
            raise FatalError(f'хаб отверг токен агента ({error.status})') from None
        except HubHTTPError as error:
            # 404/409: the hub gave the command up or it was cancelled; 413/422: a page it refused
            status, result, error = 'failed', None, f'хаб не принял данные: {error}'
        self.executed += 1
        counters = self.jira.counters
        log.info('команда #%s %s: %s за %.1f с, запросов к Jira %d, из них ограничено %d%s',
                 command['id'], command['type'], status, time.monotonic() - started,
                 counters.calls, counters.rate_limited, f' ({error})' if error else '')
        self.report(command, status, result, error)

    def report(self, command: dict, status: str, result: dict | None, error: str | None) -> None:
        body = {'agent': self.module, 'status': status, 'result': result, 'error': error,
                'jira_calls': self.jira.counters.calls,
                'rate_limited': self.jira.counters.rate_limited}
        try:
            self.hub.call('POST', f'/agent/commands/{command["id"]}/report', body)
        except HubAuthError as refused:
            raise FatalError(f'хаб отверг токен агента ({refused.status})') from None
        except HubHTTPError as refused:
            log.warning('отчёт о команде #%s не принят: %s', command['id'], refused)

    def _wait_for_jira(self) -> None:
        """Ask Jira's ``serverInfo`` with growing pauses until it answers."""
        pause = self.poll_interval
        while True:
            self.clock.sleep(pause)
            try:
                self.jira.call('GET', '/rest/api/2/serverInfo')
                log.info('Jira снова отвечает')
                return
            except (JiraUnavailable, JiraError):
                pause = min(pause * 2, JIRA_WAIT_MAX)


__all__ = ['Agent', 'FatalError', 'AGENT_VERSION', 'PROTOCOL_VERSION']
