"""Text columns to typed Arrow columns by the rules of `versioned.values.text_rules`, vectorised.

The Spark-free twin of `versioned.engine.feeds.text_values` for clients that write files
directly (the streaming ingest API). Each column is checked with Arrow compute kernels; only
values that an Arrow cast refuses although their text has the right shape (an INT out of
range, 2023-02-29) are found by bisecting the cast, and only DECIMAL values with more places
than the scale and BINARY (base64) values are looked at one by one.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from versioned.schema import Column
from versioned.values.arrow_types import arrow_type
from versioned.values.text_rules import (
    BOOLEANS,
    DATE_PATTERN,
    DECIMAL_PATTERN,
    FLOATING_PATTERN,
    INFINITY_PATTERN,
    INTEGER_PATTERN,
    QUOTE_LIMIT,
    TIMESTAMP_PATTERN,
    TRIMMED,
    YEAR_ZERO,
    ZERO_PATTERN,
    Lenience,
    not_a_value,
    too_long,
    too_many_places,
)

_LENGTH_LIMITED = re.compile(r"^(?:VARCHAR|CHAR)\((\d+)\)$")
_OFFSET = r"[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)$"
# Spark's cast refuses an offset after a time without seconds ("10:00Z"); so do we.
_MINUTES_OFFSET = r"[T ]\d{2}:\d{2}(Z|[+-]\d{2}(:?\d{2})?)$"
_BASE64_SPACE = re.compile(r"[ \t\n\r]")
_DECIMAL_PARTS = r"^[+-]?(?P<whole>\d*)(?:\.(?P<fraction>\d*))?(?:[eE](?P<exponent>[+-]?\d+))?$"
_STRING = pa.string()


@dataclass(frozen=True)
class ConvertedColumn:
    """One column's values converted from text, and what went wrong per row.

    Attributes:
        values: The values in the column's Arrow type; null where the text was null, empty
            (for a non-string type) or failed.
        failed: Per row, whether a non-null text did not convert (all false: ``None``).
        problems: Reasons that reject a row (null where none), one array per kind of problem
            that occurred; empty when every row is fine.
        coerced: Per row, whether a lenient conversion (``round_decimals``) changed the value.
    """

    values: pa.Array
    failed: pa.Array | None
    problems: list[pa.Array]
    coerced: pa.Array | None = None


def convert_text_column(
    text: pa.Array, column: Column, lenience: Lenience, *, empty_string_is_null: bool
) -> ConvertedColumn:
    """Convert a column's text values (a string array, null where absent) to its type.

    Args:
        text: The values as written.
        column: The table column.
        lenience: The table's lossy conversions.
        empty_string_is_null: Whether an empty text is null in STRING/VARCHAR/CHAR columns
            too (delimited text), or an empty string there (JSON strings).
    """
    target = arrow_type(column.type)
    if pa.types.is_string(target):
        return _strings(text, column, empty_string_is_null)
    trimmed = pc.utf8_trim(text, characters=TRIMMED)
    trimmed = pc.if_else(pc.equal(trimmed, ""), pa.scalar(None, _STRING), trimmed)
    present = pc.is_valid(trimmed)
    coerced = None
    problems: list[pa.Array] = []
    if pa.types.is_decimal(target):
        values, failed, problems, coerced = _decimals(trimmed, present, text, column, lenience)
    elif pa.types.is_boolean(target):
        values, failed = _booleans(trimmed, present)
    elif pa.types.is_binary(target):
        values, failed = _binaries(trimmed)
    elif pa.types.is_timestamp(target):
        values, failed = _timestamps(trimmed, present, target)
    else:
        values, failed = _shaped(trimmed, present, target)
    if _any(failed):
        problems.insert(0, message(not_a_value(column.name, column.type), text, failed))
        values = pc.if_else(failed, pa.scalar(None, target), values)
    return ConvertedColumn(values, failed if _any(failed) else None, problems, coerced)


def message(parts: tuple[str, str], shown: pa.Array, where: pa.Array) -> pa.Array:
    """``prefix + shown + suffix`` where ``where`` holds, else null; ``shown`` is cut to
    `QUOTE_LIMIT` characters."""
    long = pc.fill_null(pc.greater(pc.utf8_length(shown), QUOTE_LIMIT), False)
    cut = pc.binary_join_element_wise(pc.utf8_slice_codeunits(shown, 0, QUOTE_LIMIT), "...", "")
    quoted = pc.if_else(long, cut, pc.fill_null(shown, ""))
    text = pc.binary_join_element_wise(parts[0], quoted, parts[1], "")
    return pc.if_else(where, text, pa.scalar(None, _STRING))


def _strings(text: pa.Array, column: Column, empty_string_is_null: bool) -> ConvertedColumn:
    values = text
    if empty_string_is_null:
        values = pc.if_else(pc.equal(text, ""), pa.scalar(None, _STRING), text)
    problems = []
    limit = _LENGTH_LIMITED.match(column.type)
    if limit is not None:
        long = pc.fill_null(pc.greater(pc.utf8_length(values), int(limit.group(1))), False)
        if _any(long):
            problems.append(message(too_long(column.name, column.type), values, long))
    return ConvertedColumn(values, None, problems)


def _shaped(trimmed: pa.Array, present: pa.Array, target: pa.DataType) -> tuple[pa.Array, pa.Array]:
    """Integers, FLOAT/DOUBLE and DATE: a shape check, then Arrow's cast."""
    if pa.types.is_integer(target):
        shape = _matches(trimmed, INTEGER_PATTERN)
        trimmed = pc.replace_substring_regex(trimmed, r"^\+", "")  # Arrow refuses "+5"
    elif pa.types.is_floating(target):
        shape = _matches(trimmed, FLOATING_PATTERN)
    else:  # DATE
        shape = pc.and_(_matches(trimmed, DATE_PATTERN), pc.invert(_year_zero(trimmed)))
    values, cast_failed = cast_locating(_where(shape, trimmed), target)
    failed = pc.or_(pc.and_(present, pc.invert(shape)), cast_failed)
    if pa.types.is_floating(target):
        # Too large becomes Infinity, too small 0: both are out of range.
        overflow = pc.and_(pc.is_inf(values), pc.invert(_matches(trimmed, INFINITY_PATTERN)))
        zero = pc.fill_null(pc.equal(values, 0), False)
        underflow = pc.and_(zero, pc.invert(_matches(trimmed, ZERO_PATTERN)))
        failed = pc.or_(failed, pc.fill_null(pc.or_(overflow, underflow), False))
    return values, failed


