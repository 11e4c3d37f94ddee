"""Spark types of the canonical column types of `versioned.schema`."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.errors import SchemaError
from versioned.schema import TableSpec, normalise_type

VERSION_KEY = "version_id"
"""The column (and folder key) holding the version or write id a row was read from."""

_SIMPLE: dict[str, T.DataType] = {
    "BOOLEAN": T.BooleanType(),
    "TINYINT": T.ByteType(),
    "SMALLINT": T.ShortType(),
    "INT": T.IntegerType(),
    "BIGINT": T.LongType(),
    "FLOAT": T.FloatType(),
    "DOUBLE": T.DoubleType(),
    "STRING": T.StringType(),
    "DATE": T.DateType(),
    "TIMESTAMP": T.TimestampType(),
    "BINARY": T.BinaryType(),
}
_DECIMAL = re.compile(r"^DECIMAL\((\d+),(\d+)\)$")
_CHARS = re.compile(r"^(?:VARCHAR|CHAR)\((\d+)\)$")


def spark_type(hive_type: str) -> T.DataType:
    """The Spark type that stores values of a column type.

    ``VARCHAR(n)`` and ``CHAR(n)`` become ``StringType`` (the length is checked when a feed
    is read, see `max_length`); ``TIMESTAMP`` is Spark's session-time-zone timestamp.

    Args:
        hive_type: A column type in any spelling `versioned.schema.normalise_type` accepts.

    Returns:
        The Spark SQL data type.

    Raises:
        SchemaError: The type is not one of the canonical types.
    """
    canonical = normalise_type(hive_type)
    if canonical in _SIMPLE:
        return _SIMPLE[canonical]
    decimal = _DECIMAL.match(canonical)
    if decimal:
        return T.DecimalType(int(decimal.group(1)), int(decimal.group(2)))
    if _CHARS.match(canonical):
        return T.StringType()
    raise SchemaError(f"no Spark type for column type {hive_type!r}", type=hive_type)


def max_length(hive_type: str) -> int | None:
    """The length limit of a ``VARCHAR(n)``/``CHAR(n)`` type, ``None`` for other types."""
    match = _CHARS.match(normalise_type(hive_type))
    return int(match.group(1)) if match else None


def spark_schema(spec: TableSpec, columns: Sequence[str] | None = None) -> T.StructType:
    """The Spark schema of a table's columns, with the table's nullability.

    Args:
        spec: The table.
        columns: Names of the columns to include, in this order; all columns when ``None``.

    Returns:
        One field per column.

    Raises:
        SchemaError: A name in ``columns`` is not a column of the table.
    """
    names = spec.column_names if columns is None else tuple(columns)
    fields = []
    for name in names:
        column = spec.column(name)
        fields.append(T.StructField(column.name, spark_type(column.type), column.nullable))
    return T.StructType(fields)


def with_columns_of(frame: DataFrame, spec: TableSpec) -> DataFrame:
    """Rows read under an older schema of the table, shaped like ``spec``'s columns.

    Columns added since read null; widened columns are cast to their new type (lossless).
    """
    have = set(frame.columns)
    return frame.select(
        *[
            (F.col(f"`{c.name}`") if c.name in have else F.lit(None))
            .cast(spark_type(c.type))
            .alias(c.name)
            for c in spec.columns
        ]
    )
