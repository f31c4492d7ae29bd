"""One read of a mirror through a given checkout of the code, in a process of its own and with a
time limit: how ``scripts/bench_choice_order.py`` and ``scripts/bench_jql_cost.py`` measure the
code of ``main`` and of a branch on the same file in the same run (a read the old code cannot
finish is stopped and reported as such, not waited for).

The worker opens the hub read-only in spirit (``open_hub(create=False)``: it builds nothing the
file lacks that its code does not also build) and calls one ``hublib.reads`` function: the CPU
time of the call (``time.process_time``) and its wall time, the outcome (``200`` with the number
of items, or ``422`` with the message) and, for a page, its ``next_cursor``.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_WORKER = r'''
import json, sys, time
code, data_dir = sys.argv[1], sys.argv[2]
sys.path.insert(0, code)
from hublib import open_hub, reads
from hublib.errors import ValidationError
name, arguments, rounds = json.loads(sys.stdin.read())
hub = open_hub(data_dir, create=False)
function = getattr(reads, name)
best = None
for _ in range(rounds):
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        result = function(hub, **arguments)
        if name == 'issues_csv':
            result = {'items': [line for chunk in result for line in chunk.splitlines()][1:]}
        outcome = {'status': 200, 'items': len(result.get('items', [])) if 'items' in result
                   else result.get('count'), 'cursor': result.get('next_cursor')}
    except ValidationError as error:
        outcome = {'status': 422, 'message': '; '.join(m for ms in error.fields.values() for m in ms)}
    took = {'cpu_ms': 1000 * (time.process_time() - cpu), 'wall_ms': 1000 * (time.perf_counter() - wall)}
    if best is None or took['cpu_ms'] < best['cpu_ms']:
        best = {**outcome, **took}
print(json.dumps(best))
'''


def measure(code: str | Path, data_dir: str | Path, function: str, arguments: dict, *,
            timeout: float, rounds: int = 1) -> dict:
    """``reads.<function>(hub, **arguments)`` through the code at ``code``: the least CPU of
    ``rounds`` calls with its wall time and outcome, or ``{'status': 'timeout'}`` when the
    process did not finish within ``timeout`` seconds (it is killed)."""
    try:
        done = subprocess.run([sys.executable, '-c', _WORKER, str(code), str(data_dir)],
                              input=json.dumps([function, arguments, rounds]), text=True,
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {'status': 'timeout', 'cpu_ms': None, 'wall_ms': 1000 * timeout}
    if done.returncode != 0:
        return {'status': 'error', 'message': done.stderr.strip().splitlines()[-1:],
                'cpu_ms': None, 'wall_ms': None}
    return json.loads(done.stdout.strip().splitlines()[-1])


def shown(result: dict) -> str:
    """A measured read as one table cell: ``12.3 ms (31 wall)``, ``> 120 s``, ``422 …``."""
    if result['status'] == 'timeout':
        return f'> {result["wall_ms"] / 1000:.0f} s (stopped)'
    if result['status'] == 'error':
        return f'error: {result["message"]}'
    cell = f'{result["cpu_ms"]:.1f} ms CPU ({result["wall_ms"]:.0f} wall)'
    return cell if result['status'] == 200 else f'{cell}, 422'


__all__ = ['measure', 'shown']
