"""One column's input values converted to its table type, with what went wrong per row.

The rules are in `versioned.engine.feeds.rows`: text converts exactly or not at all
(`versioned.engine.feeds.text_values`); typed values convert when nothing is lost.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.feeds.text_values import Lenience, convert_text, inexact_number

_NUMERIC = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType)
_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_TEMPORAL = (T.DateType, T.TimestampType, T.TimestampNTZType)
_NESTED = (T.StructType, T.ArrayType, T.MapType)


@dataclass(frozen=True)
class ConvertedValue:
    """A column's converted values and, per row, how the conversion went (None: it cannot
    happen for this pair of types; skipping it keeps the plan small)."""

    value: Column
    failed: Column | None  # a non-null input did not convert
    inexact: Column | None  # converted only by rounding (DECIMAL)
    bad_utf8: Column | None  # a text input is not valid UTF-8


def convertible(src: T.DataType, dst: T.DataType) -> bool:
    """Whether input values of type ``src`` may be converted to a ``dst`` column."""
    if isinstance(src, T.StringType | T.NullType) or src == dst:
        return True
    if isinstance(dst, T.StringType):
        return True
    if isinstance(src, (*_NUMERIC, T.DecimalType, T.BooleanType)):
        return isinstance(dst, (*_NUMERIC, T.DecimalType, T.BooleanType))
    if isinstance(src, _TEMPORAL):
        return isinstance(dst, T.DateType | T.TimestampType)
    return False


def convert_value(
    src: Column, src_type: T.DataType, target: T.DataType, lenience: Lenience
) -> ConvertedValue:
    """Convert ``src`` (of input type ``src_type``) to ``target``, as the rules say."""
    no = None
    if isinstance(src_type, T.NullType):
        return ConvertedValue(F.lit(None).cast(target), no, no, no)
    if isinstance(src_type, T.StringType):
        bad_utf8 = src.isNotNull() & ~F.is_valid_utf8(src)
        if isinstance(target, T.StringType):
            value = F.make_valid_utf8(src) if lenience.replace_invalid_utf8 else src
            return ConvertedValue(value, no, no, bad_utf8)
        text = F.trim(src)
        converted, failed, inexact = convert_text(text, target)
        value = F.when(text == F.lit(""), F.lit(None).cast(target)).otherwise(converted)
        return ConvertedValue(value, src.isNotNull() & (text != F.lit("")) & failed, inexact, no)
    if src_type == target:
        return ConvertedValue(src, no, no, no)
    if isinstance(src_type, _NESTED):
        return ConvertedValue(F.to_json(src), no, no, no)
    value = src.try_cast(target)
    failed = src.isNotNull() & value.isNull()
    fractional = isinstance(src_type, T.FloatType | T.DoubleType) or (
        isinstance(src_type, T.DecimalType) and src_type.scale > 0
    )
    if fractional and isinstance(target, _INTEGRAL):
        failed = failed | (value.isNotNull() & (value.cast(src_type) != src))
    if isinstance(target, T.BooleanType) and not isinstance(src_type, T.BooleanType):
        failed = failed | (src.isNotNull() & ~src.isin(0, 1))
    if isinstance(src_type, T.TimestampType | T.TimestampNTZType) and isinstance(
        target, T.DateType
    ):
        failed = failed | (value.isNotNull() & (value.cast(src_type) != src))
    if isinstance(target, T.FloatType) and isinstance(src_type, T.DoubleType | T.DecimalType):
        infinite = F.abs(value) == F.lit(float("inf"))
        failed = failed | (infinite & (F.abs(src.cast("double")) != F.lit(float("inf"))))
    rounded = inexact_number(src, src_type, value) if isinstance(target, T.DecimalType) else None
    return ConvertedValue(value, failed, rounded, no)
