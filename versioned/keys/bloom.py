"""Bloom filters over the encoded keys of one version (pybloom-live, hashed in batches).

A filter is a `pybloom_live.BloomFilter`: pybloom sizes it (slices and bits per slice from
capacity and error rate), holds its bits and writes them. Which bits a key sets is the
filter's hash, named by the file's format version:

- **Format 2** (written since issue 45): `keys.key_hash`, two 64-bit hashes of the key
  computed with numpy over an Arrow array, no Python call per key; a key's bit in slice
  ``i`` comes from ``h1 + i * h2`` (``KeyHashScheme.positions``). The filter's
  ``make_hashes`` is set to it, so pybloom's own ``key in bloom`` and ``add`` agree with the
  vectorised tests.
- **Format 1** (read, and extended in place): pybloom's own salted SHA / xxh128 digests,
  one call per key (about 0.7 s per million keys), hashed here in a tight loop with the
  same functions and salts; pybloom's ``key.decode() in bloom`` agrees.

`KeyDigests` hashes a key set once for testing against every live version's filter.

File format (little-endian): magic ``VBLF``, format version (u16), key count (u64),
capacity (u64), error rate (f64), then pybloom's ``tofile`` output.
"""

from __future__ import annotations

import io
import math
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
from pybloom_live import BloomFilter

from versioned.errors import InputError, StorageError
from versioned.keys.bloom_schemes import (
    KEY_HASH_KIND,
    KeyHashScheme,
    Keys,
    PybloomScheme,
    Scheme,
    with_key_hash,
)
from versioned.keys.key_hash import as_binary, key_hashes
from versioned.storage.filesystem import FileIO

DEFAULT_ERROR_RATE = 0.01
MIN_CAPACITY = 1000
WRITE_HEADROOM = 1.25
"""Capacity of the filter written with a version, in multiples of its keys: room for the new
keys of later versions, so that the partition's first compaction extends the filter of its
largest version instead of hashing every key again (``engine.compacted_bloom``)."""
CAPACITY_STAT = "capacity"
ERROR_RATE_STAT = "error_rate"
FORMAT_VERSION = 2
"""The format new filters are written in (`keys.key_hash`)."""
PYBLOOM_FORMAT = 1
"""The format of pybloom-live's own digests, still read and extended."""
_MAGIC = b"VBLF"
_HEADER = struct.Struct("<4sHQQd")
_BATCH = 1 << 18  # keys per numpy batch: bounds the temporary arrays at a few tens of MB


def capacity_for(keys: int, headroom: float = 1.0) -> int:
    """The capacity of a filter built for ``keys`` keys: ``keys * headroom``, at least
    `MIN_CAPACITY`."""
    return max(math.ceil(keys * headroom), MIN_CAPACITY)


class KeyDigests:
    """Encoded keys hashed once, to test against many filters (every live version).

    Hashing is most of the cost of a test; filters of similar size share their hash
    function and salts, so their tests reuse the digests and only redo a modulo and a
    gather.
    """

    def __init__(self, keys: Keys) -> None:
        self.keys = as_binary(keys) if not isinstance(keys, Sequence) else keys
        self._words: dict[tuple[Any, int, str], np.ndarray[Any, np.dtype[Any]]] = {}

    def __len__(self) -> int:
        return len(self.keys)

    def words(self, scheme: Scheme) -> np.ndarray[Any, np.dtype[Any]]:
        """The digest words of every key under ``scheme`` (computed once per digest kind)."""
        kind = scheme.digest_kind
        if kind not in self._words:
            self._words[kind] = scheme.words(self.keys)
        return self._words[kind]

    def key_hashes(self) -> np.ndarray[Any, np.dtype[np.uint64]]:
        """`keys.key_hash.key_hashes` of the keys (shared with format-2 filters' tests)."""
        if KEY_HASH_KIND not in self._words:
            self._words[KEY_HASH_KIND] = key_hashes(self.keys)
        return self._words[KEY_HASH_KIND]


