"""A real Spark standalone cluster on loopback, from the pip-installed pyspark, for a test run.

    python -m tests.support.spark_cluster [--executors 2] -- python -m pytest tests/table ...

starts a Master and one Worker (``spark-class org.apache.spark.deploy.master.Master`` /
``...worker.Worker``, bound to 127.0.0.1 on free ports; ``--workers N``: N Workers, each a
process with a work folder of its own), waits until the workers have registered,
runs the command with ``VERSIONED_TEST_SPARK_MASTER=spark://127.0.0.1:PORT`` (the ``spark``
fixture of tests/conftest.py then builds its session on the cluster: two executor JVMs of one
core each, their Python workers separate processes), and stops both daemons whatever happens
(also on Ctrl-C or a failed start). Exits with the command's exit code.

The pip package ships ``bin/spark-class`` and the Master/Worker classes but no ``sbin`` start
scripts, and a Worker writes its executors' folders under ``$SPARK_HOME/work``: so the daemons
run with a scratch ``SPARK_HOME`` that links the package's ``bin``, ``jars`` and ``python``
(research/streaming-sink-and-cluster.md §2), removed at the end with the logs unless the run
failed (then its path is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from tests.support.spark_settings import SHORT_LIVED_JVM

ENV_MASTER = "VERSIONED_TEST_SPARK_MASTER"
"""The master URL the test session connects to (unset: ``local[2]``)."""
ENV_EXECUTORS = "VERSIONED_TEST_SPARK_EXECUTORS"
"""How many executors the test session waits for before its first test."""
# Read at import (conftest imports this module while collecting), before the autouse fixture
# of tests/conftest.py hides every VERSIONED_* variable from the tests.
MASTER = os.environ.get(ENV_MASTER)
"""The cluster this test run is on, or None (local)."""
EXECUTORS = int(os.environ.get(ENV_EXECUTORS) or 2)

EXECUTOR_MEMORY_MB = 1024
START_TIMEOUT_S = 120.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def scratch_spark_home(root: Path) -> Path:
    """A writable ``SPARK_HOME`` linking the pip package's launchers, jars and Python code."""
    import pyspark

    package = Path(pyspark.__file__).parent
    home = root / "spark-home"
    home.mkdir()
    for part in ("bin", "jars", "python", "sbin"):
        if (package / part).exists():
            (home / part).symlink_to(package / part)
    (home / "work").mkdir()
    (home / "logs").mkdir()
    return home


class Daemon:
    """A Spark daemon JVM started by ``spark-class``, its output in a log file."""

    def __init__(self, name: str, args: Sequence[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [str(Path(env["SPARK_HOME"]) / "bin" / "spark-class"), *args],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group: stopped with its children
            )

    def check_running(self) -> None:
        if self.process.poll() is not None:
            tail = self.log.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the Spark {self.name} exited ({self.process.returncode}):\n{tail}")

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)


