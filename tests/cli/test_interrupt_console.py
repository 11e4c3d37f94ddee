"""Ctrl-C during `versioned upsert` through the installed console script, with its own JVM:
Spark's job is cancelled, stderr ends with one line, the exit code is 130, nothing commits.

Soak only (`make soak`): the test starts a JVM of its own and runs a million-row first
load, about a minute on CI's 2-core machine, which `make test` has no room for. The logic
is tested without a JVM, and in-process on the shared session, in tests/cli/test_interrupts.py.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from tests.support.jvm_processes import SCRIPT, JvmProcesses, script_env
from versioned.catalog.store import MetaStore
from versioned.cli.main import cli
from versioned.layouts.version_partition.table_rules import BULK_LOAD_MIN_BYTES_PROPERTY
from versioned.names import TableName

ROWS = 1_000_000
# A first load in bulk says this as it starts its Spark job from the main thread, which on a
# million rows runs for seconds more: the signal lands while Python waits on py4j, where
# PySpark's own Ctrl-C handler printed py4j's tracebacks.
RUNNING = "writing the batch"


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
    env = script_env(
        VERSIONED_WAREHOUSE=warehouse, VERSIONED_CATALOG=catalog, VERSIONED_USER="alice"
    )
    proc = jvm_processes.popen(
        [SCRIPT, "upsert", "test.t", str(feed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
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
                job_started = _spark_job_writing(tmp_path / "wh", proc)
                proc.send_signal(signal.SIGINT)
                break
        out, rest = proc.communicate(timeout=600)
    finally:
        watchdog.cancel()
    stderr = "".join(seen) + rest
    assert any(RUNNING in line for line in seen), stderr
    assert job_started, stderr  # the signal landed while Python waited on the Spark job
    assert proc.returncode == 130, stderr
    assert stderr.splitlines()[-1] == "interrupted: nothing was committed", stderr
    for noise in ("Traceback", "py4j", "Exception", "ERROR", "WARN"):
        assert noise not in stderr, stderr
    assert out == ""
    store = MetaStore.connect(catalog, "alice", create=False)
    try:
        assert store.history(TableName("test", "t")) == []
    finally:
        store.close()


def _spark_job_writing(warehouse: Path, proc: subprocess.Popen[str]) -> bool:
    """Wait until the load's Spark job runs: its output committer made its ``_temporary``
    folder in the staging folder (the driver's ``save`` call is under way then)."""
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if any(warehouse.glob("test.db/t/_staging/txn=*/_temporary")):
            return True
        time.sleep(0.05)
    return False
