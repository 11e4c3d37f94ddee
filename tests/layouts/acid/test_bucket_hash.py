"""Hive's bucket hash: the published vectors, the signed-tail quirk, vector == scalar."""

from __future__ import annotations

import datetime as dt
import math
import random
import struct
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from versioned.errors import InputError, SchemaError
from versioned.layouts.acid.bucket_hash import (
    bucket_hashes,
    bucket_ids,
    bucket_number,
    column_hashes,
    hive_hash,
)
from versioned.layouts.acid.errors import UnsupportedBucketTypeError
from versioned.values.arrow_types import arrow_type

# hive-bucketing.md, "Test vectors" (Trino's TestHiveBucketing, checked against Hive).
VECTORS: list[tuple[str, Any, int, int]] = [
    ("STRING", "Trino rocks", 1132136730, -399107423),
    ("INT", 300000, 300000, -678663480),
    ("BIGINT", 300000000000, -647710651, -888935297),
    ("SMALLINT", 300, 300, 2107031704),
    ("FLOAT", 12.34, 1095069860, -381747602),
    ("FLOAT", float("nan"), 2143289344, -480354314),
    ("DOUBLE", 12.34, 986311098, -2070733568),
    ("STRING", "", 0, -965378730),
    ("STRING", "test string", -318923937, -138301454),
    ("DATE", dt.date(2015, 11, 19), 16758, 8542395),
    ("ARRAY<SMALLINT>", [5, 8, 13], 5066, -905011156),
]


def reference_murmur3(data: bytes, *, signed_tail: bool, seed: int = 104729) -> int:
    """Murmur3 x86_32 written from the specification, independently of the module."""
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    h = seed
    full = len(data) - len(data) % 4
    for i in range(0, full, 4):
        k = data[i] | data[i + 1] << 8 | data[i + 2] << 16 | data[i + 3] << 24
        k = rotl((k * 0xCC9E2D51) & mask, 15) * 0x1B873593 & mask
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & mask
    tail = data[full:]
    if tail:
        k = 0
        for shift, byte in enumerate(tail):
            value = byte - 256 if signed_tail and byte >= 0x80 else byte
            k ^= (value << (8 * shift)) & mask
        h ^= rotl((k * 0xCC9E2D51) & mask, 15) * 0x1B873593 & mask
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def _array(values: list[Any], hive_type: str) -> pa.Array:
    return pa.array(values, type=arrow_type(hive_type))


@pytest.mark.parametrize(("hive_type", "value", "v1", "v2"), VECTORS)
def test_published_vectors_scalar(hive_type: str, value: Any, v1: int, v2: int) -> None:
    assert hive_hash(value, hive_type, 1) == v1
    assert hive_hash(value, hive_type, 2) == v2


@pytest.mark.parametrize(
    ("hive_type", "value", "v1", "v2"), [v for v in VECTORS if not v[0].startswith("ARRAY")]
)
def test_published_vectors_vectorised(hive_type: str, value: Any, v1: int, v2: int) -> None:
    column = _array([value, None], hive_type)
    assert column_hashes(column, hive_type, 1).tolist() == [v1, 0]
    assert column_hashes(column, hive_type, 2).tolist() == [v2, 0]


def test_published_bucket_numbers_with_four_buckets() -> None:
    rows = pa.table({"s": ["Trino rocks"]})
    assert bucket_ids(rows, ["s"], ["STRING"], 4, version=1).tolist() == [2]
    assert bucket_ids(rows, ["s"], ["STRING"], 4, version=2).tolist() == [1]
    assert bucket_number(hive_hash("Trino rocks", "STRING", 1), 4) == 2
    assert bucket_number(hive_hash("Trino rocks", "STRING", 2), 4) == 1


@pytest.mark.parametrize("text", ["é", "aé", "abcdé", "ñandú", "日本", "abcd日", "x\u00ff"])
def test_tail_bytes_at_or_above_0x80_are_sign_extended(text: str) -> None:
    data = text.encode("utf-8")
    assert len(data) % 4 and max(data[len(data) - len(data) % 4 :]) >= 0x80
    expected = reference_murmur3(data, signed_tail=True)
    assert expected != reference_murmur3(data, signed_tail=False)  # the quirk matters here
    assert hive_hash(text, "STRING", 2) == expected
    assert column_hashes(pa.array([text]), "STRING", 2).tolist() == [expected]


