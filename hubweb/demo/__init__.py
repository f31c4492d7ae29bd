"""The demo of ``sdlc-hub serve --demo``: a generated Jira (``fake_jira``) served as Jira's REST API
(``jira_rest``, Data Center's dialect), the real agent (:mod:`hubweb.jira_agent`) between it and
the hub, and the start-up that fills a fresh hub.

Shipped because ``serve --demo`` runs it; tests and benchmarks reuse the fake Jira. What only tests
and benchmarks need (a server in a child process, fault injection, a load generator, builders of
legacy database files) lives in ``tests/support``.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from hublib.db import Hub, check_data_dir
from hublib.errors import ConflictError

from ..jira_agent import Agent, FatalError, build_agent
from .fake_jira import FIELD_IDS, KANBAN_BOARD, SCRUM_BOARD, FakeJira
from .jira_rest import SERVER, JiraRest, Server, serve

log = logging.getLogger('hubweb.demo')

# The demo's own data directory: never ./hub-data nor $SDLC_HUB_DATA, which name a real hub.
DEMO_DATA_DIR = Path('hub-demo')
# A file that says "this data directory was made by the demo"; the demo touches no other.
DEMO_MARKER = 'DEMO.txt'
DEMO_MARKER_TEXT = ('Этот каталог создан `sdlc-hub serve --demo`: фальшивая Jira и агент sdlc-hub,\n'
                    'данные и токены — демонстрационные. Демо работает только в каталоге с этим\n'
                    'файлом или в пустом каталоге.\n')
# What the demo's Jira has been told (created issues, comments, transitions…), kept beside the hub
# so a restarted demo serves the same Jira and never reuses a key.
DEMO_JIRA_FILE = 'demo-jira.json'
DEMO_JIRA_TOKEN = 'demo-jira-token'
DEMO_AUTHOR = 'demo'
DEMO_ISSUES = 300
DEMO_SEED = 7
DEMO_PROJECTS = (('AWPCA', 'Аврора: платёжный контур', SCRUM_BOARD),
                 ('ORION', 'Орион: отчётность', KANBAN_BOARD))
DEMO_SETTINGS = {
    'project_key': 'AURORA',
    'issue_types': {'task': {'name': 'Задача', 'id': '10002'},
                    'epic': {'name': 'Эпик', 'id': '10000'},
                    'bug': {'name': 'Ошибка', 'id': '10004'}},
    'link_types': {'blocks': 'Blocks', 'relates': 'Relates'},
    'priority_map': {'high': 'Высокий', 'medium': 'Средний', 'low': 'Низкий'},
    'field_ids': dict(FIELD_IDS),
}
# Seconds the demo's Jira takes for each write: the second batch stays "running" for most of the
# first minute, so a newcomer opening the UI sees it move.
DEMO_WRITE_LATENCY = 4.0


def is_demo_directory(data_dir: Path) -> bool:
    """True when ``data_dir`` carries the demo's marker."""
    return (data_dir / DEMO_MARKER).is_file()


def claim_demo_directory(data_dir: Path) -> None:
    """Make ``data_dir`` the demo's, or refuse it without touching a byte.

    A missing or empty directory is created and marked (before the hub file exists, so a demo
    interrupted during its first start still finds its mark); a marked one is the demo's own.
    Anything else, a real hub above all, raises ConflictError: the demo rewrites settings, adds
    projects and its agent claims queued commands for its fake Jira, lost for the real one.
    """
    check_data_dir(data_dir)
    if is_demo_directory(data_dir):
        return
    if data_dir.is_dir() and any(data_dir.iterdir()):
        raise ConflictError(f'{data_dir.resolve()} не создан демо (нет файла {DEMO_MARKER}), а в нём '
                            f'уже есть данные: демо запускается только в пустом или своём каталоге '
                            f'(по умолчанию ./{DEMO_DATA_DIR})')
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / DEMO_MARKER).write_text(DEMO_MARKER_TEXT, encoding='utf-8')


def demo_commands() -> list[dict]:
    """The demo's second batch: create two issues, link them, comment, transition."""
    return [
        {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'temp_key': 'new:1',
                                            'summary': 'Демо: подготовить выгрузку',
                                            'labels': ['AWPCA'], 'priority': 'high'}},
        {'type': 'ensure_issue', 'params': {'issue_type': 'task', 'temp_key': 'new:2',
                                            'summary': 'Демо: проверить выгрузку',
                                            'labels': ['AWPCA']}},
        {'type': 'ensure_link', 'params': {'source_key': 'new:1', 'target_key': 'new:2',
                                           'link_type': 'blocks'}, 'depends_on': 2},
        {'type': 'add_comment', 'params': {'key': 'new:1', 'body': 'Создано демо-агентом.'},
         'depends_on': 1},
        {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'Комментарий из демо.'}},
        {'type': 'transition', 'params': {'key': 'AURORA-2', 'status': 'В работе'}},
    ]


