"""Processes a test starts that run a JVM of their own (the ``jvm_processes`` fixture).

A test that takes the fixture is marked ``jvm`` (tests/conftest.py), which keeps it out of
`make check`. Every process started here is killed at the end of the test if it still runs.
The suite keeps such tests few: each JVM start costs seconds of CI on the 2-core machine, so a
command that can run in-process (click's ``CliRunner`` on the shared session) does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.support.spark_settings import SHORT_LIVED_JVM

if TYPE_CHECKING:
    from tests.table.processes import Worker

# The console script pip installed beside this interpreter: the real `versioned` entry point.
SCRIPT = str(Path(sys.executable).with_name("versioned"))
# The JVM prints this notice itself when it starts (Spark 4's launcher adds the module).
JVM_NOTICE = "WARNING: Using incubator modules"
# An environment variable a test gives a process, which every process it starts inherits
# (spark-submit, Spark's launcher, the JVM): `marked_processes` finds them, orphans too.
MARK = "VERSIONED_TEST_PROCESS_MARK"


def script_env(**overrides: str | None) -> dict[str, str]:
    """The environment of a child process: this one's (with PYTHONPATH naming this process's
    import path, so the checkout is what runs) without VERSIONED_LOG_LEVEL, with the JVM
    options of a short-lived test JVM (`SHORT_LIVED_JVM`), then ``overrides`` (``None``
    removes a variable)."""
    env = {k: v for k, v in os.environ.items() if k != "VERSIONED_LOG_LEVEL"}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    env["SPARK_SUBMIT_OPTS"] = SHORT_LIVED_JVM  # the driver JVM's options (the launcher's)
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def marked_processes(mark: str) -> list[int]:
    """The running processes (zombies excepted) whose environment has ``MARK=mark``: what a
    process started with that mark left behind, wherever it was reparented (Linux)."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # ended meanwhile, or not ours to read
            continue
        if needle in environ and state != "Z":
            found.append(int(entry.name))
    return found


class JvmProcesses:
    """Starts child processes for one test and kills whatever still runs at its end."""

    def __init__(self) -> None:
        self._started: list[subprocess.Popen[Any]] = []

    def run_script(
        self,
        args: Sequence[str],
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 600,
    ) -> subprocess.CompletedProcess[str]:
        """Run the installed `versioned` script with ``args`` to its end, as a user runs it."""
        return self.run([SCRIPT, *args], cwd=cwd, env=env, timeout=timeout)

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 600,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` to its end; its output is captured as text."""
        if cwd is not None:
            cwd.mkdir(parents=True, exist_ok=True)
        return subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env if env is not None else script_env(),
            timeout=timeout,
        )

    def workers(
        self,
        count: int,
        url: str,
        warehouse: str,
        table: str,
        layout: str,
        *,
        txn_timeout_s: float = 60,
    ) -> list[Worker]:
        """Start ``count`` worker processes with a SparkSession each (`tests.table.workers`),
        at once, and wait until they are ready (`tests.table.processes.start_workers`)."""
        from tests.table.processes import start_workers

        started = start_workers(count, url, warehouse, table, layout, txn_timeout_s=txn_timeout_s)
        self._started.extend(worker.proc for worker in started)
        return started

    def popen(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
        """Start ``argv`` (``subprocess.Popen`` arguments); killed at the test's end."""
        proc: subprocess.Popen[Any] = subprocess.Popen(list(argv), **kwargs)
        self._started.append(proc)
        return proc

    def close(self) -> None:
        """Kill and reap every started process that still runs."""
        for proc in self._started:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=60)
