"""Compacting an acid table (Hive's worker), one partition and one catalog commit at a time.

Per partition, with its own transaction T (`write_transaction`, retried on conflict):

1. Plan against the latest snapshot with Hive's compactor view of the write ids
   (`layouts.acid.compaction_plan`): only write ids below every open one are compacted.
2. Read the events of the compacted directories' bucket files in Spark, keeping those of
   valid write ids (rows of aborted write ids are dropped).
3. Minor: write the insert events unchanged into ``delta_MIN_MAX`` and the delete events
   into ``delete_delta_MIN_MAX``. Major: the base's and deltas' insert events minus the
   delete events into ``base_MAX``. ROW__IDs are kept, so delete events written later
   (or concurrently, planned against the old files) still match. The folders are written
   under T's staging folder, hidden from Hive, with their markers (`compacted_dirs`).
4. Move them to their names (`placement`: an orphan of a crashed compaction of the same
   write ids goes first), then commit: add the new files and retire the compacted ones
   (``remove`` is the guard: two compactions of one partition cannot both retire them). The
   partition head is not moved, so writers committing meanwhile do not conflict; readers of
   older snapshots keep reading the retired files until vacuum's retention runs out. A commit
   that loses a race moves the folders back out of Hive's sight before T aborts.
"""

from __future__ import annotations

import dataclasses
import time
from contextlib import suppress
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from versioned.catalog.records import FileAdd, PartitionCommit, PartitionInfo, Snapshot, TableInfo
from versioned.catalog.write_transaction import (
    WriteTransaction,
    write_transaction,
)
from versioned.errors import CommitConflictError, LockTimeoutError, StorageError
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.compacted_dirs import write_compaction_markers
from versioned.layouts.acid.compaction_plan import AcidCompactionPlan, plan_partition
from versioned.layouts.acid.compaction_rules import CompactionKind, InitiatorThresholds
from versioned.layouts.acid.directories import AcidDir
from versioned.layouts.acid.engine.event_writer import WrittenFile, write_events
from versioned.layouts.acid.engine.events import ROW_ID_FIELDS, read_events, valid_write_id
from versioned.layouts.acid.engine.placement import place_folders, unplace_folders
from versioned.layouts.acid.engine.tombstones import merge_tombstones
from versioned.layouts.acid.key_filters import filter_key_columns
from versioned.layouts.acid.paths import acid_dir_path
from versioned.layouts.acid.snapshot_dirs import (
    DELETE_KIND,
    EVENT_KINDS,
    MARKER_KIND,
    TOMBSTONE_KIND,
    bucket_file_ref,
    valid_write_id_list,
)
from versioned.layouts.acid.write_ids import ValidWriteIdList
from versioned.layouts.compaction_run import NothingLeft, run_compaction
from versioned.layouts.engine_protocol import EngineContext
from versioned.layouts.layout import StorageLayout
from versioned.layouts.table_request import CompactRequest
from versioned.names import TableName
from versioned.options import CompactionOptions, Progress
from versioned.results import CompactionResult, PartitionCompaction

_CLAIM_WAIT_S = 1.0
"""How long a compaction waits for its partition (`_claim_partition`) before planning again."""


@dataclasses.dataclass(frozen=True)
class _Compaction:
    """What compacting the partitions of one acid table works with."""

    engine: EngineContext
    request: CompactRequest
    layout: StorageLayout
    kind: CompactionKind | None
    """Forced on every partition; ``None``: Hive's initiator rules decide."""
    rules: InitiatorThresholds

    @property
    def table(self) -> TableInfo:
        return self.request.table

    @property
    def options(self) -> CompactionOptions:
        return self.request.options


def compact_acid_table(
    ctx: EngineContext, request: CompactRequest, layout: StorageLayout
) -> CompactionResult:
    """Compact the chosen partitions of the request's acid table; each commits on its own
    (`versioned.layouts.compaction_run`).

    ``options.kind`` forces ``major`` or ``minor``; ``auto`` follows Hive's initiator rules
    with the table's thresholds. Without it, an on-demand compaction is major and a
    scheduled one (``thresholds`` given) follows the initiator rules.
    """
    table = request.table
    started = time.monotonic()
    name = table.spec.name
    kind = _kind(request.options, scheduled=request.thresholds is not None)
    rules = InitiatorThresholds.from_properties(table.spec.properties)
    snapshot = request.planning_snapshot(ctx.store)
    ids = valid_write_id_list(ctx.store.write_ids(name, snapshot.seq))
    chosen = request.partitions
    if chosen is None:
        chosen = list(snapshot.partitions.values())
    floor = request.thresholds.min_rows if request.thresholds is not None else 0
    big_enough = [part for part in chosen if _stored_rows(snapshot, part) >= floor]
    plans = [p for p in (_plan(snapshot, ids, part, kind, rules) for part in big_enough) if p]
    job = _Compaction(ctx, request, layout, kind, rules)
    return run_compaction(request, plans, _AcidPartitions(job), started=started)


