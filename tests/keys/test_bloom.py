"""Key Bloom filters: no false negatives, the configured false-positive rate, pybloom-live's
bits (format 1) and pybloom's own tests with the key hash (format 2), and a file format that
round-trips and is pinned."""

from __future__ import annotations

import hashlib
import random
import struct
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest
from pybloom_live import BloomFilter
from pybloom_live.pybloom import make_hashfuncs

from tests.keys.key_samples import random_key
from versioned.errors import InputError, StorageError
from versioned.keys.bloom import (
    FORMAT_VERSION,
    MIN_CAPACITY,
    PYBLOOM_FORMAT,
    KeyBloomFilter,
    KeyDigests,
)
from versioned.keys.bloom_schemes import KeyHashScheme, PybloomScheme
from versioned.keys.encoding import encode_key
from versioned.storage.filesystem import FileIO


def _int_keys(start: int, stop: int) -> list[bytes]:
    return [encode_key((i,)) for i in range(start, stop)]


FORMATS = [PYBLOOM_FORMAT, FORMAT_VERSION]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_false_negatives_over_random_mixed_keys(seed: int) -> None:
    rng = random.Random(seed)
    keys = [encode_key(random_key(rng)) for _ in range(100_000)]
    bloom = KeyBloomFilter.build(keys, format_version=(PYBLOOM_FORMAT, FORMAT_VERSION)[seed % 2])
    assert all(bloom.might_contain_many(keys))
    assert all(bloom.might_contain(k) for k in keys[:1000])


def test_no_false_negatives_across_hashing_batches() -> None:
    keys = _int_keys(0, 300_000)  # more than one internal batch of 2**18 keys
    bloom = KeyBloomFilter.build(keys)
    assert all(bloom.might_contain_many(keys))


@pytest.mark.parametrize("format_version", FORMATS)
@pytest.mark.parametrize("error_rate", [0.01, 0.001])
def test_false_positive_rate_is_near_the_configured_rate(
    error_rate: float, format_version: int
) -> None:
    bloom = KeyBloomFilter.build(
        _int_keys(0, 100_000), error_rate=error_rate, format_version=format_version
    )
    probes = 200_000
    hits = sum(bloom.might_contain_many(_int_keys(10**9, 10**9 + probes)))
    assert 0.6 * error_rate < hits / probes < 1.4 * error_rate


def test_filter_filled_incrementally_equals_one_built_at_once() -> None:
    keys = _int_keys(0, 5_000)
    whole = KeyBloomFilter(len(keys))
    whole.add_many(keys)
    parts = KeyBloomFilter(len(keys))
    for start in range(0, len(keys), 700):
        parts.add_many(keys[start : start + 700])
    assert parts.to_bytes() == whole.to_bytes()
    assert len(parts) == len(keys)


def test_capacity_is_at_least_the_minimum_and_error_rate_configurable() -> None:
    assert KeyBloomFilter.build(_int_keys(0, 10)).capacity == MIN_CAPACITY
    big = KeyBloomFilter.build(_int_keys(0, 2_500), error_rate=0.05)
    assert big.capacity == 2_500
    assert big.error_rate == 0.05


def test_empty_filter_contains_nothing() -> None:
    bloom = KeyBloomFilter.build([])
    assert bloom.might_contain_many(_int_keys(0, 1000)) == [False] * 1000
    assert bloom.might_contain_many([]) == []


def test_adding_past_capacity_is_refused() -> None:
    bloom = KeyBloomFilter(1000)
    bloom.add_many(_int_keys(0, 1000))
    with pytest.raises(InputError):
        bloom.add_many(_int_keys(1000, 1001))


@pytest.mark.parametrize("capacity, error_rate", [(0, 0.01), (10, 0.0), (10, 1.0)])
def test_invalid_parameters_are_refused(capacity: int, error_rate: float) -> None:
    with pytest.raises(InputError):
        KeyBloomFilter(capacity, error_rate)


# Each (capacity, error rate) selects another of pybloom-live's hash functions.
PYBLOOM_CASES = [(1000, 0.01), (1000, 0.001), (100_000, 0.01), (50_000, 0.001), (30_000, 1e-4)]


def test_cases_cover_every_hash_function_pybloom_uses() -> None:
    used = {BloomFilter(c, e).hashfn.__name__ for c, e in PYBLOOM_CASES}
    assert {"openssl_sha1", "openssl_sha256", "openssl_sha384", "openssl_sha512"} <= used
    assert len(used) == 5  # plus xxh128