class KeyBloomFilter:
    """A Bloom filter over encoded keys: no false negatives, false positives at ~error_rate."""

    def __init__(
        self,
        capacity: int,
        error_rate: float = DEFAULT_ERROR_RATE,
        format_version: int = FORMAT_VERSION,
    ) -> None:
        """An empty filter for up to ``capacity`` keys, hashing as ``format_version`` says
        (the current format unless a filter of the old one is wanted, as in tests).

        Raises:
            InputError: ``capacity`` is not positive, ``error_rate`` not in (0, 1), or the
                format is not one this release writes.
        """
        if format_version not in (PYBLOOM_FORMAT, FORMAT_VERSION):
            raise InputError(f"no Bloom-filter format {format_version}")
        if capacity < 1 or not 0 < error_rate < 1:
            raise InputError(
                f"a Bloom filter needs capacity >= 1 and 0 < error_rate < 1, "
                f"got {capacity} and {error_rate}",
                capacity=capacity,
                error_rate=error_rate,
            )
        self._init(BloomFilter(capacity, error_rate), 0, format_version)

    def _init(self, bloom: BloomFilter, count: int, format_version: int) -> None:
        self._bloom = bloom
        self.format_version = format_version
        self._scheme: Scheme
        if format_version == PYBLOOM_FORMAT:
            self._scheme = PybloomScheme.of(bloom)
        else:
            self._scheme = KeyHashScheme.of(with_key_hash(bloom))
        self._bits = np.frombuffer(bloom.bitarray, dtype=np.uint8)  # shares pybloom's bits
        self.count = count

    @classmethod
    def build(
        cls,
        keys: Keys,
        *,
        error_rate: float = DEFAULT_ERROR_RATE,
        headroom: float = 1.0,
        format_version: int = FORMAT_VERSION,
    ) -> KeyBloomFilter:
        """A filter holding ``keys``, sized `capacity_for` their count."""
        bloom = cls(capacity_for(len(keys), headroom), error_rate, format_version)
        bloom.add_many(keys)
        return bloom

    def sizing_stats(self) -> dict[str, Any]:
        """Capacity and error rate, as kept in the catalog's file stats (see `reusable`)."""
        return {CAPACITY_STAT: self.capacity, ERROR_RATE_STAT: self.error_rate}

    @property
    def capacity(self) -> int:
        """How many keys the filter holds at its error rate."""
        return int(self._bloom.capacity)

    @property
    def error_rate(self) -> float:
        """The false-positive rate at capacity."""
        return float(self._bloom.error_rate)

    @property
    def pybloom(self) -> BloomFilter:
        """The underlying `pybloom_live.BloomFilter` (shares the bits)."""
        self._bloom.count = self.count
        return self._bloom

    def __len__(self) -> int:
        return self.count

    def add_many(self, keys: Keys | KeyDigests) -> None:
        """Add encoded keys (or keys hashed already: pass the `KeyDigests` of keys that are
        also checked for repeats, so that they are hashed once).

        Raises:
            InputError: The filter would hold more keys than its capacity.
        """
        if self.count + len(keys) > self.capacity:
            raise InputError(
                f"Bloom filter of capacity {self.capacity} cannot take {len(keys)} more keys "
                f"(holds {self.count}); build it with the full key count",
                capacity=self.capacity,
            )
        if not len(keys):
            return
        # One byte per bit while adding: ten times faster than np.bitwise_or.at, and smaller
        # than the list of keys being added (~10 bits per key at 1%).
        unpacked = np.unpackbits(self._bits, bitorder="little")
        for start in range(0, len(keys), _BATCH):
            if isinstance(keys, KeyDigests):
                words = keys.words(self._scheme)[start : start + _BATCH]
            else:
                words = self._scheme.words(keys[start : start + _BATCH])
            unpacked[self._scheme.positions(words).ravel()] = 1
        self._bits[:] = np.packbits(unpacked, bitorder="little")
        self.count += len(keys)

    def add_missing(self, keys: Keys) -> int:
        """Add the keys the filter does not hold yet, hashing each key once.

        A key that tests positive (held, or a false positive) is not counted, so `count`
        stays an estimate of the distinct keys held: a filter can be extended with new
        versions' keys as long as it has room.

        Returns:
            How many keys were added.

        Raises:
            InputError: The filter would hold more keys than its capacity (nothing added).
        """
        if not len(keys):
            return 0
        digests = KeyDigests(keys)
        missing = len(keys) - sum(self.might_contain_many(digests))
        if self.count + missing > self.capacity:
            raise InputError(
                f"Bloom filter of capacity {self.capacity} cannot take {missing} more keys "
                f"(holds {self.count}); build a larger one",
                capacity=self.capacity,
            )
        # Setting the bits of keys that test positive changes nothing: they are all set.
        unpacked = np.unpackbits(self._bits, bitorder="little")
        words = digests.words(self._scheme)
        for start in range(0, len(keys), _BATCH):
            unpacked[self._scheme.positions(words[start : start + _BATCH]).ravel()] = 1
        self._bits[:] = np.packbits(unpacked, bitorder="little")
        self.count += missing
        return missing

    def might_contain(self, key: bytes) -> bool:
        """False only if ``key`` was certainly never added."""
        return self.might_contain_many([key])[0]

    def might_contain_many(self, keys: Keys | KeyDigests) -> list[bool]:
        """`might_contain` of each key, in order.

        Pass a `KeyDigests` to test the same keys against several filters cheaply.
        """
        results: list[bool] = []
        for start in range(0, len(keys), _BATCH):
            if isinstance(keys, KeyDigests):
                words = keys.words(self._scheme)[start : start + _BATCH]
            else:
                words = self._scheme.words(keys[start : start + _BATCH])
            pos = self._scheme.positions(words)
            hits = (self._bits[pos >> 3] >> (pos & 7).astype(np.uint8)) & 1
            results.extend(hits.all(axis=1).tolist())
        return results

    def might_contain_rows(self, digests: KeyDigests, rows: np.ndarray) -> np.ndarray:
        """`might_contain` of the keys of ``digests`` at positions ``rows``, as a bool array.

        The digests are hashed once for every filter; this only gathers the rows asked for.
        """
        words = digests.words(self._scheme)
        hits = np.zeros(len(rows), dtype=bool)
        for start in range(0, len(rows), _BATCH):
            pos = self._scheme.positions(words[rows[start : start + _BATCH]])
            bits = (self._bits[pos >> 3] >> (pos & 7).astype(np.uint8)) & 1
            hits[start : start + _BATCH] = bits.all(axis=1)
        return hits

    def bit_bytes(self) -> bytes:
        """The filter's bits (as pybloom lays them out), for `union_bits` of an equal filter."""
        return self._bits.tobytes()

    def union_bits(self, bits: bytes, count: int, format_version: int = FORMAT_VERSION) -> None:
        """Add the keys of another filter of the same capacity, error rate and format, given
        its `bit_bytes`, key count and format version: the bits are OR-ed, the counts added.

        Raises:
            InputError: The bits are of a filter of another size or format, or the filter
                would hold more keys than its capacity.
        """
        if format_version != self.format_version:
            raise InputError(
                f"cannot merge the bits of a Bloom filter of format {format_version} into one "
                f"of format {self.format_version}: they hash keys differently"
            )
        other = np.frombuffer(bits, dtype=np.uint8)
        if other.shape != self._bits.shape:
            raise InputError(
                f"cannot merge the bits of a Bloom filter of {8 * len(bits)} bits into one "
                f"of {8 * len(self._bits)}: build both with the same capacity and error rate"
            )
        if self.count + count > self.capacity:
            raise InputError(
                f"Bloom filter of capacity {self.capacity} cannot take {count} more keys "
                f"(holds {self.count}); build it with the full key count",
                capacity=self.capacity,
            )
        np.bitwise_or(self._bits, other, out=self._bits)
        self.count += count

    def to_bytes(self) -> bytes:
        """The file form (see the module docstring)."""
        buffer = io.BytesIO()
        buffer.write(
            _HEADER.pack(_MAGIC, self.format_version, self.count, self.capacity, self.error_rate)
        )
        self.pybloom.tofile(buffer)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> KeyBloomFilter:
        """Inverse of `to_bytes`.

        Raises:
            StorageError: ``data`` is not a Bloom file of a format this release reads.
        """
        if len(data) < _HEADER.size or data[:4] != _MAGIC:
            raise StorageError("not a versioned Bloom-filter file (bad magic)")
        _, version, count, capacity, error_rate = _HEADER.unpack_from(data)
        if version not in (PYBLOOM_FORMAT, FORMAT_VERSION):
            raise StorageError(
                f"Bloom-filter format {version} is not readable by this release "
                f"(reads {PYBLOOM_FORMAT} and {FORMAT_VERSION}); upgrade versioned",
                format_version=version,
            )
        try:
            bloom = BloomFilter.fromfile(io.BytesIO(data[_HEADER.size :]))
        except (ValueError, struct.error) as exc:
            raise StorageError(f"corrupt Bloom-filter file: {exc}") from exc
        if bloom.capacity != capacity or bloom.error_rate != error_rate:
            raise StorageError("corrupt Bloom-filter file: header and filter disagree")
        if len(bloom.bitarray) != bloom.num_bits:
            bloom.bitarray = bloom.bitarray[: bloom.num_bits]  # drop the byte padding
        result = cls.__new__(cls)
        result._init(bloom, count, version)
        return result

    def write(self, fileio: FileIO, rel: str) -> int:
        """Write the filter atomically to ``rel``; returns the bytes written."""
        data = self.to_bytes()
        fileio.write_bytes_atomic(rel, data)
        return len(data)

    @classmethod
    def read(cls, fileio: FileIO, rel: str) -> KeyBloomFilter:
        """Read a filter written by `write`."""
        return cls.from_bytes(fileio.read_bytes(rel))
