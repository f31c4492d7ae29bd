"""Timing helpers of the benchmarks: a keep-alive HTTP client that times each request, percentiles,
the memory of a process, and the query plans of what a hublib call runs."""
from __future__ import annotations

import http.client
import json
import statistics
import time
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit


class KeepAliveClient:
    """One keep-alive connection to the hub with a bearer token; :meth:`timed` measures a request
    from sending to the last byte of the answer (bodies are encoded by the caller beforehand)."""

    def __init__(self, url: str, token: str, timeout: float = 300.0):
        parts = urlsplit(url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
        self.headers = {'Authorization': f'Bearer {token}', 'Content-Type': 'application/json'}

    def timed(self, method: str, path: str, body: bytes | None = None) -> tuple[float, int, bytes]:
        """``(milliseconds, status, raw body)``."""
        started = time.perf_counter()
        self.connection.request(method, path, body=body, headers=self.headers)
        response = self.connection.getresponse()
        data = response.read()
        return (time.perf_counter() - started) * 1000, response.status, data

    def json(self, method: str, path: str, body: object = None) -> object:
        """The decoded answer of a request that must succeed (AssertionError otherwise)."""
        raw = json.dumps(body, ensure_ascii=False).encode() if body is not None else None
        _, status, data = self.timed(method, path, raw)
        assert 200 <= status < 300, (method, path, status, data[:500])
        return json.loads(data) if data else None

    def checked(self, method: str, path: str, body: object = None) -> tuple[float, bytes]:
        """``(milliseconds, raw body)`` of a sample that must succeed: ``body`` is encoded before
        the clock starts, and any other status stops the benchmark (SystemExit)."""
        raw = json.dumps(body, ensure_ascii=False).encode() if body is not None else None
        elapsed, status, data = self.timed(method, path, raw)
        if not 200 <= status < 300:
            raise SystemExit(f'{method} {path}: HTTP {status} {data[:200]!r}')
        return elapsed, data

    def close(self) -> None:
        self.connection.close()


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile (``fraction`` 0.95 = p95) of a non-empty list."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def p50(values: list[float]) -> float:
    return statistics.median(values)


def process_memory(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` (peak) of a process in KiB, from /proc (empty where there is none)."""
    status = Path(f'/proc/{pid}/status')
    if not status.exists():
        return {}
    memory = {}
    for line in status.read_text().splitlines():
        name, _, value = line.partition(':')
        if name in ('VmRSS', 'VmHWM'):
            memory[name] = int(value.split()[0])
    return memory


def query_plans(connection, call: Callable[[], object]) -> list[tuple[str, list[str]]]:
    """Every SELECT that ``call()`` runs on the ``sqlite3`` ``connection``, with its EXPLAIN QUERY
    PLAN (indented tree lines)."""
    statements: list[str] = []
    connection.set_trace_callback(statements.append)
    try:
        call()
    finally:
        connection.set_trace_callback(None)
    plans = []
    for sql in statements:
        if not sql.lstrip().upper().startswith(('SELECT', 'WITH')):
            continue
        rows = connection.execute('EXPLAIN QUERY PLAN ' + sql).fetchall()
        depth: dict[int, int] = {0: -1}
        lines = []
        for node, parent, _, detail in rows:
            depth[node] = depth.get(parent, -1) + 1
            lines.append('  ' * depth[node] + detail)
        plans.append((sql, lines))
    return plans


__all__ = ['KeepAliveClient', 'percentile', 'p50', 'process_memory', 'query_plans']