def _kind(opts: CompactionOptions, *, scheduled: bool) -> CompactionKind | None:
    """The compaction forced on every partition; ``None``: the initiator rules decide."""
    if opts.kind == "auto":
        return None
    return opts.kind or (None if scheduled else "major")


def _plan(
    snapshot: Snapshot,
    ids: ValidWriteIdList,
    partition: PartitionInfo,
    kind: CompactionKind | None,
    rules: InitiatorThresholds,
) -> AcidCompactionPlan | None:
    current = snapshot.partitions.get(partition.id, partition)
    files = [f for f in snapshot.files if f.partition_id == partition.id]
    return plan_partition(current, files, ids, kind=kind, thresholds=rules)


def _stored_rows(snapshot: Snapshot, partition: PartitionInfo) -> int:
    """Event rows of the partition's committed files (inserts, updates and deletes)."""
    return sum(
        f.row_count
        for f in snapshot.files
        if f.partition_id == partition.id and f.kind in EVENT_KINDS
    )


@dataclasses.dataclass(frozen=True)
class _AcidPartitions:
    """The acid layout's part of `run_compaction`."""

    job: _Compaction
    retry_message: str = "another commit retired these files; planning again"
    gave_up_message: str | None = None

    def path(self, plan: AcidCompactionPlan) -> str:
        return plan.partition.path

    def high_water_mark(self, plan: AcidCompactionPlan) -> int | None:
        return plan.high_water_mark

    def planned(self, plan: AcidCompactionPlan) -> PartitionCompaction:
        filters = filter_key_columns(self.job.table.spec) is not None
        return PartitionCompaction(
            partition=plan.partition.path,
            status="planned",
            high_water_mark=plan.high_water_mark,
            versions_compacted=plan.versions,
            rows=sum(f.row_count for f in plan.inputs if f.kind != DELETE_KIND),
            files_removed=len(plan.retired),
            files_added=plan.files_to_write(key_filters=filters),
            bytes_before=plan.input_bytes,
            message=f"{plan.kind}: {plan.reason}",
        )

    def attempt(
        self, first: AcidCompactionPlan, n: int, say: Progress
    ) -> PartitionCompaction | NothingLeft:
        """The planned partition, planned again against a fresh snapshot after a lost race."""
        job = self.job
        plan: AcidCompactionPlan | None = first
        if n > 1:
            name, store = job.table.spec.name, job.engine.store
            snapshot = store.snapshot(name)
            ids = valid_write_id_list(store.write_ids(name, snapshot.seq))
            plan = _plan(snapshot, ids, first.partition, job.kind, job.rules)
        if plan is None:
            return NothingLeft()
        return _compact_partition(job, plan, say)


def _compact_partition(
    job: _Compaction, plan: AcidCompactionPlan, say: Progress
) -> PartitionCompaction:
    """One attempt: write the compacted directories and commit them, or raise."""
    ctx, table = job.engine, job.table
    spec = table.spec
    ppath = plan.partition.path
    with write_transaction(
        ctx.store,
        spec.name,
        timeout_s=job.options.txn_timeout_s,
        fileio=ctx.fileio,
        staging=lambda txn: job.layout.staging_dir(table.location, txn),
    ) as tx:
        _claim_partition(ctx, spec.name, tx.id, plan)
        say(
            f"reading {len(plan.inputs)} file(s): {plan.kind} compaction of write ids "
            f"{plan.min_write_id}..{plan.max_write_id}"
        )
        adds = _write_outputs(ctx, table, plan, tx, say)
        data = [a for a in adds if a.kind in EVENT_KINDS]
        rows = sum(a.row_count for a in data if a.kind != DELETE_KIND)
        tombstones = sum(a.row_count for a in adds if a.kind == TOMBSTONE_KIND)
        say(f"committing {rows} rows, {tombstones} tombstones")
        folders = [acid_dir_path(ppath, d) for d in plan.outputs() if d is not None]
        staged = _staged(tx)
        placed = place_folders(ctx, table, staged, folders)
        try:
            committed = tx.commit(
                operation="compact",
                partitions=[
                    PartitionCommit(
                        partition_id=plan.partition.id,
                        check_head=False,
                        add=adds,
                        remove=tuple(f.path for f in plan.retired),
                    )
                ],
                metrics={
                    "partition": ppath,
                    "kind": plan.kind,
                    "high_water_mark": plan.high_water_mark,
                    "directories": [f.rpartition("/")[2] for f in folders],
                    "files_removed": len(plan.retired),
                    "files_written": len(data),
                    "bytes_written": sum(a.size_bytes for a in data),
                    "tombstones": tombstones,
                    "trigger": job.request.trigger,
                },
                in_commit_order=job.layout.versions_follow_commits,
            )
        except CommitConflictError:  # nothing committed and T still open: hide them again
            unplace_folders(ctx.fileio, table, staged, placed)
            raise
    with suppress(StorageError):  # emptied by the moves; vacuum takes what stays
        ctx.fileio.delete_dir(staged, missing_ok=True)
    say(f"committed version {committed.version}")
    return PartitionCompaction(
        partition=ppath,
        status="compacted",
        version=committed.version,
        high_water_mark=plan.high_water_mark,
        versions_compacted=plan.versions,
        rows=rows,
        tombstones=tombstones,
        files_removed=len(plan.retired),
        files_added=len(adds),
        bytes_before=plan.input_bytes,
        bytes_after=sum(a.size_bytes for a in data),
        message=f"{plan.kind}: {plan.reason}",
    )


