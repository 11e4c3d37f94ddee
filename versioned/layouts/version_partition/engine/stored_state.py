"""The stored ordering value of keys, for tables with an ordering column.

For each key that may exist (Bloom positive), the state is the newest of: its data rows in
the candidate versions (key and ordering columns only) and its index entries (an update's
entry, or a delete's tombstone, both carrying the ordering value). Only the candidate
versions are read, and only their key and ordering columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.catalog.records import DataFile, TableInfo
from versioned.engine.spark.file_scans import scan_files
from versioned.engine.spark.known_files import KnownFile
from versioned.engine.spark.types import spark_type
from versioned.keys.columns import (
    index_key_columns,
)
from versioned.layouts.version_partition.engine.reader import index_entries
from versioned.layouts.version_partition.index import (
    OP_COLUMN,
)
from versioned.layouts.version_partition.paths import INDEX_DIR, VERSION_KEY
from versioned.schema import TableSpec

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import EngineContext

STORED_ORDER = "_stored_order"
STORED_OP = "_stored_op"
STORED_VERSION = "_stored_version"


def stored_state(
    ctx: EngineContext,
    table: TableInfo,
    files: Sequence[DataFile],
    probe_keys: pa.Table,
    *,
    match_partitions: Sequence[str] | None = None,
    newest: Literal["version", "order"] = "version",
) -> pa.Table:
    """Newest stored (version, op, ordering value) of each key in ``probe_keys``.

    Args:
        files: Live ``data`` and ``index`` files of the candidate versions.
        probe_keys: The partition columns named by ``match_partitions`` (as strings) and the
            key columns of the keys to look up.
        match_partitions: Partition columns that identify a key with its key columns
            (default: all; a table-wide key matches only those in the primary key, and its
            state is taken over every partition).
        newest: Which stored entry is the state: the one of the highest ``version`` (per
            partition, versions order the changes) or the one of the greatest ordering
            value (``order``: across partitions, where a compaction renumbers versions).

    Returns:
        The matched partition and key columns plus ``_stored_version``, ``_stored_op``
        (``U``/``D``/``M``) and ``_stored_order``; keys with no stored state are absent.
    """
    spec, spark = table.spec, ctx.spark
    ordering = spec.ordering_column
    assert ordering is not None
    keys = list(index_key_columns(spec))
    parts = list(spec.partition_by if match_partitions is None else match_partitions)
    root = ctx.fileio.full_path(table.location)
    frames: list[DataFrame] = []
    data = [KnownFile(f.path, f.size_bytes) for f in files if f.kind == "data"]
    if data:
        frames.append(
            _scan(spark, spec, spec.file_format, data, root, [*keys, ordering]).withColumn(
                OP_COLUMN, F.lit("U")
            )
        )
    index = index_entries([f for f in files if f.kind == "index"])
    if index:
        frames.append(
            _scan(
                spark, spec, "parquet", index, f"{root}/{INDEX_DIR}", [*keys, ordering, OP_COLUMN]
            )
        )
    if not frames or probe_keys.num_rows == 0:
        return pa.table({})
    stored = frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])
    wanted = spark.createDataFrame(probe_keys.select([*parts, *keys]))
    cond = [stored[c].eqNullSafe(wanted[c]) for c in parts] + [stored[c] == wanted[c] for c in keys]
    matched = stored.join(F.broadcast(wanted), cond, "left_semi")
    by = F.col(VERSION_KEY) if newest == "version" else F.col(ordering)
    newest_state = matched.groupBy(*parts, *keys).agg(
        F.max_by(F.struct(F.col(ordering).alias("o"), F.col(OP_COLUMN).alias("p")), by).alias("s"),
        F.max(VERSION_KEY).alias(STORED_VERSION),
    )
    result = newest_state.select(
        *parts,
        *keys,
        F.col(STORED_VERSION),
        F.col("s.p").alias(STORED_OP),
        F.col("s.o").alias(STORED_ORDER),
    )
    return result.toArrow()


def _scan(
    spark: SparkSession,
    spec: TableSpec,
    file_format: str,
    files: list[KnownFile],
    base: str,
    columns: Sequence[str],
) -> DataFrame:
    """Read ``columns`` of ``files`` below ``base``; partition columns (as strings) and
    ``version_id`` come from their paths."""
    fields = [T.StructField(c, spark_type(spec.column(c).type)) for c in columns if c != OP_COLUMN]
    if OP_COLUMN in columns:
        fields.append(T.StructField(OP_COLUMN, T.StringType()))
    fields += [T.StructField(p, T.StringType()) for p in spec.partition_by]
    fields.append(T.StructField(VERSION_KEY, T.LongType()))
    frame = scan_files(spark, file_format, T.StructType(fields), base, files)
    return frame.select(*columns, *spec.partition_by, VERSION_KEY)
