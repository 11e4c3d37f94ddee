"""The run of `make test-cluster` really is on a multi-process cluster (skipped elsewhere).

The rest of what `make test-cluster` runs are the tests marked `cluster` (code that runs on
executors; `make test` runs them locally too); this file checks the premise: the session's
master is the standalone cluster, tasks run in executor JVMs other than the driver's and in
Python workers other than the test process, and executors write files the driver then reads.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.spark_cluster import ENV_MASTER, EXECUTORS, MASTER
from tests.support.test_warehouse import PG_CATALOG, S3_TIER

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(MASTER is None, reason=f"runs only on make test-cluster (${ENV_MASTER})"),
]


def test_session_is_on_the_standalone_cluster(spark: Any) -> None:
    assert spark.sparkContext.master == MASTER
    assert spark.sparkContext.master.startswith("spark://127.0.0.1:")


def test_tasks_run_in_separate_executor_processes(spark: Any) -> None:
    expected = EXECUTORS
    infos = spark.sparkContext._jsc.sc().statusTracker().getExecutorInfos()
    assert len(infos) - 1 >= expected  # the list includes the driver

    # Enough tasks that both executors get some.
    pids = set(spark.sparkContext.parallelize(range(64), 16).map(lambda _: os.getpid()).collect())
    assert os.getpid() not in pids
    jvm_pids = {
        int(row[0])
        for row in spark.sparkContext.parallelize(range(16), 16)
        .mapPartitions(lambda _: iter([(_executor_jvm_pid(),)]))
        .collect()
    }
    assert len(jvm_pids) >= 2, f"tasks ran in {len(jvm_pids)} executor JVM(s), expected 2+"


def _executor_jvm_pid() -> int:
    """The pid of the executor JVM running this Python worker (its parent, through the
    daemon that forks the workers)."""
    pid = os.getppid()
    for _ in range(3):
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        if b"java" in cmdline.split(b"\0")[0]:
            return pid
        pid = int(Path(f"/proc/{pid}/stat").read_text().split()[3])
    raise AssertionError("no executor JVM found among the worker's ancestors")


def test_files_written_by_executors_are_read_by_the_driver(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    spark.range(0, 1000, numPartitions=8).write.parquet(str(out))
    files = sorted(out.glob("part-*.parquet"))
    assert len(files) == 8
    import pyarrow.parquet as pq

    assert sum(pq.read_metadata(f).num_rows for f in files) == 1000


@pytest.mark.skipif(
    not (S3_TIER and PG_CATALOG), reason="runs only on make test-cluster-s3 (S3 and PostgreSQL)"
)
def test_workers_share_nothing_but_the_s3_server_and_the_catalog(spark: Any, cat: Any) -> None:
    """`make test-cluster-s3`: the executors run under two Worker processes, each in a work
    folder of its own, and the tables' warehouse and catalog are the S3 server and
    PostgreSQL: no table file is on a path the driver and an executor share."""
    seen = (
        spark.sparkContext.parallelize(range(32), 16)
        .mapPartitions(lambda _: iter([(_parent_of(_executor_jvm_pid()), os.getcwd())]))
        .collect()
    )
    workers = {pid for pid, _ in seen}
    work_folders = {Path(cwd).parents[1] for _, cwd in seen}  # <work>/<app>/<executor>
    assert len(workers) >= 2, f"executors ran under {len(workers)} Worker process(es)"
    assert len(work_folders) >= 2 and not any(
        a != b and b.is_relative_to(a) for a in work_folders for b in work_folders
    )
    assert cat.settings.warehouse.startswith("s3://")
    assert cat.settings.catalog_url.startswith("postgresql")
    t = cat.create_table("c.t", columns="k BIGINT, p INT", primary_key="k", partition_by="p")
    t.upsert(spark.range(0, 2000, 1, 4).selectExpr("id AS k", "CAST(id % 3 AS INT) AS p"))
    assert t.read().count() == 2000


def _parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
