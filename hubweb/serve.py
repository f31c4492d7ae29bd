"""Serving the app with waitress: start-up lines, daily backups, graceful stop on SIGTERM/Ctrl+C."""
from __future__ import annotations

import logging
import signal
import threading

from waitress.server import create_server

from hublib.db import Hub

from .app import create_app

log = logging.getLogger('hubweb.serve')

# Uploads stream up to 256 MiB (contract §8.4); JSON bodies are cut at 32 MiB by middleware.
MAX_REQUEST_BODY = 256 * 2**20 + 2**20


def serve(hub: Hub, *, host: str = '127.0.0.1', port: int = 8640, threads: int = 8,
          demo: bool = False) -> None:
    """Serve ``hub`` until SIGTERM or Ctrl+C."""
    app = create_app(hub)
    server = create_server(app, host=host, port=port, threads=threads,
                           max_request_body_size=MAX_REQUEST_BODY, ident='sdlc-hub')
    url = f'http://{host}:{server.effective_port}'
    stop = threading.Event()
    _start_backups(hub, stop)
    # The first line is a contract with scripts and tests: they read the URL from it.
    print(f'sdlc-hub listening on {url}', flush=True)
    print(f'data: {hub.data_dir.resolve()}', flush=True)
    print(f'tokens: in the database setting "tokens"; print them with '
          f'`sdlc-hub tokens --data {hub.data_dir}`', flush=True)
    if demo:
        _start_demo(hub, url)

    def shutdown(signum, frame):
        log.info('signal %s: stopping', signum)
        stop.set()
        server.close()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, shutdown)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    except OSError:
        if not stop.is_set():  # closing the socket from the handler ends run() with EBADF
            raise
    finally:
        stop.set()
        server.close()
        hub.close()
        log.info('stopped')


def _start_backups(hub: Hub, stop: threading.Event) -> None:
    try:
        from hublib import backups
    except ImportError:
        return
    backups.start_daily_backups(hub, stop)


def _start_demo(hub: Hub, url: str) -> None:
    from hublib import settings

    from .sim import start_demo
    start_demo(hub, url, settings.tokens(hub)['agent'])
