"""The latest rows of one partition, read and merged with pyarrow on the driver (no Spark job).

A compaction of a partition that fits in the driver's memory (`fits_driver`: Parquet, no
ordering column, at most `DRIVER_MAX_ROWS` stored rows) reads its live data files and index
entries with pyarrow, keeps every row no index entry of a higher version names
(`latest_partition_rows`, the latest-version rule of ``engine/spark/sql/latest_view.sql``
with keys compared by their canonical encoding, `keys.encoding`), and the compactor writes
them with pyarrow too. Spark's job for a partition of a few hundred thousand rows costs more
in scheduling and code generation than the work; pyarrow reads, joins and writes such a
partition in a fraction of a second on one core, as delta-rs rewrites its files.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from versioned.catalog.records import DataFile
from versioned.keys.columns import index_key_columns
from versioned.keys.encoding import encode_key_array
from versioned.layouts.version_partition.index import read_index
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO
from versioned.values.arrow_types import arrow_type

DRIVER_MAX_ROWS = 2_000_000
"""Stored rows (superseded ones included) up to which a partition is compacted on the driver."""
_VERSION = "__version"


def fits_driver(spec: TableSpec, data_rows: int) -> bool:
    """Whether a partition of ``data_rows`` stored rows of ``spec`` is compacted on the driver:
    Parquet files (pyarrow writes what Spark's path writes), no ordering column (its
    tombstones are kept by a Spark job), and rows that fit the driver's memory."""
    return (
        spec.file_format == "parquet"
        and not spec.ordering_column
        and (data_rows <= DRIVER_MAX_ROWS)
    )


def latest_partition_rows(
    fileio: FileIO, table_location: str, spec: TableSpec, files: Sequence[DataFile]
) -> pa.Table:
    """The latest row of every live key of one partition, the table's data columns typed as
    the table's (a column added after a file was written reads null).

    Args:
        files: The partition's live files (data and index; others are ignored).
    """
    data = [f for f in files if f.kind == "data"]
    rows = _data_rows(fileio, table_location, spec, data)
    index = [f for f in files if f.kind == "index"]
    if not index or rows.num_rows == 0:
        return rows.drop_columns([_VERSION])
    keys = list(index_key_columns(spec))
    typed_entries, entry_versions = [], []
    for f in index:
        entries = read_index(fileio, f"{table_location}/{f.path}")
        typed_entries.append(
            pa.Table.from_arrays(
                [entries.column(k).cast(arrow_type(spec.column(k).type)) for k in keys],
                names=keys,
            )
        )
        entry_versions.append(np.full(entries.num_rows, f.version, dtype=np.int64))
    named = pa.concat_tables(typed_entries)
    newest = (
        pa.table(
            {
                "k": encode_key_array(named, keys),
                "v": pa.array(np.concatenate(entry_versions)),
            }
        )
        .group_by("k", use_threads=False)
        .aggregate([("v", "max")])
    )
    # Only the rows whose first key column matches an entry's can be superseded: found by
    # value (a hash set of the entries' values), so only they are encoded. Floating-point
    # values compare by encoding alone (-0.0 and 0.0, NaNs, are one key there).
    first = keys[0]
    if pa.types.is_floating(rows.schema.field(first).type):
        candidates = np.arange(rows.num_rows)
    else:
        found = pc.is_in(rows.column(first), value_set=pc.unique(named.column(first)))
        candidates = np.flatnonzero(found.to_numpy(zero_copy_only=False))
    picked = rows.select(keys).take(pa.array(candidates))
    where = pc.index_in(encode_key_array(picked, keys), value_set=newest.column("k"))
    superseding = pc.take(newest.column("v_max"), where)  # null: no entry names the key
    versions = pc.take(rows.column(_VERSION), pa.array(candidates))
    superseded = pc.fill_null(pc.greater(superseding, versions), False).to_numpy(
        zero_copy_only=False
    )
    keep = np.ones(rows.num_rows, dtype=bool)
    keep[candidates[superseded]] = False
    return rows.filter(pa.array(keep)).drop_columns([_VERSION])


def _data_rows(
    fileio: FileIO, table_location: str, spec: TableSpec, files: Sequence[DataFile]
) -> pa.Table:
    """Every row of ``files`` in the table's data columns, with its file's version."""
    columns = spec.data_columns
    fields = [pa.field(c.name, arrow_type(c.type)) for c in columns]
    schema = pa.schema([*fields, pa.field(_VERSION, pa.int64())])
    tables = []
    for f in files:
        with fileio.open_input(f"{table_location}/{f.path}") as handle:
            stored = pq.ParquetFile(handle).read()
        arrays = [
            stored.column(c.name).cast(field.type)
            if c.name in stored.column_names
            else pa.nulls(stored.num_rows, field.type)  # written before the column was added
            for c, field in zip(columns, fields, strict=True)
        ]
        arrays.append(pa.array(np.full(stored.num_rows, f.version, dtype=np.int64)))
        tables.append(pa.Table.from_arrays(arrays, schema=schema))
    if not tables:
        return schema.empty_table()
    return pa.concat_tables(tables)
