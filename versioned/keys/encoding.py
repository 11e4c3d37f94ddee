"""Canonical bytes of primary keys (what Bloom filters hash) and key ranges (for pruning).

A key is encoded as one component per key column, joined by ``,``. A component is a type tag
followed by a payload; no payload except a string's contains ``,``, and strings carry their
length, so the encoding is injective. It is ASCII except for string payloads (UTF-8), so it
is valid UTF-8. It is part of the storage format: Bloom files written today are read by later
releases, so it must never change (tests pin it).

===  ==========================================================  ==========================
tag  value                                                       example
===  ==========================================================  ==========================
n    null                                                        ``n``
b    boolean                                                     ``b1``
i    integer of any width, decimal                               ``i-42``
f    float of any width, the IEEE-754 bits of it as a float64,   ``f4607182418800017408``
     decimal; ``-0.0`` is ``0.0``, every NaN the same
d    decimal, plain notation without trailing zeros              ``d1.5``
s    string: UTF-8 byte length, ``:``, the text                  ``s3:abc``
x    bytes, lower-case hex                                       ``x00ff``
D    date, ISO                                                   ``D2024-01-31``
t    timestamp, microseconds since 1970-01-01 UTC (naive = UTC)  ``t1706659200000000``
===  ==========================================================  ==========================
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
import re
import struct
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from versioned.errors import SchemaError

_NAN_BITS = 0x7FF8000000000000
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MICRO = dt.timedelta(microseconds=1)
_TRAILING_ZEROS = r"(\.[0-9]*[1-9])0+$"
_BARE_POINT = r"\.0*$"


def encode_key(values: tuple[Any, ...] | list[Any]) -> bytes:
    """The canonical bytes of one key (a tuple with one value per key column).

    Raises:
        SchemaError: ``values`` is not a tuple or list, or holds an unsupported value.
    """
    if not isinstance(values, tuple | list):
        raise SchemaError(f"a key is a tuple of values, got {type(values).__name__}")
    return b",".join(_component(v) for v in values)


def _component(value: Any) -> bytes:
    if value is None:
        return b"n"
    if isinstance(value, bool):
        return b"b1" if value else b"b0"
    if isinstance(value, numbers.Integral):
        return b"i%d" % int(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise SchemaError(f"key value {value} is not a finite decimal", value=str(value))
        text = re.sub(_BARE_POINT, "", re.sub(_TRAILING_ZEROS, r"\1", format(value, "f")))
        return b"d" + (b"0" if text == "-0" else text.encode("ascii"))
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isnan(number):
            return b"f%d" % _NAN_BITS
        return b"f%d" % struct.unpack("<q", struct.pack("<d", number + 0.0))[0]
    if isinstance(value, str):
        raw = value.encode("utf-8", "surrogatepass")
        return b"s%d:%b" % (len(raw), raw)
    if isinstance(value, bytes | bytearray | memoryview):
        return b"x" + bytes(value).hex().encode("ascii")
    if isinstance(value, dt.datetime):
        epoch = _EPOCH if value.tzinfo is None else _EPOCH_UTC
        return b"t%d" % ((value - epoch) // _MICRO)
    if isinstance(value, dt.date):
        return b"D" + value.isoformat().encode("ascii")
    raise SchemaError(
        f"unsupported key value {value!r} of type {type(value).__name__}", value=repr(value)
    )


def encode_key_array(table: pa.Table, key_columns: Sequence[str]) -> pa.Array:
    """The canonical bytes of every row's key, as an Arrow binary array (vectorised).

    Row ``i`` of the result equals ``encode_key`` of row ``i``'s key values.

    Raises:
        SchemaError: A key column is missing or of a type keys cannot have.
    """
    if not key_columns:
        raise SchemaError("at least one key column is needed")
    missing = [c for c in key_columns if c not in table.column_names]
    if missing:
        raise SchemaError(f"key columns {', '.join(missing)} not in the batch")
    parts = [_encode_column(table.column(c).combine_chunks(), c) for c in key_columns]
    joined = parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, ",")
    return joined.cast(pa.binary())


def encode_keys(table: pa.Table, key_columns: Sequence[str]) -> list[bytes]:
    """`encode_key` of every row of ``table``, computed column-wise with Arrow."""
    result: list[bytes] = encode_key_array(table, key_columns).to_pylist()
    return result


def _tagged(tag: str, text: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise(tag, text, "")


def _encode_column(arr: pa.Array, name: str) -> pa.Array:
    kind = arr.type
    if pa.types.is_dictionary(kind):
        return _encode_column(arr.dictionary_decode(), name)
    if pa.types.is_null(kind):
        encoded = pa.nulls(len(arr), pa.string())
    elif pa.types.is_boolean(kind):
        encoded = pc.if_else(arr, "b1", "b0")
    elif pa.types.is_integer(kind):
        encoded = _tagged("i", arr.cast(pa.string()))
    elif pa.types.is_floating(kind):
        doubles = pc.add(arr.cast(pa.float64()), 0.0)  # -0.0 + 0.0 == +0.0
        bits = pc.if_else(
            pc.is_nan(doubles), pa.scalar(_NAN_BITS, pa.int64()), doubles.view(pa.int64())
        )
        encoded = _tagged("f", bits.cast(pa.string()))
    elif pa.types.is_decimal(kind):
        text = pc.replace_substring_regex(arr.cast(pa.string()), _TRAILING_ZEROS, r"\1")
        encoded = _tagged("d", pc.replace_substring_regex(text, _BARE_POINT, ""))
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
        text = arr.cast(pa.string())
        length = pc.binary_length(text).cast(pa.string())
        encoded = pc.binary_join_element_wise("s", length, ":", text, "")
    elif (
        pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
        or (pa.types.is_fixed_size_binary(kind))
    ):
        # No hex kernel in Arrow; binary keys are rare enough for a Python loop.
        hexed = [None if v is None else "x" + v.hex() for v in arr.to_pylist()]
        encoded = pa.array(hexed, pa.string())
    elif pa.types.is_date(kind):
        encoded = _tagged("D", arr.cast(pa.date32()).cast(pa.string()))
    elif pa.types.is_timestamp(kind):
        micros = arr.cast(pa.timestamp("us", tz=kind.tz), safe=False).cast(pa.int64())
        encoded = _tagged("t", micros.cast(pa.string()))
    else:
        raise SchemaError(f"key column {name!r} has type {kind}, which keys cannot have")
    return encoded if encoded.null_count == 0 else pc.fill_null(encoded, "n")


def key_range(table: pa.Table, key_columns: Sequence[str]) -> tuple[Any, Any] | None:
    """Smallest and largest value of the first key column, for pruning by range.

    Returns ``None`` (no pruning possible) when the table is empty, the column is not a
    number, string, date or timestamp, or holds a null or a NaN: those keys would fall
    outside any range and so must never be pruned.
    """
    if not key_columns or table.num_rows == 0:
        return None
    column = table.column(key_columns[0])
    kind = column.type
    if not (
        pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
        or pa.types.is_decimal(kind)
        or pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_date(kind)
        or pa.types.is_timestamp(kind)
    ):
        return None
    if column.null_count or (pa.types.is_floating(kind) and pc.any(pc.is_nan(column)).as_py()):
        return None
    bounds = pc.min_max(column)
    return bounds["min"].as_py(), bounds["max"].as_py()
