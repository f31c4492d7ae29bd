"""The HTTP server's connection limits: chosen here, offered as ``serve`` options by the CLI and
applied by ``hubweb.serve`` (a module of its own so that the CLI reads them without loading
waitress and falcon).

waitress stops accepting once ``connection_limit`` connections are open (its default, 100, let
~100 idle or half-open sockets make ``/health`` time out) and closes a connection idle for
``channel_timeout`` seconds, checked every ``cleanup_interval``. An idle connection costs a socket,
not a worker thread (waitress reads a whole request before a worker sees it), so the limit can be
high: 1,000 where waitress can poll() (POSIX); 500 where it must select() (Windows, 512 sockets at
most). Idle connections go after 60 s instead of 120, looked for every 10 s instead of 30.

Worker threads come in pools by kind of request (``hubweb.lanes``): ``--threads`` for the
interfaces (default 8), ``--agent-threads`` for ``/agent/*`` (default 2: one agent works page by
page, and SQLite takes one write at a time), and :data:`QUICK_THREADS` for ``/health``,
``/openapi.json`` and the web page's files.
"""
from __future__ import annotations

import select

USE_POLL = hasattr(select, 'poll')
CONNECTION_LIMIT = 1000 if USE_POLL else 500
CHANNEL_TIMEOUT = 60
CLEANUP_INTERVAL = 10
THREADS = 8
AGENT_THREADS = 2
QUICK_THREADS = 2
# What one socket.recv() of waitress's main thread may read (its default: 8 KiB). Every turn of
# the main loop takes the GIL again, and while workers are busy each take waits its turn: an
# agent's state page (~1 MiB) was read in 128 turns, now in 4.
RECV_BYTES = 256 * 1024
