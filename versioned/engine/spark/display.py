"""Frames made safe to bring to the driver for display.

Spark holds dates and timestamps Python cannot (years before 1 or after 9999: a DATE read from
Parquet, a TIMESTAMP whose offset moved it past 9999-12-31); collecting them raises
``ValueError: year ... is out of range`` and one such value would make a whole table
undisplayable. Temporal columns are therefore turned into text by Spark, as Spark prints them
(``+19788-01-01``, ``2024-01-01 12:30:00``).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

_TEMPORAL = (T.DateType, T.TimestampType, T.TimestampNTZType)


def displayable(frame: DataFrame) -> DataFrame:
    """``frame`` with every column holding dates or timestamps (also nested) as Spark's text."""
    if not any(_has_temporal(f.dataType) for f in frame.schema.fields):
        return frame
    return frame.select(
        *[
            F.col(f"`{f.name}`").cast("string").alias(f.name)
            if _has_temporal(f.dataType)
            else F.col(f"`{f.name}`")
            for f in frame.schema.fields
        ]
    )


def _has_temporal(kind: T.DataType) -> bool:
    if isinstance(kind, _TEMPORAL):
        return True
    if isinstance(kind, T.ArrayType):
        return _has_temporal(kind.elementType)
    if isinstance(kind, T.MapType):
        return _has_temporal(kind.keyType) or _has_temporal(kind.valueType)
    if isinstance(kind, T.StructType):
        return any(_has_temporal(f.dataType) for f in kind.fields)
    return False
