"""A load worker: threads doing claim/report (with state and history pushes) and history posts
against a hub for a bounded time; prints its counters as one JSON line.

    python -m tests.support.load --url U --agent-token A --client-token C --seconds 20 --threads 8 --worker 0

Used by the concurrency fault test (several worker processes at once).
Every response is counted by status; 5xx answers and any body mentioning ``database is locked``
are kept verbatim so the caller can show them.
"""
from __future__ import annotations

import argparse
import http.client
import json
import sys
import threading
import time
from collections import Counter

from hubweb.jira_agent.hub import HubClient, HubHTTPError


class LoadWorker:
    """``threads`` threads for ``seconds``: even ones are agents, odd ones push history."""

    def __init__(self, url: str, agent_token: str, client_token: str, *, worker: int = 0,
                 threads: int = 8, seconds: float = 20.0, page: int = 20):
        self.agent = HubClient(url, agent_token)
        self.client = HubClient(url, client_token)
        self.worker = worker
        self.threads = threads
        self.seconds = seconds
        self.page = page
        self.lock = threading.Lock()
        self.statuses: Counter = Counter()
        self.problems: list[str] = []
        self.history_sent = self.history_inserted = self.history_ignored = 0
        self.reported: Counter = Counter()        # report outcome -> count
        self.reported_done: set[int] = set()      # commands whose done report the hub accepted
        self.state_keys: set[str] = set()         # keys of every 2xx state page
        self.round_trips = 0
        self.history_pages = 0

    def _call(self, client: HubClient, method: str, path: str, body=None):
        try:
            status, answer = client.request(method, path, body, ok=(404, 409, 422))
        except HubHTTPError as error:
            status, answer = error.status, error.body
        except (OSError, http.client.HTTPException) as error:
            with self.lock:
                self.statuses['connection_error'] += 1
                self.problems.append(f'{method} {path}: {error!r}')
            return None, None
        with self.lock:
            self.statuses[str(status)] += 1
            text = json.dumps(answer, ensure_ascii=False) if answer is not None else ''
            if status >= 500 or 'locked' in text:
                self.problems.append(f'{method} {path} -> {status}: {text[:300]}')
        return status, answer

    def _agent_thread(self, index: int, deadline: float) -> None:
        serial = 0
        while time.monotonic() < deadline:
            status, answer = self._call(self.agent, 'POST', '/agent/claim',
                                        {'agent': 'jira', 'agent_version': 'load',
                                         'settings_version': None, 'last_jira_call_at': None})
            command = (answer or {}).get('command') if status == 200 else None
            if command is None:
                serial += 1
                self._enqueue(index, serial)
                continue
            if command['type'] == 'refresh':
                issues = [{'key': key, 'summary': f'нагрузка {key}', 'labels': ['AWPCA'],
                           'updated': '2026-11-30T10:00:00.000+0300'}
                          for key in command['params'].get('keys', [])]
                status, _ = self._call(self.agent, 'POST', '/agent/state',
                                       {'agent': 'jira', 'command_id': command['id'], 'issues': issues})
                if status == 200:
                    with self.lock:
                        self.state_keys.update(issue['key'] for issue in issues)
                self._history(index, command['id'])
            status, answer = self._call(self.agent, 'POST', f'/agent/commands/{command["id"]}/report',
                                        {'agent': 'jira', 'status': 'done', 'result': {},
                                         'error': None, 'jira_calls': 1, 'rate_limited': 0})
            with self.lock:
                self.round_trips += 1
                outcome = 'late' if isinstance(answer, dict) and answer.get('late') else str(status)
                self.reported[outcome] += 1
                if status == 200 and outcome != 'late':
                    self.reported_done.add(command['id'])

    def _enqueue(self, index: int, serial: int) -> None:
        base = (self.worker * 100 + index) * 100_000 + serial * 10
        keys = [f'AURORA-{base + n}' for n in range(1, 6)]
        commands = [{'type': 'refresh', 'params': {'keys': keys}}]
        commands += [{'type': 'add_comment', 'params': {'key': key, 'body': 'нагрузка'}} for key in keys[:3]]
        self._call(self.client, 'POST', '/batches',
                   {'title': f'нагрузка {self.worker}.{index}.{serial}', 'author': 'load',
                    'commands': commands})

    def _history(self, index: int, command_id: int | None) -> None:
        with self.lock:
            self.history_pages += 1
            number = self.history_pages
        items = [{'history_id': f'{self.worker}-{index}-{number}', 'seq': seq,
                  'key': f'AURORA-{self.worker * 1000 + index}', 'created': '2026-10-22T09:00:00.000+0300',
                  'author': 'load', 'field_id': 'status', 'field_name': 'Status', 'from_value': '1',
                  'from_string': 'Открыта', 'to_value': '3', 'to_string': 'В работе'}
                 for seq in range(self.page)]
        body = {'agent': 'jira', 'items': items}
        if command_id is not None:
            body['command_id'] = command_id
        for attempt in range(1 + (number % 5 == 0)):  # every fifth page is sent twice
            status, answer = self._call(self.agent, 'POST', '/agent/history', body)
            if status == 200:
                with self.lock:
                    self.history_sent += len(items)
                    self.history_inserted += answer['inserted']
                    self.history_ignored += answer['ignored']

    def _history_thread(self, index: int, deadline: float) -> None:
        while time.monotonic() < deadline:
            self._history(index, None)
            self._call(self.client, 'GET', '/issues?limit=50')

    def run(self) -> dict:
        """Run every thread to the deadline; return the counters."""
        deadline = time.monotonic() + self.seconds
        workers = [threading.Thread(target=self._agent_thread if index % 2 == 0 else self._history_thread,
                                    args=(index, deadline), daemon=True) for index in range(self.threads)]
        started = time.monotonic()
        for thread in workers:
            thread.start()
        for thread in workers:
            thread.join()
        return {'worker': self.worker, 'seconds': time.monotonic() - started,
                'statuses': dict(self.statuses), 'problems': self.problems[:50],
                'history_sent': self.history_sent, 'history_inserted': self.history_inserted,
                'history_ignored': self.history_ignored, 'reported': dict(self.reported),
                'reported_done': sorted(self.reported_done), 'state_keys': sorted(self.state_keys),
                'round_trips': self.round_trips}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='tests.support.load')
    parser.add_argument('--url', required=True)
    parser.add_argument('--agent-token', required=True)
    parser.add_argument('--client-token', required=True)
    parser.add_argument('--worker', type=int, default=0)
    parser.add_argument('--threads', type=int, default=8)
    parser.add_argument('--seconds', type=float, default=20.0)
    args = parser.parse_args(argv)
    result = LoadWorker(args.url, args.agent_token, args.client_token, worker=args.worker,
                        threads=args.threads, seconds=args.seconds).run()
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == '__main__':
    sys.exit(main())
