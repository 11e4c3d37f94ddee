"""Spark SQL views over the latest versions: ``SELECT ... FROM test.sell`` in plain Spark SQL.

Each table gets, in the session catalog (`versioned.engine.spark.catalog_views`: a view
``db.table`` over private external tables in ``__versioned``, registration cached by
fingerprint):

* the view ``db.table``: ``engine/spark/sql/latest_view.sql`` over the two tables below;
* an external table over the data tree, partitioned by the partition columns and
  ``version_id`` with one partition per committed (partition, version) directory, and one
  over the ``_index`` tree.

Only directories of the snapshot's committed versions are registered. A committed version
directory holds exactly the files its commit lists (writers stage elsewhere and never add to
a committed directory; a compaction writes into a ``compacted-<C>`` folder of its own inside
the folder of the version it compacted, registered in its place), so Spark's listing of it
finds only committed files.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from versioned.catalog.records import Snapshot
from versioned.engine.spark.catalog_views import (
    ddl_type,
    literal,
    prepare,
    private,
    quote,
    replace_view,
    stale_digest,
)
from versioned.keys.columns import (
    index_key_columns,
)
from versioned.layouts.engine_protocol import EngineContext
from versioned.layouts.version_partition.engine.reader import latest_view_sql
from versioned.layouts.version_partition.index import (
    VERSION_COLUMN,
)
from versioned.layouts.version_partition.paths import INDEX_DIR, VERSION_KEY, version_folder
from versioned.storage.partition_paths import parse_partition_path

_ADD_BATCH = 500


def register_view(
    ctx: EngineContext, spark: SparkSession, snapshot: Snapshot, *, source: str = ""
) -> str:
    """(Re)create the view ``db.table`` over ``snapshot`` in ``spark`` unless it shows it
    already.

    Args:
        spark: The session to register the view in (a query's own session, say).
        source: Identifies the catalog the snapshot comes from (two catalogs may share a
            Spark session and a table name).

    Returns:
        The view's qualified name.
    """
    spec = snapshot.table.spec
    root = ctx.fileio.full_path(snapshot.table.location)
    broadcast_limit = ctx.broadcast_limit
    digest = stale_digest(
        spark, snapshot, source=source, root=root, broadcast_limit=broadcast_limit
    )
    if digest is None:
        return str(spec.name)
    index_files = [f for f in snapshot.files if f.kind == "index"]
    entries = sum(f.row_count for f in index_files)
    hint = "/*+ BROADCAST(m) */" if entries <= broadcast_limit else ""
    stem = prepare(spark, spec, digest)
    data_table = private(f"{stem}_data")
    internal = [data_table]
    partition_ddl = [f"{quote(p)} {ddl_type(spec.column(p).type)}" for p in spec.partition_by]
    data_cols = [f"{quote(c.name)} {ddl_type(c.type)}" for c in spec.data_columns]
    _external_table(
        spark, data_table, data_cols, partition_ddl, spec.file_format, root, spec.partition_by
    )
    _add_partitions(spark, data_table, root, _dirs(snapshot, "data"))
    columns = list(spec.column_names)
    if not index_files:
        body = f"SELECT {', '.join(quote(c) for c in columns)} FROM {data_table}"
    else:
        index_table = private(f"{stem}_index")
        internal.append(index_table)
        key_cols = [f"{quote(k)} {ddl_type(spec.column(k).type)}" for k in index_key_columns(spec)]
        index_root = f"{root}/{INDEX_DIR}"
        _external_table(
            spark,
            index_table,
            [*key_cols, f"{quote(VERSION_COLUMN)} BIGINT"],
            partition_ddl,
            "parquet",
            index_root,
            spec.partition_by,
        )
        dirs = _dirs(snapshot, "index")
        _add_partitions(spark, index_table, index_root, dirs, strip=f"{INDEX_DIR}/")
        body = (
            latest_view_sql(spec.partition_by, index_key_columns(spec), columns, hint)
            .replace("{data}", data_table)
            .replace("{index}", index_table)
        )
    return replace_view(spark, spec, body, digest, internal)


def _external_table(
    spark: SparkSession,
    table: str,
    columns: list[str],
    partition_ddl: list[str],
    file_format: str,
    location: str,
    partition_by: tuple[str, ...],
) -> None:
    spark.sql(f"DROP TABLE IF EXISTS {table}")  # external: the catalog entry only
    parts = [quote(p) for p in partition_by] + [quote(VERSION_KEY)]
    all_columns = ", ".join([*columns, *partition_ddl, f"{quote(VERSION_KEY)} BIGINT"])
    spark.sql(
        f"CREATE TABLE {table} ({all_columns}) "
        f"USING {file_format} PARTITIONED BY ({', '.join(parts)}) "
        f"LOCATION {literal(location)}"
    )


def _dirs(snapshot: Snapshot, kind: str) -> list[str]:
    """The folders holding the snapshot's files of ``kind`` (one per partition and version:
    a version compacted in place is its compaction's folder alone)."""
    return sorted({f.path.rsplit("/", 1)[0] for f in snapshot.files if f.kind == kind})


def _add_partitions(
    spark: SparkSession, table: str, base: str, dirs: list[str], *, strip: str = ""
) -> None:
    clauses = []
    for directory in dirs:
        relative = directory[len(strip) :] if strip and directory.startswith(strip) else directory
        pairs = parse_partition_path(version_folder(relative))
        spec = ", ".join(f"{quote(k)} = {'NULL' if v is None else literal(v)}" for k, v in pairs)
        clauses.append(f"PARTITION ({spec}) LOCATION {literal(f'{base}/{relative}')}")
    for start in range(0, len(clauses), _ADD_BATCH):
        spark.sql(f"ALTER TABLE {table} ADD " + " ".join(clauses[start : start + _ADD_BATCH]))
