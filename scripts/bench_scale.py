"""Benchmark: the hub at 200,000 and 1,000,000 issues (issue 13), reads, ingest, migration, memory.

    .venv/bin/python scripts/bench_scale.py --issues 200000 [--keep DIR | --reuse DIR]
        [--changes-per-issue 10] [--json OUT] [--baseline 200k.json]

1. Build: the mirror of ``tests.support.scale.ScaleJira`` (``AURORA-1…N`` plus ``ORBIT`` neighbours,
   five projects of 40 %, 25 %, 15 %, 10 % and 0.5 %, links, comments, attachments, sprints,
   ``--changes-per-issue`` change rows per issue, Russian text) written straight into a hub file;
   ``--keep DIR`` keeps it, ``--reuse DIR`` measures a kept one again without rebuilding.
2. Size of the file (and of its biggest tables), ``open_hub`` time of it, and of a copy that lacks
   the derived tables (slices, full-text index), which open builds; the day's backup, made and
   timed before any server starts (a server that finds none copies the whole file in a thread
   while the reads are measured), linked into the ingest copies and deleted at the end. And what
   this machine charges for touching memory left idle for 2 s (a Firecracker VM: ~100x).
3. Reads over HTTP against a real ``sdlc-hub serve`` (8 threads), one keep-alive client, requests
   taken round-robin, ``--samples`` each in each of ``--rounds`` rounds: the first and a middle page of 500 of the biggest and of
   the smallest project's slice (the middle cursor found by walking the pages once, untimed), an
   issue card of a random key, the first and a middle page of 500 of the change feed, ``/projects``,
   a selective full-text query (a rare word), ``/health`` (the HTTP floor), then in a pass of its
   own the common full-text query (first page of 100; it takes seconds at 1,000,000 and would
   leave the next read on cold memory). The same calls in this process, through hublib alone and
   through the Falcon app (WSGI), split each figure into SQL, Falcon and waitress. A read that
   misses its target gets the EXPLAIN QUERY PLAN of every SELECT it runs and a profile.
4. Ingest, in ``--rounds`` rounds: ``--ingest-pages`` pages of 100 issues re-sent as changed in Jira (``revision=1``: new
   status, a new comment) to ``POST /agent/state`` of a server on one copy of the file, and their
   new history (1,000 items a page) to ``POST /agent/history``; between them, in the same run and
   page by page, raw ``sqlite3.executemany`` of exactly the rows the hub writes (issue upsert, links,
   comments, attachments, sprints, the slice rows, the full-text entries out and in, the refresh's
   written keys; then the change rows) into a second copy. Then more pages in this process:
   through hublib alone, through the Falcon app, and profiled by hublib function.
5. Migration v1 -> v9 of a v1 database of N issues (links, notes; ``tests.support.bulk``).
7. Offline JQL (issue 20), in a pass of its own after the reads: p95 of the first page of 100 of
   five queries (targets 50 ms, the history one 200 ms) and the CSV export of 20,000 issues
   (≤ 3 s, server RSS growing < 50 MB).
6. Memory: VmRSS/VmHWM of the server while ``--readers`` threads (each its own keep-alive
   connection) hit the read endpoints for ``--reader-seconds``; their p50/p95.

Rounds (issue 24): the machine is shared and one run of a figure can be off by 2x either way, so
every read and every ingest ratio is measured in ``--rounds`` rounds (a read's p50 and p95 in each,
a ratio from the HTTP and raw pages of the same round) and reported as min / median / max. A read
meets its target when the median round does; an ingest ratio when the worst round does. A figure is
a named callable measured in rounds: a read is a :class:`Read` added to the plan (its HTTP path and
its hublib call), anything else a ``measure(round) -> {name: value}`` given to :func:`in_rounds`.
Build, open, backup, migration and the concurrent readers are measured once.

Targets (issue 13) at 200,000 issues / 2,000,000 change rows: slice pages p95 <= 40 ms, card
p95 <= 5 ms, selective full-text p95 <= 50 ms, ``/projects`` <= 50 ms, ingest and history <= 2x
raw. At 1,000,000 (``--baseline`` = the 200,000 run's ``--json``): the same reads within 2x of their
200,000 figures, migration v1 -> v9 < 2 min.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Callable
from urllib.parse import quote

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hublib import (backups, history, mirror, open_hub, projects, queue, reads, reports,  # noqa: E402
                    search, settings, slices)
from tests.support.bulk import fill_legacy_database  # noqa: E402
from tests.support.scale import (BIGGEST, COMMON_WORD, RARE_WORDS, RAW_DELETE_BY_KEY,  # noqa: E402
                                 RAW_INSERT, RAW_INSERT_CHANGE, SMALLEST, ScaleJira, build_hub,
                                 state_rows)
from tests.support.server import ServerProcess  # noqa: E402
from tests.support.timing import (KeepAliveClient, p50, percentile, process_memory,  # noqa: E402
                                  query_plans)

MANIFEST = 'scale.json'
DB = 'hub.sqlite'
PAGE_ISSUES = 100
DERIVED = ('issue_member', 'issue_search', 'issue_fts')
READ_TARGETS_MS = {'slice': 40.0, 'card': 5.0, 'text-rare': 50.0, 'projects': 50.0,
                   'text-common': 100.0}
RATIO_TARGET = 2.0
MIGRATION_TARGET_S = 120.0
SCALE_FACTOR = 2.0


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def mib(size: int) -> str:
    return f'{size / 2**20:,.0f} MiB'


# --- rounds ----------------------------------------------------------------------------------------

@dataclass
class Spread:
    """One figure measured in rounds: its value in each round, and their min / median / max."""

    values: list[float]

    @property
    def min(self) -> float:
        return min(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def max(self) -> float:
        return max(self.values)

    def text(self, digits: int = 1, unit: str = '') -> str:
        """``min / median / max`` (one value alone when there was one round)."""
        if len(self.values) == 1:
            return f'{self.values[0]:.{digits}f}{unit}'
        return ' / '.join(f'{value:.{digits}f}' for value in (self.min, self.median, self.max)) + unit

    def as_json(self) -> dict:
        return {'min': self.min, 'median': self.median, 'max': self.max, 'values': self.values}


def in_rounds(rounds: int, measure: Callable[[int], dict[str, float]]) -> dict[str, Spread]:
    """``measure(round)`` ``rounds`` times; each figure it returns by name, as its spread."""
    values: dict[str, list[float]] = {}
    for number in range(rounds):
        for name, value in measure(number).items():
            values.setdefault(name, []).append(value)
    return {name: Spread(figures) for name, figures in values.items()}


def median_of(figure: object) -> float:
    """A figure of this run (Spread), of a ``--json`` of it (its dict) or of an older one (float)."""
    if isinstance(figure, Spread):
        return figure.median
    return figure['median'] if isinstance(figure, dict) else figure


# --- 1. build or reuse -----------------------------------------------------------------------------

def table_sizes(path: Path) -> dict[str, int]:
    """Bytes per table, its indexes included (dbstat), biggest first."""
    conn = sqlite3.connect(f'file:{path}?mode=ro', uri=True)
    try:
        owner = dict(conn.execute('SELECT name, tbl_name FROM sqlite_master'))
        sizes: dict[str, int] = {}
        for name, size in conn.execute('SELECT name, sum(pgsize) FROM dbstat GROUP BY name'):
            table = owner.get(name, name)
            if table.startswith('issue_fts'):
                table = 'issue_fts'
            sizes[table] = sizes.get(table, 0) + size
    finally:
        conn.close()
    return dict(sorted(sizes.items(), key=lambda item: -item[1]))


def prepare_data(args, root: Path) -> tuple[Path, dict]:
    if args.reuse:
        data_dir = Path(args.reuse)
        manifest = json.loads((data_dir / MANIFEST).read_text())
        if (manifest['issues'], manifest['changes_per_issue']) != (args.issues,
                                                                  args.changes_per_issue):
            raise SystemExit(f'{data_dir} holds {manifest["issues"]} issues x '
                             f'{manifest["changes_per_issue"]} changes, not what was asked')
        say(f'reusing {data_dir} (built in {manifest["build"]["total"]:.0f} s)')
        return data_dir, manifest
    data_dir = Path(args.keep) if args.keep else root / 'hub'
    if (data_dir / DB).exists():
        raise SystemExit(f'{data_dir} already holds a hub: use --reuse')
    say(f'building {args.issues:,} issues into {data_dir} ...')
    jira = ScaleJira(args.issues, seed=args.seed, changes_per_issue=args.changes_per_issue)
    timings = build_hub(data_dir, jira, workers=args.workers, log=say)
    manifest = {'issues': args.issues, 'seed': args.seed,
                'changes_per_issue': args.changes_per_issue, 'build': timings,
                'tables': table_sizes(data_dir / DB)}
    (data_dir / MANIFEST).write_text(json.dumps(manifest, indent=1))
    return data_dir, manifest


def open_seconds(data_dir: Path) -> tuple[float, object]:
    started = time.perf_counter()
    hub = open_hub(data_dir, create=False)
    elapsed = time.perf_counter() - started
    return elapsed, hub


def measure_backup(data_dir: Path) -> tuple[float, Path]:
    """Seconds of the regular backup a serving hub makes once a day, and its file.

    Made here, timed, before any server starts: a server that finds no backup of the day copies
    the whole file in a thread right after it starts (7 GB at 1,000,000 issues, minutes), and
    every read measured meanwhile would pay for it. The caller deletes the file at the end.
    """
    hub = open_hub(data_dir, create=False)
    try:
        started = time.perf_counter()
        path = backups.backup(hub)
        return time.perf_counter() - started, path
    finally:
        hub.close()


def tomorrows_name(backup: Path) -> Path:
    """The same backup under the name of the next UTC day's first second: a run that crosses
    midnight would otherwise see its server copy the whole file (minutes at 1,000,000) while it
    measures."""
    day = datetime.strptime(backup.name[:8], '%Y%m%d') + timedelta(days=1)
    return backup.with_name(day.strftime('%Y%m%d-000000') + backup.suffix)


def copy_hub(source: Path, target: Path, todays_backup: Path) -> None:
    """A copy of a closed hub's directory (its file checkpointed: no WAL to carry), with the
    day's backup linked in (as today's and tomorrow's) so that a server on the copy makes none."""
    target.mkdir(parents=True)
    for name in ('backups', 'files'):
        (target / name).mkdir(mode=0o700)
    shutil.copyfile(source / DB, target / DB)
    for name in (todays_backup.name, tomorrows_name(todays_backup).name):
        os.link(todays_backup, target / 'backups' / name)


