"""Serving the app with waitress: start-up lines, daily backups, graceful stop on SIGTERM/Ctrl+C."""
from __future__ import annotations

import gc
import logging
import os
import shlex
import signal
import socket
import sys
import threading
from pathlib import Path

from waitress.adjustments import Adjustments

from hublib import backups
from hublib.db import Hub

from .app import create_app
from .lanes import (AGENT, INTERFACE, INTERFACE_NICE, INTERFACE_WAIT_SECONDS, QUICK,
                    create_hub_server)
from .limits import (AGENT_THREADS, CHANNEL_TIMEOUT, CLEANUP_INTERVAL, CONNECTION_LIMIT,
                     QUICK_THREADS, RECV_BYTES, THREADS, USE_POLL)

log = logging.getLogger('hubweb.serve')

# Uploads stream up to 256 MiB (contract §8.4) and waitress buffers a body before the app sees
# it, so its cap is that limit plus headroom for the request line; JSON bodies are cut at 32 MiB
# by the BodyLimit middleware.
MAX_REQUEST_BODY = 256 * 2**20 + 2**20


class ListenError(OSError):
    """The server cannot listen on the given host and port; the message says why, in one line."""


def check_listen_address(host: str, port: int) -> None:
    """Refuse a host that names no address (``256.1.1.1``, a typo) before anything is opened."""
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as exc:
        raise ListenError(f'не удалось слушать {host}:{port}: неверный адрес или имя хоста '
                          f'({getattr(exc, "strerror", None) or exc})') from None


def listen_sockets(host: str, port: int) -> list[socket.socket]:
    """Bound sockets for every address ``host`` names (as waitress resolves it), not yet
    listening; ListenError in one line when the port is taken or the address is not ours.

    ``serve`` binds before it opens the hub, so a busy port on a new directory creates nothing
    (no database, no tokens)."""
    check_listen_address(host, port)
    bound: list[socket.socket] = []
    try:
        for family, kind, proto, address in Adjustments(host=host, port=port).listen:
            sock = socket.socket(family, kind, proto)
            bound.append(sock)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if os.name == 'posix':  # as waitress does; on Windows it would let two servers share
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
    except (OSError, ValueError) as exc:
        for sock in bound:
            sock.close()
        raise ListenError(f'не удалось слушать {host}:{port}: '
                          f'{getattr(exc, "strerror", None) or exc}') from None
    return bound


def cli_command(*args: str) -> str:
    """A command line that runs ``sdlc-hub *args`` from here, even with the venv not activated.

    The console script beside this interpreter (``.venv/bin/sdlc-hub``, on Windows
    ``.venv\\Scripts\\sdlc-hub.exe``), relative when it lies under the current directory;
    ``python -m hubweb.cli`` when there is none.
    """
    script = Path(sys.executable).with_name('sdlc-hub.exe' if os.name == 'nt' else 'sdlc-hub')
    program = [_shown(script)] if script.is_file() else [_shown(Path(sys.executable)), '-m', 'hubweb.cli']
    words = [*program, *args]
    if os.name == 'nt':  # cmd and PowerShell: double quotes around a word with blanks
        return ' '.join(f'"{word}"' if not word or any(c in word for c in ' \t') else word
                        for word in words)
    return shlex.join(words)


def _shown(path: Path) -> str:
    absolute = Path(os.path.abspath(path))  # not resolve(): a venv's python is a symlink
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


def startup_lines(url: str, hub: Hub, threads: dict[str, int], *,
                  demo: bool = False) -> list[str]:
    """What ``serve`` prints before serving; the first line is the URL (scripts parse it)."""
    data_dir = hub.data_dir.resolve()
    lines = [f'sdlc-hub listening on {url}',
             f'data: {data_dir}',
             f'tokens: setting "tokens" in {data_dir / "hub.sqlite"}; '
             f'print them with `{cli_command("tokens", "--data", str(data_dir))}`',
             f'threads: {threads[INTERFACE]} interface, {threads[AGENT]} agent, '
             f'{threads[QUICK]} quick (/health, /openapi.json, the web page)']
    if demo:
        lines.append('demo: фальшивая Jira и агент sdlc-hub; данные и токены — демонстрационные')
    return lines


