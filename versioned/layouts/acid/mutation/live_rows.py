"""Updates and deletes must name rows that are live when the transaction commits.

A ROW__ID comes from a read (``Table.read(with_row_id=True)``) made before the mutation
transaction; a write that committed since may have updated or deleted that row. Applying the
mutation anyway would leave the key twice (an update inserts the new row and deletes a row
that is already gone) or delete nothing. So, at commit, the ROW__IDs of the transaction's
delete events in a partition are checked against the partition's committed files: each must
be among the insert events (``base_*``, ``delta_*``) and not among the delete events. The
commit then expects the partition's head as it was when checked (`PartitionCommit`'s
compare-and-swap), so a write committing in between makes it conflict too.

Only the three ROW__ID columns of the partition's bucket files for the buckets the
transaction touched are read (pyarrow's ORC reader, no Spark).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence

import pyarrow as pa
import pyarrow.orc as porc

from versioned.catalog.records import DataFile, FileAdd, Snapshot
from versioned.layouts.acid.bucket_codec import RecordIdentifier, decode_bucket_property
from versioned.layouts.acid.directories import parse_bucket_file
from versioned.layouts.acid.orc_files import read_committed_fields
from versioned.layouts.acid.snapshot_dirs import DELETE_KIND, INSERT_KINDS
from versioned.storage.filesystem import FileIO

ROW_ID_FIELDS = ("originalTransaction", "bucket", "rowId")

RowId = tuple[int, int, int]


def stale_row_ids(
    fileio: FileIO, snapshot: Snapshot, partition_id: int, staged: Sequence[FileAdd]
) -> list[RecordIdentifier]:
    """The ROW__IDs the staged delete events of one partition name that are not live in
    ``snapshot`` (sorted; empty when every one is live)."""
    location = snapshot.table.location
    mutated: set[RowId] = set()
    for add in staged:
        if add.kind == DELETE_KIND:
            rel = f"{location}/{add.path}"
            with fileio.open_input(rel) as handle, fileio.reading(rel):
                mutated |= _row_ids(porc.ORCFile(handle).read(columns=list(ROW_ID_FIELDS)))
    if not mutated:
        return []
    buckets = {decode_bucket_property(bucket).bucket_id for _, bucket, _ in mutated}
    inserted: set[RowId] = set()
    deleted: set[RowId] = set()
    for file in _bucket_files(snapshot.files, partition_id, buckets):
        ids = _row_ids(read_committed_fields(fileio, location, file, ROW_ID_FIELDS))
        (deleted if file.kind == DELETE_KIND else inserted).update(ids & mutated)
    live = inserted - deleted
    return [RecordIdentifier(*row_id) for row_id in sorted(mutated - live)]


def _bucket_files(
    files: Iterable[DataFile], partition_id: int, buckets: set[int]
) -> list[DataFile]:
    chosen = []
    for file in files:
        if file.partition_id != partition_id or file.kind not in (*INSERT_KINDS, DELETE_KIND):
            continue
        parsed = parse_bucket_file(posixpath.basename(file.path))
        if parsed is not None and parsed.bucket_id in buckets:
            chosen.append(file)
    return chosen


def _row_ids(table: pa.Table) -> set[RowId]:
    columns = [table.column(name).to_pylist() for name in ROW_ID_FIELDS]
    return set(zip(*columns, strict=True))
