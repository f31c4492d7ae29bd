"""Serving the app with waitress: start-up lines, daily backups, graceful stop on SIGTERM/Ctrl+C."""
from __future__ import annotations

import logging
import signal
import threading

from waitress.server import create_server

from hublib import backups
from hublib.db import Hub

from .app import create_app

log = logging.getLogger('hubweb.serve')

# Uploads stream up to 256 MiB (contract §8.4) and waitress buffers a body before the app sees
# it, so its cap is that limit plus headroom for the request line; JSON bodies are cut at 32 MiB
# by the BodyLimit middleware.
MAX_REQUEST_BODY = 256 * 2**20 + 2**20


def startup_lines(url: str, hub: Hub, threads: int) -> list[str]:
    """What ``serve`` prints before serving; the first line is the URL (scripts parse it)."""
    data_dir = hub.data_dir.resolve()
    return [f'sdlc-hub listening on {url}',
            f'data: {data_dir}',
            f'tokens: setting "tokens" in {data_dir / "hub.sqlite"}; '
            f'print them with `sdlc-hub tokens --data {data_dir}`',
            f'threads: {threads}']


def serve(hub: Hub, *, host: str = '127.0.0.1', port: int = 8640, threads: int = 8,
          demo: bool = False) -> None:
    """Serve ``hub`` until SIGTERM or Ctrl+C."""
    app = create_app(hub)
    server = create_server(app, host=host, port=port, threads=threads,
                           max_request_body_size=MAX_REQUEST_BODY, ident='sdlc-hub')
    url = f'http://{host}:{server.effective_port}'
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
        for line in startup_lines(url, hub, threads):
            print(line, flush=True)
        if demo:
            _start_demo(hub, url)
        server.run()  # returns after Ctrl+C / SIGTERM, workers drained
    except KeyboardInterrupt:  # arrived before the loop ran
        pass
    finally:
        stop.set()
        server.task_dispatcher.shutdown()
        server.close()
        hub.close()
        log.info('stopped')


def _start_backups(hub: Hub, stop: threading.Event) -> None:
    backups.start_daily_backups(hub, stop)


def _start_demo(hub: Hub, url: str) -> None:
    from hublib import settings

    from .demo import start_demo
    start_demo(hub, url, settings.tokens(hub)['agent'])
