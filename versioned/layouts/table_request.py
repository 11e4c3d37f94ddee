"""One operation on one table, as `versioned.api.table.Table` hands it to the layout's engine.

`Table` resolves what an operation needs once, in one catalog read and one permission check
(`versioned.catalog.store.MetaStore.resolve`): the table's record, the privileges the user
holds on it, and the snapshot the operation plans on. It builds one request from that and
the caller's arguments, and the engine works from the request alone: it does not read the
table again or check the permission again (its commit is still guarded by the catalog).

A write plans its first attempt on the request's snapshot, the one partial updates read
their kept values from; an attempt that loses the commit race plans again on a fresh
snapshot (`planning_snapshot`), as compaction does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from versioned.options import CompactionOptions, WriteOptions

if TYPE_CHECKING:
    from versioned.catalog.records import (
        CommitInfo,
        PartitionInfo,
        Privilege,
        Snapshot,
        TableInfo,
    )
    from versioned.catalog.store import MetaStore
    from versioned.engine.feeds.reader import Feed
    from versioned.options import CompactionThresholds, Progress


@dataclass(frozen=True, kw_only=True)
class TableRequest:
    """What every operation's request holds.

    Attributes:
        operation: What the operation is called in the table's history (``upsert``,
            ``delete``, ``import``, ``compact``, ``vacuum``).
        table: The table's record as resolved for the operation.
        granted: The privileges the user holds on the table (already checked to cover the
            operation).
        snapshot: The latest snapshot when the operation was resolved, if it needs one.
        progress: Called with a short message at each stage.
    """

    operation: str
    table: TableInfo
    granted: frozenset[Privilege]
    snapshot: Snapshot | None = None
    progress: Progress | None = None

    def say(self, message: str) -> None:
        """Report a stage of the operation (nothing without a ``progress`` callback)."""
        if self.progress is not None:
            self.progress(message)

    def planning_snapshot(self, store: MetaStore, attempt: int = 1) -> Snapshot:
        """The snapshot attempt ``attempt`` plans on: the request's for the first, a fresh one
        for a retry after a lost commit race (or when the request has none)."""
        if attempt == 1 and self.snapshot is not None:
            return self.snapshot
        return store.snapshot(self.table.spec.name)


@dataclass(frozen=True, kw_only=True)
class WriteRequest(TableRequest):
    """A change batch to apply as one commit (``upsert``, ``delete``, ``import``).

    Attributes:
        feed: The typed feed (rows and dead letters).
        options: Tuning of the write.
    """

    feed: Feed
    options: WriteOptions = field(default_factory=WriteOptions)


@dataclass(frozen=True, kw_only=True)
class CompactRequest(TableRequest):
    """Partitions to rewrite into their latest rows, one commit per partition.

    Attributes:
        partitions: Only these partitions (default: every partition that needs it).
        thresholds: Only partitions past one of these (the scheduled form).
        options: Tuning of the compaction.
        dry_run: Plan only; write nothing and start no Spark.
        history: The table's commits when the request was resolved (tombstone retention).
        trigger: ``manual`` (asked for) or ``auto`` (the table's own maintenance after a
            write); recorded in each commit's metrics.
    """

    partitions: Sequence[PartitionInfo] | None = None
    thresholds: CompactionThresholds | None = None
    options: CompactionOptions = field(default_factory=CompactionOptions)
    dry_run: bool = False
    history: tuple[CommitInfo, ...] | None = None
    trigger: str = "manual"

    def planning_history(self, store: MetaStore, attempt: int = 1) -> list[CommitInfo]:
        """The history attempt ``attempt`` plans on (see `planning_snapshot`)."""
        if attempt == 1 and self.history is not None:
            return list(self.history)
        return store.history(self.table.spec.name)


@dataclass(frozen=True, kw_only=True)
class VacuumRequest(TableRequest):
    """Files to delete: those no snapshot of the last ``retain_hours`` reads, and orphans
    older than ``grace_hours``."""

    retain_hours: float
    grace_hours: float
    dry_run: bool = False
