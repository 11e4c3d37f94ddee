"""Which keys of a batch may live in a partition other than their own (table-wide keys).

When some partition column is not part of the primary key, a change may move its key to
another partition. The writer then retires the key's row wherever it may be: every other
partition whose live Bloom filters may hold the key gets a version-index entry. Candidates
are narrowed without reading data: partition columns that are part of the key must match,
each key must fall inside a version's min/max key range, and the Bloom filter decides.
Each key is hashed once (`KeyDigests`) and tested against every candidate filter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from versioned.catalog.records import DataFile, PartitionInfo
from versioned.keys.bloom import KeyBloomFilter, KeyDigests
from versioned.keys.columns import PartitionValues
from versioned.keys.ranges import KeyRangeTester
from versioned.layouts.version_partition.probe import BLOOM_KIND
from versioned.storage.filesystem import FileIO


def blooms_by_partition(files: Sequence[DataFile]) -> dict[int, list[DataFile]]:
    """Live Bloom files per partition id, newest version first."""
    out: dict[int, list[DataFile]] = {}
    for f in sorted(files, key=lambda f: f.version, reverse=True):
        if f.kind == BLOOM_KIND and f.partition_id is not None:
            out.setdefault(f.partition_id, []).append(f)
    return out


@dataclass(frozen=True)
class ElsewhereProbe:
    """Outcome of probing the batch's keys against the other partitions.

    Attributes:
        hits: Per partition id: positions (into the batch keys) that may live there.
        versions: Per partition id: versions whose filter matched some key.
        filters_read: Bloom files opened.
        partitions_probed: Partitions with at least one candidate key after pruning.
        newest: Per partition id: the newest version whose filter matched each key of
            ``hits`` (in the same order).
    """

    hits: Mapping[int, np.ndarray] = field(default_factory=dict)
    versions: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    filters_read: int = 0
    partitions_probed: int = 0
    newest: Mapping[int, np.ndarray] = field(default_factory=dict)

    def may_exist(self, n: int) -> np.ndarray:
        """Per batch key: whether some other partition may hold it."""
        mask = np.zeros(n, dtype=bool)
        for rows in self.hits.values():
            mask[rows] = True
        return mask


def probe_elsewhere(
    fileio: FileIO,
    table_location: str,
    keys: pa.Table,
    digests: KeyDigests,
    *,
    own_rows: Mapping[PartitionValues, np.ndarray],
    partitions: Sequence[PartitionInfo],
    blooms: Mapping[int, Sequence[DataFile]],
    key_columns: Sequence[str],
    keyed_partition_columns: Sequence[tuple[int, str]],
    load: Callable[[DataFile], KeyBloomFilter] | None = None,
) -> ElsewhereProbe:
    """Test each batch key against the live Bloom filters of every partition but its own.

    Args:
        fileio: File access at the warehouse root.
        table_location: The table's directory relative to the root.
        keys: One row per batch key: the key columns and the partition values as strings.
        digests: The encoded keys of ``keys``, in order.
        own_rows: Positions of the keys per their own partition's values.
        partitions: The snapshot's partitions.
        blooms: Live ``bloom`` files per partition id.
        key_columns: Key columns stored in the filters (the primary key less partition
            columns); the first one is pruned by range.
        keyed_partition_columns: ``(i, column)`` of the partition columns that are part of
            the primary key, ``column`` naming the string column of ``keys`` with the value
            of partition column ``i``: a key can only live where these match.
        load: How a Bloom file becomes a filter (default: read it; a streaming connection
            passes its cache).
    """

    def read_filter(bloom_file: DataFile) -> KeyBloomFilter:
        return KeyBloomFilter.read(fileio, f"{table_location}/{bloom_file.path}")

    load = load or read_filter
    n = keys.num_rows
    ranges = KeyRangeTester(keys.column(key_columns[0])) if key_columns and n else None
    hits: dict[int, np.ndarray] = {}
    versions: dict[int, tuple[int, ...]] = {}
    newest: dict[int, np.ndarray] = {}
    read = probed = 0
    for info in partitions:
        files = blooms.get(info.id, ())
        if not files or n == 0:
            continue
        base = _candidates(keys, info.values, own_rows, keyed_partition_columns)
        if not base.any():
            continue
        found = np.zeros(n, dtype=bool)
        found_in = np.full(n, -1, dtype=np.int64)
        matched: list[int] = []
        read_before = read
        for bloom_file in sorted(files, key=lambda f: f.version, reverse=True):
            wanted = base & ~found
            if ranges is not None:
                wanted &= ranges.within(bloom_file.stats)
            rows = np.flatnonzero(wanted)
            if len(rows) == 0:
                continue
            bloom = load(bloom_file)
            read += 1
            positive = rows[bloom.might_contain_rows(digests, rows)]
            if len(positive):
                found[positive] = True
                found_in[positive] = bloom_file.version  # newest first: a key stops here
                matched.append(bloom_file.version)
        if read > read_before:
            probed += 1
        if found.any():
            hits[info.id] = np.flatnonzero(found)
            versions[info.id] = tuple(sorted(matched))
            newest[info.id] = found_in[hits[info.id]]
    return ElsewhereProbe(hits, versions, read, probed, newest)


def _candidates(
    keys: pa.Table,
    values: PartitionValues,
    own_rows: Mapping[PartitionValues, np.ndarray],
    keyed_partition_columns: Sequence[tuple[int, str]],
) -> np.ndarray:
    """Keys that could live in the partition with ``values``: not their own partition, and
    equal in every partition column that is part of the key."""
    mask = np.ones(keys.num_rows, dtype=bool)
    own = own_rows.get(values)
    if own is not None:
        mask[own] = False
    for i, column in keyed_partition_columns:
        batch = keys.column(column)
        if values[i] is None:
            same = pc.is_null(batch)
        else:
            same = pc.fill_null(pc.equal(batch, pa.scalar(values[i], pa.string())), False)
        mask &= np.asarray(same.to_numpy(zero_copy_only=False), dtype=bool)
    return mask
