"""The images of one commit of a version-partition table, read with pyarrow (no Spark).

Post-images: the rows of the commit's data files (all live after it: its version is the
newest of each partition it wrote). Touched keys, per partition: those rows' keys and the
keys of the commit's index entries (updates, deletes, and ``M`` entries retiring a key that
moved to another partition). Pre-images, per partition: the key's newest row among the
versions live before the commit whose Bloom filter may hold it (pruned by key range first,
as the writer probes), unless an index entry of a later version retired it; the reader of
the latest version (``engine/spark/sql/latest_view.sql``) applies the same rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as paorc
import pyarrow.parquet as pq

from versioned.catalog.change_log import ChangeLog, LoggedCommit
from versioned.catalog.records import DataFile
from versioned.keys.columns import (
    index_key_columns,
)
from versioned.keys.encoding import encode_key_array
from versioned.layouts.change_task import CommitTask, Images, shaped
from versioned.layouts.version_partition.index import (
    read_index,
)
from versioned.layouts.version_partition.paths import version_of
from versioned.layouts.version_partition.probe import BLOOM_KIND, probe_partition
from versioned.storage.filesystem import FileIO
from versioned.values.arrow_types import arrow_type

_VERSION = "__version"
VERSION_KINDS = ("data", "index", "bloom")
"""Catalog file kinds of the version layout a commit's pre-images may be in."""


def version_images(task: CommitTask, fileio: FileIO) -> Images:
    """The pre- and post-images of the keys the task's commit touched."""
    spec = task.spec
    keys = list(index_key_columns(spec))
    after, before = [], []
    for pid, written in _by_partition(task.written).items():
        values = task.partitions.get(pid, ()) if pid is not None else ()
        rows = _read_rows(fileio, task, [f for f in written if f.kind == "data"], values)
        entries = [
            read_index(fileio, f"{task.location}/{f.path}").select(keys)
            for f in written
            if f.kind == "index"
        ]
        touched = pa.concat_tables([rows.select(keys), *[_typed(e, task, keys) for e in entries]])
        after.append(shaped(rows, task.columns))
        live = [f for f in task.before if f.partition_id == pid]
        before.append(shaped(_live_rows(fileio, task, live, touched, values), task.columns))
    empty = shaped(pa.table({}), task.columns)
    return Images(
        before=pa.concat_tables(before) if before else empty,
        after=pa.concat_tables(after) if after else empty,
    )


def _live_rows(
    fileio: FileIO,
    task: CommitTask,
    files: Sequence[DataFile],
    touched: pa.Table,
    values: tuple[str | None, ...],
) -> pa.Table:
    """The rows of ``touched`` keys live in the snapshot of ``files`` (one partition's)."""
    spec = task.spec
    keys = list(index_key_columns(spec))
    data = [f for f in files if f.kind == "data"]
    if touched.num_rows == 0 or not data:
        return pa.table({})
    blooms = [f for f in files if f.kind == BLOOM_KIND]
    probe = probe_partition(fileio, task.location, touched, keys, blooms)
    filtered = {version_of(b.path) for b in blooms}
    # A version holds a touched key when its filter may; one without a filter always may.
    candidates = set(probe.candidate_versions) | {
        v for v in (version_of(f.path) for f in data) if v not in filtered
    }
    wanted = pa.array(probe.encoded, pa.binary())
    rows = _read_rows(
        fileio, task, [f for f in data if version_of(f.path) in candidates], values, version=True
    )
    rows = rows.filter(pc.is_in(encode_key_array(rows, keys), value_set=wanted))
    if rows.num_rows == 0:
        return rows
    # The newest row of each key (versions of one partition order its changes) ...
    rows = rows.sort_by([(_VERSION, "descending")])
    encoded = encode_key_array(rows, keys)
    first = pc.index_in(encoded, value_set=encoded)
    rows = rows.filter(pc.equal(first, pa.array(np.arange(rows.num_rows, dtype=np.int32))))
    # ... unless an index entry of a later version retired it.
    oldest = pc.min(rows.column(_VERSION)).as_py()
    later = [f for f in files if f.kind == "index" and (version_of(f.path) or 0) > oldest]
    retired = _retired_after(fileio, task, later, rows, keys, wanted)
    return rows.filter(pc.invert(retired)).drop_columns([_VERSION])


