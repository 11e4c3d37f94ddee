"""Which partitions of a version-partition table to compact, decided from catalog metadata only.

A partition is worth compacting when it holds more than one version, version-index entries,
or more data files than its rows need. The scheduled form (``versioned compact --all``) only
picks partitions past thresholds (`CompactionThresholds`). Nothing here reads a data file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from versioned.catalog.records import DataFile, PartitionInfo, Snapshot
from versioned.layouts.version_partition.retired_rows import live_rows_estimate
from versioned.options import CompactionOptions, CompactionThresholds

TOMBSTONE_RETENTION_PROPERTY = "tombstone_retention_hours"
DEFAULT_TOMBSTONE_RETENTION_HOURS = 168.0


@dataclass(frozen=True)
class PartitionPlan:
    """What compacting one partition would do, from catalog metadata.

    Attributes:
        partition: The partition.
        high_water_mark: Its head version: every version up to it is compacted.
        versions: Distinct versions of its live files.
        live_files: Its live files of every kind (all are retired by the compaction).
        data_files: Live data files; ``small_files`` of them under half the target size.
        data_rows: Rows in those files (superseded ones included).
        index_entries: Version-index entries (updates of older rows and tombstones).
        estimated_rows: Rows the compacted partition is expected to hold.
        files_to_write: Data files the compaction will write.
        reasons: Why the partition was picked.
        kept_tombstones: An earlier compaction kept tombstones in the partition.
    """

    partition: PartitionInfo
    high_water_mark: int | None
    versions: int
    live_files: int
    data_files: int
    small_files: int
    data_rows: int
    data_bytes: int
    index_files: int
    index_entries: int
    estimated_rows: int
    files_to_write: int
    reasons: tuple[str, ...]
    kept_tombstones: bool = False

    @property
    def path(self) -> str:
        """The partition's directory (``""`` when the table is unpartitioned)."""
        return self.partition.path

    @property
    def files_added_estimate(self) -> int:
        """Every file the compaction is expected to add: its data files (none when no row
        is expected), its Bloom filter, and the index of the tombstones an earlier
        compaction kept (new tombstones, and their retention, are known only when it
        runs; Spark may roll a data file over into one more)."""
        data = self.files_to_write if self.estimated_rows else 0
        return data + 1 + (1 if self.kept_tombstones else 0)

    def to_dict(self) -> dict[str, object]:
        """Plain-data form (for output)."""
        return {
            "partition": self.path or "(table)",
            "high_water_mark": self.high_water_mark,
            "versions": self.versions,
            "data_files": self.data_files,
            "small_files": self.small_files,
            "data_rows": self.data_rows,
            "index_entries": self.index_entries,
            "estimated_rows": self.estimated_rows,
            "files_to_write": self.files_to_write,
            "reasons": ", ".join(self.reasons),
        }


def partition_files(snapshot: Snapshot, partition_id: int) -> tuple[DataFile, ...]:
    """The snapshot's live files of one partition."""
    return tuple(f for f in snapshot.files if f.partition_id == partition_id)


