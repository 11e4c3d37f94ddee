"""Compacting a version-partition table, one partition and one catalog commit at a time.

Per partition, with its own transaction C:

1. Resolve the snapshot. The partition's head version is the high-water mark (hwm): every
   live file of the partition has a version <= hwm.
2. Read the latest rows of the partition's live files (the ordinary reader restricted to
   them) and, for tables with an ordering column, the delete tombstones within retention.
3. Write them as files of version hwm, in the ``<partition>/version_id=<hwm>/`` folders beside
   the files they replace, each named for C (`paths.compacted_name`), with a Bloom filter over
   the keys and an index file of the kept tombstones (`compacted_version`).
4. Commit: retire exactly the files read (each must still be live) and add the new ones. The
   partition's head does not move.

So compaction never conflicts with a writer (as Hive's compactor never does): a write that
commits to the partition meanwhile has a version above hwm, keeps its files, and its index
entries supersede the compacted rows as they superseded the rows they replace; a write that
planned against hwm commits on its first attempt. Two compactions of one partition cannot
both commit (the second finds the files it read retired: it re-plans and finds nothing left
to do). Each attempt is one `write_transaction`: a failed one is aborted and the files it
wrote are removed.

One commit per partition keeps the blast radius of a conflict to one partition: a busy
partition does not undo the work done on quiet ones. Partitions are compacted
``CompactionOptions.parallelism`` at a time (threads sharing the SparkSession).
"""

from __future__ import annotations

import dataclasses
import logging
import time
import warnings

from versioned.catalog.records import (
    CommitInfo,
    PartitionCommit,
    Snapshot,
    TableInfo,
)
from versioned.catalog.write_transaction import (
    WriteTransaction,
    write_transaction,
)
from versioned.errors import CommitConflictError, InputError
from versioned.layouts.compaction_run import NothingLeft, run_compaction
from versioned.layouts.engine_protocol import EngineContext
from versioned.layouts.table_request import CompactRequest
from versioned.layouts.version_partition.compaction_plan import (
    DEFAULT_TOMBSTONE_RETENTION_HOURS,
    TOMBSTONE_RETENTION_PROPERTY,
    PartitionPlan,
    partition_files,
    plan_compaction,
    plan_partition,
)
from versioned.layouts.version_partition.driver_compaction import (
    fits_driver,
    latest_partition_rows,
)
from versioned.layouts.version_partition.engine.compacted_version import (
    CompactedFiles,
    CompactedVersion,
    write_compacted_rows,
    write_compacted_version,
)
from versioned.layouts.version_partition.engine.reader import (
    CompactionNeededWarning,
    latest_rows,
    snapshot_frames,
)
from versioned.layouts.version_partition.engine.staging import staging_dir
from versioned.layouts.version_partition.engine.tombstones import live_tombstones
from versioned.layouts.version_partition.index import index_schema
from versioned.options import CompactionOptions, Progress
from versioned.results import CompactionResult, PartitionCompaction
from versioned.schema import TableSpec

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class _Context:
    """What compacting one partition works with."""

    engine: EngineContext
    request: CompactRequest
    say: Progress
    """The request's progress, labelled with the partition."""

    @property
    def table(self) -> TableInfo:
        return self.request.table

    @property
    def options(self) -> CompactionOptions:
        return self.request.options


def compact_table(ctx: EngineContext, request: CompactRequest) -> CompactionResult:
    """Compact the chosen partitions of the request's table; each commits on its own
    (`versioned.layouts.compaction_run`, ``options.parallelism`` at a time).

    The partitions are planned on the request's snapshot and history. ``ctx.spark`` is
    called only when there is work to do, so a scheduled run with nothing to compact (or a
    dry run) starts no Spark.
    """
    opts = request.options
    started = time.monotonic()
    snapshot = request.planning_snapshot(ctx.store)
    history = request.planning_history(ctx.store)
    plans = plan_compaction(
        snapshot,
        opts,
        partitions=request.partitions,
        thresholds=request.thresholds,
        expired_tombstone_versions=_expired_versions(request.table.spec, history, ctx.store.now()),
    )
    partitions = _VersionPartitions(ctx, request, snapshot, history)
    return run_compaction(request, plans, partitions, started=started, parallelism=opts.parallelism)


