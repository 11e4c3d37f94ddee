"""The Spark settings of one engine operation, set on the caller's session and put back after.

An engine runs in whatever SparkSession the caller hands in, so without this it inherits
the caller's settings: with Spark's default of 200 shuffle partitions the deduplication and
key collection of a 100k-row batch runs 200 tiny tasks per shuffle, about twice as slow as
with a few. `operation_conf` sets what an operation needs (`write_settings`,
`maintenance_settings`) when it starts and restores the caller's values when it ends,
normally or by an error; a key the caller had not set is unset again.

Shuffle partitions are sized from the batch (Spark's size estimate of the feed's plan, at
most ``TARGET_BYTES_PER_PARTITION`` a partition, at least one per core), and adaptive query
execution coalesces small shuffle partitions by size (``parallelismFirst`` off), so a small
batch runs a few tasks whatever the caller's session says. Writes shape their files by the
table partitions touched themselves (``repartition`` with an explicit count, see
`versioned.layouts.version_partition.engine.staging`), independent of these settings.

Spark's runtime configuration belongs to a session, not to an operation: operations that run
at the same time in one session (threads sharing a `Catalog`, or the caller's own queries
meanwhile) see the settings of the operation that started last. The caller's values are
saved by the first operation that starts and restored when the last one ends, so they are
never lost; give concurrent jobs sessions of their own (``spark.newSession()``) to keep their
settings apart.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession

SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
TARGET_BYTES_PER_PARTITION = 128 * 1024 * 1024
"""Estimated input bytes per shuffle partition of a write."""
MAX_SHUFFLE_PARTITIONS = 4096
UNKNOWN_SIZE_PARTITIONS_PER_CORE = 4
"""Shuffle partitions per core when Spark cannot estimate the batch (AQE coalesces them)."""

ADAPTIVE: dict[str, str] = {
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.adaptive.coalescePartitions.enabled": "true",
    # Coalesce to the advisory size (64 MB), not to as many partitions as cores.
    "spark.sql.adaptive.coalescePartitions.parallelismFirst": "false",
}
HUGE_METHOD_LIMIT = "spark.sql.codegen.hugeMethodLimit"
CODEGEN: dict[str, str] = {
    # HotSpot never compiles a method of over 8000 bytes of bytecode: a stage whose per-row
    # code is larger (the checks of a feed of many typed text columns) would run
    # interpreted. At this limit Spark runs such a stage operator by operator instead, with
    # its expressions split into methods the JVM compiles (Spark's documented setting for
    # HotSpot).
    HUGE_METHOD_LIMIT: "8000",
}


@dataclass
class _Saved:
    """The caller's values of a session, kept while operations of the engine run in it."""

    running: int = 0
    values: dict[str, str | None] = field(default_factory=dict)


_LOCK = threading.Lock()
_SESSIONS: dict[str, _Saved] = {}


@contextmanager
def operation_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """Set ``settings`` on ``spark`` for the block; restore the caller's values afterwards.

    A key the caller had not set is unset again. Nested or concurrent operations on one
    session share its configuration (see the module's docstring); the caller's values come
    back when the last of them ends.
    """
    key = str(spark._jsparkSession.sessionUUID())
    with _LOCK:
        saved = _SESSIONS.setdefault(key, _Saved())
        if saved.running:
            unseen = [k for k in settings if k not in saved.values]
        else:
            saved.values.clear()
            unseen = list(settings)
        for name in unseen:  # the value the caller set, None if unset (one py4j call each:
            # `conf.getAll` costs three per setting of the session)
            saved.values[name] = spark.conf.get(name, None)
        saved.running += 1
        for name, value in settings.items():
            spark.conf.set(name, value)
    try:
        yield
    finally:
        with _LOCK:
            saved.running -= 1
            if not saved.running:
                _restore(spark, saved.values)
                del _SESSIONS[key]


@contextmanager
def conf_on_first_use(
    factory: Callable[[], SparkSession], settings: Callable[[SparkSession], Mapping[str, str]]
) -> Iterator[Callable[[], SparkSession]]:
    """`operation_conf` for an operation that may not need Spark (a dry run, nothing to do).

    Yields a factory of the session: its first call builds the session with ``factory``
    and sets ``settings(session)``; they are restored when the block ends.
    """
    with ExitStack() as stack:
        built: list[SparkSession] = []

        def session() -> SparkSession:
            if not built:
                spark = factory()
                stack.enter_context(operation_conf(spark, settings(spark)))
                built.append(spark)
            return built[0]

        yield session


def _restore(spark: SparkSession, values: Mapping[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            spark.conf.unset(name)
        else:
            spark.conf.set(name, value)


def write_settings(spark: SparkSession, rows: DataFrame) -> dict[str, str]:
    """The settings of a write of the batch ``rows`` (upsert, delete, import, bulk load)."""
    cores = _cores(spark)
    size = estimated_bytes(rows)
    if size is None:
        partitions = cores * UNKNOWN_SIZE_PARTITIONS_PER_CORE
    else:
        partitions = max(cores, math.ceil(size / TARGET_BYTES_PER_PARTITION))
    return {
        SHUFFLE_PARTITIONS: str(min(partitions, MAX_SHUFFLE_PARTITIONS)),
        **ADAPTIVE,
        **CODEGEN,
    }


def maintenance_settings(spark: SparkSession) -> dict[str, str]:
    """The settings of compaction: one shuffle partition per core, coalesced by AQE.

    Compaction shapes its output files itself (`compacted_version.file_shaping`); shuffles
    happen only in the latest-row join of a partition too large to broadcast its index.
    """
    cores = _cores(spark)
    return {SHUFFLE_PARTITIONS: str(min(cores, MAX_SHUFFLE_PARTITIONS)), **ADAPTIVE, **CODEGEN}


def estimated_bytes(rows: DataFrame) -> int | None:
    """Spark's estimate of the size of ``rows`` from its analyzed plan (no job runs, and no
    optimizer run: in a fresh JVM that cost 1.3 s on a first load's plan, the analyzed plan's
    estimate 0.01 s and the same bytes); None when Spark has no estimate (it then reports
    ``spark.sql.defaultSizeInBytes``)."""
    size = int(rows._jdf.queryExecution().analyzed().stats().sizeInBytes())
    default = rows.sparkSession.conf.get("spark.sql.defaultSizeInBytes", None)
    unknown = int(default) if default else 2**63 - 1
    return None if size >= unknown or size < 0 else size


def _cores(spark: SparkSession) -> int:
    return max(1, int(spark.sparkContext.defaultParallelism))
