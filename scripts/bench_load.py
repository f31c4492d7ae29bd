"""Load benchmark (issue 31, contract §20): a real ``sdlc-hub serve`` under 16 interface clients and
an ingesting agent; what ``/health``, the agent and memory do, and how fast hostile queries end.

    .venv/bin/python scripts/bench_load.py [--issues 100000] [--seconds 60] [--clients 16]
        [--threads 8] [--data DIR] [--json OUT]

1. The mirror of ``tests.support.scale.ScaleJira`` (``--issues`` issues, five projects, ten change
   rows an issue, Russian text), built straight into a hub file; ``--data DIR`` keeps it in DIR
   (built on the first run, reused by the next ones).
2. A real ``sdlc-hub serve`` (``--threads`` interface workers, the default agent and quick pools)
   on 127.0.0.1. Idle first, as the baseline of the same run: ``/health`` ``--idle-samples``
   times, and ``--idle-pages`` agent pages of each kind — ``POST /agent/state`` with 100 issues
   as changed in Jira (``revision`` ≥ 1: new status, a new comment) and ``POST /agent/history``
   with their new history (1,000 items) — for a refresh the agent claimed over HTTP.
3. For ``--seconds``, all at once, each on keep-alive connections of its own:
   - ``--clients`` interface clients. All but one draw from the mix a team's web UI makes
     (:data:`MIX`: project lists and their next pages, JQL pages, counts and facets, cards, a CSV
     export, the cumulative flow, cycle time); the last one sends the hostile queries of issue 31
     (:data:`HOSTILE`) one after another, again and again, and times each answer;
   - the agent, sending state and history pages as fast as they are answered;
   - a probe asking ``GET /health`` every 50 ms;
   - the server's VmRSS, sampled every 0.5 s.
4. Printed: ``/health`` p50/p95/max idle and loaded; agent pages p50/p95 idle and loaded and
   their ratio; every answer by kind (count, p50, p95, statuses); 5xx counted apart — the
   deliberate 503s of the deadline («Запрос слишком долгий») and of the capacity rule («Хаб
   перегружен») and everything else; RSS before, peak and after; each hostile query's slowest
   answer and statuses (a run too short to reach one under load sends it once afterwards, on the
   idle server, and says so).

Acceptance (issue 31) at 100,000 issues, 60 s: ``/health`` p95 ≤ 100 ms, agent pages p95 ≤ 2×
idle, no 5xx but the deliberate 503s, RSS bounded, every hostile query answered or refused within
5 s. The machine's other load shows in every figure: a shared machine's numbers are marked so.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import quote, urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hublib import open_hub  # noqa: E402
from tests.support.scale import (BIGGEST, PEOPLE, PROJECTS, SMALLEST, ScaleJira,  # noqa: E402
                                 build_hub)
from tests.support.server import ServerProcess  # noqa: E402
from tests.support.timing import KeepAliveClient, percentile, process_memory  # noqa: E402

PAGE_ISSUES = 100
HEALTH_EVERY = 0.05
RSS_EVERY = 0.5
HOSTILE_LIMIT_S = 5.0
DELIBERATE = {'Запрос слишком долгий': 'deadline', 'Хаб перегружен': 'capacity',
              'Клиент отключился': 'client gone'}


def jql(query: str, **more: str) -> str:
    return urlencode({'jql': query, **more}, quote_via=quote)


# Issue 31's hostile queries: each must be answered or refused within HOSTILE_LIMIT_S.
HOSTILE = {
    'status WAS x0 OR … x299': '/issues?' + jql(' OR '.join(f'status WAS x{n}' for n in range(300))),
    'summary ~ задача OR … ×300': '/issues?' + jql(' OR '.join(['summary ~ задача'] * 300)),
    'text ~ "а* б* …" ×900': '/issues?' + jql(
        'text ~ "' + ' '.join(f'{chr(0x430 + n % 32)}{n}*' for n in range(900)) + '"'),
    'ORDER BY due ×1990': '/issues?' + jql('ORDER BY ' + ', '.join(['due'] * 1990)),
    'ORDER BY status ×1200': '/issues?' + jql('ORDER BY ' + ', '.join(['status'] * 1200)),
    'NOT ×19 labels = x': '/issues?' + jql('NOT ' * 19 + 'labels = x'),
    'NOT ×19 labels = x (CSV)': '/issues.csv?' + jql('NOT ' * 19 + 'labels = x'),
    'created > now(-9999999d)': '/issues?' + jql('created > now(-9999999d)'),
    'startOfWeek(-300000w)': '/issues?' + jql('created > startOfWeek(-300000w)'),
    'key < AURORA-9…9 (4,400 digits)': '/issues?' + jql('key < AURORA-' + '9' * 4400),
}


class Recorder:
    """Answers by kind: milliseconds, statuses, the titles of 5xx bodies."""

    def __init__(self):
        self.lock = threading.Lock()
        self.times: dict[str, list[float]] = defaultdict(list)
        self.statuses: dict[str, Counter] = defaultdict(Counter)
        self.server_errors: Counter = Counter()   # (kind of 5xx) -> count
        self.examples: list[str] = []

    def add(self, kind: str, ms: float, status: int | str, body: bytes = b'') -> None:
        with self.lock:
            self.times[kind].append(ms)
            self.statuses[kind][status] += 1
            if isinstance(status, int) and status < 500:
                return
            title = None
            try:
                title = json.loads(body).get('title') if body else None
            except (ValueError, AttributeError):
                pass
            which = DELIBERATE.get(title, 'other') if status == 503 else 'other'
            self.server_errors[which] += 1
            if which == 'other' and len(self.examples) < 20:
                self.examples.append(f'{kind}: {status} {body[:200].decode(errors="replace")}')


def call(client: KeepAliveClient, recorder: Recorder, kind: str, method: str, path: str,
         body: bytes | None = None) -> tuple[int, bytes] | None:
    """One timed request; a dropped connection is recorded as ``connection`` and reopened."""
    started = time.perf_counter()
    try:
        ms, status, data = client.timed(method, path, body)
    except (OSError, http.client.HTTPException) as error:
        recorder.add(kind, (time.perf_counter() - started) * 1000, 'connection',
                     repr(error).encode())
        client.connection.close()
        return None
    recorder.add(kind, ms, status, data)
    if status == 503 or status >= 500:
        client.connection.close()  # the hub closes after its own 503; start clean
    return status, data


# --- the interface clients -------------------------------------------------------------------------

def mix(jira: ScaleJira) -> list[tuple[str, int, object]]:
    """(kind, weight, path or a function of the random generator giving one)."""
    labels = [project.label for project in PROJECTS]
    people = [person for person in PEOPLE if person]
    boards = [project.label for project in PROJECTS if project.board_id is not None]
    until = '2027-01-20'

    def card(rng):
        return f'/issues/AURORA-{rng.randrange(1, jira.count + 1)}'

    def project_list(rng):
        return f'/issues?project={rng.choice(labels)}&limit=100'

    def jql_page(rng):
        person = rng.choice(people)
        return '/issues?' + jql(rng.choice([
            f'assignee = {person} AND status != Готово ORDER BY updated DESC',
            f'project = AURORA AND labels = {rng.choice(labels)} ORDER BY priority DESC, key',
            'text ~ данных ORDER BY created DESC',
            f'status CHANGED BY {person} AFTER -30d',
            f'labels in (срочно, регресс) AND assignee in ({person}, ivanov)',
        ]), limit='100')

    def counts(rng):
        query = f'labels = {rng.choice(labels)}'
        return rng.choice(['/issues/count?', '/issues/facets?']) + jql(query)

    def csv(rng):
        return '/issues.csv?' + jql(rng.choice([f'labels = {SMALLEST}',
                                                f'labels = {BIGGEST} AND status = Снято']))

    def flow(rng):
        label = rng.choice(boards)
        return rng.choice([f'/projects/{label}/flow',
                           f'/projects/{label}/flow?since=2026-01-21&until={until}'])

    def cycle(rng):
        label = rng.choice(boards)
        return rng.choice([f'/projects/{label}/cycle-time',
                           f'/projects/{label}/cycle-time?since=2026-01-20&until={until}'])

    return [('card', 30, card), ('project list', 15, project_list), ('jql page', 15, jql_page),
            ('count or facets', 10, counts), ('csv', 3, csv), ('flow', 5, flow),
            ('cycle time', 5, cycle), ('changes', 5, lambda rng: '/changes?order=desc&limit=100'),
            ('agents', 2, lambda rng: '/agents')]


def interface_client(url: str, token: str, recorder: Recorder, stop: threading.Event,
                     jira: ScaleJira, seed: int) -> None:
    rng = random.Random(seed)
    kinds = mix(jira)
    weights = [weight for _, weight, _ in kinds]
    client = KeepAliveClient(url, token, timeout=120)
    while not stop.is_set():
        kind, _, path = rng.choices(kinds, weights)[0]
        answer = call(client, recorder, kind, 'GET', path(rng))
        if kind == 'project list' and answer and answer[0] == 200:
            cursor = json.loads(answer[1]).get('next_cursor')
            if cursor:
                call(client, recorder, 'project list', 'GET',
                     f'{path(rng)}&cursor={quote(cursor)}')
    client.close()


def hostile_client(url: str, token: str, recorder: Recorder, stop: threading.Event) -> None:
    client = KeepAliveClient(url, token, timeout=120)
    while not stop.is_set():
        for name, path in HOSTILE.items():
            if stop.is_set():
                break
            call(client, recorder, f'hostile: {name}', 'GET', path)
    client.close()


# --- the agent -------------------------------------------------------------------------------------

class Agent:
    """State and history pages of a claimed refresh: disjoint pages of keys spread over the
    mirror, each as a new revision (new status, a new comment, ten new change rows an issue)."""

    def __init__(self, url: str, agent_token: str, client_token: str, jira: ScaleJira, seed: int):
        self.client = KeepAliveClient(url, agent_token, timeout=120)
        self.jira = jira
        keys = [f'AURORA-{number}' for number in range(1, jira.count + 1)]
        random.Random(seed).shuffle(keys)
        self.pages = [keys[start:start + PAGE_ISSUES] for start in range(0, len(keys), PAGE_ISSUES)]
        self.sent = 0
        queuing = KeepAliveClient(url, client_token)
        queuing.json('POST', '/batches', {'title': 'Нагрузка', 'author': 'bench', 'commands': [
            {'type': 'refresh', 'params': {'jql': 'project = AURORA'}}]})
        queuing.close()
        claimed = self.client.json('POST', '/agent/claim', {
            'agent': 'jira', 'agent_version': 'bench', 'settings_version': None,
            'last_jira_call_at': None})
        self.command_id = claimed['command']['id']

    def next_bodies(self) -> tuple[bytes, bytes]:
        keys = self.pages[self.sent % len(self.pages)]
        revision = 1 + self.sent // len(self.pages) % 15
        self.sent += 1
        state = {'agent': 'jira', 'command_id': self.command_id,
                 'issues': [self.jira.issue(key, revision) for key in keys]}
        items = [item for key in keys for item in self.jira.history(key, revision)]
        history = {'agent': 'jira', 'command_id': self.command_id, 'items': items}
        return (json.dumps(state, ensure_ascii=False).encode(),
                json.dumps(history, ensure_ascii=False).encode())

    def page(self, recorder: Recorder, phase: str) -> None:
        state, history = self.next_bodies()
        call(self.client, recorder, f'{phase} agent state', 'POST', '/agent/state', state)
        call(self.client, recorder, f'{phase} agent history', 'POST', '/agent/history', history)

    def run(self, recorder: Recorder, stop: threading.Event) -> None:
        while not stop.is_set():
            self.page(recorder, 'loaded')


def health_probe(url: str, recorder: Recorder, stop: threading.Event, kind: str) -> None:
    client = KeepAliveClient(url, 'none', timeout=60)
    while not stop.is_set():
        call(client, recorder, kind, 'GET', '/health')
        stop.wait(HEALTH_EVERY)
    client.close()


def rss_sampler(pid: int, samples: list[int], stop: threading.Event) -> None:
    while not stop.is_set():
        memory = process_memory(pid)
        if memory:
            samples.append(memory['VmRSS'])
        stop.wait(RSS_EVERY)


# --- the run ---------------------------------------------------------------------------------------

def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def prepared_hub(args) -> Path:
    data_dir = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix='bench-load-')) / 'hub'
    if (data_dir / 'hub.sqlite').exists():
        hub = open_hub(data_dir, create=False)
        count = hub.db.execute_sql("SELECT count(*) FROM issue WHERE key LIKE 'AURORA-%'").fetchone()[0]
        hub.close()
        if count != args.issues:
            raise SystemExit(f'{data_dir} holds {count} AURORA issues, not {args.issues}')
        say(f'reusing the mirror in {data_dir}')
        return data_dir
    say(f'building a mirror of {args.issues:,} issues in {data_dir} ...')
    started = time.perf_counter()
    build_hub(data_dir, ScaleJira(args.issues), workers=2, log=say)
    say(f'  built in {time.perf_counter() - started:.0f} s')
    return data_dir


def figures(times: list[float]) -> str:
    if not times:
        return '—'
    return (f'n={len(times):>5}  p50 {percentile(times, 0.5):8.1f}  p95 {percentile(times, 0.95):8.1f}'
            f'  max {max(times):8.1f} ms')


def load_average() -> str:
    """The machine's 1-minute load average and its cores: the other load every figure carries."""
    try:
        return f'{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores'
    except OSError:
        return 'unknown'


