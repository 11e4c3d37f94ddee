"""Delete tombstones that survive the compaction of a partition (tables with an ordering column).

A key is deleted when its newest version-index entry is a ``D``. Its tombstone carries the
delete's ordering value, so a late change older than the delete is stale and cannot
resurrect the key. Compaction keeps the tombstones younger than the table's retention
(``tombstone_retention_hours``, by the commit time of the deleting version) and drops the
rest: after that a late, older insert is applied like a new key.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pyarrow as pa
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.catalog.records import DataFile, TableInfo
from versioned.engine.spark.file_scans import scan_files
from versioned.engine.spark.types import spark_type
from versioned.keys.columns import (
    index_key_columns,
)
from versioned.layouts.engine_protocol import EngineContext
from versioned.layouts.version_partition.engine.reader import index_entries
from versioned.layouts.version_partition.index import (
    DELETE,
    OP_COLUMN,
    VERSION_COLUMN,
    index_schema,
)
from versioned.layouts.version_partition.paths import INDEX_DIR, VERSION_KEY

_NEWEST = "_newest"


def live_tombstones(
    ctx: EngineContext,
    table: TableInfo,
    index_files: Sequence[DataFile],
    keep_versions: Collection[int],
) -> pa.Table:
    """Tombstones of deleted keys among ``index_files`` (one partition of ``table``, whose
    columns are those of the snapshot being compacted) to keep.

    Args:
        index_files: The partition's live index files.
        keep_versions: Versions whose deletes are still within the retention.

    Returns:
        The index columns (keys, ``_version`` = the deleting version, ``_op`` and the
        ordering column when the index stores it), one row per key to keep.
    """
    spec = table.spec
    schema = index_schema(spec)
    if not index_files or not keep_versions:
        return schema.empty_table()
    keys = list(index_key_columns(spec))
    carried = [f.name for f in schema if f.name not in keys and f.name != OP_COLUMN]
    fields = [
        T.StructField(f.name, spark_type(spec.column(f.name).type))
        for f in schema
        if f.name not in (VERSION_COLUMN, OP_COLUMN)
    ]
    fields += [
        T.StructField(VERSION_COLUMN, T.LongType()),
        T.StructField(OP_COLUMN, T.StringType()),
    ]
    fields += [T.StructField(p, T.StringType()) for p in spec.partition_by]
    fields.append(T.StructField(VERSION_KEY, T.LongType()))
    root = ctx.fileio.full_path(table.location)
    entries = scan_files(
        ctx.spark,
        "parquet",
        T.StructType(fields),
        f"{root}/{INDEX_DIR}",
        index_entries(index_files),
    )
    newest = entries.groupBy(*keys).agg(
        F.max_by(F.struct(*[F.col(c) for c in [OP_COLUMN, *carried]]), F.col(VERSION_KEY)).alias(
            _NEWEST
        )
    )
    kept = newest.where(
        (F.col(f"{_NEWEST}.{OP_COLUMN}") == F.lit(DELETE))
        & F.col(f"{_NEWEST}.{VERSION_COLUMN}").isin(sorted(keep_versions))
    ).select(*keys, *[F.col(f"{_NEWEST}.{c}").alias(c) for c in carried])
    rows = kept.toArrow()
    columns = [
        rows.column(f.name) if f.name != OP_COLUMN else pa.repeat(DELETE, rows.num_rows)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, names=schema.names).cast(schema)
