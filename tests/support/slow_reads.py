"""A mirror on which a read can be made as slow as a test needs (the deadline and capacity tests,
contract §20).

``status WAS x0 OR … OR status WAS x<n>`` costs the hub about n² statements' worth of work per
issue it looks at: on :data:`ISSUES` issues of ``tests.support.scale`` (built in ~2 s), 20
clauses take ~0.4 s and 300 take ~20 s — far beyond a 0.05 s deadline, and long enough that a
client can leave while it runs.
"""
from __future__ import annotations

from pathlib import Path

from tests.support.scale import ScaleJira, build_hub

ISSUES = 3000


def slow_jql(clauses: int) -> str:
    """A JQL query of ``clauses`` OR-ed history clauses that match nothing."""
    return ' OR '.join(f'status WAS x{number}' for number in range(clauses))


def build_slow_mirror(data_dir: Path) -> Path:
    """A hub of :data:`ISSUES` scale issues in ``data_dir`` (this process alone builds it)."""
    build_hub(data_dir, ScaleJira(ISSUES), workers=0)
    return data_dir
