"""Planning one version of a change batch: which keys may exist, which changes are stale,
and the version-index entries and Bloom filters each partition gets.

Reads only Bloom files, plus (for tables with an ordering column) the key and ordering
columns of the versions that may hold Bloom-positive keys. The keys of the batch are one
Arrow table (one row per record key, after in-batch dedup); every mask here is over its rows.

With a table-wide key (`TableSpec.keys_move`) a key's row may live in any partition: the
other partitions are probed too (`layouts.version_partition.elsewhere`) and get an ``M``
entry (the key moved here) or a ``D`` entry (deleted) where the key may be.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from versioned.catalog.records import DataFile, FileAdd, PartitionInfo, Snapshot, TableInfo
from versioned.catalog.write_transaction import WriteTransaction
from versioned.engine.feeds.rows import OP
from versioned.keys.bloom import KeyBloomFilter, KeyDigests
from versioned.keys.columns import (
    index_key_columns,
    keyed_partition_columns,
    part_column,
)
from versioned.keys.encoding import encode_keys
from versioned.keys.stats import key_stats
from versioned.layouts.version_partition.elsewhere import (
    ElsewhereProbe,
    blooms_by_partition,
    probe_elsewhere,
)
from versioned.layouts.version_partition.engine.stored_state import STORED_ORDER, stored_state
from versioned.layouts.version_partition.index import (
    DELETE,
    MOVED,
    UPSERT,
    build_index,
    write_index,
)
from versioned.layouts.version_partition.paths import bloom_file_name, index_dir, index_file_name
from versioned.layouts.version_partition.probe import BLOOM_KIND, ProbeResult, probe_partition
from versioned.layouts.version_partition.retired_rows import (
    RETIRING_STAT,
    KeyHomes,
    row_versions_of,
)
from versioned.storage.filesystem import FileIO
from versioned.storage.partition_paths import partition_path

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import EngineContext

PartitionValues = tuple[str | None, ...]


@dataclass
class Counts:
    """What a version does to the table's keys."""

    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    ignored_deletes: int = 0
    stale: int = 0


@dataclass(frozen=True)
class OwnGroup:
    """The batch keys whose change names one partition, probed against that partition."""

    values: PartitionValues
    info: PartitionInfo | None
    rows: np.ndarray
    probe: ProbeResult


@dataclass
class VersionPlan:
    """The files of one version other than data files, per partition, and its counts."""

    counts: Counts
    stale: np.ndarray
    adds: dict[PartitionValues, list[FileAdd]] = field(default_factory=dict)
    partitions: dict[PartitionValues, PartitionInfo | None] = field(default_factory=dict)
    """The partitions that receive files; None: a new one, which the commit creates."""
    filters_read: int = 0