def _alive_workers(ui_port: int) -> list[dict[str, object]]:
    """The workers the master's JSON status page lists as ALIVE (empty while it starts: the
    page may then refuse the connection, or answer with an empty or partial body)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as reply:
            status = json.load(reply)
    except (OSError, ValueError):
        return []
    return [w for w in status.get("workers", []) if w.get("state") == "ALIVE"]


@dataclass
class Cluster:
    """A running test cluster: its master URL, and whether to keep its logs when stopped."""

    url: str
    logs: Path
    keep_logs: bool = False


@contextmanager
def standalone_cluster(
    executors: int = 2, *, workers: int = 1, keep: bool = False
) -> Iterator[Cluster]:
    """Start a Master and ``workers`` Workers with room for ``executors`` one-core executors
    between them (each Worker in a process of its own, with a work folder of its own); yield
    it; stop them all when done, and remove the scratch folder and logs unless the block
    failed or asked to keep them (``keep``, `Cluster.keep_logs`)."""
    if not 1 <= workers <= executors:
        raise ValueError(f"{workers} workers for {executors} executors")
    root = Path(tempfile.mkdtemp(prefix="versioned-cluster-"))
    home = scratch_spark_home(root)
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(home / "logs"),
        "SPARK_DAEMON_JAVA_OPTS": SHORT_LIVED_JVM,  # the Master's and the Workers'
        "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
    }
    port, ui_port = free_port(), free_port()
    master_url = f"spark://127.0.0.1:{port}"
    daemons: list[Daemon] = []
    failed = True
    try:
        daemons.append(
            Daemon(
                "master",
                [
                    *("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"),
                    *("--port", str(port), "--webui-port", str(ui_port)),
                ],
                env,
                root / "master.log",
            )
        )
        for i, cores in enumerate(_shares(executors, workers)):
            work = home / "work" if workers == 1 else root / f"worker-{i}"
            work.mkdir(exist_ok=True)
            daemons.append(
                Daemon(
                    f"worker {i}",
                    [
                        *("org.apache.spark.deploy.worker.Worker", master_url),
                        *("--host", "127.0.0.1", "--cores", str(cores)),
                        *("--memory", f"{cores * EXECUTOR_MEMORY_MB}m"),
                        *("--work-dir", str(work), "--webui-port", str(free_port())),
                    ],
                    env,
                    root / f"worker-{i}.log",
                )
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while len(_alive_workers(ui_port)) < workers:
            for daemon in daemons:
                daemon.check_running()
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{workers} worker(s) did not register within {START_TIMEOUT_S:.0f} s ({root})"
                )
            time.sleep(0.5)
        print(f"spark cluster: {master_url} (master UI port {ui_port}, logs {root})", flush=True)
        cluster = Cluster(master_url, root, keep_logs=keep)
        yield cluster
        failed = cluster.keep_logs
    finally:
        for daemon in reversed(daemons):
            daemon.stop()
        if failed:
            print(f"spark cluster stopped; its logs stay in {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)


def cluster_conf() -> dict[str, str]:
    """Session settings for the test cluster: one-core executors that fit the worker, and the
    checkout and the run's ``PYTHONPATH`` on the executors' Python path.

    Its JVMs (driver, executors, and the daemons) live for the few minutes of `make
    test-cluster`, so they take the short-lived JVM options (C1 only, the serial collector):
    C2's compiling never paid off there and took CPU from the tier running beside it in CI.
    Spark's generated code still runs: code generation is Spark's, not the JIT's."""
    conf = {
        "spark.executor.cores": "1",
        "spark.executor.memory": f"{EXECUTOR_MEMORY_MB}m",
        "spark.executor.extraJavaOptions": SHORT_LIVED_JVM,
        "spark.driver.extraJavaOptions": SHORT_LIVED_JVM,
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
    }
    # Test helpers are pickled by reference (``tests.…``): executors import them from the
    # checkout, as they import a worktree's ``versioned`` from its PYTHONPATH.
    paths = [os.getcwd(), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    conf["spark.executorEnv.PYTHONPATH"] = os.pathsep.join(paths)
    return conf


def wait_for_executors(spark: object, count: int, timeout_s: float = START_TIMEOUT_S) -> None:
    """Block until ``count`` executors have registered with the session's driver."""
    tracker = spark.sparkContext._jsc.sc().statusTracker()  # type: ignore[attr-defined]
    deadline = time.monotonic() + timeout_s
    # getExecutorInfos lists the driver too.
    while len(tracker.getExecutorInfos()) - 1 < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{count} executors did not register within {timeout_s:.0f} s")
        time.sleep(0.5)


def _shares(executors: int, workers: int) -> list[int]:
    """The cores of each worker: ``executors`` one-core executors spread over ``workers``."""
    return [executors // workers + (1 if i < executors % workers else 0) for i in range(workers)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.spark_cluster",
        description="Run a command against a real Spark standalone cluster on 127.0.0.1 "
        f"(its URL in ${ENV_MASTER}); the cluster is stopped whatever happens.",
    )
    parser.add_argument("--executors", type=int, default=2, help="one-core executors (2)")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="Worker processes, each with a work folder of its own, sharing the executors (1)",
    )
    parser.add_argument("--keep-logs", action="store_true", help="keep the daemons' logs")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    with standalone_cluster(args.executors, workers=args.workers, keep=args.keep_logs) as cluster:
        env = {**os.environ, ENV_MASTER: cluster.url, ENV_EXECUTORS: str(args.executors)}
        # Ctrl-C reaches the command (same process group); the finally block stops the daemons.
        code = subprocess.call(command, env=env)
        cluster.keep_logs = cluster.keep_logs or code != 0
        return code


if __name__ == "__main__":
    sys.exit(main())
