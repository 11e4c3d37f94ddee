"""Key facts built in pieces (one per worker) and merged equal those built from all keys at once:
the same Bloom file bytes, the same stats; a repeated record key is always found."""

from __future__ import annotations

import datetime as dt
import io
import random
import struct
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from pybloom_live import BloomFilter

from versioned.errors import InputError
from versioned.keys.bloom import (
    WRITE_HEADROOM,
    KeyBloomFilter,
    capacity_for,
)
from versioned.keys.bloom_schemes import with_key_hash
from versioned.keys.encoding import encode_keys
from versioned.keys.stats import key_stats
from versioned.layouts.version_partition.key_pieces import (
    FLUSH_KEYS,
    KeyPieceBuilder,
    merge_pieces,
    repeats,
)

KEYS = ["id", "name"]


def _keys(ids: list[int]) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": [f"n{i % 97}-ä" if i % 5 else None for i in ids],
        }
    )


def _built_at_once(keys: pa.Table) -> tuple[bytes, dict[str, Any]]:
    bloom = KeyBloomFilter.build(encode_keys(keys, KEYS), headroom=WRITE_HEADROOM)
    return bloom.to_bytes(), {**key_stats(keys, KEYS), **bloom.sizing_stats()}


@pytest.mark.parametrize("workers", [1, 3, 7])
def test_pieces_of_any_split_merge_into_the_filter_built_at_once(workers: int) -> None:
    rng = random.Random(workers)
    parts = {("a",): list(range(0, 5000)), ("b",): list(range(10**6, 10**6 + 300)), (None,): [7]}
    capacities = {v: capacity_for(len(ids), WRITE_HEADROOM) for v, ids in parts.items()}
    builders = [KeyPieceBuilder(capacities, 0.01, KEYS) for _ in range(workers)]
    for values, ids in parts.items():
        shuffled = rng.sample(ids, len(ids))
        for start in range(0, len(shuffled), 900):  # batches land on any worker
            rng.choice(builders).add(values, _keys(shuffled[start : start + 900]))
    merged = merge_pieces(
        [piece for b in builders for piece in b.pieces()], capacities, error_rate=0.01
    )
    assert set(merged) == set(parts)
    for values, ids in parts.items():
        data, stats = _built_at_once(_keys(ids))
        assert merged[values].bloom.to_bytes() == data  # byte for byte
        assert merged[values].stats() == stats
    # pybloom-live reads the merged filter and, hashing as format 2, finds every key
    bloom = with_key_hash(BloomFilter.fromfile(_body(merged[("a",)].bloom.to_bytes())))
    assert all(k.decode() in bloom for k in encode_keys(_keys(parts[("a",)]), KEYS))


def test_keys_are_hashed_in_flushes_and_all_land() -> None:
    ids = list(range(3 * FLUSH_KEYS // 2))
    capacities = {("a",): capacity_for(len(ids))}
    builder = KeyPieceBuilder(capacities, 0.01, ["id"])
    for start in range(0, len(ids), 10_000):
        builder.add(("a",), pa.table({"id": pa.array(ids[start : start + 10_000], pa.int64())}))
    (piece,) = builder.pieces()
    whole = KeyBloomFilter.build(encode_keys(pa.table({"id": ids}), ["id"]))
    assert piece.count == len(ids)
    assert piece.bits == whole.bit_bytes()
    assert len(builder.record_hashes()) == len(ids)


def test_typed_key_bounds_merge_like_the_bounds_of_all_keys() -> None:
    days = [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(40)]
    amounts = [Decimal(f"{i}.25") for i in range(40)]
    for column, values in (
        ("day", days),
        ("amount", amounts),
        ("name", [f"k{i}" for i in range(40)]),
    ):
        table = pa.table({column: values})
        capacities = {(): capacity_for(40)}
        builders = [KeyPieceBuilder(capacities, 0.01, [column]) for _ in range(2)]
        builders[0].add((), table.slice(20))
        builders[1].add((), table.slice(0, 20))
        merged = merge_pieces([p for b in builders for p in b.pieces()], capacities, 0.01)
        bloom = merged[()].bloom
        assert merged[()].stats() == {**key_stats(table, [column]), **bloom.sizing_stats()}


def test_a_record_key_seen_by_two_workers_is_a_repeat() -> None:
    capacities = {("a",): 1000, ("b",): 1000}
    first, second = (KeyPieceBuilder(capacities, 0.01, ["id"]) for _ in range(2))
    first.add(("a",), pa.table({"id": [1, 2, 3]}))
    second.add(("b",), pa.table({"id": [4, 5, 3]}))  # 3 again, in another partition
    assert repeats([first.record_hashes(), second.record_hashes()])
    assert not repeats([first.record_hashes()])
    assert not repeats([first.record_hashes(), np.zeros(0, np.uint64)])


def test_a_key_repeated_in_another_partition_is_no_repeat_when_the_partition_is_part_of_it() -> (
    None
):
    capacities = {("a",): 1000, ("b",): 1000}
    builder = KeyPieceBuilder(capacities, 0.01, ["id"], record_partitions=[0])
    builder.add(("a",), pa.table({"id": [1, 2, 3]}))
    builder.add(("b",), pa.table({"id": [3]}))
    assert not repeats([builder.record_hashes()])
    builder.add(("b",), pa.table({"id": [3]}))
    assert repeats([builder.record_hashes()])


def test_bits_of_another_size_or_too_many_keys_are_refused() -> None:
    small, big = KeyBloomFilter(1000), KeyBloomFilter(50_000)
    with pytest.raises(InputError, match="same capacity"):
        small.union_bits(big.bit_bytes(), 1)
    with pytest.raises(InputError, match="capacity"):
        small.union_bits(KeyBloomFilter(1000).bit_bytes(), 1001)
    builder = KeyPieceBuilder({("a",): 1000}, 0.01, ["id"])
    with pytest.raises(InputError, match="partition"):
        builder.add(("b",), pa.table({"id": [1]}))


def _body(data: bytes) -> Any:
    """pybloom-live's own file: what follows versioned's header (see `bloom`'s docstring)."""
    return io.BytesIO(data[struct.calcsize("<4sHQQd") :])
