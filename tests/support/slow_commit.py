"""``python -m tests.support.slow_commit serve …``: ``sdlc-hub serve`` whose ``POST /batches``
stops between the commit and the answer, for the fault test of idempotency keys (issue 19).

With ``SDLC_HUB_TEST_PAUSE_AFTER_COMMIT=<seconds>`` in the environment, every queued batch prints
``COMMITTED <id>`` once its transaction has committed and then sleeps before the answer goes out:
the client times out, and the test kills the process with SIGKILL in that window. Test code only;
the shipped package knows nothing of it.
"""
from __future__ import annotations

import os
import sys
import time

from hublib import idempotency
from hubweb.cli import main

PAUSE_ENV = 'SDLC_HUB_TEST_PAUSE_AFTER_COMMIT'
COMMITTED = 'COMMITTED '


def pausing_after_commit(queue_batch, seconds: float):
    """``idempotency.queue_batch`` that returns ``seconds`` after its write committed."""
    def queue_batch_then_pause(*args, **kwargs):
        answer = queue_batch(*args, **kwargs)  # the write transaction has committed here
        print(f'{COMMITTED}{answer.body.get("id")}', flush=True)
        time.sleep(seconds)
        return answer
    return queue_batch_then_pause


if __name__ == '__main__':
    if os.environ.get(PAUSE_ENV):
        # the resource looks the function up on the module at every request
        idempotency.queue_batch = pausing_after_commit(idempotency.queue_batch,
                                                       float(os.environ[PAUSE_ENV]))
    sys.exit(main(sys.argv[1:]))