def test_sign_extension_matches_the_value_hive_gives() -> None:
    # research doc section 4: "é" (c3 a9) is -527561221 in Hive, -1372482606 unsigned.
    assert hive_hash("é", "STRING", 2) == -527561221
    assert reference_murmur3("é".encode(), signed_tail=False) == -1372482606


def _random_values(hive_type: str, rng: random.Random, n: int) -> list[Any]:
    kind = hive_type.split("(")[0]
    bits = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
    specials: list[Any]
    if kind in bits:
        lo, hi = -(1 << (bits[kind] - 1)), (1 << (bits[kind] - 1)) - 1
        specials = [lo, hi, 0, -1, 1]
        values: list[Any] = [rng.randint(lo, hi) for _ in range(n)]
    elif kind == "BOOLEAN":
        specials, values = [True, False], [rng.random() < 0.5 for _ in range(n)]
    elif kind in ("FLOAT", "DOUBLE"):
        specials = [0.0, -0.0, math.nan, math.inf, -math.inf, 12.34, 1e-30]
        values = [rng.uniform(-1e6, 1e6) for _ in range(n)]
        if kind == "FLOAT":  # exactly representable, as a FLOAT column holds them
            values = [struct.unpack("f", struct.pack("f", v))[0] for v in values + specials]
            specials = []
    elif kind == "DATE":
        specials = [dt.date(1970, 1, 1), dt.date(1, 1, 1), dt.date(9999, 12, 31)]
        values = [dt.date(1900, 1, 1) + dt.timedelta(days=rng.randint(0, 70000)) for _ in range(n)]
    else:
        alphabet = "ab Z0é日\u00ff "
        specials = ["", " ", "a  ", "é", "  x", "日本語のテキスト"]
        values = [
            "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 23))) for _ in range(n)
        ]
    mixed = values + specials + [None] * 7
    rng.shuffle(mixed)
    return mixed


EVERY_TYPE = [
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INT",
    "BIGINT",
    "FLOAT",
    "DOUBLE",
    "STRING",
    "VARCHAR(30)",
    "CHAR(30)",
    "DATE",
]


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("hive_type", EVERY_TYPE)
def test_vectorised_equals_scalar_on_random_values(hive_type: str, version: int) -> None:
    rng = random.Random(f"{hive_type}-{version}")
    values = _random_values(hive_type, rng, 400)
    got = column_hashes(_array(values, hive_type), hive_type, version)  # type: ignore[arg-type]
    expected = [hive_hash(v, hive_type, version) for v in values]  # type: ignore[arg-type]
    assert got.dtype == np.int32
    assert got.tolist() == expected


def test_sliced_and_chunked_arrays_hash_their_own_values() -> None:
    words = ["alpha", "é", None, "gamma", "", "delta日"] * 5
    sliced = pa.array(words).slice(7, 15)
    assert column_hashes(sliced, "STRING").tolist() == [
        hive_hash(w, "STRING") for w in sliced.to_pylist()
    ]
    chunked = pa.chunked_array([pa.array(words[:4]), pa.array(words[4:])])
    assert column_hashes(chunked, "STRING").tolist() == [hive_hash(w, "STRING") for w in words]
    ints = pa.array(list(range(-50, 50)), pa.int32()).slice(13, 40)
    assert column_hashes(ints, "INT").tolist() == [hive_hash(v, "INT") for v in ints.to_pylist()]


def test_char_hash_ignores_trailing_spaces_only() -> None:
    for version in (1, 2):
        assert hive_hash("ab  ", "CHAR(5)", version) == hive_hash("ab", "CHAR(5)", version)
        assert hive_hash("ab  ", "STRING", version) != hive_hash("ab", "STRING", version)
        assert hive_hash(" ab", "CHAR(5)", version) != hive_hash("ab", "CHAR(5)", version)
        assert column_hashes(pa.array(["ab  ", "ab"]), "CHAR(5)", version)[0] == hive_hash(
            "ab", "CHAR(5)", version
        )