def _booleans(trimmed: pa.Array, present: pa.Array) -> tuple[pa.Array, pa.Array]:
    lowered = pc.utf8_lower(trimmed)
    true = pc.is_in(lowered, pa.array([k for k, v in BOOLEANS.items() if v]))
    false = pc.is_in(lowered, pa.array([k for k, v in BOOLEANS.items() if not v]))
    values = pc.if_else(true, True, pc.if_else(false, False, pa.scalar(None, pa.bool_())))
    failed = pc.and_(present, pc.invert(pc.or_(true, false)))
    return values, failed


def _binaries(trimmed: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Base64 as Spark decodes it: the standard alphabet, spaces and line breaks ignored,
    padding optional but never extra; one value at a time."""
    out: list[bytes | None] = []
    failed: list[bool] = []
    for text in trimmed.to_pylist():
        value = None
        if text is not None:
            try:
                compact = _BASE64_SPACE.sub("", text)
                value = base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)
            except (binascii.Error, ValueError):
                value = None
        out.append(value)
        failed.append(text is not None and value is None)
    return pa.array(out, pa.binary()), pa.array(failed, pa.bool_())


def _timestamps(
    trimmed: pa.Array, present: pa.Array, target: pa.DataType
) -> tuple[pa.Array, pa.Array]:
    """With an offset the instant it names; without, the wall time in UTC."""
    shape = pc.and_(_matches(trimmed, TIMESTAMP_PATTERN), pc.invert(_year_zero(trimmed)))
    shape = pc.and_(shape, pc.invert(_matches(trimmed, _MINUTES_OFFSET)))
    # Fraction digits past microseconds are zeros (the shape says so); Arrow refuses them.
    text = pc.replace_substring_regex(trimmed, r"(\.\d{6})0+", r"\1")
    offset = _matches(text, _OFFSET)
    aware, aware_failed = cast_locating(_where(pc.and_(shape, offset), text), target)
    wall = _where(pc.and_(shape, pc.invert(offset)), text)
    local, local_failed = cast_locating(wall, pa.timestamp(target.unit))
    values = pc.coalesce(aware, pc.cast(local, target))
    failed = pc.or_(pc.and_(present, pc.invert(shape)), pc.or_(aware_failed, local_failed))
    return values, failed


def _decimals(
    trimmed: pa.Array, present: pa.Array, shown: pa.Array, column: Column, lenience: Lenience
) -> tuple[pa.Array, pa.Array, list[pa.Array], pa.Array | None]:
    """DECIMAL(p,s): exact when the number needs at most ``s`` places; else rounded half-up
    (and refused unless the table allows it)."""
    target = arrow_type(column.type)
    shape = pc.and_(_matches(trimmed, DECIMAL_PATTERN), _matches(trimmed, r"\d"))
    parts = pc.extract_regex(_where(shape, trimmed), _DECIMAL_PARTS)
    digits = pc.binary_join_element_wise(parts.field("whole"), parts.field("fraction"), "")
    zeros = pc.subtract(pc.utf8_length(digits), pc.utf8_length(pc.utf8_rtrim(digits, "0")))
    exponent = pc.cast(
        pc.if_else(pc.equal(parts.field("exponent"), ""), "0", parts.field("exponent")), pa.int64()
    )
    places = pc.subtract(pc.subtract(pc.utf8_length(parts.field("fraction")), exponent), zeros)
    inexact = pc.fill_null(pc.greater(places, target.scale), False)
    exact = pc.and_(shape, pc.invert(inexact))
    values, cast_failed = cast_locating(_where(exact, trimmed), target)
    failed = pc.or_(pc.and_(present, pc.invert(shape)), cast_failed)
    problems: list[pa.Array] = []
    coerced = None
    if _any(inexact):
        rows = np.flatnonzero(inexact.to_numpy(zero_copy_only=False))
        rounded = [_rounded(trimmed[int(i)].as_py(), target) for i in rows]
        fits = np.zeros(len(trimmed), dtype=bool)
        fits[rows] = [r is not None for r in rounded]
        overflow = np.zeros(len(trimmed), dtype=bool)
        overflow[rows] = [r is None for r in rounded]
        failed = pc.or_(failed, pa.array(overflow))
        if lenience.round_decimals:
            values = pc.replace_with_mask(
                values, pa.array(fits), pa.array([r for r in rounded if r is not None], target)
            )
            coerced = pa.array(fits)
        else:
            problems.append(
                message(too_many_places(column.name, column.type), shown, pa.array(fits))
            )
    return values, failed, problems, coerced


def _rounded(text: str, target: pa.Decimal128Type) -> Decimal | None:
    """``text`` rounded half-up to the scale, or ``None`` if it does not fit the precision."""
    try:
        value = Decimal(text).quantize(Decimal(1).scaleb(-target.scale), rounding=ROUND_HALF_UP)
    except InvalidOperation:
        return None
    return value if abs(value) < Decimal(10) ** (target.precision - target.scale) else None


def cast_locating(values: pa.Array, target: pa.DataType) -> tuple[pa.Array, pa.Array]:
    """``values`` cast to ``target`` (safely), with null where a value does not cast.

    Returns:
        ``(cast, failed)``. One cast when every value casts; otherwise the failing values
        are found by bisection (one cast per half that fails).
    """
    failed = np.zeros(len(values), dtype=bool)
    pieces = _cast_part(values, target, 0, failed)
    cast = pieces[0] if len(pieces) == 1 else pa.concat_arrays(pieces)
    return cast, pa.array(failed)


def _cast_part(
    values: pa.Array, target: pa.DataType, start: int, failed: np.ndarray
) -> list[pa.Array]:
    try:
        return [pc.cast(values, target)]
    except (pa.ArrowInvalid, OverflowError):
        if len(values) == 1:
            failed[start] = True
            return [pa.nulls(1, target)]
    half = len(values) // 2
    return [
        *_cast_part(values.slice(0, half), target, start, failed),
        *_cast_part(values.slice(half), target, start + half, failed),
    ]


def _matches(text: pa.Array, pattern: str) -> pa.Array:
    return pc.fill_null(pc.match_substring_regex(text, pattern), False)


def _year_zero(text: pa.Array) -> pa.Array:
    return pc.fill_null(pc.starts_with(text, YEAR_ZERO), False)


def _where(mask: pa.Array, text: pa.Array) -> pa.Array:
    return pc.if_else(mask, text, pa.scalar(None, _STRING))


def _any(mask: pa.Array | None) -> bool:
    return mask is not None and bool(pc.any(mask).as_py())
