"""A mirror on which a read can be made as slow as a test needs (the deadline and capacity tests,
docs/reliability.md «Bounded cost»).

JQL's up-front estimate (docs/jql.md «Limits») weighs a history clause per issue of the mirror, as
an issue of about ten changes costs; these issues have :data:`CHANGES` changes each, so every
clause costs several times what the estimate says. ``slow_jql(n)`` — n windowed ``status WAS``
clauses, OR-ed, that no rule merges into one (each has a window of its own) and that match nothing — is
then not refused up front, and only the read deadline ends it: on :data:`ISSUES` issues (built in
~5 s) 3 clauses take ~0.4 s of CPU against an estimate of 0.024 s, 150 about 30 s against 1.2.
"""
from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from tests.support.scale import ScaleJira, build_hub

ISSUES = 2000
CHANGES = 150
# the fewest clauses that still outrun a 0.05 s deadline many times over, while their estimate
# (3 × 4 µs × 2,000 issues = 0.024 s) stays under it
DEADLINE_CLAUSES = 3


def slow_jql(clauses: int = DEADLINE_CLAUSES) -> str:
    """A JQL query of ``clauses`` OR-ed windowed history clauses that match nothing."""
    first = date(2025, 1, 1)
    return ' OR '.join(f'status WAS x{number} DURING ("{first + timedelta(days=number)}", "2026-12-31")'
                       for number in range(clauses))


def build_slow_mirror(data_dir: Path) -> Path:
    """A hub of :data:`ISSUES` scale issues in ``data_dir`` (this process alone builds it)."""
    build_hub(data_dir, ScaleJira(ISSUES, changes_per_issue=CHANGES), workers=0)
    return data_dir
