"""Views ``db.t__history`` (and the other metadata kinds) in Spark's session catalog.

A metadata table's rows (`versioned.api.metadata_tables`, an Arrow table) are written by
pyarrow as one Parquet file into a folder named by the rows' digest, and the view reads it
through a private external table in ``__versioned`` (`catalog_views`), as a table's view
reads its data files. The view is left alone while the rows are unchanged; new rows get a
new folder and a new private table, so a query that resolved the old view keeps reading
the old file. The folder's root is given by the caller (`Catalog`: a temporary folder of the
process when Spark runs locally, else ``_versioned_metadata/`` in the warehouse, which the
executors can read).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from versioned.engine.spark.catalog_views import (
    fingerprint,
    literal,
    prepare,
    private,
    quote,
    replace_view,
    shows,
)
from versioned.names import TableName
from versioned.storage.filesystem import FileIO


def register_metadata_view(
    spark: SparkSession,
    name: TableName,
    rows: pa.Table,
    *,
    fileio: FileIO,
    folder: str,
    source: str,
) -> str:
    """(Re)create the view ``name`` over ``rows`` unless it shows them already.

    Args:
        fileio: Where the rows are written, ``folder`` relative to its root.
        source: Identifies the catalog (two catalogs may share a session and a name).

    Returns:
        The view's qualified name.
    """
    sink = pa.BufferOutputStream()
    pq.write_table(rows, sink)
    data = sink.getvalue().to_pybytes()
    digest = fingerprint(source, name, data.hex())
    if shows(spark, name, digest):
        return str(name)
    rel = f"{folder}/{name.database}/{name.table}/{digest}/rows.parquet"
    if not fileio.exists(rel):
        fileio.write_bytes_atomic(rel, data)
    stem = prepare(spark, name, digest)
    table = private(f"{stem}_meta")
    location = fileio.full_path(rel.rpartition("/")[0])
    spark.sql(f"CREATE TABLE IF NOT EXISTS {table} USING parquet LOCATION {literal(location)}")
    columns = ", ".join(quote(c) for c in rows.schema.names)
    return replace_view(spark, name, f"SELECT {columns} FROM {table}", digest, [table])