def plan_version(
    ctx: EngineContext,
    table: TableInfo,
    snapshot: Snapshot,
    keys: pa.Table,
    groups: dict[PartitionValues, np.ndarray],
    *,
    tx: WriteTransaction,
    bloom_error_rate: float,
    bloom_headroom: float,
) -> VersionPlan:
    """Probe, decide and write the index entries and Bloom filters of version ``tx.id``.

    Args:
        keys: One row per record key of the batch (partition strings, key columns, ``_op``,
            the ordering column if any).
        groups: Positions of ``keys`` per named partition.
        tx: The write's transaction: its id is the version, and it claims each folder of
            the version before a file is written into it (it removes them if it aborts).
    """
    spec = table.spec
    by_values = {p.values: p for p in snapshot.partitions.values()}
    blooms = blooms_by_partition(snapshot.files)
    fileio = ctx.fileio
    own = _probe_own(fileio, table, keys, groups, by_values, blooms)
    n = keys.num_rows
    own_may = np.zeros(n, dtype=bool)
    for group in own:
        own_may[group.rows] = group.probe.may_exist
    elsewhere = ElsewhereProbe()
    if spec.keys_move:
        elsewhere = probe_elsewhere(
            fileio,
            table.location,
            keys,
            KeyDigests(encode_keys(keys, index_key_columns(spec))),
            own_rows=groups,
            partitions=list(snapshot.partitions.values()),
            blooms=blooms,
            key_columns=index_key_columns(spec),
            keyed_partition_columns=keyed_partition_columns(spec),
        )
    may = own_may | elsewhere.may_exist(n)
    stale = np.zeros(n, dtype=bool)
    if spec.ordering_column:
        stale = _stale_mask(ctx, table, snapshot, keys, own, elsewhere, may)
    ops = np.asarray(keys.column(OP).to_numpy(zero_copy_only=False))
    is_delete = ops == DELETE
    plan = VersionPlan(_counts(may, stale, is_delete), stale)
    plan.filters_read = sum(g.probe.filters_read for g in own) + elsewhere.filters_read
    writer = _PlanWriter(fileio, table, keys, tx, plan, by_values)
    newest_own = np.full(n, -1, dtype=np.int64)
    named = np.full(n, -1, dtype=np.int64)
    for group in own:
        newest_own[group.rows] = group.probe.newest
        named[group.rows] = -1 if group.info is None else group.info.id
    homes = KeyHomes.of(newest_own, elsewhere, row_versions_of(snapshot.files), named)
    live = ~stale
    # Without an ordering column a delete of an absent key needs nothing; with one it
    # leaves a tombstone so that a late, older insert cannot resurrect the key.
    tombstones = bool(spec.ordering_column)
    for group in own:
        rows = group.rows
        needs_entry = live[rows] & (own_may[rows] | (is_delete[rows] & tombstones))
        lands = live[rows] & ~is_delete[rows]
        if not (needs_entry.any() or lands.any()):
            continue  # nothing lands here: no partition is created for it
        entry_rows = rows[needs_entry]
        ops_here = np.where(is_delete[entry_rows], DELETE, UPSERT)
        writer.index(group.values, entry_rows, ops_here, homes.retiring_here(entry_rows))
        writer.bloom(group.values, rows, group.probe.encoded, bloom_error_rate, bloom_headroom)
    for pid, rows in elsewhere.hits.items():
        moving = rows[live[rows]]
        if len(moving):
            ops_here = np.where(is_delete[moving], DELETE, MOVED)
            retiring = homes.retiring_in(pid, moving)
            writer.index(snapshot.partitions[pid].values, moving, ops_here, retiring)
    return plan


def _probe_own(
    fileio: FileIO,
    table: TableInfo,
    keys: pa.Table,
    groups: dict[PartitionValues, np.ndarray],
    by_values: dict[PartitionValues, PartitionInfo],
    blooms: dict[int, list[DataFile]],
) -> list[OwnGroup]:
    """Probe each named partition's live Bloom filters with the keys named in it."""
    key_cols = index_key_columns(table.spec)
    return [
        OwnGroup(
            values,
            by_values.get(values),
            rows,
            probe_partition(
                fileio,
                table.location,
                keys.take(pa.array(rows)),
                key_cols,
                blooms.get(by_values[values].id, ()) if values in by_values else (),
            ),
        )
        for values, rows in groups.items()
    ]


def _counts(may: np.ndarray, stale: np.ndarray, is_delete: np.ndarray) -> Counts:
    live = ~stale
    return Counts(
        inserted=int((live & ~is_delete & ~may).sum()),
        updated=int((live & ~is_delete & may).sum()),
        deleted=int((live & is_delete & may).sum()),
        ignored_deletes=int((live & is_delete & ~may).sum()),
        stale=int(stale.sum()),
    )


