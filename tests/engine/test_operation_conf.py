"""Engine operations run with their own Spark settings and leave the caller's session as it was."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from tests.support.layout_profiles import LAYOUTS
from versioned.engine.spark.operation_conf import (
    MAX_SHUFFLE_PARTITIONS,
    SHUFFLE_PARTITIONS,
    operation_conf,
    write_settings,
)

PARALLELISM_FIRST = "spark.sql.adaptive.coalescePartitions.parallelismFirst"
CALLERS = "200"  # Spark's default, which a caller's session typically has


@pytest.fixture
def callers_session(spark: Any) -> Iterator[Any]:
    """The shared session as a caller's at Spark's defaults: 200 shuffle partitions and
    ``parallelismFirst`` not set; the test session's own values come back afterwards."""
    before = spark.conf.getAll
    assert PARALLELISM_FIRST not in before, "the test session must leave this key unset"
    spark.conf.set(SHUFFLE_PARTITIONS, CALLERS)
    yield spark
    spark.conf.set(SHUFFLE_PARTITIONS, before[SHUFFLE_PARTITIONS])
    spark.conf.unset(PARALLELISM_FIRST)


def _seen(spark: Any, log: list[tuple[str, str, str | None]]) -> Any:
    """A progress callback recording the session's settings at each stage of an operation."""

    def progress(message: str) -> None:
        log.append(
            (message, spark.conf.get(SHUFFLE_PARTITIONS), spark.conf.getAll.get(PARALLELISM_FIRST))
        )

    return progress


def _changes(keys: list[int]) -> pa.Table:
    return pa.table({"k": keys, "v": [f"v{k}" for k in keys], "p": [str(k % 3) for k in keys]})


def _assert_callers(spark: Any) -> None:
    assert spark.conf.get(SHUFFLE_PARTITIONS) == CALLERS
    assert PARALLELISM_FIRST not in spark.conf.getAll


@pytest.mark.parametrize("layout", LAYOUTS)
def test_an_upsert_runs_with_the_engines_settings_and_leaves_the_callers_session_alone(
    cat: Any, callers_session: Any, layout: str
) -> None:
    table = cat.create_table(
        "s.t", columns="k BIGINT, v STRING, p STRING", primary_key="k", layout=layout
    )
    log: list[tuple[str, str, str | None]] = []
    result = table.upsert(_changes(list(range(100))), progress=_seen(callers_session, log))
    assert result.inserted == 100
    assert log, "the write reports its stages"
    cores = callers_session.sparkContext.defaultParallelism
    # The write's stages; its maintenance after the commit found nothing due and so started
    # no Spark job (a compaction takes its own settings on first use: the test below).
    maintenance = [m for m in log if m[0].startswith("auto compaction: ")]
    assert maintenance and all("nothing to compact" in m[0] for m in maintenance)
    for message, partitions, parallelism_first in log:
        if (message, partitions, parallelism_first) in maintenance:
            continue
        assert cores <= int(partitions) <= 4 * cores, message
        assert parallelism_first == "false", message
    _assert_callers(callers_session)
    assert table.read().count() == 100


def test_the_callers_settings_come_back_when_the_operation_fails(
    cat: Any, callers_session: Any
) -> None:
    table = cat.create_table("s.t", columns="k BIGINT, v STRING, p STRING", primary_key="k")
    seen: list[str] = []

    def failing(message: str) -> None:
        seen.append(callers_session.conf.get(SHUFFLE_PARTITIONS))
        raise RuntimeError("stopped by the test")

    with pytest.raises(RuntimeError, match="stopped by the test"):
        table.upsert(_changes([1, 2]), progress=failing)
    assert seen and seen[0] != CALLERS
    _assert_callers(callers_session)


@pytest.mark.parametrize("file_format", ["orc", "parquet"])
def test_compaction_runs_with_the_engines_settings_and_restores_the_callers(
    cat: Any, callers_session: Any, file_format: str
) -> None:
    """A Spark compaction (ORC: partitions are merged by Spark) takes the engine's settings;
    a Parquet partition that fits the driver is merged by pyarrow and starts no Spark job,
    so the caller's settings stay as they are throughout."""
    table = cat.create_table(
        "s.t",
        columns="k BIGINT, v STRING, p STRING",
        primary_key="k",
        partition_by="p",
        file_format=file_format,
    )
    for start in (0, 5, 10):
        table.upsert(_changes(list(range(start, start + 10))))
    _assert_callers(callers_session)
    log: list[tuple[str, str, str | None]] = []
    assert table.compact(progress=_seen(callers_session, log)).partitions
    writing = [entry for entry in log if "writing" in entry[0]]
    assert writing, log
    if file_format == "parquet":
        assert all(m.endswith("on the driver") for m, _, _ in writing), writing
        assert all(p == CALLERS and first is None for _, p, first in writing), writing
    else:
        cores = callers_session.sparkContext.defaultParallelism
        assert all(int(p) == cores and first == "false" for _, p, first in writing), writing
    _assert_callers(callers_session)
    assert table.read().count() == 20


def test_overlapping_operations_restore_the_callers_values_when_the_last_one_ends(
    callers_session: Any,
) -> None:
    spark = callers_session
    first_inside, second_done = threading.Event(), threading.Event()

    def other_operation() -> None:
        first_inside.wait()
        with operation_conf(spark, {SHUFFLE_PARTITIONS: "3", PARALLELISM_FIRST: "false"}):
            pass
        second_done.set()

    worker = threading.Thread(target=other_operation)
    worker.start()
    with operation_conf(spark, {SHUFFLE_PARTITIONS: "5"}):
        first_inside.set()
        second_done.wait()
        # The second operation ended inside the first: the session keeps an engine value
        # until the first ends too, rather than the caller's.
        assert spark.conf.get(SHUFFLE_PARTITIONS) == "3"
    worker.join()
    _assert_callers(spark)


def test_write_settings_size_shuffle_partitions_from_the_batch(spark: Any) -> None:
    cores = spark.sparkContext.defaultParallelism
    small = spark.range(10)
    assert write_settings(spark, small)[SHUFFLE_PARTITIONS] == str(cores)
    # A batch Spark estimates at 1 TB: 128 MB a partition, up to the cap.
    huge = spark.range(10).selectExpr("id", "repeat('x', 1) AS s")
    big = huge.crossJoin(spark.range(2**30)).crossJoin(spark.range(2**10))
    partitions = int(write_settings(spark, big)[SHUFFLE_PARTITIONS])
    assert cores < partitions <= MAX_SHUFFLE_PARTITIONS
