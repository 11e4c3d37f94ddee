"""A partition's summary: its row of the ``partitions`` metadata table, as far as its live
files tell (sizes, rows, versions, read amplification, the compaction the table's policy
would run now).

Every commit stores it for the partitions it changed, in its own catalog transaction
(`versioned.catalog.partition_summaries`; `Catalog` hands the store `summarise` with the
table's layout from the registry), so a
page over many tables reads it instead of every table's files. `partitions_rows` builds the
same rows through the same function, from a snapshot, so the two cannot disagree. A stored
summary is used only while `is_current`: it was made by this format, and the table's
properties (which set the compaction policy) are what they were then.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from versioned.catalog.records import (
    DataFile,
    PartitionInfo,
    Snapshot,
    TableInfo,
    TableWriteIds,
)
from versioned.layouts.abilities import CanCountLiveRows, CanPlanCompaction
from versioned.layouts.layout import StorageLayout
from versioned.maintenance_policy import policy_thresholds
from versioned.schema import TableSpec

FORMAT = 2
"""Bumped when a summary's fields or their meaning change: older ones are computed again."""

FIELDS = (
    "versions",
    "data_files",
    "files",
    "bytes",
    "stored_rows",
    "entries",
    "entry_kind",
    "live_rows_estimate",
    "read_amplification",
    "compaction_due",
)
"""The ``partitions`` metadata table's columns a summary holds."""


def summarise(
    layout: StorageLayout,
    table: TableInfo,
    partition: PartitionInfo,
    files: Sequence[DataFile],
    write_ids: Callable[[], TableWriteIds] | None,
) -> dict[str, Any]:
    """The summary of ``partition`` of ``table`` (of ``layout``) from its live ``files``;
    ``write_ids`` gives the table's write ids at the same commit (the acid layout's policy
    needs them)."""
    entry_kind, entry_kinds = layout.entry_kinds
    data = [f for f in files if f.kind in layout.data_kinds]
    stored = sum(f.row_count for f in data)
    entries = sum(f.row_count for f in files if f.kind in entry_kinds)
    if isinstance(layout, CanCountLiveRows):
        live = int(layout.live_rows()(files))
    else:
        live = max(stored - entries, 0)
    return {
        "versions": len({f.version for f in data}),
        "data_files": len(data),
        "files": len(files),
        "bytes": sum(f.size_bytes for f in files),
        "stored_rows": stored,
        "entries": entries,
        "entry_kind": entry_kind,
        "live_rows_estimate": live,
        "read_amplification": round((stored + entries) / live, 3) if live else None,
        "compaction_due": _due(layout, table, partition, files, write_ids),
        "format": FORMAT,
        "policy": policy_of(table.spec),
    }


def is_current(summary: Mapping[str, Any] | None, spec: TableSpec) -> bool:
    """Whether a stored ``summary`` holds for the table as ``spec`` now defines it."""
    return (
        summary is not None
        and summary.get("format") == FORMAT
        and summary.get("policy") == policy_of(spec)
    )


def policy_of(spec: TableSpec) -> str:
    """A fingerprint of the table's properties, which set its compaction policy."""
    data = json.dumps(sorted(spec.properties.items()))
    return hashlib.sha1(data.encode("utf-8"), usedforsecurity=False).hexdigest()[:16]


def summarise_snapshot(
    layout: StorageLayout, snapshot: Snapshot, write_ids: Callable[[], TableWriteIds] | None
) -> dict[int, dict[str, Any]]:
    """The summary of every partition of ``snapshot`` (of a table of ``layout``), by
    partition id."""
    by_partition: dict[int | None, list[DataFile]] = {}
    for f in snapshot.files:
        by_partition.setdefault(f.partition_id, []).append(f)
    return {
        part.id: summarise(layout, snapshot.table, part, by_partition.get(part.id, []), write_ids)
        for part in snapshot.partitions.values()
    }


def _due(
    layout: StorageLayout,
    table: TableInfo,
    partition: PartitionInfo,
    files: Sequence[DataFile],
    write_ids: Callable[[], TableWriteIds] | None,
) -> str | None:
    """What the table's maintenance policy would compact in the partition now, or None."""
    if not isinstance(layout, CanPlanCompaction):
        return None
    ids = write_ids() if layout.allocates_write_ids and write_ids is not None else None
    if layout.allocates_write_ids and ids is None:
        return None
    alone = Snapshot(
        table=table,
        seq=table.current_seq,
        version=None,
        files=tuple(files),
        partitions={partition.id: partition},
    )
    due: Mapping[int, str] = layout.compaction_due()(ids, alone, policy_thresholds(table.spec))
    return due.get(partition.id)