def _claim_partition(
    ctx: EngineContext, table: TableName, txn_id: int, plan: AcidCompactionPlan
) -> None:
    """Take the partition for this compaction: a ``shared_write`` lock, which the
    ``shared_read`` locks of streaming transactions do not conflict with. Two compactions
    of the same write ids would otherwise both place folders at one Hive name (it carries
    no ``_vT``), and the one whose commit lost would move the winner's files away with its
    own (`placement.unplace_folders`).

    Raises:
        CommitConflictError: Another compaction of the partition (or a mutation
            transaction on the table) holds it; the attempt is planned again.
    """
    try:
        ctx.store.lock(
            txn_id, table, "shared_write", partition=plan.partition.values, wait_s=_CLAIM_WAIT_S
        )
    except LockTimeoutError as busy:
        raise CommitConflictError(
            f"{table}: partition {plan.partition.path or '(table)'} is being compacted (or "
            f"the table mutated) by another transaction: {busy}",
            table=str(table),
        ) from busy


def _write_outputs(
    ctx: EngineContext,
    table: TableInfo,
    plan: AcidCompactionPlan,
    tx: WriteTransaction,
    say: Progress,
) -> tuple[FileAdd, ...]:
    """Write the compacted directories of ``plan`` under ``tx``'s staging folder (see
    `_staged`), with their markers, and the merged tombstones in place; the files to add, in
    the partition, at their final paths."""
    spec, location = table.spec, table.location
    inserts_dir, deletes_dir = plan.outputs()
    inserts, deletes = _events(ctx, ctx.store.snapshot(spec.name), plan)
    assert tx.staging_dir is not None
    stage, staged = tx.staging_dir, _staged(tx)
    say(f"writing {' and '.join(d.name for d in (inserts_dir, deletes_dir) if d is not None)}")
    args: dict[str, Any] = {"version": tx.id, "claim": tx.own_file}

    def write(events: DataFrame, directory: AcidDir) -> list[WrittenFile]:
        # into a copy of the table's tree under the staging folder: same relative paths
        return write_events(events, spec, ctx.fileio, staged, stage, directory, **args)

    if plan.kind == "major":
        keys = [F.col(c) == F.col(f"#d_{c}") for c in ROW_ID_FIELDS]
        gone = deletes.select(*[F.col(c).alias(f"#d_{c}") for c in ROW_ID_FIELDS])
        written = write(inserts.join(gone, keys, "left_anti"), inserts_dir)
    else:
        assert deletes_dir is not None
        written = write(inserts, inserts_dir) + write(deletes, deletes_dir)
    adds = [w.add for w in written]
    listed = {a.path for a in adds}
    for directory in (inserts_dir, deletes_dir):
        if directory is None:
            continue
        markers = write_compaction_markers(
            ctx.fileio, staged, plan.partition.path, directory, tx.id
        )
        adds += [
            FileAdd(None, rel, MARKER_KIND, tx.id, size, 0)
            for rel, size in markers.items()
            if rel not in listed  # `write_events` registered _orc_acid_version already
        ]
    merged_rel = plan.tombstone_output(tx.id)
    if merged_rel is not None:
        merged = merge_tombstones(
            plan.tombstones,
            spec,
            ctx.fileio,
            location,
            merged_rel,
            write_id=plan.max_write_id,
            **args,
        )
        adds += [] if merged is None else [merged]
    pid = plan.partition.id
    return tuple(
        FileAdd(pid, a.path, a.kind, a.version, a.size_bytes, a.row_count, a.stats) for a in adds
    )


def _staged(tx: WriteTransaction) -> str:
    """Where ``tx`` writes its compacted folders before they get their names: a copy of the
    table's tree under its staging folder (hidden from Hive, removed if it aborts)."""
    assert tx.staging_dir is not None
    return f"{tx.staging_dir}/compacted"


def _events(
    ctx: EngineContext, snapshot: Snapshot, plan: AcidCompactionPlan
) -> tuple[DataFrame, DataFrame]:
    """The insert and delete events of the plan's files whose write ids the compactor
    counts as valid (aborted ones dropped)."""
    compactor = plan.write_ids
    refs = [bucket_file_ref(f) for f in plan.inputs]
    inserts = [r for r in refs if r.file.kind != DELETE_KIND]
    deletes = [r for r in refs if r.file.kind == DELETE_KIND]
    insert_events = read_events(ctx, snapshot, inserts)
    delete_events = read_events(ctx, snapshot, deletes)
    # Built only now: a Spark column needs the session the reads above started (a scheduled
    # compaction is the first thing its process does).
    valid = valid_write_id(F.col(s.CURRENT_WRITE_ID), compactor)
    return insert_events.where(valid), delete_events.where(valid)
