"""The live rows of a table read without Spark: the catalog's snapshot and pyarrow, as the
streaming and mutation clients themselves read (issue 26 item 6).

Both layouts, from exactly the snapshot's committed files (no directory listing):

* acid: `snapshot_files` chooses the base and deltas per partition; the insert events whose
  write id is valid, less those a valid delete event names by (partition, ROW__ID);
* version partition: a data row of version v is live unless an index entry of a higher
  version exists for its partition and key (``engine/spark/sql/latest_view.sql``, in Arrow).

Partition values come back as the catalog stores them (strings; ``None`` for null) and data
values as pyarrow reads them, so the helper suits tables of ints and strings (the clients'
test tables); `tests/streaming/test_lake_rows.py` checks it against `Table.read()` for both
layouts.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.orc as porc
import pyarrow.parquet as pq

from versioned.catalog.records import Snapshot
from versioned.keys.columns import (
    index_key_columns,
)
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.orc_files import read_committed_fields
from versioned.layouts.acid.snapshot_dirs import BucketFileRef, snapshot_files
from versioned.layouts.version_partition.paths import version_of
from versioned.storage.partition_paths import parse_partition_path

ROW_ID = "ROW__ID"


def lake_rows(
    table: Any, as_of: int | None = None, *, with_row_id: bool = False
) -> list[dict[str, Any]]:
    """The live rows of ``table`` (a `versioned.Table`) at its latest version or ``as_of``,
    as dicts in the table's column order; ``with_row_id`` (acid only) adds ``ROW__ID`` as
    ``(writeid, bucketid, rowid)``. Sorted by their repr, so two reads compare as lists."""
    snapshot = table.snapshot(as_of)
    fileio = table.catalog.engine_context.fileio
    if snapshot.table.spec.layout == "acid":
        ids = table.catalog.engine_context.store.write_ids(table.name, snapshot.seq)
        rows = _acid_rows(fileio, snapshot, ids, with_row_id)
    else:
        assert not with_row_id, "only acid rows have a ROW__ID"
        rows = _version_rows(fileio, snapshot)
    stamps = [c.name for c in snapshot.table.spec.columns if c.type == "TIMESTAMP"]
    for row in rows:
        for name in stamps:
            row[name] = _utc(row[name])
    return sorted(rows, key=repr)


def _utc(value: Any) -> Any:
    """A TIMESTAMP as an aware UTC ``datetime`` (ORC's reader gives naive ones)."""
    if value is None:
        return None
    if hasattr(value, "to_pydatetime"):
        value = value.to_pydatetime()
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def _acid_rows(fileio: Any, snapshot: Snapshot, ids: Any, with_row_id: bool) -> list[dict]:
    spec = snapshot.table.spec
    files = snapshot_files(snapshot, ids)
    deleted = {
        (ref.file.partition_id, *key)
        for ref, event in _events(fileio, snapshot, files.deletes)
        if files.write_ids.is_valid(event[s.CURRENT_WRITE_ID])
        for key in [_row_id(event)]
    }
    rows = []
    for ref, event in _events(fileio, snapshot, files.inserts):
        key = _row_id(event)
        if not files.write_ids.is_valid(event[s.CURRENT_WRITE_ID]):
            continue
        if (ref.file.partition_id, *key) in deleted:
            continue
        values = _partition_values(snapshot, ref.file.partition_id)
        stored = event[s.ROW] or {}
        row = {c.name: stored.get(c.name) for c in spec.data_columns}
        row.update(zip(spec.partition_by, values, strict=True))
        ordered = {c: row[c] for c in spec.column_names}
        if with_row_id:
            ordered[ROW_ID] = key
        rows.append(ordered)
    return rows


def _events(
    fileio: Any, snapshot: Snapshot, refs: Sequence[BucketFileRef]
) -> list[tuple[BucketFileRef, dict[str, Any]]]:
    location = snapshot.table.location
    return [
        (ref, event)
        for ref in refs
        for event in read_committed_fields(fileio, location, ref.file, None).to_pylist()
    ]


def _row_id(event: dict[str, Any]) -> tuple[int, int, int]:
    return (event[s.ORIGINAL_WRITE_ID], event[s.BUCKET], event[s.ROW_ID])


def _partition_values(snapshot: Snapshot, partition_id: int | None) -> tuple[str | None, ...]:
    if not snapshot.table.spec.partition_by:
        return ()
    assert partition_id is not None
    return snapshot.partitions[partition_id].values


def _version_rows(fileio: Any, snapshot: Snapshot) -> list[dict]:
    spec = snapshot.table.spec
    keys = index_key_columns(spec)
    location = snapshot.table.location
    newest: dict[tuple[Any, ...], int] = {}  # (partition values, key) -> highest index version
    for file in (f for f in snapshot.files if f.kind == "index"):
        version = version_of(file.path)
        assert version is not None, file.path
        values = _path_values(file.path)
        with fileio.open_input(f"{location}/{file.path}") as handle:
            entries = pq.read_table(handle, columns=list(keys)).to_pylist()
        for entry in entries:
            k = (values, tuple(entry[c] for c in keys))
            newest[k] = max(newest.get(k, -1), version)
    rows = []
    for file in (f for f in snapshot.files if f.kind == "data"):
        version = version_of(file.path)
        assert version is not None, file.path
        values = _path_values(file.path)
        with fileio.open_input(f"{location}/{file.path}") as handle:
            data = _read_data(handle, spec.file_format)
        for stored in data.to_pylist():
            row = {c.name: stored.get(c.name) for c in spec.data_columns}
            row.update(zip(spec.partition_by, values, strict=True))
            if newest.get((values, tuple(row[c] for c in keys)), -1) > version:
                continue
            rows.append({c: row[c] for c in spec.column_names})
    return rows


def _read_data(handle: pa.NativeFile, file_format: str) -> pa.Table:
    if file_format == "orc":
        return porc.ORCFile(handle).read()
    return pq.read_table(handle)


def _path_values(path: str) -> tuple[str | None, ...]:
    """The partition values of a data or index file's path (``_index/``, the ``version_id``
    segment and the file name left out)."""
    folders = [
        part
        for part in path.split("/")[:-1]
        if "=" in part and not part.startswith("version_id=") and not part.startswith("_")
    ]
    return tuple(v for _, v in parse_partition_path("/".join(folders)))
