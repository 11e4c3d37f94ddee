"""One version of one partition written from Arrow rows, without Spark.

What ``engine.version_partition.writer`` writes for a partition when every change is an
insert or update: the rows as one data file in ``version_id=V/``, version-index entries
(``U``) for the keys the live Bloom filters say may exist, and a Bloom filter over every key
of the version with the same key stats and headroom, so readers, compaction and vacuum see
no difference. Clients that write files directly (the streaming ingest API) use it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from versioned.catalog.records import FileAdd, PartitionInfo
from versioned.errors import SchemaError
from versioned.keys.bloom import WRITE_HEADROOM, KeyBloomFilter
from versioned.keys.stats import key_stats
from versioned.layouts.version_partition.index import MOVED, UPSERT, build_index, write_index
from versioned.layouts.version_partition.paths import (
    bloom_file_name,
    index_dir,
    index_file_name,
    version_dir,
)
from versioned.layouts.version_partition.probe import BLOOM_KIND, ProbeResult
from versioned.layouts.version_partition.retired_rows import RETIRING_STAT
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO
from versioned.values.arrow_types import arrow_schema


@dataclass(frozen=True)
class PartitionVersion:
    """The files of one version of one partition, written but not committed.

    Attributes:
        adds: The data, index and Bloom files, for the partition's `PartitionCommit`.
        inserted: Keys certainly new to the partition.
        updated: Keys that may have existed (Bloom positive): each got an index entry.
        bloom: The version's Bloom filter (what ``adds`` holds at `bloom_path`).
        bloom_add: The Bloom file's entry of ``adds``.
    """

    adds: tuple[FileAdd, ...]
    inserted: int
    updated: int
    bloom: KeyBloomFilter
    bloom_add: FileAdd


def write_partition_version(
    fileio: FileIO,
    table_location: str,
    spec: TableSpec,
    partition: PartitionInfo,
    version: int,
    rows: pa.Table,
    probe: ProbeResult,
    *,
    key_columns: Sequence[str],
    error_rate: float,
    retiring: int | None = None,
) -> PartitionVersion:
    """Write ``rows`` (one per key, the table's data columns) as version ``version``.

    Args:
        table_location: The table's directory relative to the warehouse root.
        partition: The partition (its id goes into the file entries).
        probe: ``rows``' keys probed against the partition's live Bloom filters
            (`probe.probe_partition`, in the order of ``rows``).
        key_columns: The key columns stored in the index and filter (`index_key_columns`).
        error_rate: The Bloom filter's false-positive rate.
        retiring: How many of the index entries (one per Bloom-positive key) may retire a
            row (`retired_rows`; default: all).

    Raises:
        SchemaError: ``rows`` do not fit the table's data columns.
        StorageError: A file could not be written.
    """
    if rows.num_rows == 0:
        raise SchemaError("a version needs at least one row")
    data = data_rows(rows, spec)
    data_rel, data_size = write_data_file(
        fileio, table_location, version_dir(partition.path, version), data
    )
    adds = [FileAdd(partition.id, data_rel, "data", version, data_size, data.num_rows)]
    may = probe.may_exist
    if may.any():
        adds.append(
            write_index_entries(
                fileio,
                table_location,
                spec,
                partition,
                version,
                rows.filter(pa.array(may)),
                UPSERT,
                retiring=retiring,
            )
        )
    bloom = KeyBloomFilter.build(probe.encoded, error_rate=error_rate, headroom=WRITE_HEADROOM)
    bloom_rel = f"{index_dir(partition.path, version)}/{bloom_file_name()}"
    size = bloom.write(fileio, f"{table_location}/{bloom_rel}")
    stats = {**key_stats(rows.select(list(key_columns)), key_columns), **bloom.sizing_stats()}
    bloom_add = FileAdd(partition.id, bloom_rel, BLOOM_KIND, version, size, rows.num_rows, stats)
    adds.append(bloom_add)
    updated = int(may.sum())
    return PartitionVersion(tuple(adds), rows.num_rows - updated, updated, bloom, bloom_add)


def data_rows(rows: pa.Table, spec: TableSpec) -> pa.Table:
    """``rows``' data columns, typed as the table's (what a data file holds).

    Raises:
        SchemaError: ``rows`` do not fit the table's data columns.
    """
    names = [c.name for c in spec.data_columns]
    try:
        return rows.select(names).cast(arrow_schema(spec, names))
    except (KeyError, ValueError, TypeError, pa.ArrowInvalid) as exc:
        raise SchemaError(f"rows do not fit the data columns of {spec.name}: {exc}") from exc


def write_data_file(
    fileio: FileIO, table_location: str, directory: str, data: pa.Table
) -> tuple[str, int]:
    """Write ``data`` (`data_rows`) as a new Parquet file in ``directory`` (a version
    folder under the table); return its path relative to the table and its size."""
    rel = f"{directory}/part-{uuid.uuid4().hex}.parquet"
    with fileio.open_output_atomic(f"{table_location}/{rel}") as out:
        pq.write_table(data, out, use_dictionary=dictionary_columns(data.schema))
        return rel, int(out.tell())


def dictionary_columns(schema: pa.Schema) -> list[str] | bool:
    """The columns worth a dictionary: strings and binaries. pyarrow tries one for every
    column and gives up only once it grew past its limit, which for distinct numbers (keys,
    amounts) doubles the time of a write and makes the file larger."""
    names = [
        f.name
        for f in schema
        if pa.types.is_string(f.type)
        or pa.types.is_large_string(f.type)
        or pa.types.is_binary(f.type)
        or pa.types.is_large_binary(f.type)
    ]
    return names or False


def write_index_entries(
    fileio: FileIO,
    table_location: str,
    spec: TableSpec,
    partition: PartitionInfo,
    version: int,
    keys: pa.Table,
    op: str,
    *,
    retiring: int | None = None,
) -> FileAdd:
    """Write one index file of version ``version`` in ``partition``: entry ``op`` (``U``,
    or ``M`` where a key moved away from the partition) for every row of ``keys``, of which
    ``retiring`` may retire a row (`retired_rows`; default: all)."""
    if op not in (UPSERT, MOVED):
        raise SchemaError(f"streamed versions write U or M entries, not {op!r}")
    entries = build_index(spec, keys, version=version, ops=op)
    rel = f"{index_dir(partition.path, version)}/{index_file_name()}"
    size = write_index(fileio, f"{table_location}/{rel}", entries)
    stats = {} if retiring is None else {RETIRING_STAT: retiring}
    return FileAdd(partition.id, rel, "index", version, size, entries.num_rows, stats)
