"""The Bloom filter of a compacted partition version (plain Python over Arrow, no Spark).

It must hold every key the compacted version has a row or a tombstone for. It is built from
the key columns of the compacted versions' data files (read with Arrow while Spark writes the
rows) and the carried tombstones: a superset of the live keys, as the filters it replaces
were (they hold deleted keys too), so it only adds false positives, never misses a key. When
it holds more keys than the compacted version has rows and tombstones (keys deleted or moved
away before the compaction) by more than its error rate, it is built again from the
compacted version's own files (`without_retired_keys`): its keys are then where they live,
which the estimate of a partition's live rows relies on (`retired_rows`).

A filter built by compaction gets headroom (`HEADROOM` times its keys), and so, with less, does
the filter written with every version (``bloom.WRITE_HEADROOM``). Compaction reuses the
partition's largest filter when it has room and holds at least as many keys as all the other
live filters together: it tests the keys of the other versions and adds those it does not hold
yet, instead of hashing every key of the partition again. A compaction of a large partition
with small deltas, the first one after a bulk load included, then costs in proportion to the
deltas. The filter is rebuilt (dropping keys deleted meanwhile) when it would run out of room.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as paorc
import pyarrow.parquet as pq

from versioned.catalog.records import DataFile
from versioned.errors import InputError
from versioned.keys.bloom import (
    CAPACITY_STAT,
    ERROR_RATE_STAT,
    MIN_CAPACITY,
    KeyBloomFilter,
)
from versioned.keys.columns import (
    index_key_columns,
)
from versioned.keys.encoding import encode_key_array
from versioned.keys.stats import KeyBounds
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO

HEADROOM = 2.0
"""Capacity of a filter built by compaction, in multiples of its keys."""
KEY_CHUNK_ROWS = 1 << 21
"""Keys read and hashed per step: bounds the driver's temporary memory."""


def compacted_bloom_filter(
    fileio: FileIO,
    table_location: str,
    spec: TableSpec,
    data_files: Sequence[DataFile],
    bloom_files: Sequence[DataFile],
    tombstones: pa.Table,
    error_rate: float,
) -> tuple[KeyBloomFilter, dict[str, Any]]:
    """The filter for a compaction of ``data_files`` (one partition) and its catalog stats.

    Args:
        data_files: The data files being compacted.
        bloom_files: The partition's live Bloom files (a compacted one may be reused).
        tombstones: Tombstones carried into the new version (their keys are added).
    """
    base_file = _reusable(bloom_files, error_rate)
    if base_file is not None:
        rest = [f.path for f in data_files if f.version != base_file.version]
        distinct, bounds = _distinct_keys(fileio, table_location, spec, rest, tombstones)
        bloom = KeyBloomFilter.read(fileio, f"{table_location}/{base_file.path}")
        try:
            for start in range(0, len(distinct), KEY_CHUNK_ROWS):
                bloom.add_missing(distinct[start : start + KEY_CHUNK_ROWS])
        except InputError:  # out of room: rebuild below
            pass
        else:
            stats = bounds.merged_with(base_file.stats).stats(bloom.count)
            return bloom, {**stats, CAPACITY_STAT: bloom.capacity, ERROR_RATE_STAT: error_rate}
    return _built(
        fileio, table_location, spec, [f.path for f in data_files], tombstones, error_rate
    )


def without_retired_keys(
    fileio: FileIO,
    table_location: str,
    spec: TableSpec,
    built: tuple[KeyBloomFilter, dict[str, Any]],
    data_files: Sequence[str],
    rows: int,
    tombstones: pa.Table,
    error_rate: float,
) -> tuple[KeyBloomFilter, dict[str, Any]]:
    """The filter (and stats) ``built`` by `compacted_bloom_filter`, or, when it holds more
    keys than the compacted version has rows and tombstones by more than its error rate, one
    built again from those.

    The surplus are keys deleted or moved away before the compaction: a later write of such
    a key finds it here as it would a false positive, and writes an entry that retires
    nothing; the estimate of the partition's live rows (`retired_rows`) would take this
    filter for the key's home. As many as the filter's false positives are tolerated, so
    that a partition with the odd delete keeps extending its filter.

    Args:
        data_files: The compacted version's data files (paths relative to the table).
        rows: Their rows.
    """
    bloom = built[0]
    surplus = bloom.count - rows - tombstones.num_rows  # live keys and tombstones differ
    if surplus <= error_rate * bloom.count:
        return built
    return _built(fileio, table_location, spec, data_files, tombstones, error_rate)


