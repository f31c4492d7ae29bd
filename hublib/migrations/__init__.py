"""Schema migrations: frozen legacy DDL (``legacy``) and one function per step (``steps``)."""
from __future__ import annotations

from peewee import Database

from . import steps

__all__ = ['run_steps']


def run_steps(db: Database, from_version: int, to_version: int, now: str) -> None:
    """Run every step from ``from_version`` up to ``to_version`` (caller holds the transaction)."""
    for version in range(from_version, to_version):
        steps.STEPS[version](db, now)
