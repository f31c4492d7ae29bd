"""The repository root's listing, watched over a test run (``tests/conftest.py``).

A run may leave files in the working tree only where they are expected: a stray file at the root
(a path built from an object's repr, a cache written to the current directory) is a bug of the
test that made it, and the run fails when one appears or disappears.
"""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What may come and go at the root during a run: version control, the virtualenv, pytest's and
# Python's caches, an editable install's metadata and the data directories ``serve`` defaults to.
IGNORED = frozenset({'.git', '.venv', '.pytest_cache', '__pycache__', 'hub-data', 'hub-demo'})


def root_listing(root: Path = ROOT) -> frozenset[str]:
    """The names at ``root``, less the ``IGNORED`` ones and ``*.egg-info``."""
    return frozenset(name for name in os.listdir(root)
                     if name not in IGNORED and not name.endswith('.egg-info'))


def listing_change(before: frozenset[str], after: frozenset[str]) -> str | None:
    """What changed between two listings, in words, or None."""
    if before == after:
        return None
    parts = []
    if after - before:
        parts.append('added ' + ', '.join(repr(name) for name in sorted(after - before)))
    if before - after:
        parts.append('removed ' + ', '.join(repr(name) for name in sorted(before - after)))
    return '; '.join(parts)
