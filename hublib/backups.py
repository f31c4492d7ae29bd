"""Regular backups of the hub database with rotation (contract §2, §11).

A regular backup is ``backups/<YYYYMMDD-HHMMSS>.sqlite`` (hub clock, UTC). Migration copies
(``<stamp>-schema-v<N>.sqlite``) share the directory and are never rotated or counted.

Decisions the spec did not make:

- Name clash: when a backup of the same second already exists (two runs within one second, or the
  CLI and the serving thread at once), the new one is ``<stamp>-1.sqlite``, then ``-2`` … The name
  is claimed with ``os.link`` from the finished temp file, which fails when the name exists, so two
  processes never overwrite each other. Order among same-second backups is by that number.
- "Newest" means by the stamp in the name, not by mtime: it is the hub's time of the backup.
- Partial copies: a process killed while copying (a server stopped during its daily backup, a
  CLI backup interrupted) leaves its temp files (``*.tmp``, ``*.tmp-journal``) in ``backups/``;
  at 1,000,000 issues that is 7 GB. Every backup first removes the temp files that have not
  changed for an hour (``STALE_TEMP_SECONDS``): a copy in progress writes its file all the time,
  so it is never taken for a stale one.
- The daily backup while serving is a background thread (``start_daily_backups``) rather than a
  check on requests: a hub nobody calls still gets its backup, and no request pays for the copy.
"""
from __future__ import annotations

import logging
import os
import re
import sqlite3
import tempfile
import threading
import time
from datetime import timezone
from pathlib import Path

from . import settings
from .db import Hub, copy_database, fsync_directory
from .errors import StorageFullError, is_storage_full
from .timeutil import FUTURE_TOLERANCE

log = logging.getLogger('hublib.backups')

_REGULAR = re.compile(r'(?P<stamp>\d{8}-\d{6})(?:-(?P<number>[1-9]\d*))?\.sqlite')
_TEMP_PREFIX = '.backup-'
_TEMP_SUFFIX = '.tmp'
STALE_TEMP_SECONDS = 3600


def _stamp(hub: Hub) -> str:
    return hub.clock().astimezone(timezone.utc).strftime('%Y%m%d-%H%M%S')


def regular_backups(hub: Hub) -> list[Path]:
    """Regular backups in ``backups/``, oldest first (migration copies excluded)."""
    found = []
    for path in hub.backups_dir.iterdir():
        match = _REGULAR.fullmatch(path.name)
        if match and path.is_file():
            found.append(((match['stamp'], int(match['number'] or 0)), path))
    return [path for _, path in sorted(found)]


def _keep(hub: Hub) -> int:
    value = settings.setting(hub, 'backup_keep', settings.DEFAULT_BACKUP_KEEP)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        return settings.DEFAULT_BACKUP_KEEP
    return value


def _copy_to_temp(hub: Hub) -> Path:
    handle, name = tempfile.mkstemp(dir=hub.backups_dir, prefix=_TEMP_PREFIX, suffix=_TEMP_SUFFIX)
    os.close(handle)
    temp = Path(name)
    try:
        copy_database(hub.db_path, temp)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def _claim_name(temp: Path, directory: Path, stamp: str) -> Path:
    number = 0
    while True:
        target = directory / (f'{stamp}-{number}.sqlite' if number else f'{stamp}.sqlite')
        try:
            os.link(temp, target)
        except FileExistsError:
            number += 1
            continue
        except OSError:  # a filesystem without hard links: best effort, check then rename
            if target.exists():
                number += 1
                continue
            os.replace(temp, target)
            return target
        temp.unlink()
        return target


def rotate(hub: Hub) -> list[Path]:
    """Delete all but the newest ``backup_keep`` regular backups; return the deleted paths.

    A backup stamped more than ``FUTURE_TOLERANCE`` ahead of the hub clock was made while the
    clock was wrong: it counts as the oldest, so it is rotated away instead of being «the newest»
    for years.
    """
    horizon = (hub.clock() + FUTURE_TOLERANCE).astimezone(timezone.utc).strftime('%Y%m%d-%H%M%S')
    backups = regular_backups(hub)
    future = [path for path in backups if _REGULAR.fullmatch(path.name)['stamp'] > horizon]
    backups = future + [path for path in backups if path not in future]
    doomed = backups[:-_keep(hub)]
    for path in doomed:
        path.unlink(missing_ok=True)
    return doomed


def remove_stale_temps(hub: Hub) -> list[Path]:
    """Delete the partial copies killed processes left in ``backups/``; the deleted paths."""
    now = time.time()
    removed = []
    for path in hub.backups_dir.iterdir():
        try:
            stale = ('.tmp' in path.name and path.is_file()
                     and now - path.stat().st_mtime > STALE_TEMP_SECONDS)
            if stale:
                path.unlink()
                removed.append(path)
        except FileNotFoundError:  # another process cleaned it up first
            continue
    if removed:
        log.warning('удалены недописанные копии: %s', ', '.join(path.name for path in removed))
    return removed


def backup(hub: Hub) -> Path:
    """Copy the database to ``backups/<YYYYMMDD-HHMMSS>.sqlite`` and rotate; return the new path.

    On a full disk: StorageFullError, and no partial copy is left behind.
    """
    remove_stale_temps(hub)
    try:
        temp = _copy_to_temp(hub)
        try:
            target = _claim_name(temp, hub.backups_dir, _stamp(hub))
        finally:
            temp.unlink(missing_ok=True)
        fsync_directory(hub.backups_dir)
    except (sqlite3.Error, OSError) as exc:
        if is_storage_full(exc):
            raise StorageFullError('на диске нет места: резервная копия не сделана') from exc
        raise
    removed = rotate(hub)
    log.info('резервная копия %s; удалены старые: %s', target.name,
             ', '.join(path.name for path in removed) or 'нет')
    return target


def backup_if_due(hub: Hub) -> Path | None:
    """Make today's regular backup (UTC day of the hub clock) unless one exists; its path or None."""
    today = _stamp(hub)[:8]
    if any(path.name.startswith(today) for path in regular_backups(hub)):
        return None
    return backup(hub)


def start_daily_backups(hub: Hub, stop: threading.Event, *,
                        check_seconds: float = 600) -> threading.Thread:
    """Start a daemon thread that calls ``backup_if_due`` now and every ``check_seconds``.

    The thread ends soon after ``stop`` is set and closes its own database connection. A failed
    backup is logged with its traceback and retried at the next check; it never stops the thread.
    """
    def run() -> None:
        try:
            while not stop.is_set():
                try:
                    made = backup_if_due(hub)
                    if made is not None:
                        log.info('ежедневная резервная копия: %s', made)
                except StorageFullError as exc:  # expected: one line, no traceback
                    log.warning('ежедневная резервная копия не сделана: %s', exc.message)
                except Exception:  # noqa: BLE001 - a background job logs and tries again later
                    log.exception('ежедневная резервная копия не удалась')
                stop.wait(check_seconds)
        finally:
            hub.close()

    thread = threading.Thread(target=run, name='sdlc-hub-backups', daemon=True)
    thread.start()
    return thread


__all__ = ['backup', 'backup_if_due', 'start_daily_backups', 'rotate', 'regular_backups']
