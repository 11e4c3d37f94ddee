"""Spark SQL views over the latest versions: ``SELECT ... FROM test.sell`` in plain Spark SQL.

Spark resolves ``db.table`` only through its session catalog, and temporary views cannot be
qualified. So each table gets, in the session catalog:

* ``db.__<table>_data``: an external table partitioned by the partition columns and
  ``version_id``, with one partition per committed (partition, version) directory;
* ``db.__<table>_index``: the same over the ``_index`` tree;
* ``db.<table>``: a view, ``sql/latest_view.sql`` over those two.

Only directories of the snapshot's committed versions are registered. A committed version
directory holds exactly the files its commit lists (writers stage elsewhere and never add to
a committed directory), so Spark's listing of it finds only committed files. The tables are
external: dropping them (on re-registration) never deletes files.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from versioned.catalog.records import Snapshot
from versioned.engine.spark_types import spark_type
from versioned.engine.version_reader import DEFAULT_BROADCAST_LIMIT, latest_view_sql
from versioned.layouts.version_partition.index import VERSION_COLUMN, index_key_columns
from versioned.layouts.version_partition.paths import INDEX_DIR, VERSION_KEY
from versioned.storage.filesystem import FileIO
from versioned.storage.partition_paths import parse_partition_path

_ADD_BATCH = 500


def register_view(
    spark: SparkSession,
    fileio: FileIO,
    snapshot: Snapshot,
    *,
    broadcast_limit: int = DEFAULT_BROADCAST_LIMIT,
) -> str:
    """(Re)create the view ``db.table`` over ``snapshot``; returns its qualified name."""
    spec = snapshot.table.spec
    db, name = spec.name.database, spec.name.table
    root = fileio.full_path(snapshot.table.location)
    spark.sql(f"CREATE DATABASE IF NOT EXISTS `{db}`")
    partition_ddl = [f"`{p}` {_ddl_type(spec.column(p).type)}" for p in spec.partition_by]
    data_table = f"`{db}`.`__{name}_data`"
    data_cols = [f"`{c.name}` {_ddl_type(c.type)}" for c in spec.data_columns]
    _external_table(
        spark, data_table, data_cols, partition_ddl, spec.file_format, root, spec.partition_by
    )
    _add_partitions(spark, data_table, root, _dirs(snapshot, "data"))
    columns = list(spec.column_names)
    index_files = [f for f in snapshot.files if f.kind == "index"]
    view = f"`{db}`.`{name}`"
    if not index_files:
        body = f"SELECT {', '.join(f'`{c}`' for c in columns)} FROM {data_table}"
    else:
        index_table = f"`{db}`.`__{name}_index`"
        key_cols = [f"`{k}` {_ddl_type(spec.column(k).type)}" for k in index_key_columns(spec)]
        _external_table(
            spark,
            index_table,
            [*key_cols, f"`{VERSION_COLUMN}` BIGINT"],
            partition_ddl,
            "parquet",
            f"{root}/{INDEX_DIR}",
            spec.partition_by,
        )
        _add_partitions(
            spark,
            index_table,
            f"{root}/{INDEX_DIR}",
            _dirs(snapshot, "index"),
            strip=f"{INDEX_DIR}/",
        )
        entries = sum(f.row_count for f in index_files)
        hint = "/*+ BROADCAST(m) */" if entries <= broadcast_limit else ""
        body = (
            latest_view_sql(spec.partition_by, index_key_columns(spec), columns, hint)
            .replace("{data}", data_table)
            .replace("{index}", index_table)
        )
    spark.sql(f"CREATE OR REPLACE VIEW {view} AS {body}")
    return f"{db}.{name}"


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
    parts = [f"`{p}`" for p in partition_by] + [f"`{VERSION_KEY}`"]
    all_columns = ", ".join([*columns, *partition_ddl, f"`{VERSION_KEY}` BIGINT"])
    spark.sql(
        f"CREATE TABLE {table} ({all_columns}) "
        f"USING {file_format} PARTITIONED BY ({', '.join(parts)}) "
        f"LOCATION {_literal(location)}"
    )


def _dirs(snapshot: Snapshot, kind: str) -> list[str]:
    return sorted({f.path.rsplit("/", 1)[0] for f in snapshot.files if f.kind == kind})


def _add_partitions(
    spark: SparkSession, table: str, base: str, dirs: list[str], *, strip: str = ""
) -> None:
    clauses = []
    for directory in dirs:
        relative = directory[len(strip) :] if strip and directory.startswith(strip) else directory
        pairs = parse_partition_path(relative)
        spec = ", ".join(f"`{k}` = {'NULL' if v is None else _literal(v)}" for k, v in pairs)
        clauses.append(f"PARTITION ({spec}) LOCATION {_literal(f'{base}/{relative}')}")
    for start in range(0, len(clauses), _ADD_BATCH):
        spark.sql(f"ALTER TABLE {table} ADD " + " ".join(clauses[start : start + _ADD_BATCH]))


def _literal(value: str) -> str:
    """A Spark SQL string literal: backslash and quote escaped."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _ddl_type(hive_type: str) -> str:
    return spark_type(hive_type).simpleString()
