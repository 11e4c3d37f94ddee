"""The key hash of Bloom-filter format 2: numpy's result equals the written definition (a
plain-Python reading of `keys.key_hash`'s docstring) for keys of every length, sliced arrays
and lists, and its values are pinned (they are in every Bloom file since format 2)."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from tests.keys.key_samples import random_key
from versioned.keys.encoding import encode_key, encode_key_array
from versioned.keys.key_hash import key_hashes

_MASK = (1 << 64) - 1


def _fmix(h: int) -> int:
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & _MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & _MASK
    return h ^ (h >> 33)


def _written(key: bytes) -> tuple[int, int]:
    """The hash as the module docstring defines it, one key at a time."""
    h = 0x9E3779B97F4A7C15 ^ ((len(key) * 0xC2B2AE3D27D4EB4F) & _MASK)
    for start in range(0, len(key), 8):
        word = int.from_bytes(key[start : start + 8].ljust(8, b"\0"), "little")
        h = (_fmix(h ^ word) * 0x87C37B91114253D5) & _MASK
    h1 = _fmix(h ^ 0x165667B19E3779F9)
    return h1, _fmix(h1 ^ 0x27D4EB2F165667C5)


def _rows(hashes: np.ndarray) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in hashes]


EDGES = [b"", b"a", b"a\0", b"abcdefg", b"abcdefgh", b"abcdefghi", "é✓".encode() * 9, bytes(40)]


def test_every_length_hashes_as_written() -> None:
    keys = [bytes(range(n)) for n in range(0, 70)] + EDGES
    assert _rows(key_hashes(keys)) == [_written(k) for k in keys]


@pytest.mark.parametrize("seed", [0, 1])
def test_random_mixed_keys_of_unequal_lengths_hash_as_written(seed: int) -> None:
    rng = random.Random(seed)
    keys = [encode_key(random_key(rng)) for _ in range(3_000)]
    assert _rows(key_hashes(pa.array(keys, pa.binary()))) == [_written(k) for k in keys]


def test_a_sliced_array_hashes_its_own_keys() -> None:
    keys = [b"x" * n for n in range(30)]
    array = pa.array(keys, pa.binary()).slice(7, 11)
    assert _rows(key_hashes(array)) == [_written(k) for k in keys[7:18]]
    chunked = pa.chunked_array([array, pa.array(keys[:3], pa.binary())])
    assert _rows(key_hashes(chunked)) == [_written(k) for k in keys[7:18] + keys[:3]]


def test_values_are_pinned() -> None:
    # Every Bloom file of format 2 holds bits set by these values: they must never change.
    keys = encode_key_array(pa.table({"id": [0, 1, -42, 10**15]}), ["id"])
    assert [f"{a:016x}{b:016x}" for a, b in _rows(key_hashes(keys))] == PINNED


PINNED = [
    "72c7a3d9242d76446a275f40998a215d",
    "083f78d0750b7707c7ba871008fff5a9",
    "c90009fc3aefba003d1bc59a38b9806c",
    "8a01d03481c49cab7218c9078fbaf9df",
]


def test_keys_differing_only_by_trailing_zero_bytes_differ() -> None:
    rows = _rows(key_hashes([b"", b"\0", b"\0\0", b"a", b"a\0"]))
    assert len(set(rows)) == 5


def test_ten_thousand_integer_keys_have_distinct_hashes() -> None:
    keys = encode_key_array(pa.table({"id": np.arange(10_000)}), ["id"])
    assert len({h for h, _ in _rows(key_hashes(keys))}) == 10_000


def test_a_null_key_is_refused() -> None:
    with pytest.raises(ValueError, match="null key"):
        key_hashes(pa.array([b"a", None], pa.binary()))
