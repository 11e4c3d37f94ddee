"""Views ``db.table`` in Spark's session catalog, shared by the layouts' SQL views.

Spark resolves ``db.table`` only through its session catalog, and temporary views cannot be
qualified (nor can a permanent view read one). So each table of ours gets a permanent view
``db.table`` over private external tables in the database ``__versioned`` (database names
starting with ``__`` are reserved, so no table of the catalog can take or shadow them).

Registration is cached: a view carries a fingerprint of what it shows (the catalog, the
table's id and commit sequence, the broadcast limit, the definition) and is left alone while
that is unchanged. The fingerprint needs only the table's catalog record (`TableInfo`), not
its snapshot, so `shows_commit` tells from one catalog read and one look at the session
catalog (no DDL) that a view is current; another catalog sharing the Spark session that
registered its own ``db.table`` changes the fingerprint, so it is never taken for ours.
The private tables' names include the fingerprint, so a view only ever reads the tables
registered with it; the ones a new view replaces are dropped (they are external: dropping
them never deletes files).
"""

from __future__ import annotations

import hashlib

from pyspark.sql import SparkSession

from versioned.catalog.records import Snapshot, TableInfo
from versioned.engine.spark.types import spark_type
from versioned.names import TableName
from versioned.schema import TableSpec

PRIVATE_DATABASE = "__versioned"
_FINGERPRINT = "versioned.fingerprint"
_INTERNAL = "versioned.internal_tables"


def fingerprint(*parts: object) -> str:
    """A short digest of what a view shows."""
    return hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:16]


def view_fingerprint(
    table: TableInfo, seq: int, *, source: str, root: str, broadcast_limit: int
) -> str:
    """The fingerprint of the view of ``table`` at commit ``seq``.

    Everything a view's query depends on is fixed by these: the snapshot's files, write ids
    and columns by the table's id and ``seq`` (a schema change is a commit), the join
    strategy by the snapshot and ``broadcast_limit``.

    Args:
        source: Identifies the catalog (two catalogs may share a session and a table name).
        root: The table's folder as a full path or URI.
    """
    return fingerprint(source, root, table.id, seq, broadcast_limit, table.spec.to_dict())


def shows_commit(
    spark: SparkSession, table: TableInfo, *, source: str, root: str, broadcast_limit: int
) -> bool:
    """Whether the view of ``table`` shows its latest commit (``table.current_seq``) already."""
    digest = view_fingerprint(
        table, table.current_seq, source=source, root=root, broadcast_limit=broadcast_limit
    )
    return shows(spark, table.spec, digest)


def stale_digest(
    spark: SparkSession, snapshot: Snapshot, *, source: str, root: str, broadcast_limit: int
) -> str | None:
    """The fingerprint a view of ``snapshot`` is to be registered with, or ``None`` when the
    view of its table shows it already (`view_fingerprint`'s arguments)."""
    digest = view_fingerprint(
        snapshot.table, snapshot.seq, source=source, root=root, broadcast_limit=broadcast_limit
    )
    return None if shows(spark, snapshot.table.spec, digest) else digest


def shows(spark: SparkSession, spec: TableSpec | TableName, digest: str) -> bool:
    """Whether the view of ``spec``'s table (or of the name) is registered with fingerprint
    ``digest``."""
    name = _name(spec)
    return view_properties(spark, name.database, name.table).get(_FINGERPRINT) == digest


def prepare(spark: SparkSession, spec: TableSpec | TableName, digest: str) -> str:
    """Create the table's database and the private one; returns the stem of private names."""
    db, name = _name(spec).database, _name(spec).table
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {quote(PRIVATE_DATABASE)}")
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {quote(db)}")
    return f"{len(db)}_{db}_{name}_{digest}"


def replace_view(
    spark: SparkSession, spec: TableSpec | TableName, body: str, digest: str, internal: list[str]
) -> str:
    """Create or replace the view ``db.table`` as ``body``; drop the private tables of the
    view it replaces that ``internal`` (this view's private tables) does not list.

    Returns:
        The view's qualified name.
    """
    db, name = _name(spec).database, _name(spec).table
    old = view_properties(spark, db, name)
    properties = (
        f"TBLPROPERTIES ({literal(_FINGERPRINT)} = {literal(digest)}, "
        f"{literal(_INTERNAL)} = {literal(','.join(internal))})"
    )
    spark.sql(f"CREATE OR REPLACE VIEW {quote(db)}.{quote(name)} {properties} AS {body}")
    for table in filter(None, old.get(_INTERNAL, "").split(",")):
        if table not in internal:
            spark.sql(f"DROP TABLE IF EXISTS {table}")  # external: the catalog entry only
    return f"{db}.{name}"


def view_properties(spark: SparkSession, db: str, name: str) -> dict[str, str]:
    """The fingerprint and private tables of the view ``db.name`` ({} when there is none)."""
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


def _name(spec: TableSpec | TableName) -> TableName:
    return spec if isinstance(spec, TableName) else spec.name


def private(name: str) -> str:
    """The qualified name of a private table."""
    return f"{quote(PRIVATE_DATABASE)}.{quote(name)}"


def quote(name: str) -> str:
    """A quoted Spark SQL identifier (names are validated; quoting also covers keywords)."""
    return "`" + name.replace("`", "``") + "`"


def literal(value: str) -> str:
    """A Spark SQL string literal: backslash and quote escaped."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def ddl_type(hive_type: str) -> str:
    """The Spark DDL type of a column type."""
    return spark_type(hive_type).simpleString()
