"""Applying a change batch to an acid table as one transaction with one write id W.

1. Normalise and deduplicate the feed as every layout does (`engine.feeds`), add each row's
   Hive bucket.
2. Find the current ROW__ID and ordering value of the batch's keys (`row_lookup`).
3. A change older than its key's stored ordering value is stale and skipped. Updates and
   deletes of stored keys become delete events in ``delete_delta_W_W_0000/bucket_N`` of the
   stored row's partition and bucket; inserts and updates become insert events in
   ``delta_W_W_0000/bucket_N`` (split update, as Hive 3).
4. One catalog commit lists the files, guarded by the heads of the partitions it touches
   (and the table's commit sequence when keys may move), and retried as a new transaction
   and write id when another writer won.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel
from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from versioned.catalog.records import PartitionCommit, PartitionInfo, Snapshot, TableInfo
from versioned.engine.feeds.batch_dedup import CHANGES, empty_partitions_as_null, latest_per_key
from versioned.engine.feeds.rows import OP
from versioned.layouts.acid.engine.bucketing import BUCKET_COLUMN, with_buckets
from versioned.layouts.acid.engine.driver_events import (
    delete_fields,
    insert_fields,
    write_deletes_on_driver,
    write_inserts_on_driver,
)
from versioned.layouts.acid.engine.event_writer import (
    WrittenFile,
    write_delete_events,
    write_insert_events,
)
from versioned.layouts.acid.engine.events import ROW_ID_FIELDS
from versioned.layouts.acid.engine.reader import files_of
from versioned.layouts.acid.engine.row_lookup import STORED, KeyLookup, plan_lookup, stored_rows
from versioned.layouts.acid.engine.tombstones import (
    TOMBSTONE_KIND,
    newest_tombstones,
    tombstone_fields,
    write_tombstones,
)
from versioned.layouts.acid.engine.transaction import AcidTransaction, acid_transaction
from versioned.layouts.acid.key_filters import KEY_BLOOM_KIND
from versioned.layouts.acid.snapshot_dirs import MARKER_KIND
from versioned.layouts.acid.table_rules import driver_write_max_events
from versioned.layouts.engine_protocol import EngineContext
from versioned.layouts.layout import StorageLayout
from versioned.layouts.table_request import WriteRequest
from versioned.layouts.write_run import Rejected, run_write
from versioned.results import CommitResult
from versioned.schema import TableSpec

_FOUND, _STALE, _DELETED_AT = "#found", "#stale", "#deleted_at"
_SIDE_KINDS = (MARKER_KIND, TOMBSTONE_KIND, KEY_BLOOM_KIND)
"""File kinds a commit adds besides bucket files (not counted as files written)."""
_COUNTS = ("inserted", "updated", "deleted", "ignored_deletes", "stale", "superseded")


@dataclass(frozen=True)
class _WriteJob:
    """What every attempt of one write shares: the deduplicated batch with its buckets."""

    ctx: EngineContext
    request: WriteRequest
    layout: StorageLayout
    batch: DataFrame
    rejected: Rejected
    """Rows rejected to the dead-letter area, and where they went."""
    started: float

    @property
    def table(self) -> TableInfo:
        return self.request.table


@dataclass(frozen=True)
class _Batch:
    """The deduplicated batch with its buckets, kept (persisted) for every attempt."""

    rows: DataFrame
    empty: bool
    started: float
    rejected: Rejected | None = None

    def release(self) -> None:
        self.rows.unpersist()


@dataclass(frozen=True)
class _AcidWrite:
    """The acid layout's part of `run_write`."""

    ctx: EngineContext
    request: WriteRequest
    layout: StorageLayout
    retry_message: str = "retrying as a new transaction"

    def prepare(self, started: float) -> _Batch:
        spec = self.request.table.spec
        rows = empty_partitions_as_null(self.request.feed.rows, spec)
        batch = latest_per_key(rows, spec, with_change_count=True)
        batch = with_buckets(batch, spec).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            self.request.say("reading the batch")
            # One job reads (and keeps) the whole batch: the feed's rejected rows are
            # counted on the way (`Feed.rejected_count`), so a batch without any is not
            # parsed a second time to count them.
            return _Batch(batch, batch.count() == 0, started)
        except BaseException:
            batch.unpersist()
            raise

    def attempt(self, batch: _Batch, rejected: Rejected, n: int) -> CommitResult:
        ctx, request, layout = self.ctx, self.request, self.layout
        table = request.table
        job = _WriteJob(ctx, request, layout, batch.rows, rejected, batch.started)
        with acid_transaction(
            ctx,
            table.spec.name,
            timeout_s=request.options.txn_timeout_s,
            staging_dir=lambda txn_id: layout.staging_dir(table.location, txn_id),
        ) as txn:
            return _write(job, txn, request.planning_snapshot(ctx.store, n))


