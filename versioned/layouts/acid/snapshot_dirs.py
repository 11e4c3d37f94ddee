"""Which committed bucket files of a snapshot a reader of the acid layout reads.

The catalog lists every file a commit made visible (DESIGN.md invariant 1: readers never
list directories). Per partition, the directories of those files go through `acid_state`
with the snapshot's `ValidWriteIdList`. Compaction output (``base_W``, ``delta_MIN_MAX``)
counts once listed, like any directory; a ``_vT`` directory (written by versioned before
issue 28) in the manifest was committed by its compactor (the catalog lists nothing else),
so its T counts as committed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from versioned.catalog.records import DataFile, Snapshot, TableWriteIds
from versioned.layouts.acid.acid_state import AcidState, acid_state
from versioned.layouts.acid.directories import BucketFile, parse_bucket_file, parse_directory
from versioned.layouts.acid.errors import AcidNameError
from versioned.layouts.acid.write_ids import ValidWriteIdList

INSERT_KINDS = ("base", "delta")
"""Catalog file kinds holding insert events (rows)."""
DELETE_KIND = "delete_delta"
"""Catalog file kind holding delete events."""
MARKER_KIND = "acid_marker"
"""Catalog file kind of a directory's marker files: ``_orc_acid_version``, and in a
compaction's output Hive 3's ``_metadata_acid`` (bases) and the compactor's mark
(`compacted_dirs`). Retired and vacuumed with their directory."""
STREAM_OPEN = "stream_open"
"""File stat: an open streaming batch still appends to this bucket file; read only its
first ``size_bytes`` (the last committed flush, a complete ORC file)."""
EVENT_KINDS = (*INSERT_KINDS, DELETE_KIND)
TOMBSTONE_KIND = "acid_tombstone"
"""Catalog file kind of a delete tombstone side file (tables with an ordering column)."""
TOMBSTONE_DIR = "_tombstones"
"""Folder of a partition holding its tombstone files (hidden from Hive's readers)."""


@dataclass(frozen=True)
class BucketFileRef:
    """One committed bucket file: its catalog record, directory and bucket."""

    file: DataFile
    directory: str
    bucket: int


@dataclass(frozen=True)
class SnapshotFiles:
    """The bucket files one snapshot reads.

    Attributes:
        write_ids: The snapshot's write id list.
        inserts: Files of the chosen base and insert deltas.
        deletes: Files of the chosen delete deltas.
        states: The `AcidState` of each partition (by partition id; None: unpartitioned
            files committed before the partition row existed never happen, kept for typing).
    """

    write_ids: ValidWriteIdList
    inserts: tuple[BucketFileRef, ...]
    deletes: tuple[BucketFileRef, ...]
    states: dict[int | None, AcidState]

    def only(
        self, partitions: Collection[int | None] | None, buckets: Collection[int] | None
    ) -> SnapshotFiles:
        """The files of some partitions (ids) and buckets only (``None``: all)."""

        def keep(ref: BucketFileRef) -> bool:
            in_partition = partitions is None or ref.file.partition_id in partitions
            return in_partition and (buckets is None or ref.bucket in buckets)

        return SnapshotFiles(
            self.write_ids,
            tuple(r for r in self.inserts if keep(r)),
            tuple(r for r in self.deletes if keep(r)),
            self.states,
        )


def valid_write_id_list(ids: TableWriteIds) -> ValidWriteIdList:
    """The catalog's write ids of a snapshot as Hive's `ValidWriteIdList`."""
    return ValidWriteIdList(ids.table, ids.high_water_mark, ids.open_ids, ids.aborted_ids)


def _ref(file: DataFile) -> BucketFileRef:
    directory, _, name = file.path.rpartition("/")
    dir_name = directory.rpartition("/")[2]
    bucket: BucketFile | None = parse_bucket_file(name)
    if bucket is None or parse_directory(dir_name) is None:
        raise AcidNameError(
            f"committed file {file.path!r} is not <dir>/bucket_NNNNN of an acid table",
            path=file.path,
        )
    return BucketFileRef(file, dir_name, bucket.bucket_id)


def bucket_file_ref(file: DataFile) -> BucketFileRef:
    """A committed bucket file with its directory and bucket.

    Raises:
        AcidNameError: Its path is not ``<dir>/bucket_NNNNN`` of an acid table.
    """
    return _ref(file)


def snapshot_files(snapshot: Snapshot, write_ids: TableWriteIds) -> SnapshotFiles:
    """The committed bucket files ``snapshot`` reads, chosen per partition by `acid_state`."""
    valid = valid_write_id_list(write_ids)
    by_partition: dict[int | None, list[BucketFileRef]] = defaultdict(list)
    for file in snapshot.files:
        if file.kind in EVENT_KINDS:
            by_partition[file.partition_id].append(_ref(file))
    inserts: list[BucketFileRef] = []
    deletes: list[BucketFileRef] = []
    states: dict[int | None, AcidState] = {}
    for pid, refs in by_partition.items():
        dirs = {r.directory for r in refs}
        parsed = [parse_directory(d) for d in dirs]
        txns = {d.visibility_txn_id for d in parsed if d is not None and d.visibility_txn_id}
        state = acid_state(dirs, valid, committed_txns=txns)
        states[pid] = state
        chosen = {d.name for d in state.deltas} | ({state.base.name} if state.base else set())
        for ref in refs:
            if ref.directory in chosen:
                (deletes if ref.file.kind == DELETE_KIND else inserts).append(ref)
    return SnapshotFiles(valid, tuple(inserts), tuple(deletes), states)


def buckets_of(refs: Iterable[BucketFileRef]) -> set[int]:
    """The bucket ids of some files."""
    return {r.bucket for r in refs}
