"""Applying a change batch to a version-partition table as one new version.

1. Normalise the feed, keep the last change per key (one Spark job, cached).
2. Bring the batch's keys to the driver; per touched partition, test them against the live
   Bloom filters. Keys that may exist get a version-index entry; with an ordering column the
   stored ordering of those keys is read (key and ordering columns only) to skip stale
   changes, and deletes always leave a tombstone.
3. Write the rows (never deletes) into ``version_id=V`` of each partition, the index entries
   and a Bloom filter over all keys of the batch, then commit one catalog transaction.

A commit that loses a race (another version of a touched partition committed first) is
retried with a new transaction, up to ``max_attempts``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.api.results import CommitResult
from versioned.catalog.heartbeat import TransactionKeeper
from versioned.catalog.records import FileAdd, PartitionCommit, PartitionInfo, TableInfo
from versioned.catalog.store import MetaStore
from versioned.engine.batch_dedup import CHANGES, latest_per_key
from versioned.engine.feed_reader import Feed
from versioned.engine.feed_rows import OP
from versioned.engine.staging import write_version_files
from versioned.engine.stored_state import STORED_ORDER, stored_state
from versioned.errors import CommitConflictError
from versioned.layouts.version_partition.bloom import (
    DEFAULT_ERROR_RATE,
    WRITE_HEADROOM,
    KeyBloomFilter,
)
from versioned.layouts.version_partition.index import build_index, index_key_columns, write_index
from versioned.layouts.version_partition.paths import bloom_file_name, index_dir, index_file_name
from versioned.layouts.version_partition.probe import BLOOM_KIND, probe_partition
from versioned.layouts.version_partition.stats import key_stats
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO
from versioned.storage.partition_paths import partition_path

log = logging.getLogger(__name__)
Progress = Callable[[str], None]
_PART = "__p"


@dataclass(frozen=True)
class WriteOptions:
    """Tuning of a write; the defaults suit most tables."""

    max_attempts: int = 3
    txn_timeout_s: float = 300.0
    bloom_error_rate: float = DEFAULT_ERROR_RATE
    rows_per_file: int = 2_000_000


@dataclass
class _Counts:
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    ignored_deletes: int = 0
    stale: int = 0


def write_batch(
    spark: SparkSession,
    store: MetaStore,
    fileio: FileIO,
    table: TableInfo,
    feed: Feed,
    *,
    options: WriteOptions | None = None,
    progress: Progress | None = None,
) -> CommitResult:
    """Apply ``feed`` to ``table`` as one new version and return what was committed."""
    opts = options or WriteOptions()
    say = progress or (lambda _msg: None)
    started = time.monotonic()
    spec = table.spec
    part_strings = [
        F.col(p).cast("string").alias(f"{_PART}{i}") for i, p in enumerate(spec.partition_by)
    ]
    batch = latest_per_key(_empty_partitions_as_null(feed.rows, spec), spec, with_change_count=True)
    batch = batch.select("*", *part_strings).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        say("reading the batch")
        keys = _collect_keys(batch, table)
        superseded = int(pc.sum(keys.column(CHANGES)).as_py() or 0) - keys.num_rows
        say(f"{keys.num_rows} keys in {_partition_count(keys, spec.partition_by)} partitions")
        rejected = _dead_letters(spark, feed, fileio, table, say)
        for attempt in range(1, opts.max_attempts + 1):
            txn = store.begin(timeout_s=opts.txn_timeout_s)
            with TransactionKeeper(store, txn, interval_s=opts.txn_timeout_s / 4) as keeper:
                try:
                    result = _write_version(
                        spark,
                        store,
                        fileio,
                        table,
                        batch,
                        keys,
                        txn,
                        opts,
                        keeper,
                        say,
                        rejected=rejected,
                        coerced=feed.coerced_count(),
                        superseded=superseded,
                        started=started,
                    )
                except CommitConflictError as err:
                    store.abort(txn, f"commit conflict: {err}")
                    keeper.finished(txn)
                    if attempt == opts.max_attempts:
                        raise
                    say(f"commit conflict ({err}); retrying as a new version")
                    continue
                keeper.finished(txn)
                return result
        raise AssertionError("unreachable")  # pragma: no cover
    finally:
        batch.unpersist()


def _empty_partitions_as_null(rows: DataFrame, spec: TableSpec) -> DataFrame:
    """Read ``""`` partition values as null, before the batch is deduplicated.

    Hive stores both in one partition (``__HIVE_DEFAULT_PARTITION__``), which reads back as
    null. Deduplicating first would keep a key spelled with ``""`` and with null as two keys,
    and both rows would land in that one partition.
    """
    for p in spec.partition_by:
        if isinstance(rows.schema[p].dataType, T.StringType):
            rows = rows.withColumn(
                p, F.when(F.col(p) == F.lit(""), F.lit(None)).otherwise(F.col(p))
            )
    return rows


def _collect_keys(batch: DataFrame, table: TableInfo) -> pa.Table:
    spec = table.spec
    cols = [f"{_PART}{i}" for i in range(len(spec.partition_by))]
    cols += [*index_key_columns(spec), OP, CHANGES]
    if spec.ordering_column and spec.ordering_column not in cols:
        cols.append(spec.ordering_column)
    return batch.select(*cols).toArrow()


def _partition_count(keys: pa.Table, partition_by: tuple[str, ...]) -> int:
    if not partition_by or keys.num_rows == 0:
        return 1 if keys.num_rows else 0
    return len(_partition_groups(keys, len(partition_by)))


def _partition_groups(keys: pa.Table, n_parts: int) -> dict[tuple[str | None, ...], np.ndarray]:
    """Row indices of ``keys`` per partition value tuple (``""`` counts as null, like Hive)."""
    if n_parts == 0:
        return {(): np.arange(keys.num_rows)}
    columns = [keys.column(f"{_PART}{i}").to_pylist() for i in range(n_parts)]
    tuples = [tuple(v if v != "" else None for v in row) for row in zip(*columns, strict=True)]
    groups: dict[tuple[str | None, ...], list[int]] = {}
    for i, values in enumerate(tuples):
        groups.setdefault(values, []).append(i)
    return {k: np.asarray(v, dtype=np.int64) for k, v in groups.items()}


def _dead_letters(
    spark: SparkSession, feed: Feed, fileio: FileIO, table: TableInfo, say: Progress
) -> tuple[int, str | None]:
    """Count the rejected rows and, if any, write them (JSON lines with ``_reason``).

    The count was usually taken while the batch was read (`Feed.rejected_count`), so a clean
    batch costs no job here; only a batch with rejected rows is read again to write them.
    """
    if feed.rejected_count() == 0:
        return 0, None
    rejected = feed.rejected.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        count = rejected.count()
        if count == 0:
            return 0, None
        rel = f"{table.location}/_dead_letter/batch={int(time.time() * 1000)}-{id(feed):x}"
        rejected.coalesce(1).write.mode("errorifexists").json(fileio.full_path(rel))
        say(f"{count} rejected rows written to {fileio.full_path(rel)}")
        return count, rel
    finally:
        rejected.unpersist()


def _write_version(
    spark: SparkSession,
    store: MetaStore,
    fileio: FileIO,
    table: TableInfo,
    batch: DataFrame,
    keys: pa.Table,
    txn: int,
    opts: WriteOptions,
    keeper: TransactionKeeper,
    say: Progress,
    *,
    rejected: tuple[int, str | None],
    coerced: int,
    superseded: int,
    started: float,
) -> CommitResult:
    spec = table.spec
    snapshot = store.snapshot(spec.name)
    by_values = {p.values: p for p in snapshot.partitions.values()}
    key_cols = index_key_columns(spec)
    counts = _Counts(stale=superseded)
    groups = _partition_groups(keys, len(spec.partition_by))
    commits: dict[tuple[str | None, ...], list[FileAdd]] = {}
    stale_keys: list[pa.Table] = []
    plans: list[tuple[tuple[str | None, ...], PartitionInfo | None, pa.Table, Any]] = []

    say(f"probing Bloom filters of {len(groups)} partitions")
    for values, rows in groups.items():
        info = by_values.get(values)  # None: a new partition, created by the commit
        part_keys = keys.take(pa.array(rows))
        blooms = [f for f in snapshot.files if f.kind == BLOOM_KIND and f.partition_id == _id(info)]
        probe = probe_partition(fileio, table.location, part_keys, key_cols, blooms)
        plans.append((values, info, part_keys, probe))

    stale_mask: dict[tuple[str | None, ...], np.ndarray] = {}
    if spec.ordering_column:
        stale_mask = _stale_masks(spark, spec, fileio, table, snapshot.files, plans)

    for values, info, part_keys, probe in plans:
        ops = np.asarray(part_keys.column(OP).to_numpy(zero_copy_only=False))
        is_delete = ops == "D"
        stale = stale_mask.get(values, np.zeros(len(ops), dtype=bool))
        live = ~stale
        may = probe.may_exist
        counts.stale += int(stale.sum())
        counts.inserted += int((live & ~is_delete & ~may).sum())
        counts.updated += int((live & ~is_delete & may).sum())
        counts.deleted += int((live & is_delete & may).sum())
        counts.ignored_deletes += int((live & is_delete & ~may).sum())
        # Without an ordering column a delete of an absent key needs nothing; with one it
        # leaves a tombstone so that a late, older insert cannot resurrect the key.
        needs_entry = live & (may | (is_delete & bool(spec.ordering_column)))
        if stale.any():
            stale_keys.append(_stale_rows(part_keys, stale, spec))
        ppath = partition_path(spec.partition_by, values)
        idir = f"{table.location}/{index_dir(ppath, txn)}"
        adds: list[FileAdd] = []
        if needs_entry.any():
            entry_rows = part_keys.filter(pa.array(needs_entry))
            entry_ops = np.where(is_delete[needs_entry], "D", "U").tolist()
            index = build_index(spec, entry_rows, version=txn, ops=entry_ops)
            name = index_file_name()
            size = write_index(fileio, f"{idir}/{name}", index)
            adds.append(
                FileAdd(
                    _id(info), f"{index_dir(ppath, txn)}/{name}", "index", txn, size, index.num_rows
                )
            )
        bloom = KeyBloomFilter.build(
            probe.encoded, error_rate=opts.bloom_error_rate, headroom=WRITE_HEADROOM
        )
        name = bloom_file_name()
        size = bloom.write(fileio, f"{idir}/{name}")
        stats = {**key_stats(part_keys, key_cols), **bloom.sizing_stats()}
        adds.append(
            FileAdd(
                _id(info),
                f"{index_dir(ppath, txn)}/{name}",
                BLOOM_KIND,
                txn,
                size,
                part_keys.num_rows,
                stats,
            )
        )
        commits[values] = adds

    to_write = batch.where(F.col(OP) != F.lit("D"))
    if stale_keys:
        to_write = _drop_stale(spark, to_write, pa.concat_tables(stale_keys), spec)
    rows_to_write = counts.inserted + counts.updated
    say(f"writing {rows_to_write} rows as version {txn}")
    staged = write_version_files(
        to_write,
        spec,
        fileio,
        table.location,
        txn,
        row_count=rows_to_write,
        partitions=len(groups),
        rows_per_file=opts.rows_per_file,
    )
    parts_by_values = {values: info for values, info, _, _ in plans}
    for f in staged:
        info = parts_by_values[f.partition_values]
        add = f.add
        commits[f.partition_values].append(
            FileAdd(_id(info), add.path, add.kind, add.version, add.size_bytes, add.row_count)
        )

    rejected_count, dead_letter_dir = rejected
    files = [a for adds in commits.values() for a in adds]
    metrics = {
        "inserted": counts.inserted,
        "updated": counts.updated,
        "deleted": counts.deleted,
        "ignored_deletes": counts.ignored_deletes,
        "stale": counts.stale,
        "rejected": rejected_count,
        "coerced": coerced,
        "dead_letter": dead_letter_dir,
        "partitions": len(commits),
        "files_written": len(files),
        "bytes_written": sum(a.size_bytes for a in files),
    }
    keeper.check()
    store.commit(
        txn,
        spec.name,
        operation="upsert",
        partitions=[
            PartitionCommit(
                partition_id=_id(parts_by_values[values]),
                expected_head=_head(parts_by_values[values]),
                new_head=txn,
                add=tuple(adds),
                values=None if parts_by_values[values] else values,
            )
            for values, adds in commits.items()
        ],
        metrics=metrics,
    )
    say(f"committed version {txn}")
    return CommitResult(
        version=txn,
        inserted=counts.inserted,
        updated=counts.updated,
        deleted=counts.deleted,
        stale=counts.stale,
        rejected=rejected_count,
        coerced=coerced,
        ignored_deletes=counts.ignored_deletes,
        partitions=len(commits),
        files_written=len(files),
        bytes_written=sum(a.size_bytes for a in files),
        seconds=round(time.monotonic() - started, 3),
    )


def _stale_masks(
    spark: SparkSession,
    spec: Any,
    fileio: FileIO,
    table: TableInfo,
    files: Any,
    plans: list[tuple[tuple[str | None, ...], PartitionInfo | None, pa.Table, Any]],
) -> dict[tuple[str | None, ...], np.ndarray]:
    """Per partition: which batch changes are older than the stored state of their key."""
    ordering = spec.ordering_column
    key_cols = list(index_key_columns(spec))
    wanted: list[pa.Table] = []
    candidate_files = []
    for values, info, part_keys, probe in plans:
        if info is None or not probe.may_exist.any():
            continue
        positives = part_keys.filter(pa.array(probe.may_exist)).select(key_cols)
        for i, p in enumerate(spec.partition_by):
            positives = positives.append_column(
                p, pa.array([values[i]] * positives.num_rows, pa.string())
            )
        wanted.append(positives)
        versions = set(probe.candidate_versions)
        candidate_files += [
            f
            for f in files
            if f.partition_id == info.id and f.version in versions and f.kind in ("data", "index")
        ]
    if not wanted:
        return {}
    state = stored_state(
        spark, spec, fileio, table.location, candidate_files, pa.concat_tables(wanted)
    )
    if state.num_rows == 0:
        return {}
    lookup: dict[tuple[Any, ...], Any] = {}
    state_cols = [state.column(c).to_pylist() for c in [*spec.partition_by, *key_cols]]
    orders = state.column(STORED_ORDER).to_pylist()
    for i, key in enumerate(zip(*state_cols, strict=True)):
        lookup[key] = orders[i]
    masks: dict[tuple[str | None, ...], np.ndarray] = {}
    for values, _info, part_keys, _probe in plans:
        own = [part_keys.column(c).to_pylist() for c in key_cols]
        incoming = part_keys.column(ordering).to_pylist()
        mask = np.zeros(part_keys.num_rows, dtype=bool)
        for i, key in enumerate(zip(*own, strict=True)):
            stored = lookup.get((*values, *key))
            mask[i] = stored is not None and incoming[i] is not None and incoming[i] < stored
        masks[values] = mask
    return masks


def _stale_rows(part_keys: pa.Table, stale: np.ndarray, spec: Any) -> pa.Table:
    cols = [f"{_PART}{i}" for i in range(len(spec.partition_by))] + list(index_key_columns(spec))
    return part_keys.filter(pa.array(stale)).select(cols)


def _drop_stale(spark: SparkSession, rows: DataFrame, stale: pa.Table, spec: Any) -> DataFrame:
    cols = [f"{_PART}{i}" for i in range(len(spec.partition_by))] + list(index_key_columns(spec))
    drop = spark.createDataFrame(stale)
    cond = [rows[c].eqNullSafe(drop[c]) for c in cols]
    return rows.join(F.broadcast(drop), cond, "left_anti")


def _id(info: PartitionInfo | None) -> int | None:
    """The partition's id; None for a new partition (the commit creates it)."""
    return None if info is None else info.id


def _head(info: PartitionInfo | None) -> int | None:
    return None if info is None else info.head_version
