"""What a version-partition table's definition derives: its settings, shown by ``describe``.

* ``write.driver_max_rows`` (table property): a version of at most this many rows (default
  200,000) is written by the driver with pyarrow, one Parquet file per partition, from rows the
  writer collects in the job that already runs for the batch's keys; a larger one by Spark's
  writer (a shuffle by partition, then a job per write). Below a few hundred thousand rows the
  Spark job's fixed cost (tasks, shuffle, staging, listing) is most of a batch's time. ``0``
  always writes with Spark. ORC tables always write with Spark.
"""

from __future__ import annotations

from typing import Any

from versioned.errors import SchemaError
from versioned.schema import TableSpec

DRIVER_WRITE_ROWS_PROPERTY = "write.driver_max_rows"
"""Table property: the most rows of one version the driver writes itself."""
DEFAULT_DRIVER_WRITE_MAX_ROWS = 200_000


def driver_write_max_rows(spec: TableSpec) -> int:
    """The table's ``write.driver_max_rows`` (0 for an ORC table: Spark writes its files).

    Raises:
        SchemaError: The property is not a whole number >= 0.
    """
    raw = str(spec.properties.get(DRIVER_WRITE_ROWS_PROPERTY, DEFAULT_DRIVER_WRITE_MAX_ROWS))
    if not raw.strip().isdigit():
        raise SchemaError(
            f"table property {DRIVER_WRITE_ROWS_PROPERTY}={raw!r} of {spec.name} must be a "
            f"whole number >= 0 (default {DEFAULT_DRIVER_WRITE_MAX_ROWS:,}; 0 writes every "
            "version with Spark)",
            property=DRIVER_WRITE_ROWS_PROPERTY,
        )
    return int(raw) if spec.file_format == "parquet" else 0


def version_table_settings(spec: TableSpec) -> dict[str, Any]:
    """Check a version-partition table definition; return what it implies.

    Raises:
        SchemaError: ``write.driver_max_rows`` is not a whole number.
    """
    return {DRIVER_WRITE_ROWS_PROPERTY: driver_write_max_rows(spec)}
