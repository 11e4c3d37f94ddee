"""Hive's bucket number of a row: ``(H & 0x7FFFFFFF) % numBuckets``.

``H`` folds the field hashes of the bucket columns in CLUSTERED BY order:
``H = int32(31 * H + f(value))``, starting at 0; a NULL field hashes to 0. ``f`` depends on the
table's ``bucketing_version``:

* version 2 (Hive 3's default): Murmur3 (`versioned.layouts.acid.murmur3`) of the value's
  big-endian bytes (smallint/int/bigint/date), of the bytes of the float/double *value* of
  its own bit pattern (``(float) floatToIntBits(x)``, a Hive quirk), or of the UTF-8 bytes
  (string, varchar; char without trailing spaces); boolean is 1/0 and tinyint its value.
* version 1: Java-``hashCode``-like: the value; ``(int)(a ^ a >>> 32)`` for bigint and double
  bits; ``floatToIntBits``; ``31 * r + signed byte`` over UTF-8 bytes for string, the same
  starting at 1 for varchar and char (Hadoop ``Text.hashCode``); days since the epoch.

DECIMAL, TIMESTAMP and BINARY are refused: Hive hashes their internal Writable bytes, which
are not specified precisely enough to reproduce (Trino refuses them too).

`bucket_ids` is vectorised with numpy over Arrow buffers; `hive_hash` is the scalar reference.
"""

from __future__ import annotations

import datetime as dt
import re
import struct
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from versioned.errors import InputError, SchemaError
from versioned.layouts.acid import murmur3
from versioned.layouts.acid.errors import UnsupportedBucketTypeError
from versioned.layouts.acid.string_hash import string_hashes
from versioned.schema import normalise_type
from versioned.values.arrow_types import arrow_type

BucketingVersion = Literal[1, 2]
_MASK = 0xFFFFFFFF
_EPOCH = dt.date(1970, 1, 1)
_FLOAT_NAN_BITS = 0x7FC00000
_DOUBLE_NAN_BITS = 0x7FF8000000000000
_ARRAY = re.compile(r"^ARRAY\s*<(.+)>$", re.IGNORECASE)
_INT_RANGES = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_UNSUPPORTED = ("DECIMAL", "TIMESTAMP", "BINARY")


def hash_kind(hive_type: str) -> str:
    """The bucket-hash kind of a column type: its canonical name, or ``VARCHAR`` / ``CHAR``.

    Raises:
        UnsupportedBucketTypeError: The type cannot be a bucket column (decimal, timestamp,
            binary).
        SchemaError: The type is unknown.
    """
    name = normalise_type(hive_type)
    base = name.split("(", 1)[0]
    if base in _UNSUPPORTED:
        raise UnsupportedBucketTypeError(
            f"a {name} column cannot be a bucket column of the acid layout: Hive hashes its "
            "internal bytes, which versioned does not reproduce; bucket by a column of type "
            "BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, STRING, VARCHAR, CHAR or DATE",
            type=name,
        )
    return base


def _check_version(version: int) -> None:
    if version not in (1, 2):
        raise InputError(
            f"bucketing_version must be 1 or 2, got {version!r}", bucketing_version=version
        )


# --- scalar reference ------------------------------------------------------------------------


def hive_hash(value: Any, hive_type: str, version: BucketingVersion = 2) -> int:
    """Hive's field hash ``f(value)`` of one value (a signed 32-bit int).

    Args:
        value: A Python value of the column type (``None`` for NULL; a ``date`` or an int of
            days for DATE; a list for ``ARRAY<T>``).
        hive_type: The column type, e.g. ``INT``, ``VARCHAR(10)``, ``ARRAY<SMALLINT>``.
        version: The table's ``bucketing_version``.

    Raises:
        UnsupportedBucketTypeError: See `hash_kind`.
        InputError: The value does not fit the type, or the version is not 1 or 2.
    """
    _check_version(version)
    array = _ARRAY.match(hive_type.strip())
    if array:
        element = array.group(1)
        if value is None:
            return 0
        r = 0
        for item in value:
            r = murmur3.to_int32(31 * r + hive_hash(item, element, version))
        return r
    kind = hash_kind(hive_type)
    if value is None:
        return 0
    if kind in ("STRING", "VARCHAR", "CHAR"):
        return _text_hash(str(value), kind, version)
    if kind == "BOOLEAN":
        return 1 if value else 0
    if kind == "DATE":
        days = (value - _EPOCH).days if isinstance(value, dt.date) else int(value)
        return days if version == 1 else murmur3.hash32(struct.pack(">i", days))
    if kind in _INT_RANGES:
        return _int_hash(int(value), kind, version)
    return _float_hash(float(value), kind, version)


