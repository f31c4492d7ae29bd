"""Benchmark: claim → report round trips per second (contract §9.3–9.4).

    .venv/bin/python scripts/bench_queue.py [--commands 3000]

Queues ``--commands`` ``add_comment`` commands in batches of 1,000, then drains them three ways,
each on its own fresh data directory with the same batches (each batch, once its comments are
done, brings the hub's «Обновление после записи» refresh, contract §9.4a: drained too):

1. baseline — ``hublib.queue.claim_command`` + ``report_command`` called in-process (the
   transactions alone, no HTTP);
2. HTTP — a real ``sdlc-hub serve`` (waitress, 127.0.0.1) and one keep-alive connection doing
   ``POST /agent/claim`` + ``POST /agent/commands/{id}/report``, as a tight agent would;
3. the agent — ``sdlc-hub agent``'s loop (``hubweb.jira_agent``, keep-alive connections) executing
   every comment in the demo's fake Jira REST server (a thread of this process; Data Center's
   dialect: a comment is a POST and a PUT of its marker property), no pacing.

The ratio column is each way's time per round trip over the baseline's.
"""
from __future__ import annotations

import argparse
import http.client
import json
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hublib import open_hub, projects, queue, settings  # noqa: E402
from hubweb.demo.fake_jira import FakeJira  # noqa: E402
from hubweb.demo.jira_rest import JiraRest, serve  # noqa: E402
from hubweb.jira_agent import build_agent  # noqa: E402
from tests.support.server import ServerProcess  # noqa: E402

CHUNK = 1000


def prepare(data_dir: Path, commands: int) -> dict:
    hub = open_hub(data_dir)
    try:
        settings.update_settings(hub, {'project_key': 'AURORA', 'pacing': {
            'interval_ms': 0, 'pause_on_rate_limit_seconds': 60}})
        projects.create_project(hub, 'AWPCA', 'Аврора')
        for start in range(0, commands, CHUNK):
            queue.create_batch(hub, title=f'Комментарии {start}', author='bench', commands=[
                {'type': 'add_comment', 'params': {'key': f'AURORA-{n % 500 + 1}', 'body': f'к {n}'}}
                for n in range(start, min(commands, start + CHUNK))])
        return settings.tokens(hub)
    finally:
        hub.close()


def done_count(data_dir: Path) -> int:
    hub = open_hub(data_dir)
    try:
        return hub.db.execute_sql("SELECT count(*) FROM command WHERE status = 'done' "
                                  "AND type = 'add_comment'").fetchone()[0]
    finally:
        hub.close()


def drain_in_process(data_dir: Path) -> int:
    hub = open_hub(data_dir)
    count = 0
    try:
        while True:
            command = queue.claim_command(hub, agent='jira', agent_version='bench',
                                          settings_version=None)['command']
            if command is None:
                return count
            queue.report_command(hub, command['id'], agent='jira', status='done',
                                 result={'comment_id': str(command['id'])}, error=None,
                                 jira_calls=1, rate_limited=0)
            count += 1
    finally:
        hub.close()


def drain_keep_alive(url: str, token: str) -> int:
    host, port = url.rsplit('/', 1)[-1].split(':')
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    headers = {'Authorization': f'Bearer {token}', 'Content-Type': 'application/json'}

    def post(path: str, body: dict) -> dict:
        connection.request('POST', path, json.dumps(body).encode(), headers)
        response = connection.getresponse()
        data = response.read()
        if response.status != 200:
            raise SystemExit(f'{path}: HTTP {response.status} {data[:200]!r}')
        return json.loads(data)

    count = 0
    claim = {'agent': 'jira', 'agent_version': 'bench', 'settings_version': None,
             'last_jira_call_at': None}
    while True:
        command = post('/agent/claim', claim)['command']
        if command is None:
            return count
        post(f'/agent/commands/{command["id"]}/report',
             {'agent': 'jira', 'status': 'done', 'result': {'comment_id': str(command['id'])},
              'error': None, 'jira_calls': 1, 'rate_limited': 0})
        count += 1


def timed(action) -> tuple[int, float]:
    started = time.perf_counter()
    count = action()
    return count, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--commands', type=int, default=3000)
    parser.add_argument('--threads', type=int, default=8, help='waitress threads')
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix='bench-queue-'))
    results = []
    try:
        tokens = prepare(root / 'lib', args.commands)
        results.append(('hublib in-process (baseline)', *timed(lambda: drain_in_process(root / 'lib'))))
        tokens = prepare(root / 'http', args.commands)
        with ServerProcess(root / 'http', threads=args.threads) as server:
            results.append(('HTTP, one keep-alive connection',
                            *timed(lambda: drain_keep_alive(server.url, tokens['agent']))))
        assert done_count(root / 'http') == args.commands
        tokens = prepare(root / 'agent', args.commands)
        jira = serve(JiraRest(FakeJira(500, seed=1), token='bench'))
        try:
            with ServerProcess(root / 'agent', threads=args.threads) as server:
                agent = build_agent(server.url, tokens['agent'], jira.url, 'bench', poll_interval=0)
                results.append(('sdlc-hub agent (executes in fake Jira REST)',
                                *timed(lambda: agent.run(once=True) or agent.executed)))
        finally:
            jira.close()
        assert done_count(root / 'agent') == args.commands
    finally:
        shutil.rmtree(root, ignore_errors=True)
    base = results[0][2] / results[0][1]
    print(f'{"claim -> report, " + str(args.commands) + " commands":<44} {"seconds":>8} '
          f'{"round trips/s":>14} {"ms each":>8} {"ratio":>6}')
    for name, count, seconds in results:
        # the comments and one read-your-writes refresh per batch of comments
        assert count == args.commands + math.ceil(args.commands / CHUNK), (name, count)
        each = seconds / count
        print(f'{name:<44} {seconds:>8.2f} {count / seconds:>14.0f} {each * 1000:>8.2f} '
              f'{each / base:>5.1f}x')
    return 0


if __name__ == '__main__':
    sys.exit(main())