def test_version_1_varchar_starts_at_one_unlike_string() -> None:
    assert hive_hash("", "VARCHAR(3)", 1) == 1
    assert hive_hash("", "STRING", 1) == 0
    assert hive_hash("", "VARCHAR(3)", 2) == hive_hash("", "STRING", 2)


def test_multi_column_fold_follows_the_clustered_by_order() -> None:
    rows = pa.table(
        {
            "a": pa.array([1, 2, None, 300000], pa.int32()),
            "b": pa.array(["x", "Trino rocks", "é", None]),
        }
    )
    for version in (1, 2):
        fa = [hive_hash(v, "INT", version) for v in rows["a"].to_pylist()]
        fb = [hive_hash(v, "STRING", version) for v in rows["b"].to_pylist()]
        wrap = [
            ((31 * x + y + (1 << 31)) % (1 << 32)) - (1 << 31) for x, y in zip(fa, fb, strict=True)
        ]
        got = bucket_hashes(rows, ["a", "b"], ["INT", "STRING"], version)
        assert got.tolist() == wrap
        swapped = bucket_hashes(rows, ["b", "a"], ["STRING", "INT"], version)
        assert swapped.tolist() != got.tolist()
        buckets = bucket_ids(rows, ["a", "b"], ["INT", "STRING"], 7, version)
        assert buckets.tolist() == [(h & 0x7FFFFFFF) % 7 for h in wrap]


def test_null_hashes_to_zero_and_unbucketed_rows_go_to_bucket_zero() -> None:
    rows = pa.table({"k": pa.array([None, None], pa.int64())})
    assert bucket_hashes(rows, ["k"], ["BIGINT"]).tolist() == [0, 0]
    assert bucket_ids(rows, [], [], 8).tolist() == [0, 0]
    assert hive_hash(None, "DOUBLE") == 0


@pytest.mark.parametrize("hive_type", ["DECIMAL(10,2)", "TIMESTAMP", "BINARY"])
def test_types_without_a_reproducible_hash_are_refused_by_name(hive_type: str) -> None:
    with pytest.raises(UnsupportedBucketTypeError, match=hive_type.split("(")[0]):
        hive_hash(None, hive_type)
    with pytest.raises(UnsupportedBucketTypeError, match="cannot be a bucket column"):
        column_hashes(pa.array([None], arrow_type(hive_type)), hive_type)


def test_bad_arguments_are_clear_errors() -> None:
    rows = pa.table({"k": pa.array([1, 2**40], pa.int64())})
    with pytest.raises(InputError, match="do not fit INT"):
        bucket_ids(rows, ["k"], ["INT"], 4)
    with pytest.raises(InputError, match="must be > 0"):
        bucket_ids(rows, ["k"], ["BIGINT"], 0)
    with pytest.raises(InputError, match="bucketing_version"):
        bucket_ids(rows, ["k"], ["BIGINT"], 4, version=3)  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="not in the rows"):
        bucket_ids(rows, ["nope"], ["BIGINT"], 4)
    with pytest.raises(InputError, match="does not fit"):
        hive_hash(300, "TINYINT")


@pytest.mark.parametrize("hive_type", EVERY_TYPE)
def test_empty_and_all_null_columns(hive_type: str) -> None:
    kind = arrow_type(hive_type)
    assert column_hashes(pa.array([], kind), hive_type).tolist() == []
    assert column_hashes(pa.array([None, None], kind), hive_type).tolist() == [0, 0]
    assert column_hashes(pa.chunked_array([], kind), hive_type).tolist() == []


def test_other_arrow_encodings_hash_their_values() -> None:
    words = ["a", "é", "a", None]
    expected = [hive_hash(w, "STRING") for w in words]
    assert column_hashes(pa.array(words).dictionary_encode(), "STRING").tolist() == expected
    assert column_hashes(pa.array(words, pa.large_string()), "STRING").tolist() == expected
    small = pa.array([1, -2, None], pa.int8())
    assert column_hashes(small, "BIGINT").tolist() == [
        hive_hash(v, "BIGINT") for v in small.to_pylist()
    ]
