"""A version's key facts per partition built in pieces and merged: Bloom filter, key count,
key bounds (the catalog stats of its Bloom file), and whether a record key repeats.

A large version's keys are hashed where they are, by many workers (Spark tasks): each builds a
piece per partition it sees (`KeyPieceBuilder`), a filter of the partition's full capacity
holding the keys it saw, and the pieces are merged (`merge_pieces`) by OR-ing their bits.
Every piece of a partition has the same capacity and error rate, so it hashes a key to the
same bits as a filter built over all the keys at once (`KeyBloomFilter.build`): the merged
file is the same, byte for byte.

Repeats are found by a 64-bit hash of each record key (`record_hashes`, compared by
`repeats`: the first of `keys.key_hash`'s two, which the filters' bits come from too): equal
record keys have equal hashes, so a repeat is never missed; two keys that merely share a hash
count as a repeat too (the caller then deduplicates: slower, never wrong). Plain Python over
Arrow, no Spark.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import xxhash

from versioned.errors import InputError
from versioned.keys.bloom import KeyBloomFilter, KeyDigests
from versioned.keys.encoding import encode_key_array
from versioned.keys.stats import KeyBounds

PartitionValues = tuple[str | None, ...]
FLUSH_KEYS = 1 << 17
"""Keys of a partition collected before they are hashed into its filter: few enough to hold,
enough that setting the bits (which unpacks the whole filter) costs little per key."""


@dataclass(frozen=True)
class KeyPiece:
    """What one worker saw of one partition's keys."""

    values: PartitionValues
    count: int
    bits: bytes
    bounds: str  # `KeyBounds.to_json`


@dataclass
class PartitionKeys:
    """One partition's merged key facts: its filter (holding ``count`` keys) and bounds."""

    bloom: KeyBloomFilter
    bounds: KeyBounds = field(default_factory=KeyBounds)

    def stats(self) -> dict[str, object]:
        """The stats of the partition's Bloom file (as the driver's write path keeps them)."""
        return {**self.bounds.stats(self.bloom.count), **self.bloom.sizing_stats()}


class KeyPieceBuilder:
    """Builds the pieces of one worker from batches of keys, partition by partition."""

    def __init__(
        self,
        capacities: Mapping[PartitionValues, int],
        error_rate: float,
        key_columns: Sequence[str],
        record_partitions: Sequence[int] = (),
    ) -> None:
        """
        Args:
            capacities: The filter capacity of each partition (`bloom.capacity_for` of its
                full key count).
            error_rate: The filters' false-positive rate.
            key_columns: The key columns the filters hold (`index.index_key_columns`).
            record_partitions: Positions of the partition values that are part of the
                record key (`TableSpec.record_key`) besides the key columns.
        """
        self._capacities = capacities
        self._error_rate = error_rate
        self._key_columns = list(key_columns)
        self._record_partitions = list(record_partitions)
        self._parts: dict[PartitionValues, PartitionKeys] = {}
        self._pending: dict[PartitionValues, list[pa.Array]] = {}
        self._pending_keys: dict[PartitionValues, int] = {}
        self._hashes: list[np.ndarray] = []

    def add(self, values: PartitionValues, keys: pa.Table) -> None:
        """Add the keys (one per row of ``keys``) of the partition with ``values``.

        Raises:
            InputError: No capacity is known for the partition.
        """
        if keys.num_rows == 0:
            return
        part = self._parts.get(values)
        if part is None:
            if values not in self._capacities:
                raise InputError(f"no Bloom filter capacity for partition {values!r}")
            bloom = KeyBloomFilter(self._capacities[values], self._error_rate)
            part = self._parts[values] = PartitionKeys(bloom)
        part.bounds.add(keys, self._key_columns)
        self._pending.setdefault(values, []).append(encode_key_array(keys, self._key_columns))
        self._pending_keys[values] = self._pending_keys.get(values, 0) + keys.num_rows
        if self._pending_keys[values] >= FLUSH_KEYS:
            self._flush(values)

    def pieces(self) -> Iterator[KeyPiece]:
        """The pieces of every partition seen (call once, after the last `add`)."""
        for values, part in self._parts.items():
            self._flush(values)
            yield KeyPiece(values, part.bloom.count, part.bloom.bit_bytes(), part.bounds.to_json())

    def record_hashes(self) -> np.ndarray:
        """The 64-bit hash of each record key added, sorted (call after `pieces`)."""
        for values in list(self._pending):
            self._flush(values)
        hashes = np.concatenate(self._hashes) if self._hashes else np.zeros(0, np.uint64)
        return np.sort(hashes)

    def _flush(self, values: PartitionValues) -> None:
        pending = self._pending.pop(values, [])
        self._pending_keys.pop(values, None)
        if pending:
            digests = KeyDigests(pa.chunked_array(pending, pa.binary()))
            self._parts[values].bloom.add_many(digests)
            hashes = digests.key_hashes()[:, 0].copy()
            scope = [values[i] for i in self._record_partitions]
            if scope:  # the record key's partition values, the same for every key here
                hashes ^= np.uint64(xxhash.xxh3_64_intdigest(json.dumps(scope).encode()))
            self._hashes.append(hashes)


def repeats(hashes: Iterable[np.ndarray]) -> bool:
    """Whether two record-key hashes (of all the workers' `KeyPieceBuilder.record_hashes`)
    are equal: a record key may repeat."""
    merged = np.concatenate([np.zeros(0, np.uint64), *hashes])
    merged.sort(kind="stable")  # sorted runs: merged, not sorted again
    return bool((merged[1:] == merged[:-1]).any())


def merge_pieces(
    pieces: Iterable[KeyPiece], capacities: Mapping[PartitionValues, int], error_rate: float
) -> dict[PartitionValues, PartitionKeys]:
    """The key facts of each partition, from the pieces of every worker.

    Raises:
        InputError: A piece is of a partition without a capacity, or the pieces of a
            partition hold more keys than its capacity.
    """
    merged: dict[PartitionValues, PartitionKeys] = {}
    for piece in pieces:
        part = merged.get(piece.values)
        if part is None:
            if piece.values not in capacities:
                raise InputError(f"no Bloom filter capacity for partition {piece.values!r}")
            bloom = KeyBloomFilter(capacities[piece.values], error_rate)
            part = merged[piece.values] = PartitionKeys(bloom)
        part.bloom.union_bits(piece.bits, piece.count)
        part.bounds.merge(KeyBounds.from_json(piece.bounds))
    return merged
