"""The types of a feed's input columns, for adding them to the table (``upsert --evolve``).

A column's type comes from the input: the schema of a DataFrame, Arrow table or Parquet
files; Spark's inference over JSON lines (``BIGINT``, ``DOUBLE``, ``BOOLEAN``, else
``STRING``; nested values are stored as their JSON text, so ``STRING``); ``STRING`` for CSV,
which carries no types. Debezium feeds name semantic types in their envelopes, so their
new columns are added with ``alter-table`` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema

from versioned.engine.feeds.files import feed_paths, format_from_names, list_feed_files
from versioned.errors import SchemaError
from versioned.schema import Column

_SIMPLE: dict[type[T.DataType], str] = {
    T.BooleanType: "BOOLEAN",
    T.ByteType: "TINYINT",
    T.ShortType: "SMALLINT",
    T.IntegerType: "INT",
    T.LongType: "BIGINT",
    T.FloatType: "FLOAT",
    T.DoubleType: "DOUBLE",
    T.StringType: "STRING",
    T.CharType: "STRING",
    T.VarcharType: "STRING",
    T.DateType: "DATE",
    T.TimestampType: "TIMESTAMP",
    T.TimestampNTZType: "TIMESTAMP",
    T.BinaryType: "BINARY",
}


def new_columns(
    spark: SparkSession, source: Any, fmt: str | None, names: Sequence[str]
) -> tuple[Column, ...]:
    """Nullable columns for the input columns ``names`` of ``source``, typed from the input.

    Args:
        source: What `versioned.engine.feeds.reader.read_feed` takes.
        fmt: The feed format, or None to infer it like `read_feed`.
        names: Input column names as the input spells them.

    Raises:
        SchemaError: The feed is Debezium, or a column's type cannot be stored (nested
            Parquet or DataFrame columns, columns of nulls only).
    """
    if fmt == "debezium":
        raise SchemaError(
            "upsert with evolve does not add columns from Debezium feeds (their envelopes "
            f"name semantic types): add {', '.join(names)} with `versioned alter-table "
            "--add-columns` first",
            unknown=tuple(names),
        )
    schema = _input_schema(spark, source, fmt)
    found = {f.name: f.dataType for f in schema.fields} if schema is not None else {}
    return tuple(Column(name, _column_type(name, found.get(name), fmt)) for name in names)


def _input_schema(spark: SparkSession, source: Any, fmt: str | None) -> T.StructType | None:
    if isinstance(source, DataFrame):
        return source.schema
    if isinstance(source, pa.Table):
        return from_arrow_schema(source.schema)
    paths = feed_paths(source)
    fmt = fmt or format_from_names(paths)
    if fmt == "parquet":
        files = list_feed_files(spark, paths)
        return spark.read.option("mergeSchema", "true").parquet(*files).schema
    if fmt == "json":
        return spark.read.json(list_feed_files(spark, paths)).schema
    return None  # CSV: text only


def _column_type(name: str, dtype: T.DataType | None, fmt: str | None) -> str:
    if dtype is None or (fmt == "json" and isinstance(dtype, T.ArrayType | T.StructType)):
        return "STRING"
    if isinstance(dtype, T.DecimalType):
        return f"DECIMAL({dtype.precision},{dtype.scale})"
    simple = _SIMPLE.get(type(dtype))
    if simple is None:
        what = "only nulls" if isinstance(dtype, T.NullType) else dtype.simpleString()
        raise SchemaError(
            f"cannot add column {name} from the input: it holds {what}, which has no table "
            "column type; add it with `versioned alter-table --add-columns` and a type",
            column=name,
        )
    return simple