def _text_hash(text: str, kind: str, version: int) -> int:
    if kind == "CHAR":
        text = text.rstrip(" ")
    data = text.encode("utf-8")
    if version == 2:
        return murmur3.hash32(data)
    r = 0 if kind == "STRING" else 1  # Text.hashCode (varchar, char) starts at 1
    for byte in data:
        r = (31 * r + (byte - 256 if byte >= 0x80 else byte)) & _MASK
    return murmur3.to_int32(r)


def _int_hash(v: int, kind: str, version: int) -> int:
    bits = _INT_RANGES[kind]
    if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
        raise InputError(f"{v} does not fit a {kind} column", value=v, type=kind)
    if kind == "TINYINT" or (version == 1 and kind != "BIGINT"):
        return v
    if version == 1:
        a = v & 0xFFFFFFFFFFFFFFFF
        return murmur3.to_int32(a ^ (a >> 32))
    fmt = {"SMALLINT": ">h", "INT": ">i", "BIGINT": ">q"}[kind]
    return murmur3.hash32(struct.pack(fmt, v))


def _float_hash(x: float, kind: str, version: int) -> int:
    if kind == "FLOAT":
        bits = _FLOAT_NAN_BITS if x != x else struct.unpack(">I", struct.pack(">f", x))[0]
        signed = murmur3.to_int32(bits)
        if version == 1:
            return signed
        # putFloat((float) floatToIntBits(x)): the int's *value* as a float, rounded to nearest.
        return murmur3.hash32(struct.pack(">f", float(signed)))
    bits = _DOUBLE_NAN_BITS if x != x else struct.unpack(">Q", struct.pack(">d", x))[0]
    if version == 1:
        return murmur3.to_int32(bits ^ (bits >> 32))
    signed64 = bits - (1 << 64) if bits >> 63 else bits
    return murmur3.hash32(struct.pack(">d", float(signed64)))


# --- vectorised --------------------------------------------------------------------------------


def column_hashes(
    values: pa.Array | pa.ChunkedArray, hive_type: str, version: BucketingVersion = 2
) -> npt.NDArray[np.int32]:
    """Hive's field hash of every value of a column (NULL -> 0), vectorised.

    Args:
        values: The column; it is cast (safely) to the Arrow type of ``hive_type``.
        hive_type: The column's type.
        version: The table's ``bucketing_version``.

    Raises:
        UnsupportedBucketTypeError: See `hash_kind`.
        InputError: A value does not fit the type.
    """
    _check_version(version)
    kind = hash_kind(hive_type)
    array = _as_array(values, hive_type)
    if kind in ("STRING", "VARCHAR", "CHAR"):
        if kind == "CHAR":
            array = pc.utf8_rtrim(array, characters=" ")
        out = string_hashes(array, murmur=version == 2, seed_one=kind != "STRING")
    else:
        out = _fixed_width_hashes(array, kind, version)
    if array.null_count:
        out[array.is_null().to_numpy(zero_copy_only=False)] = 0
    return out.view(np.int32)


def _as_array(values: pa.Array | pa.ChunkedArray, hive_type: str) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    target = arrow_type(hive_type)
    try:
        return values if values.type == target else values.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise InputError(
            f"bucket column values of Arrow type {values.type} do not fit {hive_type}: {exc}",
            type=hive_type,
        ) from exc


