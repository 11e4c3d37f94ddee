"""Spark SQL views over the latest versions: ``SELECT ... FROM test.sell`` in plain Spark SQL.

Spark resolves ``db.table`` only through its session catalog, and temporary views cannot be
qualified (nor can a permanent view read one). So each table gets, in the session catalog:

* a view ``db.table``: ``engine/spark/sql/latest_view.sql`` over the two tables below;
* in the private database ``__versioned`` (database names starting with ``__`` are reserved,
  so no table of the catalog can take or shadow these names) an external table over the
  data tree, partitioned by the partition columns and ``version_id`` with one partition per
  committed (partition, version) directory, and one over the ``_index`` tree.

Only directories of the snapshot's committed versions are registered. A committed version
directory holds exactly the files its commit lists (writers stage elsewhere and never add to
a committed directory), so Spark's listing of it finds only committed files. The tables are
external: dropping them never deletes files.

Registration is cached: the view carries a fingerprint of what it shows (the catalog, the
table's id and commit sequence, the join strategy) and is left alone while that is
unchanged. The private tables' names include the fingerprint, so a view only ever reads the
tables registered with it; the ones it replaces are dropped.
"""

from __future__ import annotations

import hashlib

from pyspark.sql import SparkSession

from versioned.catalog.records import Snapshot
from versioned.engine.spark.types import spark_type
from versioned.engine.version_partition.reader import DEFAULT_BROADCAST_LIMIT, latest_view_sql
from versioned.layouts.version_partition.index import VERSION_COLUMN, index_key_columns
from versioned.layouts.version_partition.paths import INDEX_DIR, VERSION_KEY
from versioned.storage.filesystem import FileIO
from versioned.storage.partition_paths import parse_partition_path

PRIVATE_DATABASE = "__versioned"
_FINGERPRINT = "versioned.fingerprint"
_INTERNAL = "versioned.internal_tables"
_ADD_BATCH = 500


def register_view(
    spark: SparkSession,
    fileio: FileIO,
    snapshot: Snapshot,
    *,
    source: str = "",
    broadcast_limit: int = DEFAULT_BROADCAST_LIMIT,
) -> str:
    """(Re)create the view ``db.table`` over ``snapshot`` unless it shows it already.

    Args:
        source: Identifies the catalog the snapshot comes from (two catalogs may share a
            Spark session and a table name).

    Returns:
        The view's qualified name.
    """
    spec = snapshot.table.spec
    db, name = spec.name.database, spec.name.table
    index_files = [f for f in snapshot.files if f.kind == "index"]
    entries = sum(f.row_count for f in index_files)
    hint = "/*+ BROADCAST(m) */" if entries <= broadcast_limit else ""
    fingerprint = hashlib.sha256(
        f"{source}|{fileio.full_path(snapshot.table.location)}|{snapshot.table.id}|"
        f"{snapshot.seq}|{hint}|{spec.to_dict()}".encode()
    ).hexdigest()[:16]
    old = _view_properties(spark, db, name)
    if old.get(_FINGERPRINT) == fingerprint:
        return f"{db}.{name}"
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {_q(PRIVATE_DATABASE)}")
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {_q(db)}")
    stem = f"{len(db)}_{db}_{name}_{fingerprint}"
    data_table = _private(f"{stem}_data")
    internal = [data_table]
    root = fileio.full_path(snapshot.table.location)
    partition_ddl = [f"{_q(p)} {_ddl_type(spec.column(p).type)}" for p in spec.partition_by]
    data_cols = [f"{_q(c.name)} {_ddl_type(c.type)}" for c in spec.data_columns]
    _external_table(
        spark, data_table, data_cols, partition_ddl, spec.file_format, root, spec.partition_by
    )
    _add_partitions(spark, data_table, root, _dirs(snapshot, "data"))
    columns = list(spec.column_names)
    if not index_files:
        body = f"SELECT {', '.join(_q(c) for c in columns)} FROM {data_table}"
    else:
        index_table = _private(f"{stem}_index")
        internal.append(index_table)
        key_cols = [f"{_q(k)} {_ddl_type(spec.column(k).type)}" for k in index_key_columns(spec)]
        index_root = f"{root}/{INDEX_DIR}"
        _external_table(
            spark,
            index_table,
            [*key_cols, f"{_q(VERSION_COLUMN)} BIGINT"],
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
    properties = (
        f"TBLPROPERTIES ({_literal(_FINGERPRINT)} = {_literal(fingerprint)}, "
        f"{_literal(_INTERNAL)} = {_literal(','.join(internal))})"
    )
    spark.sql(f"CREATE OR REPLACE VIEW {_q(db)}.{_q(name)} {properties} AS {body}")
    for table in filter(None, old.get(_INTERNAL, "").split(",")):
        if table not in internal:
            spark.sql(f"DROP TABLE IF EXISTS {table}")  # external: the catalog entry only
    return f"{db}.{name}"


def _view_properties(spark: SparkSession, db: str, name: str) -> dict[str, str]:
    """The properties of the view ``db.name`` ({} when there is none)."""
    catalog = spark._jsparkSession.sharedState().externalCatalog()
    if not catalog.tableExists(db, name):
        return {}
    props = catalog.getTable(db, name).properties()
    found = {}
    for key in (_FINGERPRINT, _INTERNAL):
        value = props.get(key)
        if value.isDefined():
            found[key] = str(value.get())
    return found


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
    parts = [_q(p) for p in partition_by] + [_q(VERSION_KEY)]
    all_columns = ", ".join([*columns, *partition_ddl, f"{_q(VERSION_KEY)} BIGINT"])
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
        spec = ", ".join(f"{_q(k)} = {'NULL' if v is None else _literal(v)}" for k, v in pairs)
        clauses.append(f"PARTITION ({spec}) LOCATION {_literal(f'{base}/{relative}')}")
    for start in range(0, len(clauses), _ADD_BATCH):
        spark.sql(f"ALTER TABLE {table} ADD " + " ".join(clauses[start : start + _ADD_BATCH]))


def _private(name: str) -> str:
    return f"{_q(PRIVATE_DATABASE)}.{_q(name)}"


def _q(name: str) -> str:
    """A quoted Spark SQL identifier (names are validated; quoting also covers keywords)."""
    return "`" + name.replace("`", "``") + "`"


def _literal(value: str) -> str:
    """A Spark SQL string literal: backslash and quote escaped."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _ddl_type(hive_type: str) -> str:
    return spark_type(hive_type).simpleString()