@pytest.mark.parametrize("capacity, error_rate", PYBLOOM_CASES)
def test_bits_are_exactly_pybloom_lives(capacity: int, error_rate: float) -> None:
    rng = random.Random(capacity)
    keys = [encode_key(random_key(rng)) for _ in range(min(capacity, 3_000))]
    ours = KeyBloomFilter(capacity, error_rate, PYBLOOM_FORMAT)
    ours.add_many(keys)
    theirs = BloomFilter(capacity, error_rate)
    for key in keys:
        theirs.add(key.decode("utf-8"))
    assert ours.pybloom.bitarray == theirs.bitarray
    probes = [encode_key(random_key(rng)) for _ in range(3_000)]
    assert ours.might_contain_many(probes) == [p.decode("utf-8") in theirs for p in probes]


@pytest.mark.parametrize("capacity, error_rate", PYBLOOM_CASES)
def test_pybloom_with_the_key_hash_sets_and_tests_the_vectorised_bits(
    capacity: int, error_rate: float
) -> None:
    # Format 2 installs the key hash as the pybloom filter's make_hashes: pybloom's own add
    # (one key a call) sets the bits numpy sets for a whole array, and its `in` agrees.
    rng = random.Random(capacity)
    keys = [encode_key(random_key(rng)) for _ in range(min(capacity, 3_000))]
    ours = KeyBloomFilter(capacity, error_rate)
    ours.add_many(pa.array(keys, pa.binary()))
    theirs = KeyBloomFilter(capacity, error_rate).pybloom
    for key in keys:
        theirs.add(key.decode("utf-8"))
    assert ours.pybloom.bitarray == theirs.bitarray
    probes = [encode_key(random_key(rng)) for _ in range(3_000)]
    assert ours.might_contain_many(probes) == [p.decode("utf-8") in theirs for p in probes]


@pytest.mark.parametrize(
    "num_slices, bits_per_slice",
    [(7, 1000), (7, 1 << 20), (10, 1 << 20), (14, 1 << 20), (7, 1 << 31), (10, 1 << 31)],
)
def test_hash_positions_match_pybloom_for_any_filter_size(
    num_slices: int, bits_per_slice: int
) -> None:
    # Filters of 2**31 bits per slice are too big to allocate in a test; the positions are
    # computed from the sizes alone, so compare those (this covers pybloom's 64-bit words
    # and its several salts).
    sizes = SimpleNamespace(num_slices=num_slices, bits_per_slice=bits_per_slice)
    scheme = PybloomScheme.of(sizes)
    make_hashes, _ = make_hashfuncs(num_slices, bits_per_slice)
    keys = [*_int_keys(0, 200), encode_key(("é✓", b"\x00"))]
    positions = scheme.positions(scheme.words(keys))
    offsets = [i * bits_per_slice for i in range(num_slices)]
    for key, row in zip(keys, positions.tolist(), strict=True):
        expected = [h + o for h, o in zip(make_hashes(key.decode()), offsets, strict=True)]
        assert row == expected


@pytest.mark.parametrize("format_version", FORMATS)
def test_bytes_round_trip_keeps_bits_count_and_parameters(format_version: int) -> None:
    keys = _int_keys(0, 3_000)
    bloom = KeyBloomFilter.build(keys, error_rate=0.02, format_version=format_version)
    again = KeyBloomFilter.from_bytes(bloom.to_bytes())
    assert (again.count, again.capacity, again.error_rate) == (3_000, 3_000, 0.02)
    assert again.format_version == format_version
    assert again.to_bytes() == bloom.to_bytes()
    probes = _int_keys(0, 10_000)
    assert again.might_contain_many(probes) == bloom.might_contain_many(probes)
    again.add_many([])  # a read filter can be extended
    assert again.to_bytes() == bloom.to_bytes()


@pytest.mark.parametrize(
    "format_version, digest",
    [
        (1, "5546246b6ee68930531f264967e12ac36e3106858e1e8c555b834708485da271"),
        (2, "7e4052fef095b9cf72c3ba4567fca93e5cc7b52ef59fafcef39884382e57433a"),
    ],
)
def test_file_format_is_pinned(format_version: int, digest: str) -> None:
    # Bloom files outlive releases: a change to the header, the key encoding or the hashing
    # breaks every table written before it.
    keys = [encode_key((i, f"k{i}")) for i in range(5000)]
    data = KeyBloomFilter.build(keys, format_version=format_version).to_bytes()
    assert data[:4] == b"VBLF"
    assert struct.unpack_from("<HQQd", data, 4) == (format_version, 5000, 5000, 0.01)
    assert hashlib.sha256(data).hexdigest() == digest


def test_new_filters_are_of_the_key_hash_format() -> None:
    assert FORMAT_VERSION == 2
    assert KeyBloomFilter(1000).format_version == FORMAT_VERSION
    data = KeyBloomFilter.build(_int_keys(0, 10)).to_bytes()
    assert struct.unpack_from("<H", data, 4) == (FORMAT_VERSION,)