def _built(
    fileio: FileIO,
    table_location: str,
    spec: TableSpec,
    data_files: Sequence[str],
    tombstones: pa.Table,
    error_rate: float,
) -> tuple[KeyBloomFilter, dict[str, Any]]:
    """A new filter over the keys of ``data_files`` and ``tombstones``, with headroom."""
    distinct, bounds = _distinct_keys(fileio, table_location, spec, data_files, tombstones)
    capacity = max(math.ceil(len(distinct) * HEADROOM), MIN_CAPACITY)
    bloom = KeyBloomFilter(capacity, error_rate)
    for start in range(0, len(distinct), KEY_CHUNK_ROWS):
        bloom.add_many(distinct[start : start + KEY_CHUNK_ROWS])
    return bloom, {
        **bounds.stats(bloom.count),
        CAPACITY_STAT: capacity,
        ERROR_RATE_STAT: error_rate,
    }


def _reusable(bloom_files: Sequence[DataFile], error_rate: float) -> DataFile | None:
    """The filter to extend: the one holding the most keys, if it has room, the wanted
    error rate and at least as many keys as the other filters together (else extending it
    would mostly hash keys twice before running out of room)."""
    largest = max(bloom_files, key=lambda f: f.row_count, default=None)
    if largest is None:
        return None
    others = sum(f.row_count for f in bloom_files) - largest.row_count
    if (
        largest.stats.get(CAPACITY_STAT, 0) > largest.row_count
        and largest.stats.get(ERROR_RATE_STAT) == error_rate
        and largest.row_count >= others
    ):
        return largest
    return None


def _distinct_keys(
    fileio: FileIO,
    table_location: str,
    spec: TableSpec,
    data_files: Sequence[str],
    tombstones: pa.Table,
) -> tuple[pa.Array, KeyBounds]:
    """Encoded distinct keys of ``data_files`` and ``tombstones``, and their bounds."""
    keys = index_key_columns(spec)
    bounds = KeyBounds()
    encoded: list[pa.Array] = []
    for chunk in _key_chunks(fileio, table_location, data_files, spec.file_format, keys):
        encoded.append(encode_key_array(chunk, keys))
        bounds.add(chunk, keys)
    if tombstones.num_rows:
        encoded.append(encode_key_array(tombstones, keys))
        bounds.add(tombstones, keys)
    if not encoded:
        return pa.array([], pa.binary()), bounds
    return pc.unique(pa.chunked_array(encoded, pa.binary())), bounds


def _key_chunks(
    fileio: FileIO,
    table_location: str,
    files: Sequence[str],
    file_format: str,
    keys: Sequence[str],
) -> Iterator[pa.Table]:
    """The key columns of ``files``, in chunks of at most `KEY_CHUNK_ROWS` rows."""
    for path in files:
        yield from key_chunks(fileio, f"{table_location}/{path}", file_format, keys)


def key_chunks(
    fileio: FileIO, rel: str, file_format: str, keys: Sequence[str], rows: int = KEY_CHUNK_ROWS
) -> Iterator[pa.Table]:
    """The key columns of the data file ``rel``, in chunks of at most ``rows`` rows."""
    with fileio.open_input(rel) as handle:
        if file_format == "orc":
            orc = paorc.ORCFile(handle)
            for stripe in range(orc.nstripes):
                yield pa.Table.from_batches([orc.read_stripe(stripe, columns=list(keys))])
        else:
            parquet = pq.ParquetFile(handle)
            for batch in parquet.iter_batches(batch_size=rows, columns=list(keys)):
                yield pa.Table.from_batches([batch])
