"""Which keys of a batch may already exist in a partition: min/max pruning, then Bloom filters.

Reads only Bloom files (never data files): the write path of a table without an ordering
column needs nothing else to decide which keys get version-index entries.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from versioned.catalog.records import DataFile
from versioned.keys.bloom import KeyBloomFilter, KeyDigests
from versioned.keys.encoding import encode_keys, key_range
from versioned.keys.stats import may_contain_range
from versioned.storage.filesystem import FileIO

BLOOM_KIND = "bloom"


@dataclass(frozen=True)
class ProbeResult:
    """Outcome of probing one partition's batch keys.

    Attributes:
        encoded: The encoded keys, in batch order (reused for the new Bloom filter).
        may_exist: Per key: true if some live version may hold it.
        candidate_versions: Versions whose filter matched at least one key.
        filters_read: Bloom filters tested (opened, unless ``load`` had them).
        newest: Per key: the newest version whose filter matched it (-1: none).
    """

    encoded: list[bytes]
    may_exist: np.ndarray
    candidate_versions: tuple[int, ...]
    filters_read: int
    newest: np.ndarray


def probe_partition(
    fileio: FileIO,
    table_location: str,
    keys: pa.Table,
    key_columns: Sequence[str],
    blooms: Sequence[DataFile],
    *,
    load: Callable[[DataFile], KeyBloomFilter] | None = None,
) -> ProbeResult:
    """Test every key of ``keys`` against the live Bloom filters ``blooms`` of one partition.

    Args:
        fileio: File access at the warehouse root.
        table_location: The table's directory relative to the root.
        keys: The batch's rows of this partition (at least the key columns).
        key_columns: Key columns stored in Bloom filters (the primary key less partition
            columns).
        blooms: The partition's live ``bloom`` files from the snapshot.
        load: How a Bloom file becomes a filter (default: read it); a streaming connection
            passes its cache of the partition's filters (`bloom_cache.BloomFilterCache`).
    """

    def read_filter(bloom_file: DataFile) -> KeyBloomFilter:
        return KeyBloomFilter.read(fileio, f"{table_location}/{bloom_file.path}")

    load = load or read_filter
    encoded = encode_keys(keys, key_columns)
    may = np.zeros(len(encoded), dtype=bool)
    newest = np.full(len(encoded), -1, dtype=np.int64)
    bounds = key_range(keys, key_columns)
    digests = KeyDigests(encoded)
    candidates: list[int] = []
    read = 0
    for bloom_file in sorted(blooms, key=lambda f: f.version, reverse=True):
        if bounds is not None and not may_contain_range(bloom_file.stats, *bounds):
            continue
        bloom = load(bloom_file)
        read += 1
        hits = np.fromiter(bloom.might_contain_many(digests), dtype=bool, count=len(encoded))
        if hits.any():
            candidates.append(bloom_file.version)
            newest[hits & ~may] = bloom_file.version  # newest first: the first match
            may |= hits
    return ProbeResult(encoded, may, tuple(candidates), read, newest)
