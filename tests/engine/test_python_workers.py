"""A session whose Python workers run an interpreter without versioned gets one line that says
which interpreter and how to fix it, before any job of an operation runs (issue 27 item 9).

The shared session's workers are pointed at a bare virtualenv's python (no pip, no packages) for
the test, as a caller's session with ``PYSPARK_PYTHON`` unset points them at another Python.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from versioned.engine.spark import python_workers
from versioned.engine.spark.python_workers import require_python_workers
from versioned.errors import ConfigError


@pytest.fixture
def bare_workers(spark: Any, tmp_path: Path) -> Iterator[str]:
    """The shared session's Python workers run a bare virtualenv's python until the test ends."""
    venv = [sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")]
    subprocess.run(venv, check=True)
    bare = str(tmp_path / "bare" / "bin" / "python")
    context = spark.sparkContext
    own = context.pythonExec
    context.pythonExec = bare
    try:
        yield bare
    finally:
        context.pythonExec = own


def test_workers_without_versioned_fail_in_one_line_naming_the_interpreter_and_the_fix(
    spark: Any, bare_workers: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        require_python_workers(spark)
    message = str(raised.value)
    assert "\n" not in message
    assert bare_workers in message and sys.executable in message
    # the first module the bare python lacks (which one depends on what PYTHONPATH lends it)
    assert re.search(r"cannot import '(pyarrow|versioned|sqlalchemy|pyorc|pybloom_live)'", message)
    assert "PYSPARK_PYTHON" in message and "spark.pyspark.python" in message


def test_an_acid_upsert_stops_at_the_check_and_commits_nothing(
    cat: Any, spark: Any, bare_workers: str
) -> None:
    t = cat.create_table(
        "db.a", columns="id INT NOT NULL, v STRING", primary_key="id", layout="acid",
        bucket_by="id", buckets=2,
    )  # fmt: skip
    with pytest.raises(ConfigError, match=r"Spark's Python workers run .*cannot import"):
        t.upsert(pa.table({"id": pa.array([1], pa.int32()), "v": ["a"]}))
    assert t.history() == []


def _unchecked(spark: Any) -> tuple[tuple[str, str], Any]:
    """Forget that the session's workers were checked; its key and status tracker."""
    context = spark.sparkContext
    key = (str(context.applicationId), str(context.pythonExec))
    python_workers._CHECKED.discard(key)
    return key, context.statusTracker()


def test_workers_with_versioned_pass_once_per_session(spark: Any) -> None:
    _, tracker = _unchecked(spark)
    # new job ids, not counts: Spark forgets its oldest jobs past spark.ui.retainedJobs
    before = set(tracker.getJobIdsForGroup(None))
    require_python_workers(spark)
    ran = len(set(tracker.getJobIdsForGroup(None)) - before)
    require_python_workers(spark)  # checked: no job
    assert (ran, len(set(tracker.getJobIdsForGroup(None)) - before)) == (1, 1)


def test_a_bulk_first_load_fails_in_its_keys_job_in_one_line_and_commits_nothing(
    cat: Any, spark: Any, bare_workers: str
) -> None:
    # The bulk load's keys job runs versioned in the workers itself (no check job first):
    # the failure is the same one line, and the staged rows are not committed.
    from versioned.layouts.version_partition.table_rules import BULK_LOAD_MIN_BYTES_PROPERTY

    t = cat.create_table(
        "db.bulk", columns="id BIGINT, v STRING, p STRING", primary_key="id", partition_by="p",
        properties={BULK_LOAD_MIN_BYTES_PROPERTY: "0"},
    )  # fmt: skip
    said: list[str] = []
    rows = spark.range(0, 50_000, 1, 2).selectExpr("id", "'a' AS v", "CAST(id % 3 AS STRING) AS p")
    with pytest.raises(ConfigError, match=r"Spark's Python workers run .*cannot import") as raised:
        t.upsert(rows, progress=said.append)
    assert "\n" not in str(raised.value) and bare_workers in str(raised.value)
    assert any("first load, in bulk" in m for m in said)
    assert t.history() == []


def test_the_check_beside_a_job_runs_while_it_runs_and_marks_the_session(spark: Any) -> None:
    key, tracker = _unchecked(spark)
    before = set(tracker.getJobIdsForGroup(None))
    with python_workers.checked_beside(spark):
        spark.range(0, 2_000_000, 1, 2).selectExpr("sum(id * 3)").collect()  # JVM only
    ran = set(tracker.getJobIdsForGroup(None)) - before
    names = [
        tracker.getStageInfo(stage).name
        for job in ran
        for stage in tracker.getJobInfo(job).stageIds
        if tracker.getStageInfo(stage) is not None
    ]
    assert any("test_python_workers.py" not in n for n in names)  # the check.s own job
    assert key in python_workers._CHECKED


def test_a_failed_block_raises_its_own_error_and_runs_no_check(
    spark: Any, bare_workers: str
) -> None:
    context = spark.sparkContext
    tracker = context.statusTracker()
    before = set(tracker.getJobIdsForGroup(None))
    with pytest.raises(ZeroDivisionError), python_workers.checked_beside(spark):
        raise ZeroDivisionError
    assert not set(tracker.getJobIdsForGroup(None)) - before
    with pytest.raises(ConfigError, match="cannot import"), python_workers.checked_beside(spark):
        spark.range(0, 10).count()  # the block's job passes; the check beside it fails
