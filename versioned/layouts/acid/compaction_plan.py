"""What compacting one acid partition reads, writes and retires (plain Python).

The compactor sees the table through Hive's ``ValidCompactorWriteIdList``
(`ValidWriteIdList.for_compactor`): its high-water mark is just below the lowest open write
id, so a delta holding a write id that is still open is never compacted. `acid_state` over
the partition's committed directories with that list gives the base and the deltas to
compact:

* minor: the chosen deltas -> ``delta_MIN_MAX`` and ``delete_delta_MIN_MAX`` (events
  unchanged); needs deltas of at least two write id ranges;
* major: the base and the chosen deltas -> ``base_MAX`` (delete events applied).

The names carry no ``_vT`` suffix (Hive 3's names, which Hive 2.3, 3 and 4 read; earlier
versioned releases wrote ``_vT``, which still parse). Every write id they cover is decided
(committed or aborted) when the compactor plans, so what a name holds is fixed by the name:
any compaction to it writes the same events. The commit retires the files of the compacted
directories, and of obsolete or aborted ones still listed, and adds the new ones
(`versioned.layouts.acid.engine.placement` says how the folders get their names safely).

A major compaction also merges the partition's delete tombstones (tables with an ordering
column: ``_tombstones/delete_delta_W_W_0000.orc``, and an earlier compaction's
``_tombstones/base_W_vT.orc``) of write ids up to its high-water mark into one
``_tombstones/base_MAX_vT.orc`` and retires them: the base covers those write ids, its
tombstones cover their deletes, so a late change older than a delete stays stale. That file
keeps the compactor's ``_vT``: Hive never reads ``_tombstones/``, and a name unique to its
transaction is written in place, claimed by it, and kept from vacuum while it runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from versioned.catalog.records import DataFile, PartitionInfo, Snapshot, TableWriteIds
from versioned.layouts.acid.acid_state import acid_state
from versioned.layouts.acid.compacted_dirs import compaction_markers
from versioned.layouts.acid.compaction_rules import (
    CompactionKind,
    InitiatorThresholds,
    PartitionAcidStats,
    choose_compaction,
)
from versioned.layouts.acid.directories import AcidDir, BaseDir, DeltaDir, parse_directory
from versioned.layouts.acid.errors import AcidNameError
from versioned.layouts.acid.key_filters import KEY_BLOOM_KIND
from versioned.layouts.acid.snapshot_dirs import (
    DELETE_KIND,
    EVENT_KINDS,
    MARKER_KIND,
    TOMBSTONE_DIR,
    TOMBSTONE_KIND,
    bucket_file_ref,
    valid_write_id_list,
)
from versioned.layouts.acid.write_ids import ValidWriteIdList
from versioned.options import CompactionThresholds


@dataclass(frozen=True)
class AcidCompactionPlan:
    """The compaction of one partition.

    Attributes:
        partition: The partition.
        kind: ``major`` or ``minor``.
        base: The base read (major only).
        deltas: The deltas and delete deltas read.
        inputs: Their bucket files.
        retired: Every manifest file the commit retires (bucket files and markers of the
            compacted, obsolete and aborted directories, and the merged tombstones).
        high_water_mark: The compactor's high-water mark (write ids above it stay as they are).
        write_ids: The compactor's view of the write ids (events of others are dropped).
        reason: Why this partition (and this kind) was chosen.
        tombstones: The tombstone files a major compaction merges (write ids up to the
            high-water mark).
    """

    partition: PartitionInfo
    kind: CompactionKind
    base: BaseDir | None
    deltas: tuple[DeltaDir, ...]
    inputs: tuple[DataFile, ...]
    retired: tuple[DataFile, ...]
    high_water_mark: int
    write_ids: ValidWriteIdList
    reason: str
    tombstones: tuple[DataFile, ...] = ()

    @property
    def min_write_id(self) -> int:
        """The lowest write id of the deltas read."""
        return min(d.min_write_id for d in self.deltas)

    @property
    def max_write_id(self) -> int:
        """The highest write id of the deltas read."""
        return max(d.max_write_id for d in self.deltas)

    @property
    def versions(self) -> int:
        """The commits (write ids) whose files are compacted: a writer's delta and delete
        delta of one write id count once, an earlier compaction's output once."""
        return len({f.version for f in self.inputs})

    @property
    def input_bytes(self) -> int:
        """Size of the bucket files read."""
        return sum(f.size_bytes for f in self.inputs)

    def files_to_write(self, *, key_filters: bool) -> int:
        """Files the compaction writes: one per bucket of the events it reads (a major
        compaction: of the insert events; a minor one: of each kind, in its own folder),
        with ``key_filters`` (`key_filters.filter_key_columns`) a filter beside each insert
        bucket file, each output folder's markers (`compacted_dirs`) and the merged
        tombstones.

        Exact unless every event of a bucket is dropped (a major compaction's deleted rows,
        aborted write ids): that bucket gets no file."""
        inserts = {bucket_file_ref(f).bucket for f in self.inputs if f.kind != DELETE_KIND}
        deletes = {bucket_file_ref(f).bucket for f in self.inputs if f.kind == DELETE_KIND}
        buckets = len(inserts) * (2 if key_filters else 1)
        buckets += len(deletes) if self.kind == "minor" else 0
        markers = sum(len(compaction_markers(d, 0)) for d in self.outputs() if d is not None)
        return buckets + markers + (1 if any(f.row_count for f in self.tombstones) else 0)

    def outputs(self) -> tuple[AcidDir, DeltaDir | None]:
        """The directories the compaction writes: where the insert events (or the base's
        rows) go, and where the delete events go (minor only). Their names carry no ``_vT``."""
        if self.kind == "major":
            return BaseDir(self.max_write_id), None
        low, high = self.min_write_id, self.max_write_id
        return DeltaDir(low, high), DeltaDir(low, high, delete=True)

    def tombstone_output(self, txn_id: int) -> str | None:
        """Where a major compaction by ``txn_id`` writes the merged tombstones (relative to
        the table), or ``None`` when there are none to merge. The name is
        ``base_MAX_vT.orc``, unique to the transaction (see the module's docstring)."""
        if not self.tombstones:
            return None
        name = f"{BaseDir(self.max_write_id, txn_id).name}.orc"
        return "/".join(x for x in (self.partition.path, TOMBSTONE_DIR, name) if x)


