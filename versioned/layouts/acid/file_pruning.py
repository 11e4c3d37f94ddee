"""Which insert bucket files may hold some key of a batch, decided without opening one.

A file is kept when some batch key could live in it: the key names the file's partition
(unless keys move between partitions), falls in the file's bucket (when the bucket columns
are part of the key), lies within the file's ``min_key``/``max_key`` stats, and tests
positive in the file's Bloom filter (`key_filters`). Only Bloom side files are read; each key
is hashed once (`KeyDigests`) for every filter. A file without filters is kept. Delete files
are kept only where they may delete rows of kept insert files (`deletes_for`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from versioned.catalog.records import DataFile, PartitionInfo
from versioned.keys.bloom import KeyBloomFilter, KeyDigests
from versioned.keys.encoding import encode_keys
from versioned.keys.ranges import KeyRangeTester
from versioned.layouts.acid.directories import BaseDir, DeltaDir, parse_directory
from versioned.layouts.acid.errors import AcidNameError
from versioned.layouts.acid.key_filters import BLOOM_STAT, KEY_BLOOM_KIND, key_bloom_path
from versioned.layouts.acid.snapshot_dirs import BucketFileRef
from versioned.storage.filesystem import FileIO

_MAX = 1 << 62
NO_PARTITION = -1
"""`BatchKeys.partition_ids` of a key whose partition the snapshot does not have."""


@dataclass(frozen=True)
class BatchKeys:
    """A batch's keys, ready to test against many files.

    Attributes:
        count: Number of keys.
        partition_ids: Per key, the snapshot partition it names (`NO_PARTITION`: none);
            ``None`` when keys may live in any partition.
        buckets: Per key, its bucket; ``None`` when the bucket is not a function of the key.
        ranges: Tests the first filter key column against file stats (``None``: no filters).
        digests: The encoded keys, hashed once (``None``: no filters).
    """

    count: int
    partition_ids: np.ndarray | None
    buckets: np.ndarray | None
    ranges: KeyRangeTester | None
    digests: KeyDigests | None


def batch_keys(
    keys: pa.Table,
    *,
    partition_columns: Sequence[str] | None,
    partitions: Sequence[PartitionInfo],
    bucket_column: str | None,
    filter_columns: Sequence[str] | None,
) -> BatchKeys:
    """`BatchKeys` of ``keys`` (one row per batch key).

    Args:
        keys: The filter key columns, partition values as strings, the bucket column.
        partition_columns: Columns of ``keys`` with the partition values (``""`` and null are
            Hive's default partition), or ``None`` when keys may live in any partition.
        partitions: The snapshot's partitions.
        bucket_column: Column of ``keys`` with each key's bucket, or ``None``.
        filter_columns: The key columns the files' filters hold, or ``None``.
    """
    pids = None
    if partition_columns is not None:
        pids = partition_ids(keys, partition_columns, partitions)
    buckets = None
    if bucket_column is not None:
        buckets = np.asarray(keys.column(bucket_column).to_numpy(zero_copy_only=False))
    ranges = digests = None
    if filter_columns and keys.num_rows:
        ranges = KeyRangeTester(keys.column(filter_columns[0]))
        digests = KeyDigests(encode_keys(keys, filter_columns))
    return BatchKeys(keys.num_rows, pids, buckets, ranges, digests)


def partition_ids(
    keys: pa.Table, columns: Sequence[str], partitions: Sequence[PartitionInfo]
) -> np.ndarray:
    """Per row of ``keys``, the id of the partition its ``columns`` name, or `NO_PARTITION`.

    Vectorised: each column is dictionary-encoded and the codes are combined into one
    number per row (renumbered after each column, so it stays below the row count squared);
    only the distinct combinations are looked up in Python.
    """
    by_values = {p.values: p.id for p in partitions}
    n = keys.num_rows
    if not columns:
        return np.full(n, by_values.get((), NO_PARTITION), dtype=np.int64)
    combined = np.zeros(n, dtype=np.int64)
    texts: list[pa.Array] = []
    for name in columns:
        text = keys.column(name).cast(pa.string()).combine_chunks()
        text = pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text)
        encoded = pc.dictionary_encode(text, null_encoding="encode")
        codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        size = max(len(encoded.dictionary), 1)
        combined = np.unique(combined * size + codes, return_inverse=True)[1].reshape(-1)
        texts.append(text)
    _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    ids = np.array(
        [
            by_values.get(tuple(text[i].as_py() for text in texts), NO_PARTITION)
            for i in first.tolist()
        ],
        dtype=np.int64,
    )
    return ids[inverse.reshape(-1)]


@dataclass(frozen=True)
class FilePruning:
    """Outcome of `prune_insert_files`.

    Attributes:
        kept: The files that may hold some batch key (read them).
        by_scope: Files skipped because no key names their partition and bucket.
        by_range: Files skipped by their min/max key stats.
        by_bloom: Files skipped by their Bloom filter.
        blooms_read: Bloom side files opened.
    """

    kept: tuple[BucketFileRef, ...]
    by_scope: int = 0
    by_range: int = 0
    by_bloom: int = 0
    blooms_read: int = 0


def prune_insert_files(
    fileio: FileIO,
    table_location: str,
    refs: Sequence[BucketFileRef],
    keys: BatchKeys,
    blooms: Mapping[str, DataFile],
    *,
    load: Callable[[str], KeyBloomFilter] | None = None,
) -> FilePruning:
    """The insert files of ``refs`` that may hold a key of ``keys``.

    Args:
        refs: Insert bucket files of the snapshot.
        blooms: The snapshot's `KEY_BLOOM_KIND` files by path.
        load: Reads a Bloom file (path under the warehouse); a caller that keeps filters
            between lookups passes its cache (files never change once committed).
    """
    kept: list[BucketFileRef] = []
    by_scope = by_range = by_bloom = read = 0
    for ref in refs:
        wanted = np.ones(keys.count, dtype=bool)
        if keys.partition_ids is not None:
            pid = ref.file.partition_id
            wanted &= keys.partition_ids == (NO_PARTITION if pid is None else pid)
        if keys.buckets is not None:
            wanted &= keys.buckets == ref.bucket
        if not wanted.any():
            by_scope += 1
            continue
        stats = ref.file.stats
        if keys.ranges is not None:
            wanted &= keys.ranges.within(stats)
            if not wanted.any():
                by_range += 1
                continue
        bloom_file = blooms.get(key_bloom_path(ref.file.path)) if stats.get(BLOOM_STAT) else None
        if keys.digests is not None and bloom_file is not None:
            path = f"{table_location}/{bloom_file.path}"
            bloom = load(path) if load is not None else KeyBloomFilter.read(fileio, path)
            read += 1
            if not bloom.might_contain_rows(keys.digests, np.flatnonzero(wanted)).any():
                by_bloom += 1
                continue
        kept.append(ref)
    return FilePruning(tuple(kept), by_scope, by_range, by_bloom, read)


def deletes_for(
    kept: Sequence[BucketFileRef], deletes: Sequence[BucketFileRef]
) -> tuple[BucketFileRef, ...]:
    """The delete files that may delete a row of the insert files ``kept``.

    A delete event sits in the partition and bucket of the row it deletes, and is written
    no earlier than that row: a delete directory whose highest write id is below every
    kept file's lowest one (in that partition and bucket) deletes none of their rows.
    """
    lowest: dict[tuple[int | None, int], int] = {}
    for ref in kept:
        where = (ref.file.partition_id, ref.bucket)
        lowest[where] = min(lowest.get(where, _MAX), _write_ids(ref.directory)[0])
    return tuple(
        d
        for d in deletes
        if _write_ids(d.directory)[1] >= lowest.get((d.file.partition_id, d.bucket), _MAX)
    )


def _write_ids(directory: str) -> tuple[int, int]:
    """Lowest and highest write id a base or delta directory can hold."""
    parsed = parse_directory(directory)
    if isinstance(parsed, DeltaDir):
        return parsed.min_write_id, parsed.max_write_id
    if isinstance(parsed, BaseDir):
        return 0, parsed.write_id
    raise AcidNameError(f"{directory!r} is not a base or delta directory", path=directory)


def key_blooms(files: Sequence[DataFile]) -> dict[str, DataFile]:
    """The `KEY_BLOOM_KIND` files of a snapshot, by path."""
    return {f.path: f for f in files if f.kind == KEY_BLOOM_KIND}