def serve(hub: Hub, *, host: str = '127.0.0.1', port: int = 8640, threads: int = THREADS,
          agent_threads: int = AGENT_THREADS, demo: bool = False,
          sockets: list[socket.socket] | None = None, connection_limit: int = CONNECTION_LIMIT,
          channel_timeout: int = CHANNEL_TIMEOUT) -> None:
    """Serve ``hub`` until SIGTERM or Ctrl+C, on ``sockets`` (:func:`listen_sockets`) or on
    ``host``:``port``: ``threads`` workers for the interfaces, ``agent_threads`` for the agent
    (``hubweb.lanes``)."""
    app = create_app(hub)
    try:
        sockets = sockets if sockets is not None else listen_sockets(host, port)
    except ListenError:
        hub.close()
        raise
    _allow_descriptors(connection_limit)
    lanes = {INTERFACE: threads, AGENT: agent_threads, QUICK: QUICK_THREADS}
    server = create_hub_server(app, sockets, threads=lanes,
                               waits={INTERFACE: INTERFACE_WAIT_SECONDS},
                               nice={INTERFACE: INTERFACE_NICE},
                               max_request_body_size=MAX_REQUEST_BODY, ident='sdlc-hub',
                               connection_limit=connection_limit, channel_timeout=channel_timeout,
                               cleanup_interval=min(CLEANUP_INTERVAL, channel_timeout),
                               asyncore_use_poll=USE_POLL, recv_bytes=RECV_BYTES)
    url = f'http://{host}:{sockets[0].getsockname()[1]}'
    stop = threading.Event()

    def shutdown(signum, frame):
        # SIGTERM behaves like Ctrl+C: waitress's run() answers KeyboardInterrupt by letting its
        # worker threads finish their requests (up to 5 s) before returning. Closing the server
        # from here instead would pull the rug from under a worker still writing its response.
        if stop.is_set():
            return
        log.info('signal %s: stopping', signum)
        stop.set()
        raise KeyboardInterrupt

    # Installed before the URL is printed: whoever saw the URL may stop us gracefully at once.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, shutdown)
    try:
        _start_backups(hub, stop)
        # One write: print() sends the text and its newline apart, and a log line of the backup
        # thread (stderr may share the pipe) could land between the URL and its end of line.
        sys.stdout.write(''.join(f'{line}\n' for line in startup_lines(url, hub, lanes, demo=demo)))
        sys.stdout.flush()
        if demo:
            _start_demo(hub, url)
        settle_heap()
        server.run()  # returns after Ctrl+C / SIGTERM, workers drained
    except KeyboardInterrupt:  # arrived before the loop ran
        pass
    finally:
        stop.set()
        server.task_dispatcher.shutdown()
        server.close()
        hub.close()
        log.info('stopped')


# Collections of the youngest generation: one per this many new containers (Python's default: 700).
GC_YOUNG_THRESHOLD = 20_000


def settle_heap() -> None:
    """Tune the garbage collector for serving, once the app is built.

    A request builds thousands of containers that reference counting frees when it ends (a
    history page of 1,000 items: 1,000 dicts and ~3,000 tuples). With Python's defaults the
    collector still walks them every 700 new ones: ~3 young collections a history page, 1.0-1.3 of
    ~26 ms CPU (4-5 %, measured in process at 200,000 issues on the loaded machine); with a young
    generation of 20,000 none runs. Frozen, the start-up heap (the imported libraries, ~40,000
    objects) is left out of every later full collection."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])


def _allow_descriptors(connection_limit: int) -> None:
    """Raise the soft limit of open files (POSIX) to hold ``connection_limit`` sockets plus the
    database's files, as far as the hard limit allows; warn when it does not."""
    try:
        import resource
    except ImportError:  # Windows: no such limit on sockets
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connection_limit + 200
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    if target < wanted:
        log.warning('ulimit -n %d: меньше, чем нужно для %d соединений', target, connection_limit)


def _start_backups(hub: Hub, stop: threading.Event) -> None:
    backups.start_daily_backups(hub, stop)


def _start_demo(hub: Hub, url: str) -> None:
    from hublib import settings

    from .demo import start_demo
    start_demo(hub, url, settings.tokens(hub)['agent'])
