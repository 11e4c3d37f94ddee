"""Signals to the installed console script, with its own JVM.

While Python imports the command line (no JVM yet): the line and 130 (143), no traceback.
While Spark starts (`make test`: a few seconds each, the JVM ends early): no process of the
command survives it, stderr has one line after the progress line, the exit code is 130
(143). During `versioned upsert` (soak only, `make soak`: a million-row first load, its
fresh JVM and feed about half a minute on CI's 2-core machine, which `make test` has no room
for): Spark's job is cancelled, stderr ends with one line, the exit code is 130, nothing
commits. The logic is tested without a JVM, and in-process on the shared session, in
tests/cli/test_interrupts.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from tests.support.jvm_processes import (
    MARK,
    SCRIPT,
    JvmProcesses,
    marked_processes,
    script_env,
)
from versioned.catalog.store import MetaStore
from versioned.cli.main import cli
from versioned.layouts.version_partition.table_rules import BULK_LOAD_MIN_BYTES_PROPERTY
from versioned.names import TableName

ROWS = 1_000_000
# A first load in bulk says this as it starts its Spark job from the main thread, which on a
# million rows runs for seconds more: the signal lands while Python waits on py4j, where
# PySpark's own Ctrl-C handler printed py4j's tracebacks.
RUNNING = "writing the batch"
STARTING = "starting Spark"
CONTEXT = "the SparkContext"
# The JVM process itself (its command is `java`), found among the command's processes: a
# fixed delay after STARTING raced the command on a fast machine, which had printed its
# answer two seconds later.
JVM = "the JVM"
NOTHING = "interrupted: nothing was committed"


@pytest.mark.parametrize(
    ("signum", "after", "delay_s"),
    [
        (signal.SIGINT, STARTING, 0.0),
        (signal.SIGINT, JVM, 0.0),
        (signal.SIGTERM, STARTING, 1.0),
        (signal.SIGINT, CONTEXT, 0.0),
        (signal.SIGINT, CONTEXT, 1.0),
    ],
    ids=["int-0s", "int-jvm", "term-1s", "int-context", "int-context-1s"],
)
def test_a_signal_while_spark_starts_leaves_no_jvm_and_prints_one_line(
    jvm_processes: JvmProcesses, tmp_path: Path, signum: int, after: str, delay_s: float
) -> None:
    """``delay_s`` after the command says it starts Spark (Python imports PySpark, then the
    JVM starts) or after the SparkContext made its block manager's folder (it then builds
    the session). The JVM PySpark launches waits for our connection while it starts;
    interrupted then, it used to live on (holding the command's stdout) and its stack trace
    was printed; later, PySpark's own SIGINT handler printed py4j's tracebacks."""
    warehouse, catalog = str(tmp_path / "wh"), f"sqlite:///{tmp_path}/cat.db"
    created = CliRunner().invoke(
        cli,
        ["--warehouse", warehouse, "--catalog", catalog, "--user", "alice",
         "create-table", "test.t", "--columns", "k BIGINT, p STRING", "--primary-key", "k"],
    )  # fmt: skip
    assert created.exit_code == 0, created.output
    mark = uuid.uuid4().hex
    local_dirs = tmp_path / "spark-local"
    local_dirs.mkdir()
    env = script_env(
        VERSIONED_WAREHOUSE=warehouse,
        VERSIONED_CATALOG=catalog,
        VERSIONED_USER="alice",
        SPARK_LOCAL_DIRS=str(local_dirs),
    )
    proc = jvm_processes.popen(
        [SCRIPT, "show", "test.t"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env, MARK: mark},
        cwd=tmp_path,
    )
    assert proc.stderr is not None and proc.stdout is not None
    first = proc.stderr.readline()
    assert first.startswith(STARTING), first
    deadline = time.monotonic() + 120
    if after == CONTEXT:
        while not any(local_dirs.glob("blockmgr-*")):
            assert proc.poll() is None and time.monotonic() < deadline, "no SparkContext"
            time.sleep(0.01)
    if after == JVM:
        while not any(_command_name(pid) == "java" for pid in marked_processes(mark)):
            assert proc.poll() is None and time.monotonic() < deadline, "no JVM"
            time.sleep(0.01)
    time.sleep(delay_s)
    proc.send_signal(signum)
    assert proc.wait(timeout=120) == 128 + signum
    left = _wait_gone(mark, timeout_s=30)
    for pid in left:  # read the pipes below, which a JVM left behind keeps open
        os.kill(pid, signal.SIGKILL)
    assert left == [], "processes of the command outlived it"
    stderr = first + proc.stderr.read()
    assert stderr.splitlines()[1:] == [NOTHING], stderr
    assert proc.stdout.read() == ""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_python_imports_the_command_line_prints_the_line(
    tmp_path: Path, signum: int
) -> None:
    """Those imports take about a second, in which a Ctrl-C printed a KeyboardInterrupt's
    traceback (and SIGTERM ended the process silently)."""
    proc = subprocess.Popen(
        [SCRIPT, "--warehouse", str(tmp_path / "wh"), "list-tables"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=script_env(SPARK_HOME=str(tmp_path / "no-spark")),
    )
    try:
        deadline = time.monotonic() + 60
        while not _handles_sigterm(proc.pid):  # the entry point's first statement ran
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.001)
        importing = "libarrow" not in Path(f"/proc/{proc.pid}/maps").read_text()
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert importing, "no signal handler until the command line was imported (pyarrow loaded)"
    assert proc.returncode == 128 + signum, err
    assert err == f"{NOTHING}\n"
    assert out == ""


def _handles_sigterm(pid: int) -> bool:
    """Whether process ``pid`` has a handler of SIGTERM (Python's default leaves it to the
    system: only versioned's entry point catches it)."""
    status = Path(f"/proc/{pid}/status").read_text()
    caught = int(next(line for line in status.splitlines() if line.startswith("SigCgt:"))[7:], 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


def _command_name(pid: int) -> str:
    """The command name of process ``pid`` (empty once it ended)."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _wait_gone(mark: str, *, timeout_s: float) -> list[int]:
    """The marked processes still running after ``timeout_s`` (a JVM asked to end runs
    Spark's shutdown hooks first)."""
    deadline = time.monotonic() + timeout_s
    while (left := marked_processes(mark)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


@pytest.mark.soak
def test_ctrl_c_during_an_upsert_prints_one_line_exits_130_and_commits_nothing(
    jvm_processes: JvmProcesses, tmp_path: Path
) -> None:
    warehouse, catalog = str(tmp_path / "wh"), f"sqlite:///{tmp_path}/cat.db"
    created = CliRunner().invoke(
        cli,
        ["--warehouse", warehouse, "--catalog", catalog, "--user", "alice",
         "create-table", "test.t", "--columns", "k BIGINT, v STRING, p STRING",
         "--primary-key", "k", "--partition-by", "p",
         "--property", f"{BULK_LOAD_MIN_BYTES_PROPERTY}=0"],
    )  # fmt: skip
    assert created.exit_code == 0, created.output
    feed = tmp_path / "feed.parquet"
    pq.write_table(
        pa.table(
            {
                "k": pa.array(range(ROWS), pa.int64()),
                "v": pa.array([f"value {i}" for i in range(ROWS)]),
                "p": pa.array([str(i % 20) for i in range(ROWS)]),
            }
        ),
        feed,
    )
    mark = uuid.uuid4().hex
    env = script_env(
        VERSIONED_WAREHOUSE=warehouse, VERSIONED_CATALOG=catalog, VERSIONED_USER="alice"
    )
    proc = jvm_processes.popen(
        [SCRIPT, "upsert", "test.t", str(feed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env, MARK: mark},
        cwd=tmp_path,
    )
    watchdog = threading.Timer(600, proc.kill)  # a hung run fails instead of hanging CI
    watchdog.start()
    try:
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if RUNNING in line:
                job_started = _spark_job_writing(mark, proc)
                proc.send_signal(signal.SIGINT)
                break
        out, rest = proc.communicate(timeout=600)
    finally:
        watchdog.cancel()
    stderr = "".join(seen) + rest
    assert any(RUNNING in line for line in seen), stderr
    assert job_started, stderr  # the signal landed while Python waited on the Spark job
    assert proc.returncode == 130, stderr
    assert stderr.splitlines()[-1] == NOTHING, stderr
    for noise in ("Traceback", "py4j", "Exception", "ERROR", "WARN"):
        assert noise not in stderr, stderr
    assert out == ""
    store = MetaStore.connect(catalog, "alice", create=False)
    try:
        assert store.history(TableName("test", "t")) == []
    finally:
        store.close()


def _spark_job_writing(mark: str, proc: subprocess.Popen[str]) -> bool:
    """Wait until the load's Spark job runs: its tasks' Python workers (PySpark's
    ``pyspark.daemon`` and the workers it forks) are processes of the command. Nothing in
    the command starts a Python worker before the load's job (the tasks write the files),
    and they write a million rows for seconds."""
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if any(_runs_python_worker(pid) for pid in marked_processes(mark)):
            return True
        time.sleep(0.05)
    return False


def _runs_python_worker(pid: int) -> bool:
    try:
        return b"pyspark.daemon" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # ended meanwhile
        return False
