"""How the HTTP server spends its worker threads: one pool per kind of request, and the answers
waitress gives on its own (before the app runs) in the hub's JSON error body.

waitress reads and parses every request on its main thread, then queues the connection for a
worker (``ThreadedTaskDispatcher``: one FIFO queue, ``threads`` workers). With one queue, a
``/health`` or an agent's state page waits behind whatever interface reads came before it: 16
clients of the web UI on a mirror of 100,000 issues kept ``/health`` waiting 5.7 s (p95) and the
agent's pages 7.3 s. So the hub gives each kind of request its own waitress dispatcher
(:class:`LaneDispatcher`), chosen by path as the token rules choose the role
(``hubweb.auth.required_role``):

- ``quick``: what needs no token — ``/openapi.json``, the web page's files. None of it touches
  the database, so a couple of threads answer it at once whatever the load. ``GET /health``
  (memory only) is answered by the main thread itself right after it read the request
  (:class:`HubChannel`): no hand-over to a worker and back, each of which waits for the GIL
  while the workers are busy.
- ``agent``: ``/agent/*``. The agent's ingest never queues behind interface reads (SQLite's WAL
  lets its writes run beside them; only another write can hold it up).
- ``interface``: everything else, ``serve --threads`` workers. A request that found every one of
  them busy for longer than :data:`INTERFACE_WAIT_SECONDS` is taken out of the queue and answered
  503 with ``Retry-After`` by the quick lane (:class:`Overloaded`), instead of running late for a
  client that has probably given up; a connection whose client has left while it waited is
  dropped unanswered (waitress checks before it serves).

Python runs one thread at a time (the GIL) and the machine has few cores, so a worker pool of
its own is not yet a share of the CPU: eight busy interface workers still outnumber the one
agent thread. On Linux the interface workers run at nice :data:`INTERFACE_NICE`, so the scheduler
runs the main thread, the agent's and the quick lane's threads first (on the shared 2-core
machine, 20,000 issues, 16 clients: agent state pages p95 2.2-3.2x their idle figure instead of
4.0-4.4x, two paired runs each; see docs/reliability.md).

The answers waitress writes itself (a header block too large: 431, an unparseable request line or
header: 400, a body over its limit: 413, an unknown Transfer-Encoding: 501, the 503 above) carry
the hub's error body (``{"title", "description"}``, Russian, ``hubweb.errors``) instead of
waitress's English text: :class:`HubChannel` uses :class:`JsonErrorTask` for them. Both are
subclasses wired into a server of our own (:func:`create_hub_server`); waitress's globals stay as
they are.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time

from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import MultiSocketServer, TcpWSGIServer
from waitress.task import ErrorTask, ThreadedTaskDispatcher
from waitress.utilities import Error

from .auth import required_role
from .errors import waitress_error_body

log = logging.getLogger('hubweb.serve')

QUICK, AGENT, INTERFACE = 'quick', 'agent', 'interface'
# How long an interface request may wait for a worker before it is answered 503.
INTERFACE_WAIT_SECONDS = 3.0
# Seconds a client is told to wait after such a 503 (Retry-After).
OVERLOADED_RETRY_AFTER = 2
# How often the queues are looked at for requests that waited too long.
SHED_INTERVAL = 0.1
# The nice value of the interface workers (Linux): the scheduler gives the main thread (which
# reads and writes every connection), the agent's and the quick lane's threads the CPU first.
INTERFACE_NICE = 10


LANE_OF_ROLE = {None: QUICK, 'agent': AGENT, 'client': INTERFACE}


def lane_of(path: str) -> str:
    """The pool that serves a request for ``path``: by the role its token must have."""
    return LANE_OF_ROLE[required_role(path)]


INLINE = frozenset((('GET', '/health'),))


def answered_inline(method: str, path: str) -> bool:
    """Whether a request is answered on the main thread, with no worker: ``/health``, which
    touches nothing but memory (waitress' main thread must never wait)."""
    return (method, '/' + path.lstrip('/')) in INLINE


class Overloaded(Error):
    """Every interface worker stayed busy while the request waited."""

    code = 503
    reason = 'Service Unavailable'
    retry_after = OVERLOADED_RETRY_AFTER


class JsonErrorTask(ErrorTask):
    """waitress's own error answer with the hub's JSON error body (the connection then closes,
    as waitress always does after such an answer)."""

    def execute(self) -> None:
        error = self.request.error
        body = json.dumps(waitress_error_body(error.code), ensure_ascii=False).encode()
        self.status = f'{error.code} {error.reason}'
        self.response_headers.append(('Content-Type', 'application/json'))
        retry_after = getattr(error, 'retry_after', None)
        if retry_after:
            self.response_headers.append(('Retry-After', str(retry_after)))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class HubChannel(HTTPChannel):
    """A connection whose error answers are the hub's JSON, whose request is answered 503 when
    it waited for a worker longer than its lane allows, and whose ``GET /health`` is answered
    at once on the main thread."""

    error_task_class = JsonErrorTask
    queued_at = 0.0  # time.monotonic() when its request was queued for a worker
    lane = QUICK
    reading = False  # the main thread is reading from it (LaneDispatcher.add_task may answer inline)
    inline = False  # the request just read is answered right after the read, on the main thread

    def handle_read(self) -> None:
        self.reading = True
        try:
            super().handle_read()
        finally:
            self.reading = False
        if self.inline:
            self.inline = False
            self.service()
            self.handle_write()

    def service(self) -> None:
        request = self.requests[0]
        if request.error is None and self.server.task_dispatcher.overdue(self):
            request.error = Overloaded('every worker busy')
        super().service()


class LaneThreads(ThreadedTaskDispatcher):
    """waitress's dispatcher for one lane; its threads are named after it and run at the lane's
    ``nice`` value (Linux)."""

    def __init__(self, lane: str, nice: int = 0):
        super().__init__()
        self.lane, self.nice = lane, nice

    def start_new_thread(self, target, thread_no) -> None:
        threading.Thread(target=self._run, name=f'waitress-{self.lane}-{thread_no}',
                         args=(target, thread_no), daemon=True).start()

    def _run(self, target, thread_no) -> None:
        if self.nice and sys.platform == 'linux':
            # Linux schedules threads as tasks: a thread's own nice value (never raised back)
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.nice)
            except OSError as exc:
                log.warning('не удалось понизить приоритет потока %s: %s',
                            threading.current_thread().name, exc)
        target(thread_no)


