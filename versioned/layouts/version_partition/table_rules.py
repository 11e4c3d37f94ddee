"""What a version-partition table's definition derives: its settings, shown by ``describe``.

* ``write.driver_max_rows`` (table property): a version of at most this many rows (default
  200,000) is written by the driver with pyarrow, one Parquet file per partition, from rows the
  writer collects in the job that already runs for the batch's keys; a larger one by Spark's
  writer (a shuffle by partition, then a job per write). Below a few hundred thousand rows the
  Spark job's fixed cost (tasks, shuffle, staging, listing) is most of a batch's time. ``0``
  always writes with Spark. ORC tables always write with Spark.
* ``write.bulk_load_min_bytes`` (table property): the first write to a table with nothing
  committed yet (a snapshot of the source) is loaded in bulk when Spark estimates the batch at
  this many bytes or more (default 16 MiB): Spark writes the rows in the job that reads them,
  and the executors summarise the keys (`engine.version_partition.bulk_load`). ``0`` loads
  every first batch in bulk; a smaller batch goes the way of any other.
"""

from __future__ import annotations

from typing import Any

from versioned.layouts.table_properties import whole_number_property
from versioned.schema import TableSpec

DRIVER_WRITE_ROWS_PROPERTY = "write.driver_max_rows"
"""Table property: the most rows of one version the driver writes itself."""
DEFAULT_DRIVER_WRITE_MAX_ROWS = 200_000
BULK_LOAD_MIN_BYTES_PROPERTY = "write.bulk_load_min_bytes"
"""Table property: the estimated size from which a table's first batch is loaded in bulk."""
DEFAULT_BULK_LOAD_MIN_BYTES = 16 * 1024 * 1024


def driver_write_max_rows(spec: TableSpec) -> int:
    """The table's ``write.driver_max_rows`` (0 for an ORC table: Spark writes its files).

    Raises:
        SchemaError: The property is not a whole number >= 0.
    """
    rows = whole_number_property(
        spec,
        DRIVER_WRITE_ROWS_PROPERTY,
        DEFAULT_DRIVER_WRITE_MAX_ROWS,
        "0 writes every version with Spark",
    )
    return rows if spec.file_format == "parquet" else 0


def bulk_load_min_bytes(spec: TableSpec) -> int:
    """The table's ``write.bulk_load_min_bytes``.

    Raises:
        SchemaError: The property is not a whole number >= 0.
    """
    return whole_number_property(
        spec,
        BULK_LOAD_MIN_BYTES_PROPERTY,
        DEFAULT_BULK_LOAD_MIN_BYTES,
        "0 loads every first batch in bulk",
    )


def version_table_settings(spec: TableSpec) -> dict[str, Any]:
    """Check a version-partition table definition; return what it implies.

    Raises:
        SchemaError: ``write.driver_max_rows`` or ``write.bulk_load_min_bytes`` is not a
            whole number.
    """
    return {
        DRIVER_WRITE_ROWS_PROPERTY: driver_write_max_rows(spec),
        BULK_LOAD_MIN_BYTES_PROPERTY: bulk_load_min_bytes(spec),
    }
