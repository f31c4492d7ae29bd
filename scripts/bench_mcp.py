"""Benchmark: MCP tool calls (p50/p95) beside the HTTP API in the same run.

    .venv/bin/python scripts/bench_mcp.py [--issues 50000] [--samples 100]

1. A hub is filled through hublib with ``--issues`` issues of ``hubweb.demo.FakeJira`` (the fill of
   ``scripts/bench_reads.py``: links, comments, sprints, history, boards); one attachment gets a
   downloaded PNG, one a downloaded text file.
2. Every sample calls, round-robin, for each read:
   - ``hublib``: the hublib function alone (the floor);
   - ``MCP client``: the tool through the SDK's in-process client (``mcp.Client(server)``): argument
     check, worker thread, JSON text, and the client's own check of every result against the
     ``outputSchema`` with jsonschema;
   - ``MCP HTTP``: the same through ``sdlc-hub mcp --http`` with the SDK's streamable HTTP client
     (one session, opened with the initialize handshake that desktop clients speak today);
   - ``HTTP API``: the matching request to a real ``sdlc-hub serve`` (waitress, keep-alive).
   The reads: ``search_issues`` (all, and a project's slice) / ``GET /issues``, ``get_issue`` /
   ``GET /issues/{key}`` (a random key each time), ``search_issues {jql}`` / ``GET /issues?jql=``,
   ``next_temp_key`` / ``GET /temp-keys/next``, the four reports (``sprint_report``,
   ``project_flow``, ``cycle_time``, ``velocity``) / their ``GET /projects/AWPCA/…``, and
   ``read_attachment`` of the PNG and of the text / ``GET /attachments/{id}/content``.
Servers listen on 127.0.0.1 in a temporary directory that is removed afterwards.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import random
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import zlib
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'scripts'))

from bench_reads import fill  # noqa: E402  (the same 50,000-issue mirror)
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

from hublib import batches, files, open_hub, reads, reports  # noqa: E402
from hubweb.mcp_server import create_mcp_server  # noqa: E402
from tests.support.server import ServerProcess  # noqa: E402
from tests.support.timing import KeepAliveClient, percentile  # noqa: E402

COLUMNS = ('hublib', 'MCP client', 'MCP HTTP', 'HTTP API')
WARMUP = 2


def ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def start_mcp_http(data_dir: Path) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([sys.executable, '-m', 'hubweb.cli', 'mcp', '--data', str(data_dir),
                                '--http', '--port', '0'], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    if not line.startswith('sdlc-hub mcp listening on '):
        process.kill()
        raise SystemExit(f'sdlc-hub mcp --http did not start: {line!r}')
    return process, line.split()[-1]


async def tool(client, name: str, arguments: dict) -> float:
    """One call through a client."""
    started = time.perf_counter()
    result = await client.call_tool(name, arguments)
    elapsed = ms(started)
    if result.is_error:
        raise SystemExit(f'{name} {arguments}: {result.content[0].text}')
    return elapsed


def add_downloads(data_dir: Path) -> dict[str, str]:
    """A PNG and a text file as the downloads of the mirror's first two attachments:
    ``{"png": id, "text": id}``."""
    hub = open_hub(data_dir)
    try:
        first, second = [row[0] for row in hub.db.execute_sql(
            'SELECT attachment_id FROM issue_attachment ORDER BY attachment_id LIMIT 2')]
        with hub.write():
            hub.db.execute_sql("UPDATE issue_attachment SET mime_type = 'text/plain' "
                               'WHERE attachment_id = ?', (second,))
        for attachment_id, content in ((first, png_bytes()),
                                       (second, ('Строка текста вложения.\n' * 2000).encode())):
            sha256 = hashlib.sha256(content).hexdigest()
            files.store_file(hub, sha256, io.BytesIO(content), length=len(content))
            files.record_download(hub, attachment_id, sha256, len(content))
        return {'png': first, 'text': second}
    finally:
        hub.close()


def png_bytes(side: int = 64) -> bytes:
    """A real RGB PNG of ``side`` x ``side`` pixels (~12 KB: incompressible noise)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack('>I', len(data)) + kind + data + struct.pack(
            '>I', zlib.crc32(kind + data) & 0xffffffff)
    rng = random.Random(1)
    rows = b''.join(b'\x00' + bytes(rng.randrange(256) for _ in range(side * 3))
                    for _ in range(side))
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', side, side, 8, 2, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))


JQL = 'hubProject = AWPCA AND status != Готово ORDER BY updated DESC'


def report_sprint(hub) -> int:
    """A sprint of AWPCA's board that has a report: the newest one that has started."""
    started = [sprint for sprint in reads.project_sprints(hub, 'AWPCA')['items']
               if sprint['state'] != 'future' and sprint['start_date']]
    return started[-1]['sprint_id']


