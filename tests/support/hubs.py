"""Data directories as tests meet them: a snapshot of every byte, a hub as a team has it, a
project's slice as stored."""
from __future__ import annotations

from pathlib import Path

from hublib.models import IssueMember

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_CONFIG = ROOT / 'scripts' / 'config.example.json'


def snapshot(directory: Path) -> dict[str, bytes] | None:
    """Every file under ``directory`` with its bytes (None when the directory does not exist)."""
    if not directory.exists():
        return None
    return {path.relative_to(directory).as_posix(): path.read_bytes() if path.is_file() else b'<dir>'
            for path in sorted(directory.rglob('*'))}


def project_slice(hub, label: str) -> dict[str, bool]:
    """Keys of the project's slice mapped to ``neighbor`` relative to that project, as
    ``issue_member`` holds them."""
    return {key: bool(neighbor) for key, neighbor in
            IssueMember.select(IssueMember.key, IssueMember.neighbor)
            .where(IssueMember.label == label).tuples().execute(hub.db)}


def real_hub(data_dir: Path) -> None:
    """A hub as a team has it: imported settings, projects, a batch waiting for the real agent."""
    from hublib import open_hub, queue
    from hubweb.cli import main

    assert main(['init', '--data', str(data_dir), '--config', str(EXAMPLE_CONFIG)]) == 0
    hub = open_hub(data_dir)
    try:
        queue.create_batch(hub, title='Настоящая работа', author='ivanov', commands=[
            {'type': 'add_comment', 'params': {'key': 'AURORA-1', 'body': 'для настоящей Jira'}}])
    finally:
        hub.close()


# --- a full disk without a full disk: SQLite's page limit (issue 10, point 8) ----------------------

def fill_disk(hub) -> None:
    """No page may be added to the database on this thread's connection from now on."""
    pages = hub.db.execute_sql('PRAGMA page_count').fetchone()[0]
    hub.db.execute_sql(f'PRAGMA max_page_count = {pages}')


def free_disk(hub) -> None:
    hub.db.execute_sql('PRAGMA max_page_count = 1073741823')


def fill_disk_for_copies(monkeypatch) -> None:
    """Every SQLite file written through a ``*.tmp`` name (a backup being copied) has no room."""
    import sqlite3
    real_connect = sqlite3.connect

    def connect(database, *args, **kwargs):
        connection = real_connect(database, *args, **kwargs)
        if str(database).endswith('.tmp'):
            connection.execute('PRAGMA max_page_count = 2')
        return connection
    monkeypatch.setattr(sqlite3, 'connect', connect)