def _fixed_width_hashes(array: pa.Array, kind: str, version: int) -> npt.NDArray[np.uint32]:
    if kind == "DATE":
        array = array.cast(pa.int32())  # days since 1970-01-01
    filled = array.fill_null(False if kind == "BOOLEAN" else 0)
    values = np.asarray(filled.to_numpy(zero_copy_only=False))
    if kind == "BOOLEAN":
        return values.astype(np.uint32)
    if kind == "TINYINT" or (version == 1 and kind in ("SMALLINT", "INT", "DATE")):
        return values.astype(np.int32).view(np.uint32)
    if kind in ("INT", "DATE"):
        return murmur3.v_hash_be_int32(values.astype(np.int32).view(np.uint32))
    if kind == "SMALLINT":
        return murmur3.v_hash_be_int16(values.astype(np.int16))
    if kind == "BIGINT":
        bits64 = values.astype(np.int64).view(np.uint64)
        if version == 1:
            return _fold_halves(bits64)
        return murmur3.v_hash_be_int64(bits64)
    if kind == "FLOAT":
        floats = values.astype(np.float32)
        bits = floats.view(np.uint32).copy()
        bits[np.isnan(floats)] = _FLOAT_NAN_BITS
        if version == 1:
            return bits
        as_value = bits.view(np.int32).astype(np.float32)  # (float) floatToIntBits(x)
        return murmur3.v_hash_be_int32(as_value.view(np.uint32))
    if kind == "DOUBLE":
        doubles = values.astype(np.float64)
        bits64 = doubles.view(np.uint64).copy()
        bits64[np.isnan(doubles)] = _DOUBLE_NAN_BITS
        if version == 1:
            return _fold_halves(bits64)
        as_value = bits64.view(np.int64).astype(np.float64)  # (double) doubleToLongBits(x)
        return murmur3.v_hash_be_int64(as_value.view(np.uint64))
    raise SchemaError(f"no bucket hash for type {kind}", type=kind)  # unreachable: hash_kind


def _fold_halves(bits64: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint32]:
    """``(int)(a ^ (a >>> 32))``."""
    return ((bits64 ^ (bits64 >> np.uint64(32))) & np.uint64(_MASK)).astype(np.uint32)


def bucket_hashes(
    table: pa.Table | pa.RecordBatch,
    columns: Sequence[str],
    types: Sequence[str],
    version: BucketingVersion = 2,
) -> npt.NDArray[np.int32]:
    """The folded hash ``H`` of every row over the bucket columns, in the order given.

    Args:
        table: The rows.
        columns: The bucket columns in CLUSTERED BY order (not table order).
        types: The type of each bucket column, in the same order.
        version: The table's ``bucketing_version``.
    """
    if len(columns) != len(types):
        raise InputError(f"{len(columns)} bucket columns but {len(types)} types")
    h = np.zeros(table.num_rows, dtype=np.uint32)
    for name, hive_type in zip(columns, types, strict=True):
        if name not in table.column_names:
            raise SchemaError(f"bucket column {name!r} is not in the rows", column=name)
        field = column_hashes(table.column(name), hive_type, version).view(np.uint32)
        h = h * np.uint32(31) + field
    return h.view(np.int32)


def bucket_ids(
    table: pa.Table | pa.RecordBatch,
    columns: Sequence[str],
    types: Sequence[str],
    num_buckets: int,
    version: BucketingVersion = 2,
) -> npt.NDArray[np.int32]:
    """Hive's bucket number of every row: ``(H & 0x7FFFFFFF) % num_buckets``.

    An unbucketed table (no ``columns``) puts every row in bucket 0.

    Raises:
        InputError: ``num_buckets`` is not positive, or a value does not fit its type.
        UnsupportedBucketTypeError: A bucket column's type cannot be hashed.
    """
    if isinstance(num_buckets, bool) or not isinstance(num_buckets, int) or num_buckets <= 0:
        raise InputError(f"the number of buckets must be > 0, got {num_buckets!r}")
    if not columns:
        return np.zeros(table.num_rows, dtype=np.int32)
    h = bucket_hashes(table, columns, types, version).view(np.uint32)
    return ((h & np.uint32(0x7FFFFFFF)) % np.uint32(num_buckets)).astype(np.int32)


def bucket_number(hash_code: int, num_buckets: int) -> int:
    """``ObjectInspectorUtils.getBucketNumber``: the bucket of one folded hash."""
    if num_buckets <= 0:
        raise InputError(f"the number of buckets must be > 0, got {num_buckets!r}")
    return (hash_code & 0x7FFFFFFF) % num_buckets
