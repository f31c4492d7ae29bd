"""Child processes on 127.0.0.1 for benchmarks and fault tests: a real ``sdlc-hub serve``, the
demo's fake Jira REST server (``scripts/fake_jira.py``) and ``sdlc-hub agent``."""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

LISTENING = 'sdlc-hub listening on '
DATA = 'data: '
ROOT = Path(__file__).resolve().parents[2]
JIRA_LISTENING = 'fake-jira listening on '


class ServerProcess:
    """``python -m hubweb.cli serve`` on a free loopback port; ``url`` and ``data_dir`` are read
    from its first lines. ``data_dir=None`` leaves the directory to the CLI's default (run in
    ``cwd`` with ``env`` added to the environment). ``module`` is what ``python -m`` runs: the CLI,
    or a test wrapper around it (``tests.support.slow_commit``)."""

    def __init__(self, data_dir: str | os.PathLike | None, *, threads: int = 8, port: int = 0,
                 start_timeout: float = 30.0, extra_args: tuple[str, ...] = (),
                 cwd: str | os.PathLike | None = None, env: dict[str, str] | None = None,
                 module: str = 'hubweb.cli'):
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.output: list[str] = []
        data_args = ['--data', str(self.data_dir)] if self.data_dir is not None else []
        self.process = subprocess.Popen(
            [sys.executable, '-m', module, 'serve', *data_args,
             '--host', '127.0.0.1', '--port', str(port), '--threads', str(threads), *extra_args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding='utf-8',
            errors='replace', cwd=cwd, env={**os.environ, **(env or {}), 'PYTHONUNBUFFERED': '1'})
        # The output is drained by a thread from the start: a chatty server never blocks on a
        # full pipe, and a silent or hung one never blocks the caller on readline().
        self._lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        self.url = self._wait_for_url(start_timeout)

    def _wait_for_url(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        url = None
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                line = self._lines.get(timeout=0.2)
            except queue.Empty:
                continue
            if line.startswith(LISTENING):
                url = line[len(LISTENING):].strip()
            elif url and line.startswith(DATA):  # printed right after the URL
                self.data_dir = self.data_dir or Path(line[len(DATA):].strip())
                return url
        self.kill()
        raise RuntimeError('сервер не запустился:\n' + self.log_text()[-3000:])

    def _drain(self) -> None:
        for line in self.process.stdout:
            self.output.append(line)
            self._lines.put(line)

    def tokens(self) -> dict[str, str]:
        """Agent and client tokens, read through ``sdlc-hub tokens``."""
        out = subprocess.run([sys.executable, '-m', 'hubweb.cli', 'tokens', '--data', str(self.data_dir)],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    def kill(self) -> None:
        """``kill -9``: no cleanup, no checkpoint (on Windows: TerminateProcess)."""
        if self.process.poll() is None:
            if hasattr(signal, 'SIGKILL'):
                self.process.send_signal(signal.SIGKILL)
            else:
                self.process.kill()
        self.process.wait(timeout=30)

    def stop(self, timeout: float = 15) -> int:
        """Graceful stop (SIGTERM), then kill if it hangs; the exit code."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.process.returncode

    def log_text(self) -> str:
        return ''.join(self.output)

    def __enter__(self) -> 'ServerProcess':
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class FakeJiraProcess:
    """``scripts/fake_jira.py`` with ``args`` on a free loopback port; ``url`` from its first line."""

    def __init__(self, *args: str, start_timeout: float = 60.0):
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / 'scripts' / 'fake_jira.py'), '--port', '0', *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding='utf-8',
            errors='replace', env={**os.environ, 'PYTHONUNBUFFERED': '1'})
        deadline = time.monotonic() + start_timeout
        self.output: list[str] = []
        for line in self.process.stdout:
            self.output.append(line)
            if line.startswith(JIRA_LISTENING):
                self.url = line[len(JIRA_LISTENING):].strip()
                break
            if time.monotonic() > deadline:
                break
        else:
            line = ''
        if not getattr(self, 'url', None):
            self.stop()
            raise RuntimeError('фальшивая Jira не запустилась:\n' + ''.join(self.output)[-3000:])
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        for line in self.process.stdout:
            self.output.append(line)

    def stop(self, timeout: float = 15) -> int:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def __enter__(self) -> 'FakeJiraProcess':
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def agent_command(hub_url: str, jira_url: str, *args: str) -> list[str]:
    """The command line of ``sdlc-hub agent`` from this interpreter (tokens go in the environment)."""
    return [sys.executable, '-m', 'hubweb.cli', 'agent', '--hub', hub_url, '--jira', jira_url, *args]


def agent_environment(agent_token: str, jira_token: str) -> dict[str, str]:
    return {**os.environ, 'SDLC_HUB_AGENT_TOKEN': agent_token, 'JIRA_TOKEN': jira_token,
            'PYTHONUNBUFFERED': '1'}


__all__ = ['ServerProcess', 'FakeJiraProcess', 'agent_command', 'agent_environment']