def reads_of(hub, key: str, downloads: dict[str, str], sprint: int) -> dict[str, tuple]:
    """name → (hublib call, tool, arguments, HTTP path) for one sample."""
    png, text = downloads['png'], downloads['text']
    quoted = urllib.parse.quote(JQL)
    return {
        'search_issues {jql} / GET /issues?jql=…&limit=20':
            (lambda: reads.issues(hub, jql=JQL, limit=20), 'search_issues', {'jql': JQL},
             f'/issues?jql={quoted}&limit=20'),
        'next_temp_key / GET /temp-keys/next':
            (lambda: batches.next_temp_key(hub), 'next_temp_key', {}, '/temp-keys/next'),
        'sprint_report / GET …/sprints/{id}/report':
            (lambda: reports.sprint_report(hub, 'AWPCA', sprint), 'sprint_report',
             {'label': 'AWPCA', 'sprint_id': sprint},
             f'/projects/AWPCA/sprints/{sprint}/report'),
        'project_flow / GET /projects/AWPCA/flow (30 days)':
            (lambda: reports.project_flow(hub, 'AWPCA'), 'project_flow', {'label': 'AWPCA'},
             '/projects/AWPCA/flow'),
        'cycle_time / GET /projects/AWPCA/cycle-time (90 days)':
            (lambda: reports.cycle_time(hub, 'AWPCA'), 'cycle_time', {'label': 'AWPCA'},
             '/projects/AWPCA/cycle-time'),
        'velocity / GET /projects/AWPCA/velocity':
            (lambda: reports.velocity(hub, 'AWPCA'), 'velocity', {'label': 'AWPCA'},
             '/projects/AWPCA/velocity'),
        'search_issues {} / GET /issues?limit=20':
            (lambda: reads.issues(hub, limit=20), 'search_issues', {}, '/issues?limit=20'),
        'search_issues {project} / GET /issues?project=AWPCA&limit=20':
            (lambda: reads.issues(hub, project='AWPCA', limit=20), 'search_issues',
             {'project': 'AWPCA'}, '/issues?project=AWPCA&limit=20'),
        'get_issue {key} / GET /issues/{key}':
            (lambda: reads.issue_card(hub, key), 'get_issue', {'key': key}, f'/issues/{key}'),
        'read_attachment {png} / GET /attachments/{id}/content':
            (lambda: files.attachment_bytes(hub, png, limit=4_000_000), 'read_attachment',
             {'attachment_id': png}, f'/attachments/{png}/content'),
        'read_attachment {text} / GET /attachments/{id}/content':
            (lambda: files.attachment_bytes(hub, text, limit=80_003), 'read_attachment',
             {'attachment_id': text}, f'/attachments/{text}/content'),
    }


async def measure(data_dir: Path, issues: int, samples: int, api: KeepAliveClient, mcp_url: str,
                  token: str, downloads: dict[str, str]) -> dict[str, dict[str, list[float]]]:
    hub = open_hub(data_dir, guard_mirror=True)  # as the ``sdlc-hub mcp`` process opens it
    rng = random.Random(7)
    rows: dict[str, dict[str, list[float]]] = {}
    server = create_mcp_server(hub)
    sprint = report_sprint(hub)
    try:
        async with Client(server) as local, \
                create_mcp_http_client(headers={'Authorization': f'Bearer {token}'}) as http, \
                Client(streamable_http_client(mcp_url, http_client=http),
                       mode='legacy') as remote:
            for index in range(samples + WARMUP):  # the first rounds warm caches, not counted
                key = f'AURORA-{rng.randint(1, issues)}'
                for name, (direct, tool_name, arguments, path) in \
                        reads_of(hub, key, downloads, sprint).items():
                    started = time.perf_counter()
                    direct()
                    timings = [ms(started), await tool(local, tool_name, arguments),
                               await tool(remote, tool_name, arguments), api.checked('GET', path)[0]]
                    if index >= WARMUP:
                        row = rows.setdefault(name, {column: [] for column in COLUMNS})
                        for column, value in zip(COLUMNS, timings):
                            row[column].append(value)
    finally:
        hub.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--issues', type=int, default=50_000)
    parser.add_argument('--samples', type=int, default=100)
    args = parser.parse_args(argv)
    overall = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix='bench-mcp-'))
    mcp_process = None
    try:
        started = time.perf_counter()
        tokens, _ = fill(root / 'hub', args.issues)
        downloads = add_downloads(root / 'hub')
        print(f'filled {args.issues:,} issues through hublib in '
              f'{time.perf_counter() - started:.1f} s')
        with ServerProcess(root / 'hub', threads=8) as server:
            mcp_process, mcp_url = start_mcp_http(root / 'hub')
            api = KeepAliveClient(server.url, tokens['client'], timeout=60)
            rows = anyio.run(measure, root / 'hub', args.issues, args.samples, api, mcp_url,
                             tokens['client'], downloads)
    finally:
        if mcp_process is not None and mcp_process.poll() is None:
            mcp_process.terminate()
            mcp_process.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)
    print(f'p50 / p95 in ms at {args.issues:,} issues, {args.samples} samples each, one client')
    print(f'{"tool / HTTP request":<62}' + ''.join(f'{column:>16}' for column in COLUMNS)
          + f'{"client/API p95":>16}')
    for name, row in rows.items():
        cells = [f'{statistics.median(row[c]):6.1f} /{percentile(row[c], 0.95):6.1f}'
                 for c in COLUMNS]
        ratio = percentile(row['MCP client'], 0.95) / percentile(row['HTTP API'], 0.95)
        print(f'{name:<62}' + ''.join(f'{cell:>16}' for cell in cells) + f'{ratio:>15.2f}x')
    print(f'total benchmark time {time.perf_counter() - overall:.0f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
