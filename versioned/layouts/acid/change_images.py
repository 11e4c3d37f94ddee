"""The images of one commit of an acid table, read with pyarrow (no Spark).

The commit's events carry its write id (``currentTransaction``) in the delta and
delete-delta files whose write-id range holds it. Post-images: its insert events (an update
is a delete and an insert, as in Hive 3). Pre-images: each delete event names the ROW__ID
``(originalTransaction, bucket, rowId)`` of the row it retires, unique within its partition;
that row's insert event is in an insert file live before the commit, of the same partition
and bucket, whose write-id range holds ``originalTransaction`` (a base holds every write id
up to its own, and keeps the ROW__IDs it compacted).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from versioned.catalog.change_log import ChangeLog, LoggedCommit
from versioned.catalog.records import DataFile
from versioned.errors import NotSupportedError
from versioned.keys.encoding import encode_key_array
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.bucket_codec import decode_bucket_property
from versioned.layouts.acid.directories import BaseDir, DeltaDir, parse_directory
from versioned.layouts.acid.orc_files import read_committed_fields
from versioned.layouts.acid.snapshot_dirs import (
    DELETE_KIND,
    EVENT_KINDS,
    INSERT_KINDS,
    bucket_file_ref,
)
from versioned.layouts.change_task import CommitTask, Images, shaped
from versioned.storage.filesystem import FileIO
from versioned.values.arrow_types import arrow_type

ROW_ID = (s.ORIGINAL_WRITE_ID, s.BUCKET, s.ROW_ID)
_DELETE_FIELDS = [s.OPERATION, *ROW_ID, s.CURRENT_WRITE_ID]
_GREGORIAN = dt.datetime(1582, 10, 15, tzinfo=dt.UTC)


def acid_images(task: CommitTask, fileio: FileIO) -> Images:
    """The pre- and post-images of the rows the task's commit inserted and deleted."""
    ids = pa.array(task.write_ids, pa.int64())
    after, before = [], []
    for f in task.written:
        if f.kind == DELETE_KIND:
            continue
        events = read_committed_fields(fileio, task.location, f, None)
        mine = pc.and_(
            pc.is_in(events.column(s.CURRENT_WRITE_ID), value_set=ids),
            pc.not_equal(events.column(s.OPERATION), s.DELETE),
        )
        after.append(_rows(task, f, events.filter(mine)))
    for f in task.written:
        if f.kind != DELETE_KIND:
            continue
        deletes = read_committed_fields(fileio, task.location, f, _DELETE_FIELDS)
        deletes = deletes.filter(pc.is_in(deletes.column(s.CURRENT_WRITE_ID), value_set=ids))
        if deletes.num_rows:
            before.append(_deleted_rows(fileio, task, f.partition_id, deletes))
    empty = shaped(pa.table({}), task.columns)
    return Images(
        before=pa.concat_tables(before) if before else empty,
        after=pa.concat_tables(after) if after else empty,
    )


def _deleted_rows(
    fileio: FileIO, task: CommitTask, partition_id: int | None, deletes: pa.Table
) -> pa.Table:
    """The rows the delete events ``deletes`` (of one partition) retire."""
    named = encode_key_array(deletes, ROW_ID)
    buckets = {decode_bucket_property(b).bucket_id for b in deletes.column(s.BUCKET).to_pylist()}
    origins = deletes.column(s.ORIGINAL_WRITE_ID).to_pylist()
    low, high = min(origins), max(origins)
    found = []
    for f in _insert_files(task.before, partition_id, buckets, low, high):
        events = read_committed_fields(fileio, task.location, f, None)
        hit = pc.is_in(encode_key_array(events.select(list(ROW_ID)), ROW_ID), value_set=named)
        if pc.any(hit).as_py():
            found.append(_rows(task, f, events.filter(hit)))
    return pa.concat_tables(found) if found else shaped(pa.table({}), task.columns)


def _insert_files(
    files: Sequence[DataFile], partition_id: int | None, buckets: set[int], low: int, high: int
) -> Iterable[DataFile]:
    """Insert files of the partition and buckets whose write ids may include ``low..high``."""
    for f in files:
        if f.partition_id != partition_id or f.kind == DELETE_KIND:
            continue
        ref = bucket_file_ref(f)
        if ref.bucket not in buckets:
            continue
        directory = parse_directory(ref.directory)
        if isinstance(directory, BaseDir) and directory.write_id < low:
            continue
        if isinstance(directory, DeltaDir) and (
            directory.max_write_id < low or directory.min_write_id > high
        ):
            continue
        yield f


def _rows(task: CommitTask, f: DataFile, events: pa.Table) -> pa.Table:
    """The ``row`` of insert events as the table's columns, partition values from the
    catalog; columns the file predates read null."""
    spec = task.spec
    stored = events.column(s.ROW).combine_chunks()
    assert isinstance(stored, pa.StructArray)
    present = {stored.type.field(i).name: i for i in range(stored.type.num_fields)}
    values = task.partitions.get(f.partition_id, ()) if f.partition_id is not None else ()
    arrays = []
    for c in spec.columns:
        kind = arrow_type(c.type)
        if c.name in spec.partition_by:
            value = values[spec.partition_by.index(c.name)]
            arrays.append(pa.array([value] * len(stored), pa.string()).cast(kind))
        elif c.name in present:
            arrays.append(stored.field(present[c.name]).cast(kind))
        else:
            arrays.append(pa.nulls(len(stored), kind))
    rows = pa.Table.from_arrays(arrays, names=list(spec.column_names))
    _check_calendar(task, rows)
    return shaped(rows, task.columns)


def _check_calendar(task: CommitTask, rows: pa.Table) -> None:
    """Refuse dates and timestamps before the Gregorian calendar: ORC files mark their
    calendar (pyorc's hybrid Julian, Spark's proleptic Gregorian), pyarrow reads both alike,
    and such a value would come out up to ten days off what `Table.read` shows."""
    for column in rows.columns:
        if pa.types.is_date(column.type) or pa.types.is_timestamp(column.type):
            stamps = column.cast(pa.timestamp("us", tz="UTC"))
            low = pc.min(stamps).as_py()
            if low is not None and low < _GREGORIAN:
                raise NotSupportedError(
                    f"{task.spec.name}: version {task.stamp.version} holds a date or time "
                    f"before 1582-10-15 ({low:%Y-%m-%d}), which the change stream cannot "
                    "read exactly from the ORC files of an acid table",
                    table=str(task.spec.name),
                    version=task.stamp.version,
                )


def changed_files(log: ChangeLog, commit: LoggedCommit) -> tuple[list[DataFile], list[DataFile]]:
    """Acid layout: the delta and delete-delta files live after the commit whose write-id
    range holds one of its write ids (a streaming batch appends several write ids to one
    file); the insert files live before it in the partitions those are in."""
    ids = commit.write_ids
    if not ids:
        return [], []
    seq = commit.info.seq
    written = []
    for f in log.live_at(seq):
        if f.kind not in EVENT_KINDS or f.kind == "base":
            continue
        directory = parse_directory(f.path.rsplit("/", 2)[-2])
        if isinstance(directory, DeltaDir) and any(
            directory.min_write_id <= w <= directory.max_write_id for w in ids
        ):
            written.append(f)
    touched = {f.partition_id for f in written if f.kind == DELETE_KIND}
    before = [
        f for f in log.live_at(seq - 1) if f.kind in INSERT_KINDS and f.partition_id in touched
    ]
    return written, before
