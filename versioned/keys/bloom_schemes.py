"""Which bits of a Bloom filter a key sets, by file format (`keys.bloom`).

* `KeyHashScheme`, format 2: double hashing of `keys.key_hash`'s two 64-bit hashes, computed
  with numpy over an Arrow array.
* `PybloomScheme`, format 1: pybloom-live's own salted digests, one call per key, computed
  here in a tight loop with the same functions and salts.

A scheme gives each key's digest words (`words`) and the bit positions they select
(`positions`); filters whose schemes share a `digest_kind` hash a key to the same words.
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
import xxhash
from pybloom_live import BloomFilter

from versioned.keys.key_hash import key_hashes

KEY_HASH_KIND = ("key_hash", 2, "Q")
"""The `digest_kind` of every format-2 filter."""
_S32 = np.uint64(32)
Keys: TypeAlias = Sequence[bytes] | pa.Array | pa.ChunkedArray
"""Encoded keys: a list of bytes, or an Arrow binary array (hashed without a copy)."""


@dataclass(frozen=True)
class PybloomScheme:
    """pybloom-live's ``make_hashfuncs``: which hash, salts and word size it uses."""

    hashfn: Callable[[bytes], Any]
    prefixes: tuple[bytes, ...]
    word: np.dtype[Any]
    num_slices: int
    bits_per_slice: int

    @classmethod
    def of(cls, bloom: BloomFilter) -> PybloomScheme:
        num_slices, bits = bloom.num_slices, bloom.bits_per_slice
        code = "Q" if bits >= 1 << 31 else "I" if bits >= 1 << 15 else "H"
        total_bits = 8 * num_slices * struct.calcsize(code)
        hashfn: Callable[[bytes], Any]
        if total_bits > 384:
            hashfn = hashlib.sha512
        elif total_bits > 256:
            hashfn = hashlib.sha384
        elif total_bits > 160:
            hashfn = hashlib.sha256
        elif total_bits > 128:
            hashfn = hashlib.sha1
        else:
            hashfn = xxhash.xxh128
        # pybloom unpacks digests in native byte order; so does numpy's plain type code.
        word = np.dtype(code)
        salts = math.ceil(num_slices / (hashfn(b"").digest_size // word.itemsize))
        # pybloom's salt i is a hash object fed hashfn(pack('I', i)).digest(); hashing a key
        # with it equals hashing that digest followed by the key.
        prefixes = tuple(hashfn(struct.pack("I", i)).digest() for i in range(salts))
        return cls(hashfn, prefixes, word, num_slices, bits)

    @property
    def digest_kind(self) -> tuple[Any, int, str]:
        """Filters with equal digest kinds hash a key to the same words."""
        return (self.hashfn, len(self.prefixes), self.word.char)

    def words(self, keys: Keys) -> np.ndarray[Any, np.dtype[Any]]:
        """The digest words of each key, shape ``(len(keys), words per key)``."""
        if not isinstance(keys, Sequence):
            keys = keys.to_pylist()
        fn = self.hashfn
        if len(self.prefixes) == 1:
            prefix = self.prefixes[0]
            digests = b"".join([fn(prefix + key).digest() for key in keys])
        else:
            digests = b"".join([fn(p + key).digest() for key in keys for p in self.prefixes])
        return np.frombuffer(digests, dtype=self.word).reshape(len(keys), -1)

    def positions(self, words: np.ndarray[Any, np.dtype[Any]]) -> np.ndarray[Any, Any]:
        """Bit positions from digest words, shape ``(len(words), num_slices)``."""
        slices = words[:, : self.num_slices] % self.bits_per_slice
        offsets = np.arange(self.num_slices, dtype=np.int64) * self.bits_per_slice
        return slices.astype(np.int64) + offsets


@dataclass(frozen=True)
class KeyHashScheme:
    """Format 2: the positions of a key by double hashing `keys.key_hash`'s two hashes."""

    num_slices: int
    bits_per_slice: int

    @classmethod
    def of(cls, bloom: BloomFilter) -> KeyHashScheme:
        return cls(bloom.num_slices, bloom.bits_per_slice)

    @property
    def digest_kind(self) -> tuple[Any, int, str]:
        """Every filter of this format hashes a key to the same two words."""
        return KEY_HASH_KIND

    def words(self, keys: Keys) -> np.ndarray[Any, np.dtype[Any]]:
        """``h1, h2`` of each key, shape ``(len(keys), 2)``."""
        return key_hashes(keys)

    def positions(self, words: np.ndarray[Any, np.dtype[Any]]) -> np.ndarray[Any, Any]:
        """Bit positions from the two hashes, shape ``(len(words), num_slices)``.

        Slice ``i`` takes ``x = h1 + i * h2`` (64-bit, wrapping) and maps its high 32 bits
        onto the slice by multiplying and shifting (``(x >> 32) * bits >> 32``: no division);
        a slice of 2**32 bits or more takes ``x mod bits``.
        """
        steps = np.arange(self.num_slices, dtype=np.uint64)
        mixed = words[:, :1] + steps * words[:, 1:2]
        bits = np.uint64(self.bits_per_slice)
        small = self.bits_per_slice < 1 << 32
        slices = ((mixed >> _S32) * bits) >> _S32 if small else mixed % bits
        offsets = np.arange(self.num_slices, dtype=np.int64) * self.bits_per_slice
        return slices.astype(np.int64) + offsets

    def pybloom_hashes(self, key: str | bytes) -> list[int]:
        """pybloom's ``make_hashes`` of a key: its bit in each slice (str keys as UTF-8)."""
        raw = key.encode("utf-8", "surrogatepass") if isinstance(key, str) else bytes(key)
        offsets = np.arange(self.num_slices, dtype=np.int64) * self.bits_per_slice
        return (self.positions(key_hashes([raw]))[0] - offsets).tolist()


Scheme: TypeAlias = PybloomScheme | KeyHashScheme


def with_key_hash(bloom: BloomFilter) -> BloomFilter:
    """``bloom`` (any pybloom-live filter, e.g. read with its ``fromfile`` from a format-2
    file's body) hashing keys as format 2 does: its own ``add`` and ``in`` then agree with
    this module's. Returns ``bloom``."""
    bloom.make_hashes = KeyHashScheme.of(bloom).pybloom_hashes
    return bloom