def plan_partition(
    partition: PartitionInfo,
    files: Sequence[DataFile],
    options: CompactionOptions,
    *,
    thresholds: CompactionThresholds | None = None,
    expired_tombstone_versions: frozenset[int] = frozenset(),
) -> PartitionPlan | None:
    """The plan for one partition, or ``None`` when it has nothing to compact.

    Without ``thresholds`` a partition is compacted unless it is already compact: one
    version, no more data files than its rows need, and no index entries (except tombstones
    whose retention has not run out). With ``thresholds`` it must also reach one of them.

    Args:
        expired_tombstone_versions: Versions whose tombstones are past their retention; a
            compacted partition still holding some is compacted again to drop them.
    """
    if not files:
        return None
    data = [f for f in files if f.kind == "data"]
    index = [f for f in files if f.kind == "index"]
    versions = len({f.version for f in files})
    data_rows = sum(f.row_count for f in data)
    data_bytes = sum(f.size_bytes for f in data)
    entries = sum(f.row_count for f in index)
    estimated = live_rows_estimate(files)
    by_rows = math.ceil(estimated / options.rows_per_file)
    live_bytes = data_bytes * estimated / data_rows if data_rows else 0
    by_bytes = math.ceil(live_bytes / options.target_file_bytes)
    to_write = max(1, by_rows, by_bytes)
    small = sum(
        1
        for f in data
        if f.row_count < options.rows_per_file / 2 and f.size_bytes < options.target_file_bytes / 2
    )
    reasons: list[str] = []
    if thresholds is None:
        if versions > 1:
            reasons.append(f"{versions} versions")
        if len(data) > to_write:
            reasons.append(f"{len(data)} data files for {to_write}")
        plain_index = [f for f in index if "tombstones" not in f.stats]
        if plain_index:
            reasons.append(f"{entries} index entries")
        elif any(int(f.stats.get("min_version", -1)) in expired_tombstone_versions for f in index):
            reasons.append("expired tombstones")
    elif data_rows < thresholds.min_rows:  # small: only its small files make it pay
        if (
            thresholds.min_small_files is not None
            and small >= thresholds.min_small_files
            and len(data) > to_write
        ):
            reasons.append(f"{small} small files >= {thresholds.min_small_files}")
    else:
        if thresholds.min_versions is not None and versions >= max(thresholds.min_versions, 2):
            reasons.append(f"{versions} versions >= {thresholds.min_versions}")
        if (
            thresholds.max_index_entries is not None
            and entries >= thresholds.max_index_entries
            and entries > 0
        ):
            reasons.append(f"{entries} index entries >= {thresholds.max_index_entries}")
        if thresholds.index_ratio is not None and entries > 0 and data_rows:
            ratio = entries / data_rows
            if ratio >= thresholds.index_ratio:
                reasons.append(f"index entries {ratio:.1%} of rows >= {thresholds.index_ratio:.1%}")
        if (
            thresholds.min_small_files is not None
            and small >= thresholds.min_small_files
            and len(data) > to_write
        ):
            reasons.append(f"{small} small files >= {thresholds.min_small_files}")
    if not reasons:
        return None
    return PartitionPlan(
        partition=partition,
        high_water_mark=partition.head_version,
        versions=versions,
        live_files=len(files),
        data_files=len(data),
        small_files=small,
        data_rows=data_rows,
        data_bytes=data_bytes,
        index_files=len(index),
        index_entries=entries,
        estimated_rows=estimated,
        files_to_write=to_write,
        reasons=tuple(reasons),
        kept_tombstones=any("tombstones" in f.stats for f in index),
    )


def plan_compaction(
    snapshot: Snapshot,
    options: CompactionOptions,
    *,
    partitions: Sequence[PartitionInfo] | None = None,
    thresholds: CompactionThresholds | None = None,
    expired_tombstone_versions: frozenset[int] = frozenset(),
) -> list[PartitionPlan]:
    """Plans of the partitions to compact, by partition path.

    Args:
        partitions: Only these partitions (default: every partition of the table).
    """
    chosen = (
        list(snapshot.partitions.values())
        if partitions is None
        else list({p.id: snapshot.partitions.get(p.id, p) for p in partitions}.values())
    )
    by_partition: dict[int | None, list[DataFile]] = {}
    for f in snapshot.files:
        by_partition.setdefault(f.partition_id, []).append(f)
    plans = []
    for partition in sorted(chosen, key=lambda p: p.path):
        plan = plan_partition(
            partition,
            by_partition.get(partition.id, []),
            options,
            thresholds=thresholds,
            expired_tombstone_versions=expired_tombstone_versions,
        )
        if plan is not None:
            plans.append(plan)
    return plans


def due_partitions(
    write_ids: object, snapshot: Snapshot, thresholds: CompactionThresholds
) -> dict[int, str]:
    """The partitions a compaction with ``thresholds`` would pick, with why (catalog
    metadata only; the layout's ``compaction_due`` method). ``write_ids`` is unused here."""
    plans = plan_compaction(snapshot, CompactionOptions(), thresholds=thresholds)
    return {plan.partition.id: ", ".join(plan.reasons) for plan in plans}
