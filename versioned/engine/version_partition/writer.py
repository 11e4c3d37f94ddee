"""Applying a change batch to a version-partition table as one new version.

1. Normalise the feed, keep the last change per key (one Spark job, cached).
2. Bring the batch's keys to the driver; per touched partition, test them against the live
   Bloom filters. Keys that may exist get a version-index entry; with an ordering column the
   stored ordering of those keys is read (key and ordering columns only) to skip stale
   changes, and deletes always leave a tombstone. With a table-wide key (some partition
   column outside the primary key) every other partition is probed too, and the key's row
   there is retired with an ``M`` (moved) or ``D`` entry (`engine.write_plan`).
3. Write the rows (never deletes) into ``version_id=V`` of each partition, the index entries
   and a Bloom filter over all keys of the batch, then commit one catalog transaction.

A commit that loses a race (another version of a touched partition committed first, or
for a table-wide key any commit since the snapshot) is retried with a new transaction, up to
``max_attempts``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.catalog.heartbeat import TransactionKeeper
from versioned.catalog.records import FileAdd, PartitionCommit, PartitionInfo, TableInfo
from versioned.catalog.store import MetaStore
from versioned.engine.feeds.batch_dedup import CHANGES, latest_per_key
from versioned.engine.feeds.reader import Feed
from versioned.engine.feeds.rows import OP
from versioned.engine.version_partition.staging import write_version_files
from versioned.engine.version_partition.write_plan import part_column, plan_version
from versioned.errors import CommitConflictError
from versioned.layouts.version_partition.bloom import WRITE_HEADROOM
from versioned.layouts.version_partition.index import index_key_columns
from versioned.options import WriteOptions
from versioned.results import CommitResult
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO

log = logging.getLogger(__name__)
Progress = Callable[[str], None]


def write_batch(
    spark: SparkSession,
    store: MetaStore,
    fileio: FileIO,
    table: TableInfo,
    feed: Feed,
    *,
    options: WriteOptions | None = None,
    progress: Progress | None = None,
    operation: str = "upsert",
) -> CommitResult:
    """Apply ``feed`` to ``table`` as one new version and return what was committed.

    A feed without a row to apply (empty, or every row rejected) commits nothing: the result
    has ``version=None`` (and the rejected rows are in the dead-letter area).
    """
    opts = options or WriteOptions()
    say = progress or (lambda _msg: None)
    started = time.monotonic()
    spec = table.spec
    part_strings = [
        F.col(p).cast("string").alias(part_column(i)) for i, p in enumerate(spec.partition_by)
    ]
    batch = latest_per_key(_empty_partitions_as_null(feed.rows, spec), spec, with_change_count=True)
    batch = batch.select("*", *part_strings).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        say("reading the batch")
        keys = _collect_keys(batch, table)
        superseded = int(pc.sum(keys.column(CHANGES)).as_py() or 0) - keys.num_rows
        say(f"{keys.num_rows} keys in {_partition_count(keys, spec.partition_by)} partitions")
        rejected = _dead_letters(spark, feed, fileio, table, say)
        if keys.num_rows == 0:
            say("nothing to apply")
            seconds = round(time.monotonic() - started, 3)
            return CommitResult(None, 0, 0, 0, 0, rejected[0], seconds=seconds)
        for attempt in range(1, opts.max_attempts + 1):
            txn = store.begin(timeout_s=opts.txn_timeout_s)
            with TransactionKeeper(store, txn, interval_s=opts.txn_timeout_s / 4) as keeper:
                try:
                    result = _write_version(
                        spark,
                        store,
                        fileio,
                        table,
                        batch,
                        keys,
                        txn,
                        opts,
                        keeper,
                        say,
                        rejected=rejected,
                        coerced=feed.coerced_count(),
                        superseded=superseded,
                        started=started,
                        operation=operation,
                    )
                except CommitConflictError as err:
                    store.abort(txn, f"commit conflict: {err}")
                    keeper.finished(txn)
                    if attempt == opts.max_attempts:
                        raise
                    say(f"commit conflict ({err}); retrying as a new version")
                    continue
                keeper.finished(txn)
                return result
        raise AssertionError("unreachable")  # pragma: no cover
    finally:
        batch.unpersist()


def _empty_partitions_as_null(rows: DataFrame, spec: TableSpec) -> DataFrame:
    """Read ``""`` partition values as null, before the batch is deduplicated.

    Hive stores both in one partition (``__HIVE_DEFAULT_PARTITION__``), which reads back as
    null. Deduplicating first would keep a key spelled with ``""`` and with null as two keys,
    and both rows would land in that one partition.
    """
    for p in spec.partition_by:
        if isinstance(rows.schema[p].dataType, T.StringType):
            rows = rows.withColumn(
                p, F.when(F.col(p) == F.lit(""), F.lit(None)).otherwise(F.col(p))
            )
    return rows


def _collect_keys(batch: DataFrame, table: TableInfo) -> pa.Table:
    spec = table.spec
    cols = [part_column(i) for i in range(len(spec.partition_by))]
    cols += [*index_key_columns(spec), OP, CHANGES]
    if spec.ordering_column and spec.ordering_column not in cols:
        cols.append(spec.ordering_column)
    return batch.select(*cols).toArrow()


def _partition_count(keys: pa.Table, partition_by: tuple[str, ...]) -> int:
    if not partition_by or keys.num_rows == 0:
        return 1 if keys.num_rows else 0
    return len(_partition_groups(keys, len(partition_by)))


def _partition_groups(keys: pa.Table, n_parts: int) -> dict[tuple[str | None, ...], np.ndarray]:
    """Row indices of ``keys`` per partition value tuple (``""`` counts as null, like Hive)."""
    if n_parts == 0:
        return {(): np.arange(keys.num_rows)}
    columns = [keys.column(part_column(i)).to_pylist() for i in range(n_parts)]
    tuples = [tuple(v if v != "" else None for v in row) for row in zip(*columns, strict=True)]
    groups: dict[tuple[str | None, ...], list[int]] = {}
    for i, values in enumerate(tuples):
        groups.setdefault(values, []).append(i)
    return {k: np.asarray(v, dtype=np.int64) for k, v in groups.items()}


def _dead_letters(
    spark: SparkSession, feed: Feed, fileio: FileIO, table: TableInfo, say: Progress
) -> tuple[int, str | None]:
    """Count the rejected rows and, if any, write them (JSON lines with ``_reason``).

    The count was usually taken while the batch was read (`Feed.rejected_count`), so a clean
    batch costs no job here; only a batch with rejected rows is read again to write them.
    """
    if feed.rejected_count() == 0:
        return 0, None
    rejected = feed.rejected.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        count = rejected.count()
        if count == 0:
            return 0, None
        rel = f"{table.location}/_dead_letter/batch={int(time.time() * 1000)}-{id(feed):x}"
        rejected.coalesce(1).write.mode("errorifexists").json(fileio.full_path(rel))
        say(f"{count} rejected rows written to {fileio.full_path(rel)}")
        return count, rel
    finally:
        rejected.unpersist()


def _write_version(
    spark: SparkSession,
    store: MetaStore,
    fileio: FileIO,
    table: TableInfo,
    batch: DataFrame,
    keys: pa.Table,
    txn: int,
    opts: WriteOptions,
    keeper: TransactionKeeper,
    say: Progress,
    *,
    rejected: tuple[int, str | None],
    coerced: int,
    superseded: int,
    started: float,
    operation: str,
) -> CommitResult:
    spec = table.spec
    snapshot = store.snapshot(spec.name)
    groups = _partition_groups(keys, len(spec.partition_by))
    others = len(snapshot.partitions) if spec.keys_move else 0
    say(
        f"probing Bloom filters of {len(groups)} partitions"
        + (f" (and of {others} others: the key is unique table-wide)" if others else "")
    )
    plan = plan_version(
        spark,
        fileio,
        table,
        snapshot,
        keys,
        groups,
        version=txn,
        bloom_error_rate=opts.bloom_error_rate,
        bloom_headroom=WRITE_HEADROOM,
    )
    counts = plan.counts
    to_write = batch.where(F.col(OP) != F.lit("D"))
    if plan.stale.any():
        to_write = _drop_stale(spark, to_write, keys.filter(pa.array(plan.stale)), spec)
    rows_to_write = counts.inserted + counts.updated
    say(f"writing {rows_to_write} rows as version {txn}")
    staged = write_version_files(
        to_write,
        spec,
        fileio,
        table.location,
        txn,
        row_count=rows_to_write,
        partitions=len(groups),
        rows_per_file=opts.rows_per_file,
    )
    for f in staged:
        info = plan.partitions[f.partition_values]
        add = f.add
        plan.adds[f.partition_values].append(
            FileAdd(_id(info), add.path, add.kind, add.version, add.size_bytes, add.row_count)
        )

    rejected_count, dead_letter_dir = rejected
    files = [a for adds in plan.adds.values() for a in adds]
    metrics = {
        "inserted": counts.inserted,
        "updated": counts.updated,
        "deleted": counts.deleted,
        "ignored_deletes": counts.ignored_deletes,
        "stale": counts.stale,
        "superseded": superseded,
        "rejected": rejected_count,
        "coerced": coerced,
        "dead_letter": dead_letter_dir,
        "partitions": len(plan.adds),
        "files_written": len(files),
        "bytes_written": sum(a.size_bytes for a in files),
    }
    keeper.check()
    store.commit(
        txn,
        spec.name,
        operation=operation,
        partitions=[
            PartitionCommit(
                partition_id=_id(plan.partitions[values]),
                expected_head=_head(plan.partitions[values]),
                new_head=txn,
                add=tuple(adds),
                # A new partition is created by the commit: a failed write leaves none.
                values=None if plan.partitions[values] else values,
            )
            for values, adds in plan.adds.items()
        ],
        metrics=metrics,
        # A table-wide key can move into a partition this write does not touch: any commit
        # since the snapshot may have placed one of our keys there.
        expected_seq=snapshot.seq if spec.keys_move else None,
    )
    say(f"committed version {txn}")
    return CommitResult(
        version=txn,
        inserted=counts.inserted,
        updated=counts.updated,
        deleted=counts.deleted,
        stale=counts.stale,
        rejected=rejected_count,
        coerced=coerced,
        superseded=superseded,
        ignored_deletes=counts.ignored_deletes,
        partitions=len(plan.adds),
        files_written=len(files),
        bytes_written=sum(a.size_bytes for a in files),
        seconds=round(time.monotonic() - started, 3),
    )


def _drop_stale(spark: SparkSession, rows: DataFrame, stale: pa.Table, spec: Any) -> DataFrame:
    cols = [part_column(i) for i in range(len(spec.partition_by))] + list(index_key_columns(spec))
    drop = spark.createDataFrame(stale.select(cols))
    cond = [rows[c].eqNullSafe(drop[c]) for c in cols]
    return rows.join(F.broadcast(drop), cond, "left_anti")


def _id(info: PartitionInfo | None) -> int | None:
    """The partition's id; None for a new partition (the commit creates it)."""
    return None if info is None else info.id


def _head(info: PartitionInfo | None) -> int | None:
    return None if info is None else info.head_version
