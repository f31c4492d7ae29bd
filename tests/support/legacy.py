"""Legacy hub databases (schema v1–v9) for migration tests and benchmarks, written straight with
``sqlite3`` from the frozen DDL the migration steps use (``hublib.migrations.legacy``)."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from hublib.migrations.legacy import DDL, V9_READ_INDEXES

# What the schema-only part of v6 -> v7 and v7 -> v8 does to a legacy file (the real steps in
# ``hublib.migrations.steps`` also move the data).
SCHEMA_ONLY = {
    7: "ALTER TABLE project DROP COLUMN board_id; ALTER TABLE project DROP COLUMN board_type;",
    8: "ALTER TABLE issue_note DROP COLUMN fact_status;",
}


def create_legacy_database(path: str | Path, version: int,
                           settings: dict[str, object] | None = None) -> None:
    """Create an empty database exactly as hub schema ``version`` (1–9) left it.

    ``settings`` are stored as JSON values next to ``schema_version``.
    """
    if not 1 <= version <= 9:
        raise ValueError(f'no legacy schema v{version}')
    conn = sqlite3.connect(path)
    try:
        for step in range(1, version + 1):
            conn.executescript(DDL[step])
            conn.executescript(SCHEMA_ONLY.get(step, ''))
        if version == 9:
            conn.executescript(V9_READ_INDEXES)
        values = {'schema_version': version, **(settings or {})}
        conn.executemany('INSERT OR REPLACE INTO setting (key, value) VALUES (?, ?)',
                         [(key, json.dumps(value, ensure_ascii=False)) for key, value in values.items()])
        conn.commit()
    finally:
        conn.close()
