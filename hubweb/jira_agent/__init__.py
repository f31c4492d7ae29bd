"""The reference Jira agent, ``sdlc-hub agent`` (docs/agent.md).

A transport adapter between two HTTP APIs: it claims commands from the hub's agent API, runs them
against Jira's REST API v2 (Cloud or Data Center) and pushes what it read back, exactly as
docs/agent-protocol.md says. It imports nothing of hublib: a hub is only ever an URL to it.

    transport   keep-alive HTTP (http.client), proxies, redirects
    hub         the hub's agent endpoints
    jira        Jira's endpoints: pacing, rate limits, counting
    mapping     Jira JSON → the hub's shapes
    commands    what each command type does; nothing twice
    agent       the claim loop
"""
from __future__ import annotations

import logging
import signal
import threading

from .agent import AGENT_VERSION, PROTOCOL_VERSION, Agent, FatalError
from .clock import Clock, Stopped
from .hub import HubAuthError, HubClient, HubHTTPError
from .jira import CLOUD, JiraClient, JiraError
from .transport import check_url

log = logging.getLogger('hubweb.jira_agent')


def build_agent(hub_url: str, hub_token: str, jira_url: str, jira_token: str, *,
                jira_user: str | None = None, module: str = 'jira', clock: Clock | None = None,
                poll_interval: float = 3.0, index_lag: float = 5.0) -> Agent:
    """An agent between the hub at ``hub_url`` and the Jira at ``jira_url`` (not yet connected)."""
    clock = clock or Clock()
    hub = HubClient(hub_url, hub_token, clock=clock)
    jira = JiraClient(jira_url, jira_token, user=jira_user, clock=clock)
    return Agent(hub, jira, module=module, clock=clock, poll_interval=poll_interval,
                 index_lag=index_lag)


def run(agent: Agent, *, once: bool = False) -> None:
    """Run ``agent`` in this (main) thread until SIGTERM / Ctrl+C (``once``: until idle).

    A stop request ends the command in hand before its next Jira request, unreported: the hub
    hands it out again after the restart, and the redelivery finds what was already done."""
    stop = agent.clock.stop

    def on_signal(signum, frame):
        if not stop.is_set():
            log.info('сигнал %s: агент останавливается', signum)
        stop.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
    try:
        agent.run(once=once)
    finally:
        agent.hub.close()
        agent.jira.transport.close()


__all__ = ['Agent', 'FatalError', 'build_agent', 'run', 'HubClient', 'HubHTTPError',
           'HubAuthError', 'JiraClient', 'JiraError', 'Clock', 'Stopped', 'CLOUD',
           'AGENT_VERSION', 'PROTOCOL_VERSION', 'check_url']