class LaneDispatcher:
    """The task dispatcher of the server: each connection's next request goes to the pool of its
    lane (:func:`lane_of`). ``waits``: how long a lane's requests may wait for a worker (lanes
    not named wait as long as it takes); a thread of its own moves those that waited longer to
    the quick lane, which answers them 503 at once."""

    def __init__(self, threads: dict[str, int], waits: dict[str, float] | None = None,
                 nice: dict[str, int] | None = None):
        self.lanes = {lane: LaneThreads(lane, (nice or {}).get(lane, 0)) for lane in threads}
        for lane, count in threads.items():
            self.lanes[lane].set_thread_count(count)
        self.waits = dict(waits or {})
        self.stopped = threading.Event()
        if self.waits:
            threading.Thread(target=self._shed_overdue, name='waitress-overdue',
                             daemon=True).start()

    def add_task(self, channel: HubChannel) -> None:
        # waitress calls this with the channel's requests lock held and the request to serve
        # first in its list; a request that failed to parse may have no path (the quick lane)
        request = channel.requests[0]
        path = getattr(request, 'path', '') or ''
        if channel.reading and request.error is None and answered_inline(
                getattr(request, 'command', ''), path):
            channel.lane, channel.inline = QUICK, True
            return
        channel.lane = lane_of(path)
        channel.queued_at = time.monotonic()
        self.lanes[channel.lane].add_task(channel)

    def overdue(self, channel: HubChannel) -> bool:
        """Whether ``channel``'s request has waited for a worker longer than its lane allows."""
        limit = self.waits.get(channel.lane)
        return limit is not None and time.monotonic() - channel.queued_at > limit

    def _shed_overdue(self) -> None:
        while not self.stopped.wait(SHED_INTERVAL):
            for lane in self.waits:
                threads = self.lanes[lane]
                with threads.lock:  # the queue is FIFO: the overdue ones are at its head
                    shed = []
                    while threads.queue and self.overdue(threads.queue[0]):
                        shed.append(threads.queue.popleft())
                for channel in shed:
                    self.lanes[QUICK].add_task(channel)

    def shutdown(self, cancel_pending: bool = True, timeout: float = 5) -> bool:
        """Stop every lane's threads, letting running requests end within ``timeout`` in all."""
        self.stopped.set()
        for threads in self.lanes.values():
            threads.set_thread_count(0)
        deadline = time.monotonic() + timeout
        for threads in self.lanes.values():
            threads.shutdown(cancel_pending, max(0.0, deadline - time.monotonic()))
        return True


class HubServer(TcpWSGIServer):
    """waitress's TCP server with the hub's channel."""

    channel_class = HubChannel


def create_hub_server(app, sockets, *, threads: dict[str, int], waits: dict[str, float],
                      nice: dict[str, int] | None = None, **adjustments):
    """A waitress server of ``app`` on the bound ``sockets`` (what ``waitress.create_server``
    builds for them, with :class:`HubServer` and a :class:`LaneDispatcher`). ``adjustments``
    are waitress's settings; ``channel_request_lookahead`` is set so that a worker learns when
    its client has gone (waitress notices a closed connection only while it reads from it)."""
    adj = Adjustments(sockets=sockets, channel_request_lookahead=1, **adjustments)
    dispatcher = LaneDispatcher(threads, waits, nice)
    socket_map: dict = {}
    servers = [HubServer(app, socket_map, _sock=sock, dispatcher=dispatcher, adj=adj,
                         bind_socket=False,
                         sockinfo=(sock.family, sock.type, sock.proto, sock.getsockname()))
               for sock in adj.sockets]
    if len(servers) == 1:
        return servers[0]
    return MultiSocketServer(socket_map, adj, [(server.effective_host, server.effective_port)
                                               for server in servers],
                             dispatcher, servers[-1].log_info)