def write_batch(ctx: EngineContext, request: WriteRequest, layout: StorageLayout) -> CommitResult:
    """Apply the request's feed to its acid table as one commit and return what was
    committed (`versioned.layouts.write_run`)."""
    return run_write(ctx, request, _AcidWrite(ctx, request, layout))


def _plan(
    ctx: EngineContext, spec: TableSpec, snapshot: Snapshot, batch: DataFrame
) -> tuple[DataFrame, KeyLookup]:
    """The batch joined with each key's stored row, with ``#found`` and ``#stale``, and
    the files its lookup reads."""
    lookup = plan_lookup(ctx.fileio, snapshot, files_of(ctx.store, snapshot), batch)
    stored = stored_rows(ctx, snapshot, lookup, batch)
    keys = list(spec.record_key)
    cond = [F.col(k).eqNullSafe(F.col(STORED + k)) for k in keys]
    planned = batch.join(stored, cond, "left")
    found = F.col(STORED + ROW_ID_FIELDS[-1]).isNotNull()
    stale: SparkColumn = F.lit(False)
    order = spec.ordering_column
    if order:
        tombstones = newest_tombstones(ctx, snapshot, lookup.scope.partitions)
        stored_order = F.when(found, F.col(STORED + order))
        if tombstones is not None:
            deleted = tombstones.select(
                *[F.col(k).alias(f"#t_{k}") for k in keys], F.col(order).alias(_DELETED_AT)
            )
            on = [F.col(k).eqNullSafe(F.col(f"#t_{k}")) for k in keys]
            planned = planned.join(deleted, on, "left")
            stored_order = F.greatest(stored_order, F.col(_DELETED_AT))
        new = F.col(order)
        stale = stored_order.isNotNull() & new.isNotNull() & (new < stored_order)
    return planned.withColumn(_FOUND, found).withColumn(_STALE, stale), lookup


def _counts(planned: DataFrame) -> dict[str, int]:
    found, stale = F.col(_FOUND), F.col(_STALE)
    delete = F.col(OP) == F.lit("D")
    live = ~stale

    def count(condition: SparkColumn) -> SparkColumn:
        return F.sum(F.when(condition, F.lit(1)).otherwise(F.lit(0)))

    row = planned.agg(
        count(live & ~delete & ~found).alias("inserted"),
        count(live & ~delete & found).alias("updated"),
        count(live & delete & found).alias("deleted"),
        count(live & delete & ~found).alias("ignored_deletes"),
        count(stale).alias("stale"),
        F.sum(F.col(CHANGES) - F.lit(1)).alias("superseded"),
    ).first()
    assert row is not None
    return {k: int(row[k] or 0) for k in _COUNTS}


_INSERT, _DELETE, _TOMBSTONE = "#i_", "#d_", "#t_"


def _collected_fields(spec: TableSpec) -> list[SparkColumn]:
    """One row per batch key with what `_counts_of` and the driver's writers need."""
    fields = [F.col(c) for c in (OP, _FOUND, _STALE, CHANGES)]
    fields += [c.alias(_INSERT + n) for n, c in insert_fields(spec).items()]
    fields += [c.alias(_DELETE + n) for n, c in delete_fields(spec, STORED).items()]
    if spec.ordering_column:
        fields += [c.alias(_TOMBSTONE + n) for n, c in tombstone_fields(spec).items()]
    return fields


