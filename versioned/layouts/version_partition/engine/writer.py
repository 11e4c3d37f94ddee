"""Applying a change batch to a version-partition table as one new version.

1. Normalise the feed, keep the last change per key (one Spark job, cached). A large first
   load of a table skips this and the next steps when it can (`bulk_load`).
2. Bring the batch's keys to the driver; per touched partition, test them against the live
   Bloom filters. Keys that may exist get a version-index entry; with an ordering column the
   stored ordering of those keys is read (key and ordering columns only) to skip stale
   changes, and deletes always leave a tombstone. With a table-wide key (some partition
   column outside the primary key) every other partition is probed too, and the key's row
   there is retired with an ``M`` (moved) or ``D`` entry (`write_plan`).
3. Write the rows (never deletes) into ``version_id=V`` of each partition, the index entries
   and a Bloom filter over all keys of the batch, then commit one catalog transaction.

Each attempt runs in one `write_transaction` (begin, heartbeat, compare-and-swap commit;
an attempt that fails is aborted and its files removed). A commit that loses a race (another
version of a touched partition committed first, or for a table-wide key any commit since the
snapshot) is retried with a new transaction, up to ``max_attempts`` (`retry_on_conflict`).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from versioned.catalog.records import FileAdd, PartitionCommit, PartitionInfo, Snapshot, TableInfo
from versioned.catalog.write_transaction import (
    WriteTransaction,
    write_transaction,
)
from versioned.engine.feeds.batch_dedup import CHANGES, empty_partitions_as_null, latest_per_key
from versioned.engine.feeds.rows import OP
from versioned.keys.bloom import WRITE_HEADROOM
from versioned.keys.columns import (
    index_key_columns,
)
from versioned.layouts.table_request import WriteRequest
from versioned.layouts.version_partition.engine.bulk_load import bulk_load_applies, load_in_bulk
from versioned.layouts.version_partition.engine.staging import (
    staging_dir,
    write_version_files,
    write_version_files_on_driver,
)
from versioned.layouts.version_partition.engine.write_plan import (
    VersionPlan,
    part_column,
    plan_version,
)
from versioned.layouts.version_partition.table_rules import driver_write_max_rows
from versioned.layouts.write_run import run_write
from versioned.options import WriteOptions
from versioned.results import CommitResult
from versioned.schema import TableSpec

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import EngineContext

log = logging.getLogger(__name__)


def write_batch(ctx: EngineContext, request: WriteRequest) -> CommitResult:
    """Apply the request's feed to its table as one new version and return what was
    committed (`versioned.layouts.write_run`; a first load in bulk commits at once)."""
    return run_write(ctx, request, _VersionWrite(ctx, request))


@dataclass(frozen=True)
class _Batch:
    """The deduplicated batch and its keys, kept for every attempt."""

    rows: DataFrame
    keys: pa.Table
    groups: dict[tuple[str | None, ...], np.ndarray]
    """Row indices of ``keys`` per partition (`_partition_groups`)."""
    superseded: int
    started: float
    planned: int
    """Attempts planned on the request's snapshot already (by a bulk load that gave up)."""
    rejected: tuple[int, str | None] | None

    @property
    def empty(self) -> bool:
        return self.keys.num_rows == 0

    def release(self) -> None:
        self.rows.unpersist()


@dataclass(frozen=True)
class _VersionWrite:
    """The version layout's part of `run_write`."""

    ctx: EngineContext
    request: WriteRequest
    retry_message: str = "retrying as a new version"

    def prepare(self, started: float) -> _Batch | CommitResult:
        ctx, request = self.ctx, self.request
        table, feed, say = request.table, request.feed, request.say
        spec = table.spec
        part_strings = [
            F.col(p).cast("string").alias(part_column(i)) for i, p in enumerate(spec.partition_by)
        ]
        say("reading the batch")
        rows = empty_partitions_as_null(feed.rows, spec)
        dead_letters = None
        planned = 0
        if bulk_load_applies(table, feed, rows):
            checked = feed.checked
            if checked is not None:
                checked = empty_partitions_as_null(checked, spec)
            bulk = load_in_bulk(ctx, request, rows, checked, started=started)
            if bulk.committed is not None:
                return bulk.committed
            dead_letters, planned = bulk.dead_letters, 1
        batch, keys = _batch_and_keys(rows, table, part_strings)
        try:
            superseded = int(pc.sum(keys.column(CHANGES)).as_py() or 0) - keys.num_rows
            groups = _partition_groups(keys, len(spec.partition_by))
        except BaseException:
            batch.unpersist()
            raise
        say(f"{keys.num_rows} keys in {len(groups) if keys.num_rows else 0} partitions")
        return _Batch(batch, keys, groups, superseded, started, planned, dead_letters)

    def attempt(self, batch: _Batch, rejected: tuple[int, str | None], n: int) -> CommitResult:
        job = _WriteJob(
            self.ctx,
            self.request,
            batch.rows,
            batch.keys,
            batch.groups,
            rejected,
            batch.superseded,
            batch.started,
        )
        return _attempt_version(job, batch.planned + n)