def cache_alike(copies: tuple[Path, ...], others: tuple[Path, ...] = (),
                chunk: int = 64 * 2**20) -> dict[str, float]:
    """Give the ``copies`` the same share of the OS page cache: drop them and ``others`` (files
    the measurement does not read: the source, the day's backup) from it, then read the copies in
    turns, a chunk of each at a time; the share of each that stayed cached (Linux; elsewhere
    nothing is done).

    The raw copy is made second, so it used to sit in the cache while the first was pushed out:
    at 1,000,000 (7.5 GB each, 23 GB of RAM) the HTTP side's copy had 0.8 GB cached, the raw
    side's 6.6 GB, and the HTTP side read from disk what raw read from memory."""
    if not hasattr(os, 'posix_fadvise'):
        return {}
    handles = [open(path, 'rb') for path in (*copies, *others) if path.exists()]
    try:
        for handle in handles:
            os.fsync(handle.fileno())  # only clean pages can be dropped
            os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        reading = handles[:len(copies)]
        while reading:
            reading = [handle for handle in reading if handle.read(chunk)]
    finally:
        for handle in handles:
            handle.close()
    return {path.parent.name: cached_share(path) for path in copies}


def cached_share(path: Path) -> float:
    """The share of ``path`` in the OS page cache (mincore over a read-only map; Linux)."""
    import ctypes
    import mmap
    size = path.stat().st_size
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long)
    libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
    libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p)
    with open(path, 'rb') as handle:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, handle.fileno(), 0)
        if address in (None, ctypes.c_void_p(-1).value):
            return float('nan')
        try:
            vector = ctypes.create_string_buffer(pages)
            if libc.mincore(address, size, vector) != 0:
                return float('nan')
            return (pages - vector.raw.count(0)) / pages  # a resident page's byte is 1
        finally:
            libc.munmap(address, size)


def process_cpu(pid: int | None) -> float:
    """Seconds of CPU process ``pid`` has used, all its threads: the scheduler's nanoseconds
    (``/proc/PID/task/*/schedstat``), else clock ticks (``/proc/PID/stat``); 0 off Linux."""
    if pid is None:
        return 0.0
    try:
        tasks = os.listdir(f'/proc/{pid}/task')
    except OSError:
        return 0.0
    total = 0
    try:
        for task in tasks:
            try:
                total += int(Path(f'/proc/{pid}/task/{task}/schedstat').read_text().split()[0])
            except FileNotFoundError:  # a thread that ended
                pass
        return total / 1e9
    except (OSError, ValueError, IndexError):
        fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def drop_derived(data_dir: Path) -> None:
    conn = sqlite3.connect(str(data_dir / DB))
    try:
        for table in DERIVED:
            conn.execute(f'DROP TABLE IF EXISTS {table}')
        conn.execute('DROP VIEW IF EXISTS issue_fts_source')
        conn.commit()
    finally:
        conn.close()


# --- 3. reads --------------------------------------------------------------------------------------

@dataclass
class Read:
    """A read of the report: its HTTP request and the same call through hublib; a section adds
    its own reads to the plan (``plan.append(Read(...))``) and they are measured in rounds."""
    name: str
    kind: str                       # key of READ_TARGETS_MS or SLOW_KINDS, or '' (no target)
    path: Callable[[], str]         # the HTTP request (may pick a random key)
    call: Callable[[object], object]  # the same through hublib
    target: float | None = None     # p95 ms, instead of the kind's


def walk_cursors(client: KeepAliveClient, path: str, key: str = 'next_cursor') -> list[str]:
    """Every page cursor of a collection, first page's excluded (untimed)."""
    cursors, cursor = [], None
    while True:
        page = client.json('GET', path + (f'&cursor={cursor}' if cursor else ''))
        cursor = page[key]
        if cursor is None:
            return cursors
        cursors.append(cursor)