def run(args) -> dict:
    data_dir = prepared_hub(args)
    load_before = load_average()
    jira = ScaleJira(args.issues)
    recorder = Recorder()
    with ServerProcess(data_dir, threads=args.threads) as server:
        tokens = server.tokens()
        pid = server.process.pid
        say(f'server {server.url} (pid {pid}), {args.threads} interface threads')
        agent = Agent(server.url, tokens['agent'], tokens['client'], jira, seed=7)
        # idle: the baseline of this run
        prober = KeepAliveClient(server.url, 'none')
        for _ in range(args.idle_samples):
            call(prober, recorder, 'idle /health', 'GET', '/health')
            time.sleep(HEALTH_EVERY)
        prober.close()
        agent.page(recorder, 'warm-up')
        for _ in range(args.idle_pages):
            agent.page(recorder, 'idle')
        rss_before = process_memory(pid)
        say(f'idle: /health {figures(recorder.times["idle /health"])}')
        say(f'idle: agent state {figures(recorder.times["idle agent state"])}')
        # loaded
        stop = threading.Event()
        rss: list[int] = []
        threads = [threading.Thread(target=rss_sampler, args=(pid, rss, stop), daemon=True),
                   threading.Thread(target=health_probe, args=(server.url, recorder, stop,
                                                               'loaded /health'), daemon=True),
                   threading.Thread(target=agent.run, args=(recorder, stop), daemon=True),
                   threading.Thread(target=hostile_client, args=(server.url, tokens['client'],
                                                                 recorder, stop), daemon=True)]
        threads += [threading.Thread(target=interface_client, args=(
            server.url, tokens['client'], recorder, stop, jira, 100 + number), daemon=True)
            for number in range(args.clients - 1)]
        say(f'load: {args.clients} interface clients (one hostile), the agent and the /health '
            f'probe for {args.seconds} s ...')
        started = time.monotonic()
        for thread in threads:
            thread.start()
        time.sleep(args.seconds)
        stop.set()
        for thread in threads:
            thread.join(timeout=max(1.0, 120 - (time.monotonic() - started - args.seconds)))
        time.sleep(2)  # the server settles: what it keeps after the load
        rss_after = process_memory(pid)
        missing = [name for name in HOSTILE if not recorder.times.get(f'hostile: {name}')]
        if missing:  # a short run: each hostile query still gets a figure, on the idle server
            say(f'{len(missing)} hostile queries not reached under load: sent once, idle')
            client = KeepAliveClient(server.url, tokens['client'], timeout=120)
            for name in missing:
                call(client, recorder, f'hostile (idle): {name}', 'GET', HOSTILE[name])
            client.close()
        log = server.log_text()
    return report(args, recorder, rss_before, rss, rss_after, log,
                  (load_before, load_average()))


