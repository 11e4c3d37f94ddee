"""Extending a Bloom filter with new keys, as compaction does with a filter that has room."""

from __future__ import annotations

import pytest

from versioned.errors import InputError
from versioned.keys.bloom import KeyBloomFilter
from versioned.keys.encoding import encode_key


def _keys(start: int, stop: int) -> list[bytes]:
    return [encode_key((i,)) for i in range(start, stop)]


def test_add_missing_counts_only_new_keys_and_sets_the_same_bits_as_add_many() -> None:
    extended = KeyBloomFilter(5000)
    extended.add_many(_keys(0, 2000))
    added = extended.add_missing(_keys(1000, 3000))  # 1000 known, 1000 new
    assert 990 <= added <= 1000  # a false positive is not counted as new
    assert extended.count == 2000 + added
    direct = KeyBloomFilter(5000)
    direct.add_many(_keys(0, 3000))
    assert extended.pybloom.bitarray == direct.pybloom.bitarray  # the same bits
    assert all(extended.might_contain_many(_keys(0, 3000)))


def test_add_missing_refuses_keys_beyond_capacity_and_adds_nothing() -> None:
    bloom = KeyBloomFilter(1000)
    bloom.add_many(_keys(0, 900))
    before = bloom.to_bytes()
    with pytest.raises(InputError, match="capacity 1000"):
        bloom.add_missing(_keys(900, 1200))
    assert bloom.to_bytes() == before and bloom.count == 900
    assert bloom.add_missing([]) == 0