@dataclasses.dataclass(frozen=True)
class _VersionPartitions:
    """The version layout's part of `run_compaction`: each attempt plans its partition
    again, on the planning snapshot first (a stale one only costs a failed compare-and-swap),
    then on a fresh one after each conflict."""

    engine: EngineContext
    request: CompactRequest
    snapshot: Snapshot
    history: list[CommitInfo]
    retry_message: str = "a writer committed first; planning again"
    gave_up_message: str | None = "writers kept committing first; left as it was"

    def path(self, plan: PartitionPlan) -> str:
        return plan.path

    def high_water_mark(self, plan: PartitionPlan) -> int | None:
        return plan.partition.head_version

    def planned(self, plan: PartitionPlan) -> PartitionCompaction:
        return PartitionCompaction(
            partition=plan.path,
            status="planned",
            high_water_mark=plan.high_water_mark,
            versions_compacted=plan.versions,
            rows=plan.estimated_rows,
            files_removed=plan.live_files,
            files_added=plan.files_added_estimate,
            bytes_before=plan.data_bytes,
            message="; ".join(plan.reasons),
        )

    def attempt(
        self, first: PartitionPlan, n: int, say: Progress
    ) -> PartitionCompaction | NothingLeft:
        partition = first.partition
        name, store = self.request.table.spec.name, self.engine.store
        snapshot, history = self.snapshot, self.history
        if n > 1:
            snapshot, history = store.snapshot(name), store.history(name)
        current = snapshot.partitions.get(partition.id, partition)
        plan = plan_partition(
            current,
            partition_files(snapshot, partition.id),
            self.request.options,
            expired_tombstone_versions=_expired_versions(
                self.request.table.spec, history, store.now()
            ),
        )
        if plan is None:
            return NothingLeft(high_water_mark=current.head_version)
        return _compact_partition(_Context(self.engine, self.request, say), snapshot, plan, history)


def _compact_partition(
    ctx: _Context, snapshot: Snapshot, plan: PartitionPlan, history: list[CommitInfo]
) -> PartitionCompaction:
    """One attempt: write version C of the partition and commit it, or raise."""
    # The columns as of the snapshot, not as of planning: a column added (and written)
    # in between must survive the rewrite.
    spec = snapshot.table.spec
    location = ctx.table.location
    files = partition_files(snapshot, plan.partition.id)
    hwm = plan.high_water_mark
    if hwm is None or max(f.version for f in files) != hwm:
        raise CommitConflictError(
            f"{spec.name} partition {plan.path!r}: its head moved while the snapshot was read",
            table=str(spec.name),
        )
    # Opened after the snapshot: C is above every committed version, so above hwm.
    with write_transaction(
        ctx.engine.store,
        spec.name,
        timeout_s=ctx.options.txn_timeout_s,
        fileio=ctx.engine.fileio,
        staging=lambda txn: staging_dir(location, txn),
    ) as tx:
        ctx.say(
            f"reading {plan.versions} version(s) up to {hwm}: {plan.data_rows} rows, "
            f"{plan.index_entries} index entries"
        )
        part_snapshot = dataclasses.replace(snapshot, files=files)
        written = _write_partition(ctx, tx, part_snapshot, plan, history)
        ctx.say(f"committing {written.rows} rows, {written.tombstones} tombstones")
        committed = tx.commit(
            operation="compact",
            partitions=[
                # Guarded by ``remove`` (each file still live: two compactions of the
                # partition never both commit), not by the head: a write that committed
                # meanwhile keeps its files, above the compacted rows.
                PartitionCommit(
                    partition_id=plan.partition.id,
                    check_head=False,
                    add=written.adds,
                    remove=tuple(f.path for f in files),
                )
            ],
            metrics={
                "partition": plan.path,
                "high_water_mark": hwm,
                "versions_compacted": plan.versions,
                "rows": written.rows,
                "tombstones": written.tombstones,
                "files_removed": len(files),
                "files_written": len(written.adds),
                "bytes_written": sum(a.size_bytes for a in written.adds),
                "trigger": ctx.request.trigger,
            },
            # The compacted rows keep version hwm, and C names only folders (by its
            # transaction id), so the commit may take a version above a write that
            # committed meanwhile: the table's versions then stay in commit order.
            in_commit_order=True,
        )
    ctx.say(f"committed version {committed.version}")
    return PartitionCompaction(
        partition=plan.path,
        status="compacted",
        version=committed.version,
        high_water_mark=hwm,
        versions_compacted=plan.versions,
        rows=written.rows,
        tombstones=written.tombstones,
        files_removed=len(files),
        files_added=len(written.adds),
        bytes_before=plan.data_bytes,
        bytes_after=written.data_bytes,
    )


