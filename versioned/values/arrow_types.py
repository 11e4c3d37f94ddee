"""Arrow types of the canonical column types of `versioned.schema` (shared by both layouts)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pyarrow as pa

from versioned.errors import SchemaError
from versioned.schema import TableSpec, normalise_type

_SIMPLE: dict[str, pa.DataType] = {
    "BOOLEAN": pa.bool_(),
    "TINYINT": pa.int8(),
    "SMALLINT": pa.int16(),
    "INT": pa.int32(),
    "BIGINT": pa.int64(),
    "FLOAT": pa.float32(),
    "DOUBLE": pa.float64(),
    "STRING": pa.string(),
    "DATE": pa.date32(),
    # Spark's TIMESTAMP is an instant; Parquet stores it as isAdjustedToUTC micros.
    "TIMESTAMP": pa.timestamp("us", tz="UTC"),
    "BINARY": pa.binary(),
}
_DECIMAL = re.compile(r"^DECIMAL\((\d+),(\d+)\)$")
_TEXT = re.compile(r"^(?:VARCHAR|CHAR)\(\d+\)$")


def arrow_type(hive_type: str) -> pa.DataType:
    """The Arrow type that stores a column of a Hive/Spark SQL type.

    Args:
        hive_type: A type name as `versioned.schema.normalise_type` accepts it, e.g.
            ``BIGINT``, ``decimal(10, 2)``, ``VARCHAR(20)``.

    Raises:
        SchemaError: The type is unknown.
    """
    name = normalise_type(hive_type)
    if name in _SIMPLE:
        return _SIMPLE[name]
    decimal = _DECIMAL.match(name)
    if decimal:
        return pa.decimal128(int(decimal.group(1)), int(decimal.group(2)))
    if _TEXT.match(name):
        return pa.string()  # length limits are checked when rows are validated, not stored
    raise SchemaError(f"column type {hive_type!r} has no Arrow mapping", type=hive_type)


def arrow_schema(spec: TableSpec, columns: Sequence[str] | None = None) -> pa.Schema:
    """The Arrow schema of a table's columns (all of them, or ``columns`` in that order).

    Raises:
        SchemaError: A requested column is not in the table.
    """
    names = spec.column_names if columns is None else columns
    fields = []
    for name in names:
        column = spec.column(name)
        fields.append(pa.field(column.name, arrow_type(column.type), nullable=column.nullable))
    return pa.schema(fields)
