"""A table's first load in bulk: Spark writes the rows in the job that reads and checks them,
and the executors summarise their keys; the driver neither holds the batch nor hashes a key.

Taken for the first write to a version-partition table with nothing committed yet (a snapshot
of the source) when Spark estimates the batch at ``write.bulk_load_min_bytes`` or more
(`layouts.version_partition.table_rules`):

1. One job reads the feed, checks its rows and writes them, counting the rejected rows, the
   deletes and the coerced values as it goes (no shuffle: each task writes a file per
   partition it holds):
   * a Parquet table's rows are written by the tasks with pyarrow, straight into their
     ``version_id=V`` folders (`task_writes`);
   * an ORC table's by Spark's partitioned writer into the transaction's staging folder, from
     which they move into their ``version_id=V`` folders after step 3.
2. The row count of each partition comes from the tasks (or the staged files' footers); it
   sizes the partition's Bloom filter as the general path would (`bloom.capacity_for`).
3. One job reads the written files' key columns on the executors, which build each
   partition's Bloom filter and key bounds and hash every record key (`staged_keys`).
4. The Bloom files are written (a first load needs no index entries: no key exists yet), and
   one catalog commit makes the version visible.

The batch goes the general way instead (`writer.write_batch`; whatever was staged is removed
with the aborted transaction) when it holds a delete, repeats a record key, or loses the
commit to another writer. Nothing is visible before the commit: the staged files and every
folder written are owned by the write's transaction.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from versioned.catalog.records import FileAdd, PartitionCommit, TableInfo
from versioned.catalog.write_transaction import WriteTransaction, write_transaction
from versioned.engine.feeds.batch_dedup import CHANGES
from versioned.engine.feeds.dead_letters import write_dead_letters
from versioned.engine.feeds.reader import Feed
from versioned.engine.spark.operation_conf import estimated_bytes
from versioned.engine.spark.python_workers import checked_beside
from versioned.engine.spark.types import spark_type
from versioned.errors import CommitConflictError
from versioned.keys.bloom import WRITE_HEADROOM, capacity_for
from versioned.keys.columns import (
    index_key_columns,
)
from versioned.layouts.layout import DEAD_LETTER_DIR
from versioned.layouts.table_request import WriteRequest
from versioned.layouts.version_partition.engine.staged_keys import StagedKeys, staged_keys
from versioned.layouts.version_partition.engine.staging import (
    StagedOutput,
    list_staged,
    move_staged,
    staging_dir,
)
from versioned.layouts.version_partition.engine.task_writes import write_in_tasks
from versioned.layouts.version_partition.paths import bloom_file_name, index_dir, version_dir
from versioned.layouts.version_partition.probe import BLOOM_KIND
from versioned.layouts.version_partition.table_rules import bulk_load_min_bytes
from versioned.results import CommitResult
from versioned.schema import TableSpec
from versioned.storage.partition_paths import partition_path

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import EngineContext

log = logging.getLogger(__name__)
# Record keys are checked for repeats by a hash Spark computes; a floating-point key (where
# -0.0 equals 0.0) goes the general way.
_HASHED_KEY_TYPES = (
    T.ByteType,
    T.ShortType,
    T.IntegerType,
    T.LongType,
    T.DecimalType,
    T.StringType,
    T.BooleanType,
    T.DateType,
    T.TimestampType,
    T.BinaryType,
)


DeadLetters = tuple[int, str | None]
"""Rows rejected to the dead-letter area, and where they went."""


@dataclass(frozen=True)
class BulkLoad:
    """What `load_in_bulk` did: committed the batch, or left it to the general path."""

    committed: CommitResult | None
    dead_letters: DeadLetters | None = None
    """Written already (the general path must not write them again), or None."""


class _GeneralPath(Exception):
    """The batch needs the general write path (the reason is the message)."""


def bulk_load_applies(table: TableInfo, feed: Feed, rows: DataFrame) -> bool:
    """Whether ``rows`` (the feed's rows, empty partition values as null) are loaded in bulk."""
    spec = table.spec
    if table.current_seq != 0 or feed.keeps or CHANGES in spec.column_names:
        return False
    if not index_key_columns(spec) or not all(
        isinstance(spark_type(spec.column(c).type), _HASHED_KEY_TYPES) for c in spec.record_key
    ):
        return False
    size = estimated_bytes(rows)
    return size is not None and size >= bulk_load_min_bytes(spec)


def load_in_bulk(
    ctx: EngineContext,
    request: WriteRequest,
    rows: DataFrame,
    checked: DataFrame | None,
    *,
    started: float,
) -> BulkLoad:
    """Load ``rows`` (the request's feed rows, empty partition values as null) as the table's
    first version, or leave them to the general path (nothing of the attempt stays behind
    but the dead letters it wrote).

    Args:
        checked: The feed's `Feed.checked` rows (empty partition values as null): what a
            Parquet table's tasks write, when given.
    """
    table = request.table
    location = table.location
    in_tasks = checked if table.spec.file_format == "parquet" else None
    job = _Job(ctx, request, in_tasks)
    try:
        with write_transaction(
            ctx.store,
            table.spec.name,
            timeout_s=request.options.txn_timeout_s,
            fileio=ctx.fileio,
            staging=lambda txn: staging_dir(location, txn),
        ) as tx:
            result = _load(job, rows, tx)
    except (_GeneralPath, CommitConflictError) as reason:
        request.say(f"not loading in bulk ({reason}): applying the batch as any other")
        return BulkLoad(None, job.dead_letters)
    seconds = round(time.monotonic() - started, 3)
    return BulkLoad(dataclasses.replace(result, seconds=seconds), job.dead_letters)


@dataclass
class _Job:
    ctx: EngineContext
    request: WriteRequest
    checked: DataFrame | None
    """Written by the tasks in place (a Parquet table), or None: staged by Spark."""
    dead_letters: DeadLetters | None = None
    rejected: int | None = None
    coerced: int | None = None
    """The rejected and the coerced rows, when the tasks counted them."""

    @property
    def table(self) -> TableInfo:
        return self.request.table

    def say(self, message: str) -> None:
        self.request.say(message)


def _load(job: _Job, rows: DataFrame, tx: WriteTransaction) -> CommitResult:
    spec = job.table.spec
    snapshot = job.request.planning_snapshot(job.ctx.store)
    if snapshot.partitions or snapshot.files:
        raise _GeneralPath("the table has data")
    staged, keys = _stage(job, rows, tx)
    fileio, location = job.ctx.fileio, job.table.location
    feed = job.request.feed
    rejected, dead_letters = job.dead_letters = write_dead_letters(
        feed, fileio, f"{location}/{DEAD_LETTER_DIR}", counted=job.rejected
    )
    if dead_letters is not None:
        job.say(f"{rejected} rejected rows written to {fileio.full_path(dead_letters)}")
    adds = _version_files(job, tx, staged, keys)
    files = [a for added in adds.values() for a in added]
    result = CommitResult(
        version=tx.id,
        inserted=sum(p.bloom.count for p in keys.partitions.values()),
        updated=0,
        deleted=0,
        stale=0,
        rejected=rejected,
        dead_letter=dead_letters,
        coerced=feed.coerced_count() if job.coerced is None else job.coerced,
        partitions=len(adds),
        files_written=len(files),
        bytes_written=sum(a.size_bytes for a in files),
    )
    job.say(f"committing version {tx.id}")
    tx.commit(
        operation=job.request.operation,
        partitions=[
            PartitionCommit(None, expected_head=None, new_head=tx.id, add=tuple(a), values=v)
            for v, a in adds.items()
        ],
        metrics=_metrics(result, dead_letters),
        expected_seq=snapshot.seq if spec.keys_move else None,
        stream_mark=job.request.options.stream_mark,
    )
    job.say(f"committed version {tx.id}")
    return result


def _stage(
    job: _Job, rows: DataFrame, tx: WriteTransaction
) -> tuple[list[StagedOutput], StagedKeys]:
    """Write the rows (in place, or into the staging folder) and summarise their keys."""
    spec, options = job.table.spec, job.request.options
    job.say(f"writing the batch as version {tx.id} (first load, in bulk)")
    staged = _written_in_tasks(job, tx) if job.checked is not None else _staged(job, rows, tx)
    per_partition = Counter[tuple[str | None, ...]]()
    for f in staged:
        per_partition[f.partition_values] += f.row_count
    if not per_partition:
        raise _GeneralPath("no row to apply")
    job.say(f"{per_partition.total()} keys in {len(per_partition)} partitions")
    capacities = {v: capacity_for(n, WRITE_HEADROOM) for v, n in per_partition.items()}
    found = [(f.path, f.partition_values, f.row_count) for f in staged]
    keys = staged_keys(job.ctx, spec, found, capacities, options.bloom_error_rate)
    if not keys.unique:
        raise _GeneralPath("a key repeats")
    if {v: p.bloom.count for v, p in keys.partitions.items()} != dict(per_partition):
        log.warning("bulk load of %s: staged keys and row counts disagree", spec.name)
        raise _GeneralPath("the staged keys do not match the staged rows")
    return staged, keys


def _written_in_tasks(job: _Job, tx: WriteTransaction) -> list[StagedOutput]:
    """The tasks' write of a Parquet table's rows into the version's folders (claimed by the
    transaction), with their counts."""
    assert job.checked is not None
    spec, location = job.table.spec, job.table.location
    written = write_in_tasks(
        job.ctx.spark,
        job.ctx.fileio,
        job.checked,
        spec,
        location,
        tx.id,
        job.request.options.rows_per_file,
    )
    for values in {f.partition_values for f in written.files}:
        tx.own_dir(f"{location}/{version_dir(partition_path(spec.partition_by, values), tx.id)}")
    job.rejected, job.coerced = written.rejected, written.coerced
    if written.deletes:
        raise _GeneralPath("the batch deletes keys")
    return [
        StagedOutput(f.partition_values, f.path, f.size_bytes, f.row_count)
        for f in written.files
        if f.row_count
    ]


def _staged(job: _Job, rows: DataFrame, tx: WriteTransaction) -> list[StagedOutput]:
    """Spark's write of the rows into the staging folder; its files, once the rows were
    read (so their counts are taken)."""
    spec, fileio, options = job.table.spec, job.ctx.fileio, job.request.options
    assert tx.staging_dir is not None
    # The keys job runs Python: its workers start beside the write, on the core the write's
    # last tasks leave idle, rather than after it.
    with checked_beside(job.ctx.spark, also=(staged_keys.__module__,)):
        _write_rows(rows, spec, fileio.full_path(tx.staging_dir), options.rows_per_file)
    if job.request.feed.delete_count() != 0:  # counted as the rows were read (None: unknown)
        raise _GeneralPath("the batch deletes keys")
    return [f for f in list_staged(fileio, spec, tx.staging_dir) if f.row_count]


def _version_files(
    job: _Job, tx: WriteTransaction, staged: list[StagedOutput], keys: StagedKeys
) -> dict[tuple[str | None, ...], list[FileAdd]]:
    """Move staged files into the version's folders (files the tasks wrote are there
    already) and write the version's Bloom files."""
    spec, fileio, location = job.table.spec, job.ctx.fileio, job.table.location
    adds: dict[tuple[str | None, ...], list[FileAdd]] = {v: [] for v in keys.partitions}
    if job.checked is not None:
        for f in staged:
            rel = f.path[len(location) + 1 :]
            adds[f.partition_values].append(
                FileAdd(None, rel, "data", tx.id, f.size_bytes, f.row_count)
            )
    else:
        assert tx.staging_dir is not None
        for moved in move_staged(fileio, staged, job.table, tx):
            adds[moved.partition_values].append(moved.add)
        fileio.delete_dir(tx.staging_dir, missing_ok=True)
    for values, part in keys.partitions.items():
        directory = index_dir(partition_path(spec.partition_by, values), tx.id)
        tx.own_dir(f"{location}/{directory}")
        rel = f"{directory}/{bloom_file_name()}"
        size = part.bloom.write(fileio, f"{location}/{rel}")
        adds[values].append(
            FileAdd(None, rel, BLOOM_KIND, tx.id, size, part.bloom.count, part.stats())
        )
    return adds


def _write_rows(rows: DataFrame, spec: TableSpec, stage_uri: str, rows_per_file: int) -> None:
    """Spark's partitioned write of the table's columns of ``rows`` into ``stage_uri``."""
    writer = (
        rows.select(*spec.column_names)
        .write.mode("errorifexists")
        .option("maxRecordsPerFile", rows_per_file)
    )
    if spec.partition_by:
        writer = writer.partitionBy(*spec.partition_by)
    writer.format(spec.file_format).save(stage_uri)


def _metrics(result: CommitResult, dead_letter_dir: str | None) -> dict[str, object]:
    """The commit's metrics (as the general path records them)."""
    return {
        "inserted": result.inserted,
        "updated": 0,
        "deleted": 0,
        "ignored_deletes": 0,
        "stale": 0,
        "superseded": 0,
        "rejected": result.rejected,
        "coerced": result.coerced,
        "dead_letter": dead_letter_dir,
        "partitions": result.partitions,
        "files_written": result.files_written,
        "bytes_written": result.bytes_written,
    }