def _batch_and_keys(
    rows: DataFrame, table: TableInfo, part_strings: list[Column]
) -> tuple[DataFrame, pa.Table]:
    """The batch with one row per key (persisted) and its keys on the driver.

    The first load of a table (nothing committed yet: a snapshot of the source) rarely
    repeats a key, so its rows are kept as they come and their keys checked on the driver,
    which needs them anyway; only a batch that does repeat a key is deduplicated by Spark
    (`latest_per_key`, a shuffle and sort of the whole rows), as every later batch is.
    """
    spec = table.spec
    keep = StorageLevel.MEMORY_AND_DISK
    if table.current_seq == 0 and CHANGES not in spec.column_names:
        once = F.lit(1).cast("long").alias(CHANGES)
        staged = rows.select("*", once, *part_strings).persist(keep)
        keys = _keys_of(staged, table)
        if _keys_unique(keys, spec):
            return staged, keys
        staged.unpersist()
    batch = latest_per_key(rows, spec, with_change_count=True)
    batch = batch.select("*", *part_strings).persist(keep)
    return batch, _keys_of(batch, table)


def _keys_of(batch: DataFrame, table: TableInfo) -> pa.Table:
    """`_collect_keys`, unpersisting ``batch`` when that fails."""
    try:
        return _collect_keys(batch, table)
    except BaseException:
        batch.unpersist()
        raise


def _keys_unique(keys: pa.Table, spec: TableSpec) -> bool:
    """Whether no record key (`TableSpec.record_key`) occurs twice in ``keys``."""
    names = [
        part_column(spec.partition_by.index(c)) if c in spec.partition_by else c
        for c in spec.record_key
    ]
    distinct = keys.select(names).group_by(names, use_threads=False).aggregate([])
    return distinct.num_rows == keys.num_rows


def _collect_keys(batch: DataFrame, table: TableInfo) -> pa.Table:
    spec = table.spec
    cols = [part_column(i) for i in range(len(spec.partition_by))]
    cols += [*index_key_columns(spec), OP, CHANGES]
    if spec.ordering_column and spec.ordering_column not in cols:
        cols.append(spec.ordering_column)
    return batch.select(*cols).toArrow()


def _partition_groups(keys: pa.Table, n_parts: int) -> dict[tuple[str | None, ...], np.ndarray]:
    """Row indices of ``keys`` per partition value tuple (``""`` counts as null, like Hive).

    Grouped by Arrow (one hash aggregation, no Python per row); groups in order of first
    appearance.
    """
    if n_parts == 0:
        return {(): np.arange(keys.num_rows)}
    names = [part_column(i) for i in range(n_parts)]
    columns = {}
    for name in names:
        column = keys.column(name)
        columns[name] = pc.if_else(pc.equal(column, ""), pa.scalar(None, column.type), column)
    columns["_row"] = pa.array(np.arange(keys.num_rows, dtype=np.int64))
    grouped = pa.table(columns).group_by(names, use_threads=False).aggregate([("_row", "list")])
    rows = grouped.column("_row_list").combine_chunks()
    offsets = rows.offsets.to_numpy()
    indices = rows.values.to_numpy()
    values = zip(*(grouped.column(n).to_pylist() for n in names), strict=True)
    return {tuple(v): indices[offsets[g] : offsets[g + 1]] for g, v in enumerate(values)}


@dataclass(frozen=True)
class _WriteJob:
    """What every attempt of one write shares: the deduplicated batch and its keys."""

    ctx: EngineContext
    request: WriteRequest
    batch: DataFrame
    keys: pa.Table
    groups: dict[tuple[str | None, ...], np.ndarray]
    """Row indices of ``keys`` per partition (`_partition_groups`)."""
    rejected: tuple[int, str | None]
    """Rows rejected to the dead-letter area, and where they went."""
    superseded: int
    started: float

    @property
    def table(self) -> TableInfo:
        return self.request.table

    @property
    def options(self) -> WriteOptions:
        return self.request.options

    def say(self, message: str) -> None:
        self.request.say(message)


def _attempt_version(job: _WriteJob, attempt: int) -> CommitResult:
    """One attempt: plan (on the request's snapshot first, then on a fresh one), write and
    commit in a new transaction."""
    location = job.table.location
    with write_transaction(
        job.ctx.store,
        job.table.spec.name,
        timeout_s=job.options.txn_timeout_s,
        fileio=job.ctx.fileio,
        staging=lambda txn: staging_dir(location, txn),
    ) as tx:
        return _write_version(job, tx, job.request.planning_snapshot(job.ctx.store, attempt))


