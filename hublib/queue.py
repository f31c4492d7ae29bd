"""The command queue in one import (contract §9): batches for interfaces (``hublib.batches``) and
claim, report and agent status for agents (``hublib.claims``).

A plain re-export for scripts (``queue.create_batch``, ``queue.claim_command``, …); the rules live
in the two modules it names.
"""
from __future__ import annotations

from .batches import (batch, batch_schema, batches, cancel_batch, command, create_batch,
                      insert_batch, next_temp_key, retry_batch)
from .claims import agents, claim_command, report_command, submit_claim, submit_report

__all__ = ['create_batch', 'insert_batch', 'cancel_batch', 'retry_batch', 'next_temp_key', 'batch',
           'batches', 'command', 'batch_schema', 'claim_command', 'submit_claim', 'report_command',
           'submit_report', 'agents']