def directory_of(file: DataFile) -> str:
    """The name of the ACID directory holding a file."""
    return file.path.rpartition("/")[0].rpartition("/")[2]


def tombstone_write_id(file: DataFile) -> int | None:
    """The highest write id whose deletes a tombstone file holds (from its name:
    ``delete_delta_W_W_0000.orc`` or a compaction's ``base_W_vT.orc``)."""
    try:
        parsed = parse_directory(file.path.rpartition("/")[2].removesuffix(".orc"))
    except AcidNameError:
        return None
    if isinstance(parsed, DeltaDir):
        return parsed.max_write_id
    return None if parsed is None else parsed.write_id


def plan_partition(
    partition: PartitionInfo,
    files: Sequence[DataFile],
    write_ids: ValidWriteIdList,
    *,
    kind: CompactionKind | None,
    thresholds: InitiatorThresholds,
) -> AcidCompactionPlan | None:
    """The compaction of ``partition`` (its committed ``files``), or ``None``.

    Args:
        write_ids: The table's write ids at the planning snapshot (the reader's view); the
            compactor's view is derived from it.
        kind: Compact this way; ``None`` lets Hive's initiator rules decide.
    """
    compactor = write_ids.for_compactor()
    by_dir: dict[str, list[DataFile]] = defaultdict(list)
    for f in files:
        if f.kind in EVENT_KINDS or f.kind in (MARKER_KIND, KEY_BLOOM_KIND):
            by_dir[directory_of(f)].append(f)
    parsed = {name: parse_directory(name) for name in by_dir}
    dirs = {name: d for name, d in parsed.items() if d is not None}
    # an old ``_vT`` directory in the manifest was committed by its compactor
    txns = {d.visibility_txn_id for d in dirs.values() if d.visibility_txn_id}
    state = acid_state(dirs.values(), compactor, committed_txns=txns)

    def events(ds: Sequence[AcidDir]) -> list[DataFile]:
        return [f for d in ds for f in by_dir[d.name] if f.kind in EVENT_KINDS]

    base_files = events([state.base] if state.base else [])
    delta_files = events(state.deltas)
    aborted = sum(
        1
        for w in compactor.aborted_ids
        if any(d.min_write_id <= w <= d.max_write_id for d in state.deltas)
    )
    stats = PartitionAcidStats(
        base_bytes=sum(f.size_bytes for f in base_files),
        delta_bytes=sum(f.size_bytes for f in delta_files),
        deltas=len(state.deltas),
        aborted=aborted,
    )
    reason = f"compact {kind} requested"
    if kind is None:
        kind, reason = choose_compaction(stats, thresholds)
        if kind is None:
            return None
    ranges = {(d.min_write_id, d.max_write_id, d.statement_id) for d in state.deltas}
    if not state.deltas or (kind == "minor" and len(ranges) < 2):
        return None
    compacted: list[AcidDir] = list(state.deltas)
    inputs = list(delta_files)
    if kind == "major" and state.base is not None:
        compacted.append(state.base)
        inputs = base_files + inputs
    retired = [f for d in (*compacted, *state.obsolete, *state.aborted) for f in by_dir[d.name]]
    tombstones: list[DataFile] = []
    if kind == "major":
        high = max(d.max_write_id for d in state.deltas)
        tombstones = [
            f
            for f in files
            if f.kind == TOMBSTONE_KIND and (tombstone_write_id(f) or high + 1) <= high
        ]
    return AcidCompactionPlan(
        partition=partition,
        kind=kind,
        base=state.base if kind == "major" else None,
        deltas=state.deltas,
        inputs=tuple(inputs),
        retired=tuple(retired + tombstones),
        high_water_mark=compactor.high_water_mark,
        write_ids=compactor,
        reason=reason,
        tombstones=tuple(tombstones),
    )


def due_partitions(
    write_ids: TableWriteIds | None, snapshot: Snapshot, thresholds: CompactionThresholds
) -> dict[int, str]:
    """The partitions Hive's initiator rules (the table's ``compactor.*`` properties) would
    compact, of at least ``thresholds.min_rows`` stored events, with the kind and why
    (catalog metadata only; the layout's ``compaction_due`` method). Without the table's
    write ids (``None``: a caller that has none) nothing can be judged, so nothing is due."""
    if write_ids is None:
        return {}
    rules = InitiatorThresholds.from_properties(snapshot.table.spec.properties)
    ids = valid_write_id_list(write_ids)
    by_partition: dict[int | None, list[DataFile]] = defaultdict(list)
    for f in snapshot.files:
        by_partition[f.partition_id].append(f)
    due = {}
    for part in snapshot.partitions.values():
        files = by_partition.get(part.id, [])
        if sum(f.row_count for f in files if f.kind in EVENT_KINDS) < thresholds.min_rows:
            continue
        plan = plan_partition(part, files, ids, kind=None, thresholds=rules)
        if plan is not None:
            due[part.id] = f"{plan.kind}: {plan.reason}"
    return due