def middle_change_cursor(data_dir: Path, client: KeepAliveClient) -> str:
    conn = sqlite3.connect(f'file:{data_dir / DB}?mode=ro', uri=True)
    try:
        total = conn.execute('SELECT count(*) FROM issue_change WHERE at IS NOT NULL').fetchone()[0]
        middle = conn.execute('SELECT at FROM issue_change WHERE at IS NOT NULL ORDER BY at '
                              'LIMIT 1 OFFSET ?', (total // 2,)).fetchone()[0]
    finally:
        conn.close()
    return client.json('GET', f'/changes?since={quote(middle)}&limit=500')['next_cursor']


def define_reads(data_dir: Path, client: KeepAliveClient, jira: ScaleJira,
                 rng: random.Random) -> list[Read]:
    say('walking the slices once for their middle cursors ...')
    middle = {}
    for label in (BIGGEST, SMALLEST):
        cursors = walk_cursors(client, f'/issues?project={label}&limit=500')
        middle[label] = cursors[len(cursors) // 2] if cursors else None
        say(f'  {label}: {len(cursors) + 1} pages of 500')
    change_cursor = middle_change_cursor(data_dir, client)
    keys = jira.keys()
    card_key = {'key': keys[0]}

    def card_path() -> str:
        card_key['key'] = rng.choice(keys)
        return f'/issues/{card_key["key"]}'

    result = []
    for label in (BIGGEST, SMALLEST):
        result.append(Read(f'slice {label}, first page of 500', 'slice',
                           lambda label=label: f'/issues?project={label}&limit=500',
                           lambda hub, label=label: reads.issues(hub, project=label, limit=500)))
        if middle[label]:
            result.append(Read(
                f'slice {label}, middle page of 500', 'slice',
                lambda label=label: f'/issues?project={label}&limit=500&cursor={middle[label]}',
                lambda hub, label=label: reads.issues(hub, project=label, limit=500,
                                                      cursor=middle[label])))
    result += [
        Read('issue card, random key', 'card', card_path,
             lambda hub: reads.issue_card(hub, rng.choice(keys))),
        Read('changes feed, first page of 500', '', lambda: '/changes?limit=500',
             lambda hub: reads.change_feed(hub, limit=500)),
        Read('changes feed, middle page of 500', '',
             lambda: f'/changes?limit=500&cursor={change_cursor}',
             lambda hub: reads.change_feed(hub, limit=500, cursor=change_cursor)),
        Read('GET /projects', 'projects', lambda: '/projects', projects.projects),
        Read(f'text={RARE_WORDS[0]} (selective)', 'text-rare',
             lambda: f'/issues?text={quote(RARE_WORDS[0])}&limit=100',
             lambda hub: reads.issues(hub, text=RARE_WORDS[0], limit=100)),
        Read(f'text={RARE_WORDS[0]}&project={BIGGEST}', '',
             lambda: f'/issues?text={quote(RARE_WORDS[0])}&project={BIGGEST}&limit=100',
             lambda hub: reads.issues(hub, text=RARE_WORDS[0], project=BIGGEST, limit=100)),
        Read(f'text={COMMON_WORD} (common), first 100', 'text-common',
             lambda: f'/issues?text={quote(COMMON_WORD)}&limit=100',
             lambda hub: reads.issues(hub, text=COMMON_WORD, limit=100)),
        Read('all issues, first page of 500', '', lambda: '/issues?limit=500',
             lambda hub: reads.issues(hub, limit=500)),
        Read('GET /health (the HTTP floor: no database)', 'floor', lambda: '/health',
             lambda hub: None),
    ]
    return result


SLOW_KINDS = ('text-common',)  # a second or more at 1,000,000: sampled in a pass of their own


def measure_reads(client: KeepAliveClient, plan: list[Read], samples: int, rounds: int,
                  budget: float, pid: int | None = None) -> dict[str, dict]:
    """Every read's p50 and p95 in each of ``rounds`` rounds (:func:`sample_reads`), as spreads;
    ``budget`` seconds for a read in all rounds."""
    for read in plan:  # warm-up: page cache, statement caches
        client.timed('GET', read.path())
    last: dict[str, dict] = {}

    def one_round(number: int) -> dict[str, float]:
        say(f'  round {number + 1} of {rounds} ...')
        figures = sample_reads(client, plan, samples, budget / rounds, pid)
        last.update(figures)
        return {f'{name}\t{which}': figure[which] for name, figure in figures.items()
                for which in ('p50', 'p95', 'n', 'cpu')}
    spreads = in_rounds(rounds, one_round)
    return {read.name: {'p50': spreads[f'{read.name}\tp50'], 'p95': spreads[f'{read.name}\tp95'],
                        'n': int(sum(spreads[f'{read.name}\tn'].values)), 'rounds': rounds,
                        'cpu': spreads[f'{read.name}\tcpu'],
                        'items': last[read.name]['items'], 'bytes': last[read.name]['bytes']}
            for read in plan}


def sample_reads(client: KeepAliveClient, plan: list[Read], samples: int,
                 budget: float, pid: int | None = None) -> dict[str, dict]:
    """One round: round-robin over the reads, then the slow ones in a pass of their own; a read
    slower than ``budget`` seconds in all stops early (at 10 samples at least). With the
    server's ``pid``, also the mean CPU the server process spent on each read (on a shared
    machine the wall time also holds the time spent waiting for a core).

    The slow ones are kept out of the rotation because on a VM that hands idle memory back to
    its host (see :func:`idle_memory_penalty`) the read after a 2-second one pays for touching
    cold memory again, which is the machine's cost, not that read's.
    """
    timings: dict[str, list[float]] = {read.name: [] for read in plan}
    cpu: dict[str, float] = {read.name: 0.0 for read in plan}
    items: dict[str, int] = {}
    sizes: dict[str, int] = {}
    fast = [read for read in plan if read.kind not in SLOW_KINDS]
    slow = [read for read in plan if read.kind in SLOW_KINDS]
    for rotation in ([fast] * samples) + [[read] for read in slow for _ in range(samples)]:
        for read in rotation:
            if len(timings[read.name]) >= 10 and sum(timings[read.name]) > budget * 1000:
                continue
            path = read.path()
            before = process_cpu(pid)
            ms, status, body = client.timed('GET', path)
            cpu[read.name] += process_cpu(pid) - before
            if status != 200:
                raise SystemExit(f'GET {path}: HTTP {status} {body[:300]!r}')
            timings[read.name].append(ms)
            sizes[read.name] = len(body)
            answer = json.loads(body)
            items[read.name] = len(answer['items']) if isinstance(answer, dict) and 'items' in \
                answer else (len(answer) if isinstance(answer, list) else 1)
    return {name: {'p50': p50(values), 'p95': percentile(values, 0.95), 'n': len(values),
                   'cpu': cpu[name] * 1000 / max(len(values), 1),
                   'items': items.get(name), 'bytes': sizes.get(name)}
            for name, values in timings.items()}


def idle_memory_penalty(size: int = 64 * 2**20, pause: float = 2.0) -> tuple[float, float]:
    """Milliseconds to touch ``size`` bytes of this process's memory hot, and again after
    ``pause`` idle seconds. Equal on a plain machine; on a VM that reports free pages to its host
    (Firecracker here) the second is ~10x: every read after an idle or a slow moment pays it."""
    memory = bytearray(size)

    def touch() -> float:
        started = time.perf_counter()
        for offset in range(0, size, 4096):
            memory[offset] = 1
        return (time.perf_counter() - started) * 1000
    touch()
    hot = min(touch() for _ in range(3))
    time.sleep(pause)
    return hot, touch()


def wsgi_client(hub, token: str):
    """The hub's Falcon app in this process (no socket, no waitress)."""
    from falcon import testing

    from hubweb.app import create_app
    return testing.TestClient(create_app(hub), headers={'Authorization': f'Bearer {token}'})


def in_process_reads(hub, token: str, plan: list[Read], samples: int = 15,
                     budget: float = 30.0) -> dict[str, dict[str, float]]:
    """p50 of each read called through hublib alone, and through the Falcon app (WSGI)."""
    client = wsgi_client(hub, token)
    result = {}
    for read in plan:
        figures = {}
        for way, call in (('hublib', lambda: read.call(hub)),
                          ('wsgi', lambda: client.simulate_get(read.path()))):
            call()
            values = []
            while len(values) < samples and sum(values) < budget * 1000:
                started = time.perf_counter()
                call()
                values.append((time.perf_counter() - started) * 1000)
            figures[way] = p50(values)
        result[read.name] = figures
    return result


def explain(hub, read: Read) -> list[str]:
    """EXPLAIN QUERY PLAN of every SELECT the read runs, and its profile's top lines."""
    lines = [f'#### {read.name}']
    for sql, plan in query_plans(hub.db.connection(), lambda: read.call(hub)):
        lines += ['```sql', sql if len(sql) < 3000 else sql[:3000] + ' …', '```', '```', *plan, '```']
    gc.collect()
    profile = cProfile.Profile()
    profile.enable()
    read.call(hub)
    profile.disable()
    lines += ['```', 'profile of one call (own time):', *profile_top(profile, 12), '```']
    return lines


def profile_top(profile: cProfile.Profile, count: int) -> list[str]:
    stats = pstats.Stats(profile)
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:count]  # by tottime
    total = sum(value[2] for value in stats.stats.values()) or 1
    return [f'{tottime * 1000:9.1f} ms {tottime / total:5.0%}  {calls:>7} calls  '
            f'{Path(file).name}:{line} {name}'
            for (file, line, name), (_, calls, tottime, _, _) in rows]


# --- 4. ingest -------------------------------------------------------------------------------------

def ingest_pages(jira: ScaleJira, count: int, rng: random.Random) -> list[list[str]]:
    """``count`` pages of 100 consecutive AURORA keys, from starts spread over the mirror."""
    stride = max(PAGE_ISSUES, jira.count // count)
    starts = [1 + index * stride + rng.randrange(max(1, stride - PAGE_ISSUES))
              for index in range(count)]
    return [[f'AURORA-{n}' for n in range(start, min(start + PAGE_ISSUES, jira.count + 1))]
            for start in starts if start <= jira.count]


def fold(text: str | None) -> str | None:
    return text.replace('ё', 'е').replace('Ё', 'Е') if text is not None else None


def raw_state_page(conn: sqlite3.Connection, issues: list[dict], members: list[tuple],
                   command_id: int) -> tuple[Callable[[], None], dict]:
    """The rows the hub writes for a state page, prepared; returns the timed writer."""
    keys = [(issue['key'],) for issue in issues]
    rows = state_rows(issues)
    docs = conn.execute(
        'SELECT s.docid, s.summary, s.description, s.comments FROM issue_fts_source s '
        'WHERE s.docid IN (SELECT docid FROM issue_search WHERE key IN (SELECT value FROM '
        'json_each(?)))', (json.dumps([key for (key,) in keys]),)).fetchall()
    docid = dict(conn.execute('SELECT key, docid FROM issue_search WHERE key IN (SELECT value '
                              'FROM json_each(?))', (json.dumps([k for (k,) in keys]),)))
    new_docs = [(docid[issue['key']], fold(issue['summary']), fold(issue['description']),
                 '\n'.join(fold(c['body']) for c in sorted(issue['comments'],
                                                           key=lambda c: c['id'])))
                for issue in issues]
    written = [(command_id, key) for (key,) in keys]

    def write() -> None:
        conn.execute('BEGIN IMMEDIATE')
        conn.executemany(search.DELETE_DOCUMENT, docs)
        conn.executemany(RAW_INSERT['issue'], rows['issue'])
        for table in ('issue_link', 'issue_comment', 'issue_attachment', 'issue_sprint'):
            conn.executemany(RAW_DELETE_BY_KEY[table], keys)
            conn.executemany(RAW_INSERT[table], rows[table])
        conn.executemany('DELETE FROM issue_member WHERE key = ?', keys)
        conn.executemany(slices.PUT_MEMBER, members)
        conn.executemany(search.INSERT_DOCUMENT, new_docs)
        conn.executemany(mirror.INSERT_WRITTEN, written)
        conn.execute('COMMIT')
    return write, {table: len(value) for table, value in rows.items()}


def claimed_refresh(data_dir: Path) -> int:
    hub = open_hub(data_dir, create=False)
    try:
        queue.create_batch(hub, title='Бенчмарк масштаба', author='bench', commands=[
            {'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}}])
        command = queue.claim_command(hub, agent='jira', agent_version='bench',
                                      settings_version=None)['command']
        assert command and command['type'] == 'refresh', command
        return command['id']
    finally:
        hub.close()


def measure_ingest(args, data_dir: Path, root: Path, jira: ScaleJira, rng: random.Random,
                   todays_backup: Path) -> dict:
    result: dict = {}
    http_dir, raw_dir = root / 'ingest-http', root / 'ingest-raw'
    say('copying the database twice for the ingest ...')
    started = time.perf_counter()
    copy_hub(data_dir, http_dir, todays_backup)
    result['copy_seconds'] = time.perf_counter() - started
    if 'rebuild' not in args.skip.split(','):  # 40 min at 1,000,000 on a loaded machine
        drop_derived(http_dir)
        seconds, hub = open_seconds(http_dir)
        hub.close()
        result['open_without_derived'] = seconds
    copy_hub(data_dir, raw_dir, todays_backup)
    command_id = claimed_refresh(http_dir)
    raw_command_id = claimed_refresh(raw_dir)
    say('the two copies in the page cache alike ...')
    result['cached'] = cache_alike((http_dir / DB, raw_dir / DB), (data_dir / DB, todays_backup))
    rounds = args.rounds
    # Disjoint pages for every round (each a page of keys spread over the mirror), so every round
    # sends revision 1 of issues it has not sent yet: the same work in each.
    every_page = ingest_pages(jira, args.ingest_pages * rounds, rng)
    round_pages = [every_page[number::rounds] for number in range(rounds)]
    say(f'ingest: {rounds} rounds of {len(round_pages[0])} state pages of {PAGE_ISSUES} and their '
        'history ...')
    raw = sqlite3.connect(str(raw_dir / DB), isolation_level=None)
    raw.execute('PRAGMA synchronous = normal')
    raw.execute('PRAGMA busy_timeout = 15000')
    watch = sqlite3.connect(f'file:{http_dir / DB}?mode=ro', uri=True)
    rows_written: dict = {}
    with ServerProcess(http_dir, threads=8) as server:
        client = KeepAliveClient(server.url, server.tokens()['agent'])

        def one_round(number: int) -> dict[str, float]:
            pages = round_pages[number]
            state_bodies, history_bodies, issue_pages, change_pages = [], [], [], []
            for keys in pages:
                issues = [jira.issue(key, revision=1) for key in keys]
                items = [item for key in keys for item in jira.history(key, revision=1)]
                issue_pages.append(issues)
                change_pages.append([row for key in keys for row in
                                     jira.change_rows(int(key.split('-')[1]), revision=1)])
                state_bodies.append(json.dumps({'agent': 'jira', 'command_id': command_id,
                                                'issues': issues}, ensure_ascii=False).encode())
                history_bodies.append(json.dumps({'agent': 'jira', 'command_id': command_id,
                                                  'items': items}, ensure_ascii=False).encode())
            say(f'  round {number + 1} of {rounds} ...')
            http_state, raw_state, http_history, raw_history = [], [], [], []
            http_cpu = raw_cpu = 0.0
            for index, (keys, body) in enumerate(zip(pages, state_bodies)):
                ms, status, data = client.timed('POST', '/agent/state', body)
                assert status == 200, (status, data[:500])
                http_state.append(ms)
                members = watch.execute(
                    'SELECT label, key, sort_key, neighbor FROM issue_member WHERE key IN '
                    '(SELECT value FROM json_each(?))', (json.dumps(keys),)).fetchall()
                write, counts = raw_state_page(raw, issue_pages[index], members, raw_command_id)
                rows_written.update(counts)
                started = time.perf_counter()
                write()
                raw_state.append((time.perf_counter() - started) * 1000)
                cpu = process_cpu(server.process.pid)
                ms, status, data = client.timed('POST', '/agent/history', history_bodies[index])
                http_cpu += process_cpu(server.process.pid) - cpu
                assert status == 200 and json.loads(data)['inserted'] == len(change_pages[index]), \
                    (status, data[:500])
                http_history.append(ms)
                started, cpu = time.perf_counter(), time.thread_time()
                raw.execute('BEGIN IMMEDIATE')
                raw.executemany(RAW_INSERT_CHANGE, change_pages[index])
                raw.execute('COMMIT')
                raw_history.append((time.perf_counter() - started) * 1000)
                raw_cpu += time.thread_time() - cpu
            return {'http_state': sum(http_state) / 1000, 'raw_state': sum(raw_state) / 1000,
                    'state_ratio': sum(http_state) / sum(raw_state),
                    'http_state_p50': p50(http_state), 'raw_state_p50': p50(raw_state),
                    'http_history': sum(http_history) / 1000,
                    'raw_history': sum(raw_history) / 1000,
                    'history_ratio': sum(http_history) / sum(raw_history),
                    'http_history_p50': p50(http_history), 'raw_history_p50': p50(raw_history),
                    'http_history_cpu': http_cpu * 1000 / len(pages),
                    'raw_history_cpu': raw_cpu * 1000 / len(pages),
                    'history_rows': sum(len(page) for page in change_pages)}
        result.update(in_rounds(rounds, one_round))
        client.close()
    watch.close()
    raw.close()
    result.update(pages=len(round_pages[0]), rounds=rounds, rows_per_page=rows_written)
    result['profile'] = profile_ingest(http_dir, jira, round_pages[0], command_id)
    shutil.rmtree(http_dir, ignore_errors=True)
    shutil.rmtree(raw_dir, ignore_errors=True)
    return result


# What a page's time is spent on, by function (cumulative), in the order ingest does it.
STATE_PARTS = (('JSON decode', 'json/__init__.py', 'loads'),
               ('validation (validate_issues)', 'hublib/mirror.py', 'validate_issues'),
               ('rows (_rows)', 'hublib/mirror.py', '_rows'),
               ('slices.related_keys', 'hublib/slices.py', 'related_keys'),
               ('search.unindex', 'hublib/search.py', 'unindex'),
               ('slices.refresh_members', 'hublib/slices.py', 'refresh_members'),
               ('search.index', 'hublib/search.py', 'index'),
               ('the whole ingest_state', 'hublib/mirror.py', 'ingest_state'))
HISTORY_PARTS = (('JSON decode, typed (msgspec)', '~', '<built-in method msgspec._core.json_decode>'),
                 ('validation and columns (page_columns)', 'hublib/history.py', 'page_columns'),
                 ('settings.setting', 'hublib/settings.py', 'setting'),
                 ('time to UTC (mirror.utc)', 'hublib/timeutil.py', 'to_utc'),
                 ('the whole ingest_history', 'hublib/history.py', 'ingest_history'))


def cumulative(stats: pstats.Stats, file_end: str, function: str) -> float:
    return sum(value[3] for (file, _, name), value in stats.stats.items()
               if name == function and file.replace(os.sep, '/').endswith(file_end))


def direct_executemany(stats: pstats.Stats, caller_end: str, caller: str) -> float:
    total = 0.0
    for (file, _, name), value in stats.stats.items():
        if 'executemany' in name and 'sqlite3' in name:
            for (cfile, _, cname), timing in value[4].items():
                if cname == caller and cfile.replace(os.sep, '/').endswith(caller_end):
                    total += timing[3]
    return total


def profile_ingest(http_dir: Path, jira: ScaleJira, pages: list[list[str]],
                   command_id: int) -> dict:
    """The same kind of pages (later revisions of the same keys) in this process: through hublib
    alone, through the Falcon app (WSGI, no socket), and profiled by hublib function."""
    hub = open_hub(http_dir, create=False)
    sample = pages[:10]

    def bodies(revision: int) -> tuple[list[bytes], list[bytes]]:
        state = [json.dumps({'agent': 'jira', 'command_id': command_id, 'issues':
                             [jira.issue(key, revision=revision) for key in keys]},
                            ensure_ascii=False).encode() for keys in sample]
        changes = [json.dumps({'agent': 'jira', 'items': [
            item for key in keys for item in jira.history(key, revision=revision)]},
            ensure_ascii=False).encode() for keys in sample]
        return state, changes

    def state_call(body: bytes) -> None:
        data = json.loads(body)
        mirror.ingest_state(hub, data['agent'], data['command_id'], data['issues'])

    def history_call(body: bytes) -> None:
        # as hubweb decodes the agent's usual page: typed, in one pass
        page = msgspec.json.decode(body, type=history.HistoryPage)
        history.ingest_history(hub, page.agent, None, page.items)

    def per_page(call, items: list[bytes]) -> float:
        started = time.perf_counter()
        for body in items:
            call(body)
        return (time.perf_counter() - started) * 1000 / len(items)

    try:
        result: dict = {}
        state, changes = bodies(2)
        result['state_hublib_ms'] = per_page(state_call, state)
        result['history_hublib_ms'] = per_page(history_call, changes)
        client = wsgi_client(hub, settings.tokens(hub)['agent'])
        state, changes = bodies(3)
        result['state_wsgi_ms'] = per_page(
            lambda body: client.simulate_post('/agent/state', body=body,
                                              content_type='application/json'), state)
        result['history_wsgi_ms'] = per_page(
            lambda body: client.simulate_post('/agent/history', body=body,
                                              content_type='application/json'), changes)
        state, changes = bodies(6)
        for name, path, items in (('state', '/agent/state', state),
                                  ('history', '/agent/history', changes)):
            gc.collect()
            profile = cProfile.Profile()
            profile.enable()
            for body in items:
                client.simulate_post(path, body=body, content_type='application/json')
            profile.disable()
            result[f'{name}_wsgi_top'] = profile_top(profile, 12)
        state, changes = bodies(4)
        for name, call, items, parts, caller in (
                ('state', state_call, state, STATE_PARTS, ('hublib/mirror.py', 'ingest_state')),
                ('history', history_call, changes, HISTORY_PARTS,
                 ('hublib/history.py', 'ingest_history'))):
            gc.collect()
            profile = cProfile.Profile()
            profile.enable()
            for body in items:
                call(body)
            profile.disable()
            stats = pstats.Stats(profile)
            breakdown = {part: cumulative(stats, end, function) * 1000 / len(items)
                         for part, end, function in parts}
            breakdown['executemany called by ' + caller[1]] = \
                direct_executemany(stats, *caller) * 1000 / len(items)
            result[f'{name}_parts'] = breakdown
            result[f'{name}_top'] = profile_top(profile, 15)
        result['state_plans'] = query_plans(hub.db.connection(), lambda: mirror.ingest_state(
            hub, 'jira', command_id, [jira.issue(key, revision=5) for key in pages[-1]]))
    finally:
        hub.close()
    return result


# --- 5. migration ----------------------------------------------------------------------------------

def measure_migration(issues: int, root: Path) -> dict:
    data_dir = root / 'legacy-v1'
    data_dir.mkdir()
    say(f'migration: filling a v1 database of {issues:,} issues ...')
    started = time.perf_counter()
    counts = fill_legacy_database(data_dir / DB, 1, issues=issues)
    fill = time.perf_counter() - started
    size = (data_dir / DB).stat().st_size
    say('migration: open_hub (v1 -> v9) ...')
    seconds, hub = open_seconds(data_dir)
    version = hub.db.execute_sql("SELECT value FROM setting WHERE key = 'schema_version'").fetchone()
    hub.close()
    shutil.rmtree(data_dir, ignore_errors=True)
    return {'seconds': seconds, 'fill': fill, 'size': size, 'counts': counts,
            'version': version[0]}


# --- 6. memory under concurrent readers ------------------------------------------------------------

def concurrent_readers(url: str, token: str, pid: int, plan: list[Read], readers: int,
                       seconds: float) -> dict:
    # not the common text (a second each at 1,000,000: no reader's query) nor the floor
    light = [read for read in plan if read.kind not in ('text-common', 'floor')]
    timings: dict[str, list[float]] = {read.name: [] for read in light}
    errors: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    before = process_memory(pid)
    peak = {'VmRSS': before.get('VmRSS', 0)}

    def reader(index: int) -> None:
        client = KeepAliveClient(url, token)
        order = light[index % len(light):] + light[:index % len(light)]
        try:
            while time.monotonic() < deadline:
                for read in order:
                    ms, status, body = client.timed('GET', read.path())
                    with lock:
                        if status == 200:
                            timings[read.name].append(ms)
                        else:
                            errors.append(f'{read.name}: {status} {body[:200]!r}')
                    if time.monotonic() >= deadline:
                        break
        except Exception as error:  # noqa: BLE001 - counted and shown, never hidden
            with lock:
                errors.append(f'{type(error).__name__}: {error}')
        finally:
            client.close()

    threads = [threading.Thread(target=reader, args=(index,), daemon=True)
               for index in range(readers)]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        time.sleep(0.5)
        peak['VmRSS'] = max(peak['VmRSS'], process_memory(pid).get('VmRSS', 0))
    after = process_memory(pid)
    every = [value for values in timings.values() for value in values]
    return {'before': before, 'after': after, 'peak_rss': peak['VmRSS'], 'errors': errors[:10],
            'requests': len(every), 'seconds': seconds,
            'p50': p50(every) if every else None, 'p95': percentile(every, 0.95) if every else None,
            'by_read': {name: {'p50': p50(values), 'p95': percentile(values, 0.95),
                               'n': len(values)} for name, values in timings.items() if values}}


# --- reports from the change history (issue 21) ----------------------------------------------------
# A self-contained section: its own server, its own rows. Targets at 200,000 issues / 2,000,000
# change rows: the sprint report of a sprint of at least 300 issues p95 <= 100 ms; flow over 90
# days and cycle time over 90 days of a project of about 20,000 own issues p95 <= 1 s each.

REPORT_TARGETS_MS = {'sprint report': 100.0, 'flow': 1000.0, 'cycle time': 1000.0}
REPORT_SPRINT_ISSUES = 300
REPORT_PROJECT_ISSUES = 20_000
REPORT_DAYS = 90


def report_subjects(data_dir: Path) -> dict:
    """The sprint (closed, the fewest issues among those with at least 300, else the biggest), the
    projects (the one
    nearest 20,000 own issues and the one nearest of those with a board) and the 90-day window
    ending with the mirror's last day of history."""
    conn = sqlite3.connect(f'file:{data_dir / DB}?mode=ro', uri=True)
    try:
        sprint = conn.execute(
            'SELECT p.label, s.sprint_id, count(*) AS n FROM jira_sprint s '
            'JOIN jira_project p ON p.board_id = s.board_id '
            'JOIN issue_sprint i ON i.sprint_id = s.sprint_id WHERE s.state = ? '
            'GROUP BY s.sprint_id ORDER BY n < ?, CASE WHEN n >= ? THEN n ELSE -n END, s.sprint_id '
            'LIMIT 1', ('closed', REPORT_SPRINT_ISSUES, REPORT_SPRINT_ISSUES)).fetchone()
        sizes = conn.execute('SELECT c.label, c.own_count, p.board_id FROM slice_count c '
                             'JOIN jira_project p ON p.label = c.label').fetchall()
        last = conn.execute('SELECT max(at) FROM issue_change').fetchone()[0]
    finally:
        conn.close()
    by_size = sorted(sizes, key=lambda row: abs(row[1] - REPORT_PROJECT_ISSUES))
    chosen = [by_size[0]] + [next(row for row in by_size if row[2] is not None)]
    until = last[:10]
    since = (date.fromisoformat(until) - timedelta(days=REPORT_DAYS - 1)).isoformat()
    return {'sprint': sprint, 'projects': list(dict.fromkeys((label, own, board is not None)
                                                             for label, own, board in chosen)),
            'since': since, 'until': until,
            'until_exclusive': (date.fromisoformat(until)
                                + timedelta(days=1)).isoformat()}


def report_plan(subjects: dict) -> list[Read]:
    label, sprint_id, issues = subjects['sprint']
    since, until, until_x = subjects['since'], subjects['until'], subjects['until_exclusive']
    plan = [Read(f'sprint report, {label} sprint {sprint_id} ({issues} issues)', 'sprint report',
                 lambda: f'/projects/{label}/sprints/{sprint_id}/report?tz=Europe/Moscow',
                 lambda hub: reports.sprint_report(hub, label, sprint_id, tz='Europe/Moscow'))]
    for project, own, board in subjects['projects']:
        what = f'{project} ({own:,} own issues{"" if board else ", no board"})'
        plan += [
            Read(f'flow over {REPORT_DAYS} days, {what}', 'flow',
                 lambda p=project: f'/projects/{p}/flow?since={since}&until={until}&tz=Europe/Moscow',
                 lambda hub, p=project: reports.project_flow(hub, p, since=since, until=until,
                                                             tz='Europe/Moscow')),
            Read(f'cycle time over {REPORT_DAYS} days, {what}', 'cycle time',
                 lambda p=project: f'/projects/{p}/cycle-time?since={since}&until={until_x}'
                                   '&tz=Europe/Moscow',
                 lambda hub, p=project: reports.cycle_time(hub, p, since=since, until=until_x,
                                                           tz='Europe/Moscow'))]
    plan.append(Read(f'velocity, {label}, last 6 sprints', '',
                     lambda: f'/projects/{label}/velocity',
                     lambda hub: reports.velocity(hub, label)))
    return plan


def measure_reports(data_dir: Path, samples: int) -> dict:
    """p50/p95 of each report over HTTP (a server of its own, one keep-alive client, round-robin)
    and its p50 through hublib alone."""
    subjects = report_subjects(data_dir)
    plan = report_plan(subjects)
    say(f'reports: {len(plan)} kinds x {samples} samples ...')
    with ServerProcess(data_dir, threads=8) as server:
        token = server.tokens()['client']
        client = KeepAliveClient(server.url, token)
        try:
            measured = sample_reads(client, plan, samples, budget=120.0)
        finally:
            client.close()
    hub = open_hub(data_dir, create=False)
    try:
        for read in plan:
            read.call(hub)
            values, cpu = [], []
            for _ in range(max(5, samples // 4)):
                started, started_cpu = time.perf_counter(), time.process_time()
                read.call(hub)
                values.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - started_cpu) * 1000)
            # CPU time of this process: what the read costs, whatever else the machine runs
            measured[read.name].update(kind=read.kind, hublib_p50=p50(values),
                                       hublib_cpu_p50=p50(cpu))
    finally:
        hub.close()
    return {'subjects': subjects, 'reads': measured}


def report_lines(section: dict | None) -> list[str]:
    """The section's rows of the result table."""
    if not section:
        return []
    lines = []
    for name, figure in section['reads'].items():
        target = REPORT_TARGETS_MS.get(figure['kind'])
        ok = None if target is None else figure['p95'] <= target
        lines.append(f'| {name} | p50 {figure["p50"]:.1f} / p95 {figure["p95"]:.1f} ms (hublib p50 '
                     f'{figure["hublib_p50"]:.1f}, its CPU {figure["hublib_cpu_p50"]:.1f}; '
                     f'n={figure["n"]}, {figure["bytes"] / 1024:,.0f} KiB) | '
                     f'{f"p95 ≤ {target:.0f} ms" if target else "—"} | {mark(ok)} |')
    return lines


# --- 7. offline JQL (issue 20) ----------------------------------------------------------------------
# Its own pass after the reads (the same server), so the rows above and the load run stay as they
# were: the first page of 100 of each query over HTTP, then the CSV of 20,000 issues with the
# server's RSS sampled while it streams.

JQL_QUERIES = (
    ('project = AURORA AND status IN ("Открыта", "В работе") AND assignee = ivanov '
     'ORDER BY updated DESC', 50.0),
    ('labels = срочно AND updated >= -30d ORDER BY priority DESC, updated DESC', 50.0),
    (f'text ~ "{RARE_WORDS[0]}"', 50.0),
    (f'text ~ "{COMMON_WORD}"', 100.0),  # a word in half the descriptions: bounded ranking
    ('sprint in openSprints() AND resolution = Unresolved', 50.0),
    ('status CHANGED TO "Готово" AFTER -14d', 200.0),
)
JQL_CSV = 'project = AURORA AND key <= AURORA-20000'
JQL_CSV_TARGET_S, JQL_CSV_RSS_MIB = 3.0, 50.0


def measure_jql(client: KeepAliveClient, url: str, token: str, pid: int, samples: int,
                hub_dir: Path) -> dict:
    """p50/p95 of the first page of 100 of each JQL query over HTTP (in-process hublib p50 and
    the plan beside it), and the CSV export of 20,000 issues: seconds and the server's RSS."""
    result: dict = {'queries': {}}
    paths = {query: f'/issues?limit=100&jql={quote(query)}' for query, _ in JQL_QUERIES}
    for path in paths.values():
        client.checked('GET', path)  # warm-up
    timings: dict[str, list[float]] = {query: [] for query in paths}
    cpu = {query: 0.0 for query in paths}
    for _ in range(samples):
        for query, path in paths.items():
            before = process_cpu(pid)
            ms, body = client.checked('GET', path)
            cpu[query] += process_cpu(pid) - before
            timings[query].append(ms)
            result['queries'].setdefault(query, {})['items'] = len(json.loads(body)['items'])
    hub = open_hub(hub_dir, create=False)
    try:
        for query, target in JQL_QUERIES:
            values = timings[query]
            calls = []
            for _ in range(5):
                started = time.perf_counter()
                reads.issues(hub, jql=query, limit=100)
                calls.append((time.perf_counter() - started) * 1000)
            plans = query_plans(hub.db.connection(), lambda: reads.issues(hub, jql=query,
                                                                          limit=100))
            result['queries'][query].update(
                p50=p50(values), p95=percentile(values, 0.95), n=len(values), target=target,
                cpu=cpu[query] * 1000 / len(values),
                hublib_p50=p50(calls), plan=[line for _, plan in plans for line in plan])
        count = reads.issue_count(hub, jql=JQL_CSV)['count']
    finally:
        hub.close()
    before = process_memory(pid).get('VmRSS', 0)
    peak = [before]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], process_memory(pid).get('VmRSS', 0))
            time.sleep(0.05)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    csv_client = KeepAliveClient(url, token)
    try:
        ms, data = csv_client.checked('GET', f'/issues.csv?jql={quote(JQL_CSV)}')
    finally:
        done.set()
        sampler.join()
        csv_client.close()
    result['csv'] = {'issues': count, 'rows': data.count(b'\r\n') - 1, 'seconds': ms / 1000,
                     'bytes': len(data), 'rss_before': before, 'rss_peak': peak[0]}
    return result


def jql_rows(results: dict) -> list[str]:
    """The report's rows of the JQL pass (same table as :func:`report`)."""
    figures = results.get('jql')
    if not figures:
        return []
    lines = []
    for query, figure in figures['queries'].items():
        lines.append(f'| JQL `{query}`, first page of 100 | p50 {figure["p50"]:.1f} / p95 '
                     f'{figure["p95"]:.1f} ms (server CPU {figure.get("cpu", 0):.1f} ms a read; '
                     f'p50 in-process: hublib {figure["hublib_p50"]:.1f};'
                     f' n={figure["n"]}, {figure["items"]} items) | p95 ≤ {figure["target"]:.0f} ms '
                     f'| {mark(figure["p95"] <= figure["target"])} |')
    csv_figure = figures['csv']
    grown = (csv_figure['rss_peak'] - csv_figure['rss_before']) / 1024
    lines.append(f'| JQL CSV export, {csv_figure["issues"]:,} issues ({mib(csv_figure["bytes"])})'
                 f' | {csv_figure["seconds"]:.2f} s, server RSS {csv_figure["rss_before"] / 1024:.0f}'
                 f' → peak {csv_figure["rss_peak"] / 1024:.0f} MiB (+{grown:.0f}) | ≤ '
                 f'{JQL_CSV_TARGET_S:.0f} s, RSS < +{JQL_CSV_RSS_MIB:.0f} MiB | '
                 f'{mark(csv_figure["seconds"] <= JQL_CSV_TARGET_S and grown < JQL_CSV_RSS_MIB)} |')
    return lines


def jql_plans(results: dict) -> list[str]:
    figures = results.get('jql')
    if not figures:
        return []
    lines = ['', 'Query plans of the JQL rows:']
    for query, figure in figures['queries'].items():
        lines += [f'  {query}'] + [f'    {line}' for line in figure['plan']]
    return lines


# --- report ----------------------------------------------------------------------------------------

def read_target(kind: str, name: str, baseline: dict | None,
                own: float | None = None) -> tuple[float | None, str]:
    """The p95 (ms) a read's median round must meet, and its text: 2x the baseline run's median
    p95, else the read's own target or its kind's."""
    if baseline is not None and name in baseline.get('reads', {}):
        base = median_of(baseline['reads'][name]['p95'])
        return SCALE_FACTOR * base, f'≤ 2× {baseline["issues"]:,} (p95 {base:.1f})'
    target = own if own is not None else READ_TARGETS_MS.get(kind)
    return target, (f'p95 ≤ {target:.0f} ms' if target is not None else '—')


def mark(ok: bool | None) -> str:
    return '' if ok is None else ('✔' if ok else '✘')


def report(args, results: dict, baseline: dict | None) -> list[str]:
    n = args.issues
    lines = [f'### bench_scale: {n:,} issues, {n * args.changes_per_issue:,} change rows',
             '', '| What | Figure | Target | |', '| --- | --- | --- | --- |']

    def row(what: str, figure: str, target: str = '—', ok: bool | None = None) -> None:
        lines.append(f'| {what} | {figure} | {target} | {mark(ok)} |')

    manifest = results['manifest']
    build = manifest['build']
    row('Build (generate + write + indexes + slices and FTS)',
        f'{build["total"]:.0f} s (mirror {build["issues"]:.0f} s, changes {build["changes"]:.0f} s, '
        f'indexes {build["indexes"]:.0f} s, derived {build["derived"]:.0f} s)')
    tables = manifest.get('tables', {})
    hot, cold = results['idle_memory']
    row('This machine: touching 64 MiB of memory, hot / after 2 s idle',
        f'{hot:.0f} / {cold:.0f} ms (reads after an idle or slow moment pay the difference)')
    row('Database size', f'{mib(results["size"])} (' + ', '.join(
        f'{table} {mib(size)}' for table, size in list(tables.items())[:6]) + ')')
    first = results.get('first_open', 0.0)
    row('open_hub of the built file', f'{results["open"] * 1000:.0f} ms' + (
        f' (the first open of this file: {first:.1f} s, building the derived indexes it lacked)'
        if first > 1 else ''))
    row('Daily backup (backups.backup: what a serving hub does once a day)',
        f'{results["backup"]:.1f} s')
    ingest = results.get('ingest')
    if ingest and 'open_without_derived' in ingest:
        row('open_hub of a copy without slices and FTS (builds them)',
            f'{ingest["open_without_derived"]:.1f} s')
    for name, figure in results.get('reads', {}).items():
        target, text = read_target(figure['kind'], name, baseline, figure.get('target'))
        ok = None if target is None else figure['p95'].median <= target
        row(name, f'p95 {figure["p95"].text()} ms, p50 {figure["p50"].text()} ms (server CPU '
            f'{figure["cpu"].median:.1f} ms a read; p50 '
            f'in-process: hublib {figure["hublib_p50"]:.1f}, WSGI {figure["wsgi_p50"]:.1f}; '
            f'n={figure["n"]} in {figure["rounds"]} rounds, {figure["items"]} items, '
            f'{figure["bytes"] / 1024:,.0f} KiB)', text, ok)
    if ingest:
        rounds = f'{ingest["rounds"]} rounds' if ingest['rounds'] > 1 else 'one round'
        row(f'State ingest, {ingest["pages"]} pages of {PAGE_ISSUES} (changed issues) a round',
            f'HTTP / raw {ingest["state_ratio"].text(2, "×")} ({rounds}; HTTP '
            f'{ingest["http_state"].text(2, " s")} vs raw {ingest["raw_state"].text(2, " s")}, '
            f'page p50 {ingest["http_state_p50"].median:.0f} vs '
            f'{ingest["raw_state_p50"].median:.0f} ms)', '≤ 2× raw, worst round',
            ingest['state_ratio'].max <= RATIO_TARGET)
        row(f'History ingest, {ingest["history_rows"].median:,.0f} new rows in pages of 1,000 a '
            'round', f'HTTP / raw {ingest["history_ratio"].text(2, "×")} ({rounds}; HTTP '
            f'{ingest["http_history"].text(2, " s")} vs raw {ingest["raw_history"].text(2, " s")}, '
            f'page p50 {ingest["http_history_p50"].median:.0f} vs '
            f'{ingest["raw_history_p50"].median:.0f} ms; CPU a page: server process '
            f'{ingest["http_history_cpu"].median:.1f}, raw {ingest["raw_history_cpu"].median:.1f} ms)',
            '≤ 2× raw, worst round',
            ingest['history_ratio'].max <= RATIO_TARGET)
    lines += report_lines(results.get('reports'))
    migration = results.get('migration')
    if migration:
        big = n >= 1_000_000
        row(f'Migration v1 → v9, {n:,} issues ({mib(migration["size"])}, '
            f'{migration["counts"]["issue_link"]:,} links, {migration["counts"]["issue_note"]:,} notes)',
            f'{migration["seconds"]:.1f} s (fill {migration["fill"]:.0f} s)',
            '< 2 min' if big else '(< 2 min at 1,000,000)',
            migration['seconds'] < MIGRATION_TARGET_S if big else None)
    load = results.get('load')
    if load:
        row(f'Server memory, {args.readers} concurrent readers for {load["seconds"]:.0f} s',
            f'VmRSS {load["before"].get("VmRSS", 0) / 1024:.0f} → peak {load["peak_rss"] / 1024:.0f} MiB, '
            f'VmHWM {load["after"].get("VmHWM", 0) / 1024:.0f} MiB')
        row(f'{args.readers} concurrent readers, every read but the common text and /health',
            f'p50 {load["p50"]:.1f} / p95 {load["p95"]:.1f} ms, '
            f'{load["requests"] / load["seconds"]:.0f} req/s, errors {len(load["errors"])}')
    return lines


def details(results: dict) -> list[str]:
    lines = []
    ingest = results.get('ingest')
    if ingest:
        profile = ingest['profile']
        for name, http_p50 in (('state', ingest['http_state_p50'].median),
                               ('history', ingest['http_history_p50'].median)):
            lines += ['', f'{name.capitalize()} page, ms: HTTP p50 {http_p50:.1f}; in this process '
                      f'through the Falcon app (WSGI) {profile[name + "_wsgi_ms"]:.1f}, through '
                      f'hublib alone {profile[name + "_hublib_ms"]:.1f}; profiled by function '
                      '(cumulative ms a page, cProfile inflates Python code):']
            lines += [f'  {part:<44} {ms:8.1f}' for part, ms in profile[name + '_parts'].items()]
            lines += ['  top by own time, all 10 pages:'] + ['  ' + line for line in
                                                             profile[name + '_top']]
            lines += ['  the same pages through the Falcon app (WSGI), top by own time:']
            lines += ['  ' + line for line in profile[name + '_wsgi_top']]
        lines += ['', f'Rows a state page writes: {ingest["rows_per_page"]}']
        if ingest.get('cached'):
            lines += ['Share of each ingest copy in the OS page cache when the rounds began: '
                      + ', '.join(f'{name} {share:.0%}' for name, share in ingest['cached'].items())]
        if ingest['state_ratio'].max > RATIO_TARGET:
            lines += ['', 'Query plans of the SELECTs of one state page:']
            for sql, plan in profile['state_plans']:
                lines += ['```sql', sql[:2000], '```', '```', *plan, '```']
    load = results.get('load')
    if load:
        lines += ['', 'Concurrent readers by read (ms):']
        lines += [f'  {name:<48} p50 {value["p50"]:8.1f}  p95 {value["p95"]:8.1f}  n={value["n"]}'
                  for name, value in load['by_read'].items()]
        if load['errors']:
            lines += ['  errors: ' + '; '.join(load['errors'])]
    if results.get('explain'):
        lines += ['', '### Reads that missed their target', *results['explain']]
    return lines


# --- main ------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--issues', type=int, required=True)
    parser.add_argument('--changes-per-issue', type=int, default=10)
    parser.add_argument('--seed', type=int, default=13)
    where = parser.add_mutually_exclusive_group()
    where.add_argument('--keep', metavar='DIR', help='build into DIR and keep it')
    where.add_argument('--reuse', metavar='DIR', help='measure the hub built into DIR by --keep')
    parser.add_argument('--workers', type=int, default=2, help='generator processes')
    parser.add_argument('--samples', type=int, default=60, help='of each read in each round')
    parser.add_argument('--rounds', type=int, default=5,
                        help='rounds of every read and ingest ratio (min / median / max)')
    parser.add_argument('--budget', type=float, default=120.0,
                        help='seconds a single read may take in all before sampling stops')
    parser.add_argument('--ingest-pages', type=int, default=100)
    parser.add_argument('--readers', type=int, default=32)
    parser.add_argument('--reader-seconds', type=float, default=20.0)
    parser.add_argument('--skip', default='',
                        help='comma-separated: reads,jql,ingest,migration,load,reports,rebuild (the '
                             "ingest copy's open_hub that builds the slices and full-text index)")
    parser.add_argument('--explain', action='store_true', help='plans of every read, not only misses')
    parser.add_argument('--json', metavar='OUT', help='write the figures as JSON')
    parser.add_argument('--baseline', metavar='JSON', help='--json of the 200,000 run')
    args = parser.parse_args(argv)
    skip = set(filter(None, args.skip.split(',')))
    baseline = json.loads(Path(args.baseline).read_text()) if args.baseline else None
    work = Path(tempfile.mkdtemp(prefix='bench-scale-'))
    rng = random.Random(args.seed)
    results: dict = {'issues': args.issues}
    todays_backup = None
    try:
        data_dir, manifest = prepare_data(args, work)
        results['manifest'] = manifest
        jira = ScaleJira(args.issues, seed=args.seed, changes_per_issue=args.changes_per_issue)
        results['idle_memory'] = idle_memory_penalty()
        results['size'] = sum(path.stat().st_size for path in data_dir.glob(DB + '*'))
        seconds, hub = open_seconds(data_dir)
        hub.close()
        seconds_again, hub = open_seconds(data_dir)
        hub.close()
        # The first open of a file built by an earlier release builds the derived indexes it lacks
        # (once per file); the second is what every later start pays.
        results['first_open'], results['open'] = seconds, seconds_again
        say('the daily backup ...')
        results['backup'], todays_backup = measure_backup(data_dir)
        os.link(todays_backup, tomorrows_name(todays_backup))
        if not {'reads', 'load', 'jql'} <= skip:
            with ServerProcess(data_dir, threads=8) as server:
                token = server.tokens()['client']
                client = KeepAliveClient(server.url, token)
                plan = define_reads(data_dir, client, jira, rng)
                results['reads'] = {}
                if 'reads' not in skip:
                    say(f'reads: {len(plan)} kinds x {args.samples} samples x {args.rounds} '
                        'rounds ...')
                    measured = measure_reads(client, plan, args.samples, args.rounds, args.budget,
                                             server.process.pid)
                    hub = open_hub(data_dir, create=False)
                    try:
                        in_process = in_process_reads(hub, token, plan)
                        explained = []
                        for read in plan:
                            figure = measured[read.name]
                            figure.update(kind=read.kind, target=read.target,
                                          hublib_p50=in_process[read.name]['hublib'],
                                          wsgi_p50=in_process[read.name]['wsgi'])
                            target, _ = read_target(read.kind, read.name, baseline, read.target)
                            if args.explain or (target is not None
                                                and figure['p95'].median > target):
                                explained += explain(hub, read)
                    finally:
                        hub.close()
                    results['reads'] = measured
                    results['explain'] = explained
                if 'jql' not in skip:
                    say('offline JQL: the first pages and the CSV export ...')
                    results['jql'] = measure_jql(client, server.url, token, server.process.pid,
                                                 args.samples, data_dir)
                client.close()
                if 'load' not in skip:
                    say(f'memory: {args.readers} readers for {args.reader_seconds:.0f} s ...')
                    results['load'] = concurrent_readers(server.url, token, server.process.pid,
                                                         plan, args.readers, args.reader_seconds)
        if 'reports' not in skip:
            results['reports'] = measure_reports(data_dir, args.samples)
        if 'ingest' not in skip:
            results['ingest'] = measure_ingest(args, data_dir, work, jira, rng, todays_backup)
        if 'migration' not in skip:
            results['migration'] = measure_migration(args.issues, work)
    finally:
        if todays_backup is not None:
            todays_backup.unlink(missing_ok=True)
            tomorrows_name(todays_backup).unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)
    lines = report(args, results, baseline) + jql_rows(results) + details(results) \
        + jql_plans(results)
    print('\n'.join(lines))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {key: value for key, value in results.items() if key != 'explain'},
            ensure_ascii=False, indent=1,
            default=lambda value: value.as_json() if isinstance(value, Spread) else str(value)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