def _demo_batches_queued(hub: Hub) -> bool:
    """Whether an earlier start of the demo queued its batches (any batch by ``demo``)."""
    from hublib import queue

    cursor = None
    while True:
        page = queue.batches(hub, limit=1000, cursor=cursor)
        if any(item['author'] == DEMO_AUTHOR for item in page['items']):
            return True
        cursor = page['next_cursor']
        if cursor is None:
            return False


def prepare_demo(hub: Hub) -> list[dict]:
    """Settings, projects and the two demo batches (see :func:`start_demo`); returns the batches
    queued now: none when the demo is restarted on its directory (they were queued at its first
    start, and the agent has run them or will)."""
    from hublib import projects, queue, settings

    settings.update_settings(hub, DEMO_SETTINGS)
    for label, name, board_id in DEMO_PROJECTS:
        try:
            projects.create_project(hub, label, name, board_id)
        except ConflictError:
            pass  # a demo restarted on the same data directory keeps its projects
    if _demo_batches_queued(hub):
        return []
    refresh = queue.create_batch(hub, title='Демо: полная загрузка', author=DEMO_AUTHOR,
                                 commands=[{'type': 'refresh',
                                            'params': {'jql': projects.base_jql(hub)}}])
    work = queue.create_batch(hub, title='Демо: завести задачи', author=DEMO_AUTHOR,
                              project='AWPCA', commands=demo_commands())
    return [refresh, work]


@dataclass
class Demo:
    """A running demo: its fake Jira (model and server) and the agent's thread."""

    jira: FakeJira
    server: Server
    agent: Agent
    thread: threading.Thread

    def stop(self, timeout: float = 10.0) -> None:
        self.agent.clock.stop.set()
        self.thread.join(timeout=timeout)
        self.server.close()


def start_demo(hub: Hub, url: str, agent_token: str, *, issues: int = DEMO_ISSUES,
               write_latency: float = DEMO_WRITE_LATENCY, index_lag: float = 5.0) -> Demo:
    """Fill a hub with a demo, serve its fake Jira and run the agent against both in a daemon thread.

    Creates, through hublib:
    - settings: ``project_key`` AURORA, ``issue_types`` task/epic/bug («Задача», «Эпик», «Ошибка»),
      ``link_types`` blocks/relates, ``priority_map``, ``field_ids`` (this raises
      ``settings_version`` by one);
    - projects AWPCA «Аврора: платёжный контур» (scrum board 4216) and ORION «Орион: отчётность»
      (kanban board 4217), unless they already exist;
    - batch «Демо: полная загрузка» (author ``demo``): one ``refresh`` by the base JQL;
    - batch «Демо: завести задачи» (author ``demo``, project AWPCA): two ``ensure_issue``
      (temp keys new:1, new:2), ``ensure_link`` new:1 → new:2, ``add_comment`` on new:1 and on
      AURORA-1, ``transition`` of AURORA-2 to «В работе».
    The fake Jira (Data Center's REST API on 127.0.0.1, a free port) serves ``issues`` generated
    issues (seed 7, labels AWPCA/ORION/VEGA, so VEGA issues appear only as neighbours) whose scrum
    board has two-week sprints around the demo's first start (six closed, one active, one future)
    and whose AWPCA issues walk through them and the board's columns; every issue's history ends
    in its current values. What the agent writes into it is kept in ``<data>/demo-jira.json``: a
    restarted demo serves the same Jira. Each write takes ``write_latency`` seconds, so the second
    batch is seen running. The agent (``demo-agent`` thread) polls every 2 s until ``stop()``.
    """
    prepare_demo(hub)
    jira = FakeJira(issues=issues, seed=DEMO_SEED, scrum_history=hub.clock(),
                    state_file=hub.data_dir / DEMO_JIRA_FILE)
    server = serve(JiraRest(jira, deployment=SERVER, token=DEMO_JIRA_TOKEN,
                            write_latency=write_latency))
    agent = build_agent(url, agent_token, server.url, DEMO_JIRA_TOKEN, poll_interval=2.0,
                        index_lag=index_lag)

    def run() -> None:
        try:
            agent.run()
        except FatalError as error:
            log.error('демо: агент остановился: %s', error)

    thread = threading.Thread(target=run, name='demo-agent', daemon=True)
    thread.start()
    log.info('демо: агент запущен против фальшивой Jira %s (%d задач)', server.url, jira.count)
    return Demo(jira, server, agent, thread)


__all__ = ['FakeJira', 'JiraRest', 'Demo', 'start_demo', 'prepare_demo', 'demo_commands',
           'claim_demo_directory', 'is_demo_directory', 'DEMO_DATA_DIR', 'DEMO_MARKER',
           'DEMO_JIRA_FILE', 'DEMO_JIRA_TOKEN', 'DEMO_SETTINGS']
