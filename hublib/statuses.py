"""The statuses of commands, batches and downloaded attachments (spec «Пакеты и команды»,
«Скачанные вложения», contract §9, §10): names only, so that every module that speaks of a status
imports it from here and from nothing heavier. This module imports nothing of the hub.
"""
from __future__ import annotations

# A command waits in the queue, is delivered to the agent, then ends in one of TERMINAL.
ACTIVE = ('queued', 'claimed')
TERMINAL = ('done', 'failed', 'skipped', 'cancelled', 'confirmed_by_state')
STATUSES = ACTIVE + TERMINAL
# Ended with its work done (read your writes, full-run marking, side effects of a report) or not.
DONE_STATUSES = ('done', 'confirmed_by_state')
NOT_DONE = ('failed', 'skipped', 'cancelled')
# What an agent may report (``cancelled`` is the hub's own ending).
REPORT_STATUSES = ('done', 'failed', 'skipped', 'confirmed_by_state')
# A batch's status, computed from its commands at every read.
BATCH_STATUSES = ('queued', 'running', 'cancelled', 'done')
# An attachment's state, computed from its stored file and its fetch commands.
ATTACHMENT_STATES = ('ready', 'fetching', 'failed', 'none')

__all__ = ['ACTIVE', 'TERMINAL', 'STATUSES', 'DONE_STATUSES', 'NOT_DONE', 'REPORT_STATUSES',
           'BATCH_STATUSES', 'ATTACHMENT_STATES']