def test_a_format_one_file_is_read_probed_and_extended_in_its_own_format() -> None:
    keys = _int_keys(0, 2_000)
    old = KeyBloomFilter.from_bytes(
        KeyBloomFilter.build(keys, headroom=2.0, format_version=PYBLOOM_FORMAT).to_bytes()
    )
    assert all(old.might_contain_many(keys))
    more = _int_keys(2_000, 3_000)
    assert 0.97 * len(more) <= old.add_missing(more) <= len(more)  # less its false positives
    theirs = BloomFilter(old.capacity, old.error_rate)
    for key in keys + more:
        theirs.add(key.decode())
    assert old.pybloom.bitarray == theirs.bitarray  # still pybloom's own bits
    assert struct.unpack_from("<H", old.to_bytes(), 4) == (PYBLOOM_FORMAT,)


def test_bits_of_another_format_are_not_merged() -> None:
    new = KeyBloomFilter(1000)
    old = KeyBloomFilter.build(_int_keys(0, 10), format_version=PYBLOOM_FORMAT)
    with pytest.raises(InputError, match="format 1 into one of format 2"):
        new.union_bits(old.bit_bytes(), old.count, old.format_version)
    assert len(new) == 0


def test_write_and_read_through_fileio(warehouse: Path) -> None:
    fio = FileIO.for_root(str(warehouse))
    keys = _int_keys(0, 2_000)
    bloom = KeyBloomFilter.build(keys)
    size = bloom.write(fio, "t/version_id=4/_index/bloom-x.bin")
    assert size == fio.size("t/version_id=4/_index/bloom-x.bin")
    again = KeyBloomFilter.read(fio, "t/version_id=4/_index/bloom-x.bin")
    assert fio.opened == ["t/version_id=4/_index/bloom-x.bin"]
    assert all(again.might_contain_many(keys))


@pytest.mark.parametrize(
    "corrupt",
    [
        b"",
        b"NOPE" + bytes(40),
        b"VBLF" + struct.pack("<HQQd", 3, 0, 1000, 0.01),
        b"VBLF" + struct.pack("<HQQd", 2, 0, 1000, 0.01),
    ],
)
def test_unreadable_bytes_raise_storage_error(corrupt: bytes) -> None:
    with pytest.raises(StorageError):
        KeyBloomFilter.from_bytes(corrupt)


def test_truncated_or_inconsistent_file_raises_storage_error() -> None:
    data = KeyBloomFilter.build(_int_keys(0, 2_000)).to_bytes()
    with pytest.raises(StorageError):
        KeyBloomFilter.from_bytes(data[:-100])
    with pytest.raises(StorageError):
        KeyBloomFilter.from_bytes(data[:4] + struct.pack("<HQQd", 1, 2000, 9999, 0.01) + data[30:])


def test_shared_digests_answer_like_plain_keys_for_filters_of_any_size() -> None:
    rng = random.Random(11)
    probes = [encode_key(random_key(rng)) for _ in range(20_000)]
    digests = KeyDigests(probes)
    filters = [
        KeyBloomFilter.build(probes[:n:2], error_rate=e, format_version=f)
        for n, e in [(2_000, 0.01), (20_000, 0.01), (12_000, 0.01), (20_000, 0.001), (500, 0.5)]
        for f in FORMATS
    ]
    for bloom in filters:
        assert bloom.might_contain_many(digests) == bloom.might_contain_many(probes)
    assert len(digests) == len(probes)


@pytest.mark.parametrize("bits_per_slice", [1, 1000, (1 << 32) - 1, 1 << 32, 3 << 33])
def test_key_hash_positions_fall_in_their_slices_for_any_filter_size(bits_per_slice: int) -> None:
    # Slices under 2**32 bits map the high 32 bits of h1 + i*h2 by a multiply and shift;
    # larger ones take the 64-bit value modulo the slice (too big to allocate: sizes alone).
    scheme = KeyHashScheme(7, bits_per_slice)
    words = KeyDigests(_int_keys(0, 2_000)).key_hashes()
    positions = scheme.positions(words)
    slices = positions - np.arange(7, dtype=np.int64) * bits_per_slice
    assert ((slices >= 0) & (slices < bits_per_slice)).all()
    mixed = [[(int(a) + i * int(b)) & (2**64 - 1) for i in range(7)] for a, b in words[:50]]
    expected = [
        [(x >> 32) * bits_per_slice >> 32 if bits_per_slice < 1 << 32 else x % bits_per_slice]
        for row in mixed
        for x in row
    ]
    assert [[v] for v in slices[:50].ravel().tolist()] == expected
    if bits_per_slice >= 1000:  # the slices' bits are spread, not bunched
        assert len(set(slices[:, 0].tolist())) > 0.6 * min(bits_per_slice, len(words))