def _counts_of(collected: pa.Table) -> dict[str, int]:
    """`_counts` of the collected plan (`_collected_fields`), on the driver."""
    found, stale = collected.column(_FOUND), collected.column(_STALE)
    delete = pc.equal(collected.column(OP), "D")
    live = pc.invert(stale)

    def count(*conditions: Any) -> int:
        mask = conditions[0]
        for condition in conditions[1:]:
            mask = pc.and_(mask, condition)
        return int(pc.sum(pc.cast(mask, pa.int64())).as_py() or 0)

    changes = pc.sum(pc.subtract(collected.column(CHANGES), 1)).as_py()
    return {
        "inserted": count(live, pc.invert(delete), pc.invert(found)),
        "updated": count(live, pc.invert(delete), found),
        "deleted": count(live, delete, found),
        "ignored_deletes": count(live, delete, pc.invert(found)),
        "stale": count(stale),
        "superseded": int(changes or 0),
    }


def _part(collected: pa.Table, prefix: str, keep: Any) -> pa.Table:
    """The rows ``keep`` of ``collected``, the columns named with ``prefix`` (unprefixed)."""
    names = [n for n in collected.schema.names if n.startswith(prefix)]
    rows = collected.filter(keep).select(names)
    return rows.rename_columns([n[len(prefix) :] for n in names])


def _write_on_driver(
    ctx: EngineContext,
    table: TableInfo,
    planned: DataFrame,
    collected: pa.Table,
    counts: dict[str, int],
    stage: str,
    args: dict[str, Any],
) -> list[WrittenFile]:
    """Write the batch's events from the collected plan with pyorc (`driver_events`)."""
    spec = table.spec
    live = pc.invert(collected.column(_STALE))
    delete = pc.equal(collected.column(OP), "D")
    written: list[WrittenFile] = []
    if counts["updated"] + counts["deleted"]:
        row_ids = _part(collected, _DELETE, pc.and_(live, collected.column(_FOUND)))
        written += write_deletes_on_driver(row_ids, spec, ctx.fileio, table.location, **args)
    if counts["inserted"] + counts["updated"]:
        rows = _part(collected, _INSERT, pc.and_(live, pc.invert(delete)))
        inserted = write_inserts_on_driver(rows, spec, ctx.fileio, table.location, **args)
        if inserted is None:  # values the driver's writer cannot write (see there)
            inserted = write_insert_events(
                _inserts(planned, spec), spec, ctx.fileio, table.location, stage, **args
            )
        written += inserted
    if spec.ordering_column and counts["deleted"] + counts["ignored_deletes"]:
        applied = _part(collected, _TOMBSTONE, pc.and_(live, delete))
        written += write_tombstones(applied, spec, ctx.fileio, table.location, **args)
    return written


def _inserts(planned: DataFrame, spec: TableSpec) -> DataFrame:
    live = ~F.col(_STALE)
    rows = planned.where(live & (F.col(OP) != F.lit("D")))
    return rows.select(*spec.column_names, BUCKET_COLUMN)


def _write_with_spark(
    ctx: EngineContext,
    table: TableInfo,
    planned: DataFrame,
    counts: dict[str, int],
    stage: str,
    args: dict[str, Any],
) -> list[WrittenFile]:
    """Write the batch's events with Spark's ORC writer (`event_writer`)."""
    spec = table.spec
    live = ~F.col(_STALE)
    written: list[WrittenFile] = []
    if counts["updated"] + counts["deleted"]:  # an empty Spark write is a job for nothing
        deletes = planned.where(live & F.col(_FOUND)).select(
            *[F.col(STORED + c).alias(c) for c in (*spec.partition_by, *ROW_ID_FIELDS)]
        )
        written += write_delete_events(deletes, spec, ctx.fileio, table.location, stage, **args)
    if counts["inserted"] + counts["updated"]:
        rows = _inserts(planned, spec)
        written += write_insert_events(rows, spec, ctx.fileio, table.location, stage, **args)
    if spec.ordering_column and counts["deleted"] + counts["ignored_deletes"]:
        applied = planned.where(live & (F.col(OP) == F.lit("D")))
        fields = tombstone_fields(spec)
        rows = applied.select(*[c.alias(n) for n, c in fields.items()]).toArrow()
        written += write_tombstones(rows, spec, ctx.fileio, table.location, **args)
    return written