def _retired_after(
    fileio: FileIO,
    task: CommitTask,
    index_files: Sequence[DataFile],
    rows: pa.Table,
    keys: list[str],
    wanted: pa.Array,
) -> pa.Array:
    """Per row of ``rows``: whether an index entry of a higher version names its key."""
    retired = pa.array(np.zeros(rows.num_rows, dtype=bool))
    if not index_files:
        return retired
    row_keys = encode_key_array(rows, keys)
    row_versions = rows.column(_VERSION).combine_chunks()
    for f in index_files:
        entries = _typed(read_index(fileio, f"{task.location}/{f.path}"), task, keys)
        named = encode_key_array(entries, keys)
        named = named.filter(pc.is_in(named, value_set=wanted))
        if len(named) == 0:
            continue
        hit = pc.and_(
            pc.is_in(row_keys, value_set=named),
            pc.less(row_versions, pa.scalar(version_of(f.path), pa.int64())),
        )
        retired = pc.or_(retired, hit)
    return retired


def _read_rows(
    fileio: FileIO,
    task: CommitTask,
    files: Iterable[DataFile],
    values: tuple[str | None, ...],
    *,
    version: bool = False,
) -> pa.Table:
    """The rows of data files in the commit's columns, with the partition's values (and,
    asked, each row's version from its file's path)."""
    spec = task.spec
    tables = []
    for f in files:
        stored = _read_data_file(fileio, f"{task.location}/{f.path}", spec.file_format)
        arrays, names = [], []
        for c in spec.columns:
            kind = arrow_type(c.type)
            names.append(c.name)
            if c.name in spec.partition_by:
                value = values[spec.partition_by.index(c.name)]
                arrays.append(pa.array([value] * stored.num_rows, pa.string()).cast(kind))
            elif c.name in stored.column_names:
                arrays.append(stored.column(c.name).cast(kind))
            else:  # written before the column was added
                arrays.append(pa.nulls(stored.num_rows, kind))
        if version:
            names.append(_VERSION)
            arrays.append(pa.repeat(pa.scalar(version_of(f.path), pa.int64()), stored.num_rows))
        tables.append(pa.Table.from_arrays(arrays, names=names))
    if tables:
        return pa.concat_tables(tables)
    fields = [pa.field(c.name, arrow_type(c.type)) for c in spec.columns]
    if version:
        fields.append(pa.field(_VERSION, pa.int64()))
    return pa.schema(fields).empty_table()


def _read_data_file(fileio: FileIO, rel: str, file_format: str) -> pa.Table:
    with fileio.open_input(rel) as handle:
        if file_format == "orc":
            return paorc.ORCFile(handle).read()
        return pq.ParquetFile(handle).read()


def _typed(entries: pa.Table, task: CommitTask, keys: list[str]) -> pa.Table:
    """Index entries' key columns in the key columns' types."""
    return pa.Table.from_arrays(
        [entries.column(k).cast(arrow_type(task.spec.column(k).type)) for k in keys], names=keys
    )


def _by_partition(files: Iterable[DataFile]) -> dict[int | None, list[DataFile]]:
    grouped: dict[int | None, list[DataFile]] = {}
    for f in files:
        grouped.setdefault(f.partition_id, []).append(f)
    return grouped


def changed_files(log: ChangeLog, commit: LoggedCommit) -> tuple[list[DataFile], list[DataFile]]:
    """Version layout: the commit's data and index files; the data, index and Bloom files
    live before it in the partitions they are in. A key's row in another partition is
    retired by an index entry there, so its pre-image is in a touched partition too."""
    seq = commit.info.seq
    written = [f for f in log.added_at(seq) if f.kind in ("data", "index")]
    touched = {f.partition_id for f in written}
    before = [
        f for f in log.live_at(seq - 1) if f.kind in VERSION_KINDS and f.partition_id in touched
    ]
    return written, before