def _write_partition(
    ctx: _Context,
    tx: WriteTransaction,
    part_snapshot: Snapshot,
    plan: PartitionPlan,
    history: list[CommitInfo],
) -> CompactedFiles:
    """Read the latest rows of the partition's live files and write them as version C."""
    spec = part_snapshot.table.spec
    files = part_snapshot.files
    engine = ctx.engine
    target = CompactedVersion(part_snapshot.table, plan, tx, files)
    if fits_driver(spec, plan.data_rows):  # no Spark job: pyarrow on the driver
        location = part_snapshot.table.location
        merged = latest_partition_rows(engine.fileio, location, spec, files)
        ctx.say(
            f"writing {plan.files_to_write} data file(s) of version {plan.high_water_mark} "
            "on the driver"
        )
        return write_compacted_rows(
            engine,
            merged,
            target,
            tombstones=index_schema(spec).empty_table(),
            bloom_error_rate=ctx.options.bloom_error_rate,
        )
    frames = snapshot_frames(engine, part_snapshot)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompactionNeededWarning)
        latest = latest_rows(
            engine.spark, part_snapshot, frames, broadcast_limit=engine.broadcast_limit
        )
    rows = latest.select(*[c.name for c in spec.data_columns])
    tombstones = index_schema(spec).empty_table()
    if spec.ordering_column:
        tombstones = live_tombstones(
            engine,
            part_snapshot.table,
            [f for f in files if f.kind == "index"],
            _young_versions(spec, history, engine.store.now()),
        )
    ctx.say(f"writing {plan.files_to_write} data file(s) of version {plan.high_water_mark}")
    return write_compacted_version(
        engine,
        rows,
        target,
        scan_splits=frames.data.rdd.getNumPartitions(),
        tombstones=tombstones,
        bloom_error_rate=ctx.options.bloom_error_rate,
    )


def tombstone_retention_hours(spec: TableSpec) -> float:
    """The table's ``tombstone_retention_hours`` (default 168)."""
    raw = spec.properties.get(TOMBSTONE_RETENTION_PROPERTY)
    if raw is None:
        return DEFAULT_TOMBSTONE_RETENTION_HOURS
    try:
        hours = float(raw)
    except ValueError:
        hours = -1.0
    if not hours >= 0:
        raise InputError(
            f"{spec.name}: table property {TOMBSTONE_RETENTION_PROPERTY}={raw!r} must be a "
            "number of hours >= 0",
            table=str(spec.name),
        )
    return hours


def _young_versions(spec: TableSpec, history: list[CommitInfo], now: float) -> frozenset[int]:
    cutoff = now - tombstone_retention_hours(spec) * 3600
    return frozenset(c.version for c in history if c.committed_at >= cutoff)


def _expired_versions(spec: TableSpec, history: list[CommitInfo], now: float) -> frozenset[int]:
    """Versions whose tombstones are past their retention at ``now`` (the catalog's
    time, which stamped the commits)."""
    if not spec.ordering_column:
        return frozenset()
    cutoff = now - tombstone_retention_hours(spec) * 3600
    return frozenset(c.version for c in history if c.committed_at < cutoff)


def _since(started: float) -> float:
    return round(time.monotonic() - started, 3)