def _write(job: _WriteJob, txn: AcidTransaction, snapshot: Snapshot) -> CommitResult:
    """One attempt: plan on ``snapshot``, write the events and commit them as ``txn``."""
    ctx, table, say = job.ctx, job.table, job.request.say
    spec, feed, rejected = table.spec, job.request.feed, job.rejected
    say(f"looking up the stored rows of the batch's keys (write id {txn.write_id})")
    planned, lookup = _plan(ctx, spec, snapshot, job.batch)
    limit = driver_write_max_events(spec)
    small = lookup.batch_rows <= limit
    if not small:  # read by several jobs below
        planned = planned.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        if small:  # one job brings everything the driver writes
            collected = planned.select(*_collected_fields(spec)).toArrow()
            counts = _counts_of(collected)
        else:
            collected, counts = None, _counts(planned)
        say(f"writing {counts['inserted'] + counts['updated']} rows as write id {txn.write_id}")
        events = counts["inserted"] + 2 * counts["updated"] + counts["deleted"]
        args: dict[str, Any] = {
            "write_id": txn.write_id,
            "version": txn.txn_id,
            "claim": txn.tx.own_file,
        }
        if collected is not None and events <= limit:
            written = _write_on_driver(
                ctx, table, planned, collected, counts, txn.staging_dir, args
            )
        else:
            written = _write_with_spark(ctx, table, planned, counts, txn.staging_dir, args)
    finally:
        planned.unpersist()
    changes = _partition_commits(snapshot, written, txn.txn_id)
    data = [w.add for w in written if w.add.kind not in _SIDE_KINDS]
    metrics = {
        **counts,
        "rejected": rejected[0],
        "coerced": feed.coerced_count(),
        "dead_letter": rejected[1],
        "write_id": txn.write_id,
        "lookup_files_read": lookup.files_read,
        "lookup_files_skipped": lookup.files_skipped,
        "partitions": len(changes),
        "files_written": len(data),
        "bytes_written": sum(a.size_bytes for a in data),
    }
    committed = txn.commit(
        operation=job.request.operation,
        partitions=changes,
        metrics=metrics,
        expected_seq=snapshot.seq if spec.keys_move else None,
        stream_mark=job.request.options.stream_mark,
        in_commit_order=job.layout.versions_follow_commits,
    )
    say(f"committed version {committed.version} (write id {txn.write_id})")
    return CommitResult(
        version=committed.version,
        rejected=rejected[0],
        dead_letter=rejected[1],
        coerced=feed.coerced_count(),
        partitions=len(changes),
        files_written=len(data),
        bytes_written=sum(a.size_bytes for a in data),
        seconds=round(time.monotonic() - job.started, 3),
        inserted=counts["inserted"],
        updated=counts["updated"],
        deleted=counts["deleted"],
        stale=counts["stale"],
        superseded=counts["superseded"],
        ignored_deletes=counts["ignored_deletes"],
    )


def _partition_commits(
    snapshot: Snapshot, written: list[WrittenFile], version: int
) -> list[PartitionCommit]:
    """One guarded change per touched partition; a new partition is created by the commit."""
    by_values: dict[tuple[str | None, ...], PartitionInfo] = {
        p.values: p for p in snapshot.partitions.values()
    }
    files: dict[tuple[str | None, ...], list[Any]] = {}
    for w in written:
        files.setdefault(w.partition_values, []).append(w.add)
    changes = []
    for values, adds in files.items():
        info = by_values.get(values)
        pid = None if info is None else info.id
        changes.append(
            PartitionCommit(
                partition_id=pid,
                expected_head=None if info is None else info.head_version,
                new_head=version,
                add=tuple(
                    type(a)(pid, a.path, a.kind, a.version, a.size_bytes, a.row_count, a.stats)
                    for a in adds
                ),
                values=None if info is not None else values,
            )
        )
    return changes
