"""Two 64-bit hashes of every encoded key of an Arrow array, computed with numpy.

The hash of Bloom-filter format 2 (`keys.bloom`): the bit of a key in slice ``i`` comes from
``h1 + i * h2`` (double hashing; `bloom_schemes.KeyHashScheme.positions`). No Python call
per key: keys are read as little-endian 64-bit words straight from the array's data buffer, so a
million keys of about 10 bytes hash in about 0.1 s (pybloom-live's SHA digests, one call
per key, take about 0.7 s). It is part of the storage format, so it must never change; the
tests pin its values.

The hash of a key of ``n`` bytes, words ``w_0 .. w_{m-1}`` (``m = ceil(n / 8)``, the last
one padded with zero bytes), in 64-bit arithmetic that wraps::

    h = SEED ^ (n * P1)
    for each word w_j:  h = fmix64(h ^ w_j) * P2
    h1 = fmix64(h ^ P3);  h2 = fmix64(h1 ^ P4)

``fmix64`` is MurmurHash3's 64-bit finaliser. The length taken in first tells apart keys that
differ only by trailing zero bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

Hashes = np.ndarray[Any, np.dtype[np.uint64]]

_SEED = np.uint64(0x9E3779B97F4A7C15)
_P1 = np.uint64(0xC2B2AE3D27D4EB4F)
_P2 = np.uint64(0x87C37B91114253D5)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x27D4EB2F165667C5)
_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)
_TAIL_MASKS = np.array(
    [0xFFFFFFFFFFFFFFFF] + [(1 << (8 * b)) - 1 for b in range(1, 8)], dtype=np.uint64
)
"""Mask of the valid bytes of a key's last word, by ``n % 8`` (0: all eight)."""


def _fmix(h: Hashes) -> Hashes:
    h ^= h >> _S33
    h *= _M1
    h ^= h >> _S33
    h *= _M2
    h ^= h >> _S33
    return h


def as_binary(keys: Sequence[bytes] | pa.Array | pa.ChunkedArray) -> pa.BinaryArray:
    """Encoded keys as one Arrow binary array (no copy when they already are one)."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)
    if not isinstance(keys, pa.Array):
        keys = pa.array(keys, pa.binary())
    if keys.type != pa.binary():
        keys = keys.cast(pa.binary())
    assert isinstance(keys, pa.BinaryArray)
    return keys


def key_hashes(keys: Sequence[bytes] | pa.Array | pa.ChunkedArray) -> Hashes:
    """The two hashes of each key, shape ``(len(keys), 2)`` (columns ``h1``, ``h2``).

    Raises:
        ValueError: A key is null (encoded keys never are).
    """
    array = as_binary(keys)
    n = len(array)
    if array.null_count:
        raise ValueError("a null key cannot be hashed (encode it first)")
    out = np.empty((n, 2), np.uint64)
    if n == 0:
        return out
    _, offsets_buffer, data_buffer = array.buffers()
    offsets = np.frombuffer(offsets_buffer, np.int32, n + 1, array.offset * 4).astype(np.int64)
    first, last = int(offsets[0]), int(offsets[-1])
    # The data with eight zero bytes behind it, seen as a 64-bit word at every byte offset.
    padded = np.zeros(last - first + 16, np.uint8)
    if data_buffer is not None and last > first:
        padded[: last - first] = np.frombuffer(data_buffer, np.uint8, last - first, first)
    words = np.ndarray((last - first + 8,), np.dtype("<u8"), padded, 0, (1,))
    starts = offsets[:-1] - first
    lengths = offsets[1:] - offsets[:-1]
    counts = (lengths + 7) >> 3
    h = _SEED ^ (lengths.astype(np.uint64) * _P1)
    if n and counts.min() == counts.max():
        _mix_words(h, words, starts, lengths, int(counts[0]))
    else:  # longest first, so that the keys still hashing at word j are a prefix
        order = np.argsort(-counts, kind="stable")
        ordered = h[order]
        _mix_words(ordered, words, starts[order], lengths[order], int(counts.max()), counts[order])
        h[order] = ordered
    h1 = _fmix(h ^ _P3)
    out[:, 0] = h1
    out[:, 1] = _fmix(h1 ^ _P4)
    return out


def _mix_words(
    h: Hashes,
    words: np.ndarray[Any, np.dtype[Any]],
    starts: np.ndarray[Any, np.dtype[np.int64]],
    lengths: np.ndarray[Any, np.dtype[np.int64]],
    most: int,
    counts: np.ndarray[Any, np.dtype[np.int64]] | None = None,
) -> None:
    """Fold the words of each key into ``h`` (in place); ``counts`` (descending) is each
    key's word count, None when every key has ``most`` words."""
    for j in range(most):
        c = len(h) if counts is None else int(np.searchsorted(-counts, -j, side="left"))
        word = words[starts[:c] + 8 * j]
        tail = lengths[:c] - 8 * j < 8
        if tail.any():
            word[tail] &= _TAIL_MASKS[lengths[:c][tail] & 7]
        mixed = h[:c] ^ word
        h[:c] = _fmix(mixed) * _P2
