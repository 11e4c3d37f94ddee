"""Canonical key encoding: pinned format, injective, stable across processes, vectorised."""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import random
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.keys.key_samples import random_key
from versioned.errors import SchemaError
from versioned.keys.encoding import (
    encode_key,
    encode_key_array,
    encode_keys,
    key_range,
)

REPO = Path(__file__).resolve().parents[2]
UTC_PLUS_1 = dt.timezone(dt.timedelta(hours=1))

# The encoding is a storage format (Bloom files persist it): these bytes must never change.
GOLDEN: list[tuple[tuple[Any, ...], bytes]] = [
    ((1, "a"), b"i1,s1:a"),
    (("1", "a"), b"s1:1,s1:a"),
    ((1, "a "), b"i1,s2:a "),
    (("a,b",), b"s3:a,b"),
    (("a", "b"), b"s1:a,s1:b"),
    (("é",), b"s2:\xc3\xa9"),
    (("",), b"s0:"),
    ((None, -7), b"n,i-7"),
    ((True, False), b"b1,b0"),
    ((1.0,), b"f4607182418800017408"),
    ((-0.0,), b"f0"),
    ((float("nan"),), b"f9221120237041090560"),
    ((Decimal("1.50"),), b"d1.5"),
    ((Decimal("-0.00"),), b"d0"),
    ((Decimal("1E+2"),), b"d100"),
    ((b"\x00\xff",), b"x00ff"),
    ((dt.date(2024, 1, 31),), b"D2024-01-31"),
    ((dt.datetime(2024, 1, 31),), b"t1706659200000000"),
    ((dt.datetime(2024, 1, 31, 1, tzinfo=UTC_PLUS_1),), b"t1706659200000000"),
    ((dt.datetime(1969, 12, 31, 23, 59, 59, 999999),), b"t-1"),
]


@pytest.mark.parametrize(("key", "expected"), GOLDEN)
def test_encoding_is_pinned(key: tuple[Any, ...], expected: bytes) -> None:
    assert encode_key(key) == expected


def test_keys_differing_in_type_or_padding_are_distinct() -> None:
    keys: list[tuple[Any, ...]] = [
        (1, "a"),
        ("1", "a"),
        (1, "a "),
        (1, "a", None),
        (1,),
        ("1",),
        (True,),
        (1.0,),
        (Decimal(1),),
        (b"1",),
        ("a,b",),
        ("a", "b"),
        ("s1:a",),
        (None,),
        ("n",),
        ("",),
        ((),),
    ][:-1]
    encoded = [encode_key(k) for k in keys]
    assert len(set(encoded)) == len(keys)


def _canonical(value: Any) -> tuple[Any, ...]:
    """What makes two key values equal, computed without the encoder."""
    if value is None:
        return ("n",)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int):
        return ("i", value)
    if isinstance(value, float):
        return ("f", "nan") if math.isnan(value) else ("f", value)
    if isinstance(value, Decimal):
        return ("d", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, bytes):
        return ("x", value)
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return ("t", aware)
    return ("D", value)


@pytest.mark.parametrize("seed", [0, 1])
def test_encoding_is_injective_over_random_mixed_keys(seed: int) -> None:
    rng = random.Random(seed)
    by_encoding: dict[bytes, set[tuple[Any, ...]]] = {}
    by_key: dict[tuple[Any, ...], set[bytes]] = {}
    for _ in range(100_000):
        key = random_key(rng)
        canonical = tuple(_canonical(v) for v in key)
        encoded = encode_key(key)
        by_encoding.setdefault(encoded, set()).add(canonical)
        by_key.setdefault(canonical, set()).add(encoded)
    assert all(len(v) == 1 for v in by_encoding.values())  # no collisions
    assert all(len(v) == 1 for v in by_key.values())  # equal keys, equal bytes
    assert len(by_encoding) > 50_000


def test_encoding_is_valid_utf8() -> None:
    rng = random.Random(7)
    for _ in range(10_000):
        encode_key(random_key(rng)).decode("utf-8")