class _PlanWriter:
    """Writes a plan's index and Bloom files and records them per partition."""

    def __init__(
        self,
        fileio: FileIO,
        table: TableInfo,
        keys: pa.Table,
        tx: WriteTransaction,
        plan: VersionPlan,
        existing: dict[PartitionValues, PartitionInfo],
    ) -> None:
        self.fileio, self.table, self.keys, self.version = fileio, table, keys, tx.id
        self.plan, self.existing = plan, existing
        self.claim = tx.own_dir

    def _partition(self, values: PartitionValues) -> tuple[int | None, str, list[FileAdd]]:
        info = self.plan.partitions[values] = self.existing.get(values)
        ppath = partition_path(self.table.spec.partition_by, values)
        pid = None if info is None else info.id
        directory = index_dir(ppath, self.version)
        self.claim(f"{self.table.location}/{directory}")
        return pid, directory, self.plan.adds.setdefault(values, [])

    def index(
        self, values: PartitionValues, rows: np.ndarray, ops: np.ndarray, retiring: int
    ) -> None:
        """Index entries for the keys at ``rows`` in the partition with ``values``, of
        which ``retiring`` may retire a row (`retired_rows`)."""
        if len(rows) == 0:
            return
        pid, directory, adds = self._partition(values)
        index = build_index(
            self.table.spec, self.keys.take(pa.array(rows)), version=self.version, ops=ops.tolist()
        )
        rel = f"{directory}/{index_file_name()}"
        size = write_index(self.fileio, f"{self.table.location}/{rel}", index)
        stats = {RETIRING_STAT: retiring}
        adds.append(FileAdd(pid, rel, "index", self.version, size, index.num_rows, stats))

    def bloom(
        self,
        values: PartitionValues,
        rows: np.ndarray,
        encoded: list[bytes],
        error_rate: float,
        headroom: float,
    ) -> None:
        """The Bloom filter over every batch key named in the partition with ``values``."""
        pid, directory, adds = self._partition(values)
        bloom = KeyBloomFilter.build(encoded, error_rate=error_rate, headroom=headroom)
        rel = f"{directory}/{bloom_file_name()}"
        size = bloom.write(self.fileio, f"{self.table.location}/{rel}")
        key_cols = index_key_columns(self.table.spec)
        stats = {
            **key_stats(self.keys.take(pa.array(rows)), key_cols),
            **bloom.sizing_stats(),
        }
        adds.append(FileAdd(pid, rel, BLOOM_KIND, self.version, size, len(rows), stats))


def _stale_mask(
    ctx: EngineContext,
    table: TableInfo,
    snapshot: Snapshot,
    keys: pa.Table,
    own: list[OwnGroup],
    elsewhere: ElsewhereProbe,
    may: np.ndarray,
) -> np.ndarray:
    """Per batch key: whether its change is older than the stored state of its key.

    Reads the key and ordering columns of the versions whose Bloom filters matched. With a
    table-wide key the state is the key's in whatever partition it lives: the greatest
    stored ordering value (applied changes only ever raise it).
    """
    spec = table.spec
    ordering = spec.ordering_column
    assert ordering is not None
    stale = np.zeros(keys.num_rows, dtype=bool)
    if not may.any():
        return stale
    wanted_versions: dict[int, set[int]] = {}
    for group in own:
        if group.info is not None and group.probe.candidate_versions:
            wanted_versions.setdefault(group.info.id, set()).update(group.probe.candidate_versions)
    for pid, versions in elsewhere.versions.items():
        wanted_versions.setdefault(pid, set()).update(versions)
    files = [
        f
        for f in snapshot.files
        if f.kind in ("data", "index")
        and f.partition_id is not None
        and f.version in wanted_versions.get(f.partition_id, ())
    ]
    key_cols = list(index_key_columns(spec))
    if spec.keys_move:
        matched = [(spec.partition_by[i], col) for i, col in keyed_partition_columns(spec)]
    else:
        matched = [(p, part_column(i)) for i, p in enumerate(spec.partition_by)]
    positives = keys.filter(pa.array(may))
    probe_keys = positives.select(key_cols)
    for name, col in matched:
        probe_keys = probe_keys.append_column(name, positives.column(col).cast(pa.string()))
    state = stored_state(
        ctx,
        table,
        files,
        probe_keys,
        match_partitions=[name for name, _ in matched],
        newest="order" if spec.keys_move else "version",
    )
    if state.num_rows == 0:
        return stale
    state_cols = [state.column(c).to_pylist() for c in [n for n, _ in matched] + key_cols]
    lookup = dict(
        zip(zip(*state_cols, strict=True), state.column(STORED_ORDER).to_pylist(), strict=True)
    )
    own_cols = [keys.column(c).to_pylist() for c in [c for _, c in matched] + key_cols]
    incoming = keys.column(ordering).to_pylist()
    for i, key in enumerate(zip(*own_cols, strict=True)):
        stored = lookup.get(key)
        stale[i] = stored is not None and incoming[i] is not None and incoming[i] < stored
    return stale
