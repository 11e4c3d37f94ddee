"""Text values (CSV fields, JSON values) to column types: exact or refused, never guessed.

Spark's own casts are generous: ``"19788"`` becomes the DATE ``+19788-01-01``, ``"yes"`` a
BOOLEAN ``true``, ``"1.239"`` the DECIMAL(10,2) ``1.24``, ``"1e39"`` the FLOAT ``Infinity``.
Each function here returns ``(value, failed, inexact)``: ``failed`` when the text is not a
value of the type in the documented format (docs/input-formats.md), ``inexact`` when it is a
number the type can hold only rounded (a DECIMAL with more places than its scale). The caller
decides whether an inexact value is refused or, by a table property, rounded and counted.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.values.text_rules import (
    BOOLEANS,
    DATE_PATTERN,
    DECIMAL_PATTERN,
    FLOATING_PATTERN,
    INFINITY_PATTERN,
    REPLACE_INVALID_UTF8,
    ROUND_DECIMALS,
    TIMESTAMP_PATTERN,
    ZERO_PATTERN,
    Lenience,
    without_year_zero,
)

__all__ = [
    "REPLACE_INVALID_UTF8",
    "ROUND_DECIMALS",
    "Lenience",
    "convert_text",
    "decimal_places",
    "inexact_number",
]

# ISO-8601 dates and timestamps without year 0000; Spark's cast then rejects impossible days
# (2023-02-29, month 13). Without an offset the session time zone applies.
_DATE = without_year_zero(DATE_PATTERN)
_TIMESTAMP = without_year_zero(TIMESTAMP_PATTERN)
_BOOLEANS = BOOLEANS
_DECIMAL = DECIMAL_PATTERN
_INFINITY = INFINITY_PATTERN
_FLOATING = FLOATING_PATTERN
_ZERO = ZERO_PATTERN


def convert_text(text: Column, target: T.DataType) -> tuple[Column, Column, Column]:
    """Convert trimmed, non-empty text to ``target`` (not a string type).

    Returns:
        ``(value, failed, inexact)``: ``value`` is null when ``failed``; when ``inexact``
        it is the value rounded half-up to the type.
    """
    no = F.lit(False)
    if isinstance(target, T.BooleanType):
        lowered = F.lower(text)
        value = F.when(lowered.isin(*[k for k, v in _BOOLEANS.items() if v]), F.lit(True))
        value = value.when(lowered.isin(*[k for k, v in _BOOLEANS.items() if not v]), F.lit(False))
        return value, value.isNull(), no
    if isinstance(target, T.BinaryType):
        value = F.try_to_binary(text, F.lit("base64"))
        return value, value.isNull(), no
    if isinstance(target, T.DateType):
        return _matching(text, _DATE, target)
    if isinstance(target, T.TimestampType | T.TimestampNTZType):
        return _matching(text, _TIMESTAMP, target)
    value = text.try_cast(target)
    if isinstance(target, T.FloatType | T.DoubleType):
        # Too large becomes Infinity and too small 0 in Spark's cast: both are out of range.
        overflow = (F.abs(value) == F.lit(float("inf"))) & ~text.rlike(_INFINITY)
        underflow = (value == F.lit(0.0)) & ~text.rlike(_ZERO)
        failed = value.isNull() | overflow | underflow | ~text.rlike(_FLOATING)
        return F.when(~failed, value), failed, no
    if isinstance(target, T.DecimalType):
        failed = value.isNull() | ~text.rlike(_DECIMAL)
        return F.when(~failed, value), failed, ~failed & (decimal_places(text) > target.scale)
    return value, value.isNull(), no


def decimal_places(text: Column) -> Column:
    """Decimal places the number in ``text`` needs exactly (``"1.2300"`` -> 2, ``"1e-3"`` -> 3,
    ``"100e-2"`` -> 0); null when ``text`` is not in BigDecimal's notation."""
    whole = F.regexp_extract(text, _DECIMAL, 1)
    fraction = F.regexp_extract(text, _DECIMAL, 2)
    exponent = F.coalesce(F.regexp_extract(text, _DECIMAL, 3).try_cast("int"), F.lit(0))
    digits = F.concat(whole, fraction)
    trailing_zeros = F.length(F.regexp_extract(digits, "(0*)$", 1))
    return F.when(text.rlike(_DECIMAL), F.length(fraction) - exponent - trailing_zeros)


def inexact_number(src: Column, src_type: T.DataType, value: Column) -> Column:
    """Whether a typed number ``src`` changed when converted to ``value`` (a DECIMAL): the
    value converted back differs."""
    return src.isNotNull() & value.isNotNull() & (value.cast(src_type) != src)


def _matching(text: Column, pattern: str, target: T.DataType) -> tuple[Column, Column, Column]:
    value = F.when(text.rlike(pattern), text.try_cast(target))
    return value, value.isNull(), F.lit(False)