def test_encoding_is_stable_in_a_fresh_process() -> None:
    rng = random.Random(3)
    keys = [random_key(rng) for _ in range(2_000)]
    script = (
        "import random, sys\n"
        "from tests.keys.key_samples import random_key\n"
        "from versioned.keys.encoding import encode_key\n"
        "rng = random.Random(3)\n"
        "for _ in range(2000):\n"
        "    print(encode_key(random_key(rng)).hex())\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out == [encode_key(k).hex() for k in keys]


def test_scalar_rejects_unsupported_values() -> None:
    with pytest.raises(SchemaError):
        encode_key((object(),))
    with pytest.raises(SchemaError):
        encode_key((Decimal("NaN"),))
    with pytest.raises(SchemaError):
        encode_key("abc")  # type: ignore[arg-type]


def _all_types_table(rows: int, seed: int) -> pa.Table:
    rng = random.Random(seed)

    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.1 else value

    def column(make: Any, kind: pa.DataType) -> pa.Array:
        return pa.array([maybe(make()) for _ in range(rows)], kind)

    return pa.table(
        {
            "i8": column(lambda: rng.randint(-128, 127), pa.int8()),
            "i64": column(lambda: rng.randint(-(2**63), 2**63 - 1), pa.int64()),
            "u64": column(lambda: rng.randint(0, 2**64 - 1), pa.uint64()),
            "f32": column(lambda: rng.choice([1.5, -0.0, float("nan"), 3.25e10]), pa.float32()),
            "f64": column(
                lambda: rng.choice([0.1, -0.0, float("-nan"), float("inf")]), pa.float64()
            ),
            "dec": column(
                lambda: Decimal(rng.randint(-(10**9), 10**9)).scaleb(-4), pa.decimal128(18, 4)
            ),
            "dec0": column(lambda: Decimal(rng.randint(-(10**20), 10**20)), pa.decimal128(38, 0)),
            "s": column(lambda: rng.choice(["", "a", "a,b", "é✓", "s1:a", "x" * 70]), pa.string()),
            "ls": column(lambda: rng.choice(["", "q"]), pa.large_string()),
            "bin": column(lambda: rng.randbytes(rng.randint(0, 4)), pa.binary()),
            "b": column(lambda: rng.random() < 0.5, pa.bool_()),
            "d32": column(lambda: dt.date.fromordinal(rng.randint(1, 3_000_000)), pa.date32()),
            "d64": column(lambda: dt.date.fromordinal(rng.randint(700_000, 800_000)), pa.date64()),
            "ts": column(
                lambda: (
                    dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
                    + dt.timedelta(microseconds=rng.randint(-(10**16), 10**16))
                ),
                pa.timestamp("us", tz="UTC"),
            ),
            "ts_naive_ms": column(
                lambda: dt.datetime(2000, 1, 1) + dt.timedelta(milliseconds=rng.randint(0, 10**12)),
                pa.timestamp("ms"),
            ),
            "ts_paris": column(
                lambda: (
                    dt.datetime(2024, 3, 31, tzinfo=dt.UTC) + dt.timedelta(hours=rng.randint(0, 9))
                ),
                pa.timestamp("us", tz="Europe/Paris"),
            ),
            "dict": pa.array(
                [maybe(rng.choice(["x", "y"])) for _ in range(rows)]
            ).dictionary_encode(),
            "nulls": pa.nulls(rows),
        }
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorised_encoding_equals_scalar_for_every_type(seed: int) -> None:
    table = _all_types_table(500, seed)
    for name in table.column_names:
        vector = encode_keys(table, [name])
        scalar = [encode_key((row[name],)) for row in table.to_pylist()]
        assert vector == scalar, name
    names = table.column_names
    composite = encode_keys(table, names)
    assert composite == [encode_key(tuple(r[n] for n in names)) for r in table.to_pylist()]


def test_vectorised_encoding_handles_chunked_columns_and_column_order() -> None:
    table = pa.concat_tables(
        [
            pa.table({"a": pa.array([1, 2], pa.int32()), "b": ["x", "y"]}),
            pa.table({"a": pa.array([3], pa.int32()), "b": ["z"]}),
        ]
    )
    assert table.column("a").num_chunks == 2
    assert encode_keys(table, ["a", "b"]) == [b"i1,s1:x", b"i2,s1:y", b"i3,s1:z"]
    assert encode_keys(table, ["b", "a"]) == [b"s1:x,i1", b"s1:y,i2", b"s1:z,i3"]
    array = encode_key_array(table, ["a"])
    assert array.type == pa.binary() and array.to_pylist() == [b"i1", b"i2", b"i3"]


def test_vectorised_encoding_of_empty_table() -> None:
    empty = pa.table({"a": pa.array([], pa.int64())})
    assert encode_keys(empty, ["a"]) == []


def test_vectorised_encoding_rejects_missing_or_unsupported_columns() -> None:
    table = pa.table({"a": [1], "l": [[1, 2]]})
    with pytest.raises(SchemaError):
        encode_keys(table, ["nope"])
    with pytest.raises(SchemaError):
        encode_keys(table, ["l"])
    with pytest.raises(SchemaError):
        encode_keys(table, [])


def test_key_range_of_numbers_strings_dates_and_timestamps() -> None:
    table = pa.table(
        {
            "i": [5, -3, 9],
            "s": ["m", "b", "z"],
            "d": [dt.date(2024, 1, 2), dt.date(2023, 5, 1), dt.date(2024, 1, 1)],
            "dec": pa.array([Decimal("1.5"), Decimal("-2.25"), Decimal("0")], pa.decimal128(5, 2)),
        }
    )
    assert key_range(table, ["i", "s"]) == (-3, 9)  # composite keys: first column
    assert key_range(table, ["s"]) == ("b", "z")
    assert key_range(table, ["d"]) == (dt.date(2023, 5, 1), dt.date(2024, 1, 2))
    assert key_range(table, ["dec"]) == (Decimal("-2.25"), Decimal("1.5"))


def test_key_range_is_none_when_pruning_would_be_unsafe() -> None:
    assert key_range(pa.table({"i": pa.array([], pa.int64())}), ["i"]) is None
    assert key_range(pa.table({"i": [1, None, 3]}), ["i"]) is None
    assert key_range(pa.table({"f": [1.0, float("nan")]}), ["f"]) is None
    assert key_range(pa.table({"x": [b"a", b"b"]}), ["x"]) is None
    assert key_range(pa.table({"b": [True, False]}), ["b"]) is None


def test_golden_table_is_json_describable() -> None:
    # Guards the test data itself: every golden key is printable for a failure message.
    json.dumps([[repr(v) for v in k] for k, _ in GOLDEN])