def report(args, recorder: Recorder, rss_before: dict, rss: list[int], rss_after: dict,
           log: str, machine: tuple[str, str]) -> dict:
    times = recorder.times
    health_p95 = percentile(times['loaded /health'], 0.95) if times['loaded /health'] else None
    ratios = {}
    for kind in ('agent state', 'agent history'):
        idle, loaded = times[f'idle {kind}'], times[f'loaded {kind}']
        if idle and loaded:
            ratios[kind] = percentile(loaded, 0.95) / percentile(idle, 0.95)
    hostile = {}
    for name in HOSTILE:
        kind = f'hostile: {name}' if times.get(f'hostile: {name}') else f'hostile (idle): {name}'
        answers = times.get(kind) or []
        hostile[name] = {'slowest_ms': max(answers) if answers else None, 'answers': len(answers),
                         'statuses': dict(recorder.statuses[kind]),
                         'under_load': kind.startswith('hostile:')}
    print(f'\nbench_load: {args.issues:,} issues, {args.clients} clients (one hostile) + agent, '
          f'{args.seconds} s, {args.threads} interface threads; machine load average '
          f'{machine[0]} before, {machine[1]} after')
    print('\nanswers by kind (ms):')
    for kind in sorted(times):
        statuses = ', '.join(f'{status}×{count}' for status, count in
                             sorted(recorder.statuses[kind].items(), key=str))
        print(f'  {kind:38} {figures(times[kind])}   {statuses}')
    print('\nacceptance:')
    print(f'  /health p95 loaded: {health_p95:.1f} ms (target ≤ 100; idle '
          f'{percentile(times["idle /health"], 0.95):.1f})' if health_p95 is not None else
          '  /health: no answers')
    for kind, ratio in ratios.items():
        print(f'  {kind} p95: {percentile(times[f"loaded {kind}"], 0.95):.1f} ms loaded vs '
              f'{percentile(times[f"idle {kind}"], 0.95):.1f} ms idle = {ratio:.2f}× (target ≤ 2)')
    deliberate = {name: recorder.server_errors[name] for name in DELIBERATE.values()}
    print(f'  5xx: {recorder.server_errors["other"]} other (target 0); deliberate 503: '
          + ', '.join(f'{name} {count}' for name, count in deliberate.items()))
    for example in recorder.examples[:10]:
        print(f'    {example}')
    mib = lambda kib: f'{kib / 1024:.0f} MiB' if kib else '—'  # noqa: E731
    print(f'  RSS: before {mib(rss_before.get("VmRSS"))}, peak {mib(max(rss, default=0))}, after '
          f'{mib(rss_after.get("VmRSS"))} (VmHWM {mib(rss_after.get("VmHWM"))})')
    print(f'  hostile queries (each answered or refused within {HOSTILE_LIMIT_S:.0f} s? FAIL: a 5xx '
          'other than 503, or a dropped connection):')
    for name, found in hostile.items():
        slowest = found['slowest_ms']
        failed = [status for status in found['statuses']
                  if status == 'connection' or (status >= 500 and status != 503)]
        verdict = ('—' if slowest is None else 'FAIL' if failed
                   else 'ok' if slowest <= HOSTILE_LIMIT_S * 1000 else 'SLOW')
        shown = f'{slowest / 1000:6.2f} s' if slowest is not None else '   —   '
        where = '' if found['under_load'] else '  (idle: not reached under load)'
        print(f'    {name:34} slowest {shown}  {verdict:4}  {found["statuses"]}{where}')
    tracebacks = log.count('Traceback')
    print(f'  server log: {tracebacks} tracebacks')
    return {'issues': args.issues, 'seconds': args.seconds, 'clients': args.clients,
            'threads': args.threads,
            'health_p95_ms': health_p95, 'agent_ratios': ratios,
            'agent_p95_ms': {kind: {phase: percentile(times[f'{phase} {kind}'], 0.95)
                                    for phase in ('idle', 'loaded') if times[f'{phase} {kind}']}
                             for kind in ('agent state', 'agent history')},
            'server_errors': dict(recorder.server_errors), 'rss_kib': {
                'before': rss_before.get('VmRSS'), 'peak': max(rss, default=None),
                'after': rss_after.get('VmRSS'), 'hwm': rss_after.get('VmHWM')},
            'hostile': hostile, 'tracebacks': tracebacks, 'load_average': machine,
            'kinds': {kind: {'n': len(values), 'p50': percentile(values, 0.5),
                             'p95': percentile(values, 0.95),
                             'statuses': {str(k): v for k, v in recorder.statuses[kind].items()}}
                      for kind, values in times.items() if values}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--issues', type=int, default=100_000)
    parser.add_argument('--seconds', type=float, default=60)
    parser.add_argument('--clients', type=int, default=16, help='interface clients, one hostile')
    parser.add_argument('--threads', type=int, default=8, help='serve --threads')
    parser.add_argument('--idle-samples', type=int, default=100)
    parser.add_argument('--idle-pages', type=int, default=15)
    parser.add_argument('--data', help='keep (or reuse) the mirror in this directory')
    parser.add_argument('--json', help='write the figures here as JSON')
    args = parser.parse_args(argv)
    if args.clients < 2:
        parser.error('--clients: at least 2 (one of them sends the hostile queries)')
    result = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps(result, ensure_ascii=False, indent=1))
    return 0


if __name__ == '__main__':
    sys.exit(main())
