"""Reading the latest version of every record of a version-partition table.

The snapshot (committed files) is resolved once by the caller; this module scans exactly
those files natively (Parquet or ORC, partition values and ``version_id`` from each file's
path) and applies ``engine/spark/sql/latest_view.sql``: one broadcast anti join of the rows against
the index entries of higher versions (no aggregation, no shuffle). When the index holds more
entries than ``broadcast_limit`` the join is a shuffle join and a warning says the table needs
compaction.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from versioned.catalog.records import DataFile, Snapshot
from versioned.engine.spark.file_scans import scan_files
from versioned.engine.spark.known_files import KnownFile
from versioned.engine.spark.sql_templates import template
from versioned.engine.spark.types import spark_schema, spark_type
from versioned.keys.columns import (
    index_key_columns,
)
from versioned.layouts.engine_protocol import DEFAULT_BROADCAST_LIMIT, EngineContext
from versioned.layouts.version_partition.index import (
    VERSION_COLUMN,
)
from versioned.layouts.version_partition.paths import INDEX_DIR, VERSION_KEY

log = logging.getLogger(__name__)


class CompactionNeededWarning(UserWarning):
    """The version index outgrew the broadcast limit: reads shuffle until compaction."""


@dataclass(frozen=True)
class SnapshotFrames:
    """The raw inputs of the latest-version query for one snapshot."""

    data: DataFrame
    index: DataFrame | None
    index_entries: int


def snapshot_frames(ctx: EngineContext, snapshot: Snapshot) -> SnapshotFrames:
    """DataFrames over exactly the snapshot's data and index files (no listing: their paths
    and sizes are the catalog's, `file_scans.scan_files`)."""
    spark, spec = ctx.spark, snapshot.table.spec
    root = ctx.fileio.full_path(snapshot.table.location)
    partition_fields = [
        T.StructField(p, spark_type(spec.column(p).type)) for p in spec.partition_by
    ]
    version_field = T.StructField(VERSION_KEY, T.LongType())
    data_schema = T.StructType(
        [T.StructField(c.name, spark_type(c.type)) for c in spec.data_columns]
        + partition_fields
        + [version_field]
    )
    data_files = [KnownFile(f.path, f.size_bytes) for f in snapshot.files if f.kind == "data"]
    if data_files:
        data = scan_files(spark, spec.file_format, data_schema, root, data_files)
    else:
        data = spark.createDataFrame([], data_schema)
    index_files = [f for f in snapshot.files if f.kind == "index"]
    if not index_files:
        return SnapshotFrames(data, None, 0)
    key_fields = [
        T.StructField(k, spark_type(spec.column(k).type)) for k in index_key_columns(spec)
    ]
    index_schema = T.StructType(
        [*key_fields, T.StructField(VERSION_COLUMN, T.LongType()), *partition_fields, version_field]
    )
    index = scan_files(
        spark, "parquet", index_schema, f"{root}/{INDEX_DIR}", index_entries(index_files)
    )
    return SnapshotFrames(data, index, sum(f.row_count for f in index_files))


def index_entries(files: Sequence[DataFile]) -> list[KnownFile]:
    """Index files as files of a scan of the ``_index`` folder (their partition values and
    version are in their paths below it)."""
    start = len(INDEX_DIR) + 1
    return [KnownFile(f.path[start:], f.size_bytes) for f in files]


def read_latest(ctx: EngineContext, snapshot: Snapshot, *, with_version: bool = False) -> DataFrame:
    """The latest version of every live record in ``snapshot``, columns in table order.

    Args:
        with_version: Keep the ``version_id`` column (the version that wrote each row).
    """
    frames = snapshot_frames(ctx, snapshot)
    return latest_rows(
        ctx.spark,
        snapshot,
        frames,
        broadcast_limit=ctx.broadcast_limit,
        with_version=with_version,
    )


def latest_rows(
    spark: SparkSession,
    snapshot: Snapshot,
    frames: SnapshotFrames,
    *,
    broadcast_limit: int = DEFAULT_BROADCAST_LIMIT,
    with_version: bool = False,
) -> DataFrame:
    """`read_latest` over frames already built by `snapshot_frames`."""
    spec = snapshot.table.spec
    columns = list(spec.column_names) + ([VERSION_KEY] if with_version else [])
    if frames.index is None:
        return frames.data.select(*columns)
    if frames.index_entries > broadcast_limit:
        warnings.warn(
            f"{spec.name}: {frames.index_entries} version-index entries exceed the broadcast "
            f"limit ({broadcast_limit}); reading with a shuffle join. Compact the table: "
            f"versioned compact {spec.name}",
            CompactionNeededWarning,
            stacklevel=3,
        )
        hint = ""
    else:
        hint = "/*+ BROADCAST(m) */"
    return spark.sql(
        latest_view_sql(spec.partition_by, index_key_columns(spec), columns, hint),
        data=frames.data,
        index=frames.index,
    )


def latest_view_sql(
    partition_by: tuple[str, ...], keys: tuple[str, ...], columns: list[str], hint: str
) -> str:
    """``engine/spark/sql/latest_view.sql`` with its column lists filled in (``{data}``/``{index}``
    left)."""
    key_columns = ", ".join(f"`{c}`" for c in [*partition_by, *keys])
    exact = [f"d.`{p}` <=> m.`{p}`" for p in partition_by] + [f"d.`{k}` = m.`{k}`" for k in keys]
    text = template("latest_view.sql")
    return (
        text.replace("{hint}", hint)
        .replace("{columns}", ", ".join(f"d.`{c}`" for c in columns))
        .replace("{key_columns}", key_columns)
        .replace("{exact_match}", " AND ".join(exact))
    )


def empty_frame(spark: SparkSession, snapshot: Snapshot) -> DataFrame:
    """An empty DataFrame with the table's schema."""
    return spark.createDataFrame([], spark_schema(snapshot.table.spec))