def _write_version(job: _WriteJob, tx: WriteTransaction, snapshot: Snapshot) -> CommitResult:
    spec = job.table.spec
    plan, groups = _plan(job, tx, snapshot)
    counts = plan.counts
    to_write = job.batch.where(F.col(OP) != F.lit("D"))
    if plan.stale.any():
        to_write = _drop_stale(job.ctx.spark, to_write, job.keys.filter(pa.array(plan.stale)), spec)
    rows_to_write = counts.inserted + counts.updated
    job.say(f"writing {rows_to_write} rows as version {tx.id}")
    rows_per_file = job.options.rows_per_file
    if rows_to_write <= driver_write_max_rows(spec):
        by_partition = _rows_by_partition(to_write, spec)
        staged = write_version_files_on_driver(
            job.ctx, by_partition, job.table, tx, rows_per_file=rows_per_file
        )
    else:
        staged = write_version_files(
            job.ctx,
            to_write,
            job.table,
            tx,
            row_count=rows_to_write,
            partitions=list(groups),
            rows_per_file=rows_per_file,
        )
    for f in staged:
        info = plan.partitions[f.partition_values]
        add = f.add
        plan.adds[f.partition_values].append(
            FileAdd(_id(info), add.path, add.kind, add.version, add.size_bytes, add.row_count)
        )
    result = _result(job, plan, tx.id)
    tx.commit_past_compactions(
        operation=job.request.operation,
        partitions=[
            PartitionCommit(
                partition_id=_id(plan.partitions[values]),
                expected_head=_head(plan.partitions[values]),
                new_head=tx.id,
                add=tuple(adds),
                # A new partition is created by the commit: a failed write leaves none.
                values=None if plan.partitions[values] else values,
            )
            for values, adds in plan.adds.items()
        ],
        metrics=_metrics(result, job.rejected[1]),
        # A table-wide key can move into a partition this write does not touch: any commit
        # since the snapshot may have placed one of our keys there (a compaction cannot).
        expected_seq=snapshot.seq if spec.keys_move else None,
        stream_mark=job.options.stream_mark,
    )
    job.say(f"committed version {tx.id}")
    return dataclasses.replace(result, seconds=round(time.monotonic() - job.started, 3))


def _rows_by_partition(rows: DataFrame, spec: TableSpec) -> dict[tuple[str | None, ...], pa.Table]:
    """The rows to write, on the driver, per partition (values as partition strings)."""
    parts = [part_column(i) for i in range(len(spec.partition_by))]
    table = rows.select(*[c.name for c in spec.data_columns], *parts).toArrow()
    groups = _partition_groups(table, len(parts))
    return {values: table.take(pa.array(rows)) for values, rows in groups.items()}


def _plan(
    job: _WriteJob, tx: WriteTransaction, snapshot: Snapshot
) -> tuple[VersionPlan, dict[tuple[str | None, ...], np.ndarray]]:
    """Probe the Bloom filters and write the version's index and Bloom files."""
    spec = job.table.spec
    groups = job.groups
    others = len(snapshot.partitions) if spec.keys_move else 0
    job.say(
        f"probing Bloom filters of {len(groups)} partitions"
        + (f" (and of {others} others: the key is unique table-wide)" if others else "")
    )
    plan = plan_version(
        job.ctx,
        job.table,
        snapshot,
        job.keys,
        groups,
        tx=tx,
        bloom_error_rate=job.options.bloom_error_rate,
        bloom_headroom=WRITE_HEADROOM,
    )
    return plan, groups


def _result(job: _WriteJob, plan: VersionPlan, version: int) -> CommitResult:
    """What the version commits (its time is set once committed)."""
    counts = plan.counts
    files = [a for adds in plan.adds.values() for a in adds]
    return CommitResult(
        version=version,
        inserted=counts.inserted,
        updated=counts.updated,
        deleted=counts.deleted,
        stale=counts.stale,
        rejected=job.rejected[0],
        dead_letter=job.rejected[1],
        coerced=job.request.feed.coerced_count(),
        superseded=job.superseded,
        ignored_deletes=counts.ignored_deletes,
        partitions=len(plan.adds),
        files_written=len(files),
        bytes_written=sum(a.size_bytes for a in files),
    )


def _metrics(result: CommitResult, dead_letter_dir: str | None) -> dict[str, Any]:
    """The commit's metrics (stored in the catalog, shown by ``history``)."""
    return {
        "inserted": result.inserted,
        "updated": result.updated,
        "deleted": result.deleted,
        "ignored_deletes": result.ignored_deletes,
        "stale": result.stale,
        "superseded": result.superseded,
        "rejected": result.rejected,
        "coerced": result.coerced,
        "dead_letter": dead_letter_dir,
        "partitions": result.partitions,
        "files_written": result.files_written,
        "bytes_written": result.bytes_written,
    }


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
