"""The ORC schema of ACID rows (``OrcRecordUpdater``) and the ACID user metadata keys.

Every row of a ``base``/``delta``/``delete_delta`` bucket file is the struct::

    struct<operation:int, originalTransaction:bigint, bucket:int, rowId:bigint,
           currentTransaction:bigint, row:struct<...table columns...>>

``originalTransaction`` and ``currentTransaction`` hold write ids (since Hive 3) and
``bucket`` a BucketCodec property. ``row`` holds the table's columns without its partition
columns, and is NULL in delete events.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pyarrow as pa

from versioned.errors import SchemaError
from versioned.schema import Column, normalise_type
from versioned.values.arrow_types import arrow_type

INSERT = 0
UPDATE = 1
DELETE = 2
OPERATIONS = (INSERT, UPDATE, DELETE)

OPERATION = "operation"
ORIGINAL_WRITE_ID = "originalTransaction"
BUCKET = "bucket"
ROW_ID = "rowId"
CURRENT_WRITE_ID = "currentTransaction"
ROW = "row"
EVENT_FIELDS = (OPERATION, ORIGINAL_WRITE_ID, BUCKET, ROW_ID, CURRENT_WRITE_ID)

KEY_INDEX_KEY = "hive.acid.key.index"
STATS_KEY = "hive.acid.stats"
VERSION_KEY = "hive.acid.version"
ACID_VERSION = "2"

_ORC_SIMPLE = {
    "BOOLEAN": "boolean",
    "TINYINT": "tinyint",
    "SMALLINT": "smallint",
    "INT": "int",
    "BIGINT": "bigint",
    "FLOAT": "float",
    "DOUBLE": "double",
    "STRING": "string",
    "DATE": "date",
    "TIMESTAMP": "timestamp",
    "BINARY": "binary",
}
_PARAM = re.compile(r"^(DECIMAL|VARCHAR|CHAR)\((\d+(?:,\d+)?)\)$")

EVENT_ARROW_FIELDS = (
    pa.field(OPERATION, pa.int32()),
    pa.field(ORIGINAL_WRITE_ID, pa.int64()),
    pa.field(BUCKET, pa.int32()),
    pa.field(ROW_ID, pa.int64()),
    pa.field(CURRENT_WRITE_ID, pa.int64()),
)


def orc_type(hive_type: str) -> str:
    """The ORC type name of a column type (``VARCHAR(10)`` -> ``varchar(10)``).

    Raises:
        SchemaError: The type is unknown.
    """
    name = normalise_type(hive_type)
    if name in _ORC_SIMPLE:
        return _ORC_SIMPLE[name]
    match = _PARAM.match(name)
    if not match:
        raise SchemaError(f"column type {hive_type!r} has no ORC mapping", type=hive_type)
    return f"{match.group(1).lower()}({match.group(2)})"


def row_orc_type(columns: Sequence[Column]) -> str:
    """``struct<name:type,...>`` of the data columns (the ``row`` field)."""
    if not columns:
        raise SchemaError("an ACID row needs at least one data column")
    return "struct<" + ",".join(f"{c.name}:{orc_type(c.type)}" for c in columns) + ">"


def acid_orc_schema(columns: Sequence[Column]) -> str:
    """The ORC type string of an ACID bucket file holding rows of ``columns``.

    Args:
        columns: The table's data columns (without partition columns), in table order.
    """
    return (
        "struct<operation:int,originalTransaction:bigint,bucket:int,rowId:bigint,"
        f"currentTransaction:bigint,row:{row_orc_type(columns)}>"
    )


def row_arrow_type(columns: Sequence[Column]) -> pa.StructType:
    """The Arrow struct the ``row`` field reads back as (the columns' Arrow types)."""
    return pa.struct([pa.field(c.name, arrow_type(c.type), nullable=True) for c in columns])


def acid_arrow_schema(columns: Sequence[Column]) -> pa.Schema:
    """The Arrow schema of ACID events read back from a bucket file of ``columns``."""
    return pa.schema([*EVENT_ARROW_FIELDS, pa.field(ROW, row_arrow_type(columns))])
