"""Driving `tests.table.workers` child processes from a test."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 240.0


class WorkerFailed(AssertionError):
    """A worker reported an error, died, or did not answer in time."""


class Worker:
    """One child process with its own SparkSession, running commands sent over stdin."""

    def __init__(
        self, url: str, warehouse: str, table: str, layout: str, *, txn_timeout_s: float = 60
    ) -> None:
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115  # closed by close()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.table.workers",
                url,
                warehouse,
                table,
                layout,
                str(txn_timeout_s),
            ],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            # Unbuffered: a buffered reader could hold a complete line that select() on the
            # pipe no longer reports, and the test would wait for it forever.
            bufsize=0,
            env=env,
        )
        self.ready = False

    def stderr_tail(self, chars: int = 3000) -> str:
        """The end of what the child wrote to stderr (for failure messages)."""
        self._stderr.seek(0)
        return self._stderr.read()[-chars:]

    def stacks(self) -> str:
        """The child's Python stacks (it dumps them on SIGUSR1) and the end of its stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGUSR1)
            time.sleep(2)
        return self.stderr_tail(8000)

    def read_line(self, timeout_s: float) -> str | None:
        """The next line of output, or None when the child exited or stayed silent."""
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
        if not ready:
            return None
        line = self.proc.stdout.readline()  # raw: reads up to the newline, never beyond
        return line.decode().rstrip("\n") if line else None

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Wait for the child's ``ready`` line."""
        deadline = time.monotonic() + timeout_s
        while not self.ready:
            line = self.read_line(max(0.1, deadline - time.monotonic()))
            if line is None:
                raise WorkerFailed(f"worker did not start:\n{self.stderr_tail()}")
            self.ready = line == "ready"

    def send(self, command: dict[str, Any]) -> None:
        """Start a command without waiting for it."""
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(command) + "\n").encode())

    def result(
        self, on_progress: Callable[[str], None] | None = None, timeout_s: float = 300
    ) -> dict[str, Any]:
        """Read progress lines until the command's result; raise if it failed."""
        deadline = time.monotonic() + timeout_s
        seen: list[str] = []
        while True:
            line = self.read_line(max(0.1, deadline - time.monotonic()))
            if line is None:
                raise WorkerFailed(
                    f"worker gave no result within {timeout_s} s; its last messages: "
                    f"{seen[-5:]}\n{self.stacks()}"
                )
            seen.append(line)
            if line.startswith("P ") and on_progress is not None:
                on_progress(line[2:])
            elif line.startswith("R "):
                result: dict[str, Any] = json.loads(line[2:])
                return result
            elif line.startswith("E "):
                raise WorkerFailed(f"worker failed:\n{json.loads(line[2:])}")

    def run(self, command: dict[str, Any], timeout_s: float = 300) -> dict[str, Any]:
        """Run one command and return its result."""
        self.send(command)
        return self.result(timeout_s=timeout_s)

    def kill(self) -> None:
        """SIGKILL the child and reap it."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=60)

    def close(self) -> None:
        """Ask the child to exit (kill it if it does not), and release its pipes."""
        if self.proc.poll() is None:
            try:
                self.send({"op": "exit"})
                self.proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self._stderr.close()


def start_workers(
    count: int, url: str, warehouse: str, table: str, layout: str, *, txn_timeout_s: float = 60
) -> list[Worker]:
    """Start ``count`` workers at once (their JVMs start in parallel) and wait until ready;
    each checks that ``table`` has the ``layout`` the test runs for."""
    workers = [
        Worker(url, warehouse, table, layout, txn_timeout_s=txn_timeout_s) for _ in range(count)
    ]
    try:
        for worker in workers:
            worker.wait_ready()
    except BaseException:
        for worker in workers:
            worker.kill()
            worker.close()
        raise
    return workers
