"""Writing the files of a compacted partition version: data, Bloom filter, tombstone index.

A Parquet table's latest rows are written by Spark's tasks with pyarrow straight into
``<partition>/version_id=C/compacted-T/`` (`task_writes`); an ORC table's by Spark into the
transaction's private staging directory, from which the files are moved there. While Spark
writes, the driver builds the Bloom filter (`compacted_bloom`) from the key columns of the
compacted data files.

The rows are not shuffled to shape the files (a shuffle would double the cost of a
compaction): with at least as many scan splits as files wanted, the splits are coalesced into
that many tasks of one file each; with fewer, each task rolls over to a new file after its
share of rows (`file_shaping`). Spark sizes splits evenly by bytes, so files come out near the
target; at worst one file per task is smaller.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as paorc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame

from versioned.catalog.records import DataFile, FileAdd, TableInfo
from versioned.catalog.write_transaction import WriteTransaction
from versioned.keys.bloom import KeyBloomFilter
from versioned.layouts.version_partition.arrow_version import data_rows, write_data_file
from versioned.layouts.version_partition.compacted_bloom import (
    compacted_bloom_filter,
    without_retired_keys,
)
from versioned.layouts.version_partition.compaction_plan import PartitionPlan
from versioned.layouts.version_partition.engine.task_writes import TaskTarget, write_rows_in_tasks
from versioned.layouts.version_partition.index import VERSION_COLUMN, write_index
from versioned.layouts.version_partition.paths import (
    bloom_file_name,
    compacted_dir,
    index_dir,
    index_file_name,
    version_dir,
)
from versioned.layouts.version_partition.probe import BLOOM_KIND
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO
from versioned.storage.partition_paths import is_hidden

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import EngineContext


@dataclass(frozen=True)
class CompactedFiles:
    """The files of a compacted version, ready to commit.

    Attributes:
        adds: Data files, then the tombstone index (if any), then the Bloom filter.
        rows: Rows in the data files.
        tombstones: Tombstones in the index file.
        data_bytes: Size of the data files.
    """

    adds: tuple[FileAdd, ...]
    rows: int
    tombstones: int
    data_bytes: int


@dataclass(frozen=True)
class CompactedVersion:
    """The compacted version of one partition: what is rewritten, and where it goes.

    Attributes:
        table: The table as of the compacted snapshot (its columns are written).
        plan: The partition's plan (how many data files, how many rows expected).
        tx: The compaction's transaction: its id is the version, its staging folder is
            where Spark writes first.
        files: The partition's live files being compacted (the keys of its data files
            and its Bloom files make the new Bloom filter, see `compacted_bloom`).
    """

    table: TableInfo
    plan: PartitionPlan
    tx: WriteTransaction
    files: Sequence[DataFile]


def write_compacted_version(
    ctx: EngineContext,
    rows: DataFrame,
    target: CompactedVersion,
    *,
    scan_splits: int,
    tombstones: pa.Table,
    bloom_error_rate: float,
) -> CompactedFiles:
    """Write ``rows`` (the table's data columns) as the compacted version ``target``.

    Args:
        scan_splits: Partitions of Spark's scan of the source files.
        tombstones: Index entries of deleted keys to keep (index schema).
    """
    fileio, spec, plan = ctx.fileio, target.table.spec, target.plan
    table_location = target.table.location
    tasks, max_rows = file_shaping(plan.files_to_write, scan_splits, plan.estimated_rows)
    shaped = rows.coalesce(tasks) if tasks < scan_splits else rows
    folders = _folders(ctx, target)
    source_files = [f for f in target.files if f.kind == "data"]
    bloom_files = [f for f in target.files if f.kind == BLOOM_KIND]
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="versioned-compact") as pool:
        if spec.file_format == "parquet":
            spark_job = pool.submit(_written_in_tasks, ctx, shaped, spec, folders, max_rows)
        else:
            spark_job = pool.submit(_staged_by_spark, shaped, spec.file_format, folders, max_rows)
        bloom, stats = compacted_bloom_filter(
            fileio, table_location, spec, source_files, bloom_files, tombstones, bloom_error_rate
        )
        data = spark_job.result()
    bloom, stats = _live_keys_only(ctx, target, (bloom, stats), data, tombstones, bloom_error_rate)
    return _with_index_files(folders, data, tombstones, bloom, stats)


def _written_in_tasks(
    ctx: EngineContext, rows: DataFrame, spec: TableSpec, folders: _VersionFolders, max_rows: int
) -> list[FileAdd]:
    """A Parquet table's compacted rows, written by the tasks straight into the version's
    folder (`task_writes`): files of at most ``max_rows`` rows (0: one per task)."""
    directory = folders.own(folders.data_dir)
    written = write_rows_in_tasks(
        ctx.spark,
        ctx.fileio,
        rows,
        spec,
        TaskTarget(folders.table_location, folders.version, directory),
        partition_columns=(),
        rows_per_file=max_rows or sys.maxsize,
    )
    start = len(folders.table_location) + 1
    return [
        FileAdd(
            folders.partition_id, f.path[start:], "data", folders.version, f.size_bytes, f.row_count
        )
        for f in written
    ]


def _staged_by_spark(
    rows: DataFrame, file_format: str, folders: _VersionFolders, max_rows: int
) -> list[FileAdd]:
    """An ORC table's compacted rows, written by Spark into the transaction's staging folder
    and moved into the version's folder."""
    stage = folders.tx.staging_dir
    assert stage is not None, "a compaction's transaction has a staging folder"
    writer = rows.write.mode("errorifexists").format(file_format)
    if max_rows:
        writer = writer.option("maxRecordsPerFile", max_rows)
    writer.save(folders.fileio.full_path(stage))
    return folders.move_data_files(stage, file_format)


def write_compacted_rows(
    ctx: EngineContext,
    rows: pa.Table,
    target: CompactedVersion,
    *,
    tombstones: pa.Table,
    bloom_error_rate: float,
) -> CompactedFiles:
    """`write_compacted_version` of rows merged on the driver (`driver_compaction`): written
    with pyarrow in ``files_to_write`` even pieces while the Bloom filter is built."""
    fileio, spec, plan = ctx.fileio, target.table.spec, target.plan
    folders = _folders(ctx, target)
    source_files = [f for f in target.files if f.kind == "data"]
    bloom_files = [f for f in target.files if f.kind == BLOOM_KIND]

    def write() -> list[FileAdd]:
        if rows.num_rows == 0:
            return []
        directory = folders.own(folders.data_dir)
        pieces = max(1, min(plan.files_to_write, rows.num_rows))
        edges = [round(i * rows.num_rows / pieces) for i in range(pieces + 1)]
        written = []
        for start, end in itertools.pairwise(edges):
            part = data_rows(rows.slice(start, end - start), spec)
            path, size = write_data_file(fileio, folders.table_location, directory, part)
            written.append(
                FileAdd(folders.partition_id, path, "data", folders.version, size, part.num_rows)
            )
        return written

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="versioned-compact") as pool:
        writing = pool.submit(write)
        bloom, stats = compacted_bloom_filter(
            fileio,
            folders.table_location,
            spec,
            source_files,
            bloom_files,
            tombstones,
            bloom_error_rate,
        )
        data = writing.result()
    bloom, stats = _live_keys_only(ctx, target, (bloom, stats), data, tombstones, bloom_error_rate)
    return _with_index_files(folders, data, tombstones, bloom, stats)


def _live_keys_only(
    ctx: EngineContext,
    target: CompactedVersion,
    built: tuple[KeyBloomFilter, dict[str, Any]],
    data: Sequence[FileAdd],
    tombstones: pa.Table,
    error_rate: float,
) -> tuple[KeyBloomFilter, dict[str, Any]]:
    """The filter ``built`` while the rows were written, unless it holds keys with neither
    a row nor a tombstone in ``data`` (`compacted_bloom.without_retired_keys`)."""
    return without_retired_keys(
        ctx.fileio,
        target.table.location,
        target.table.spec,
        built,
        [a.path for a in data],
        sum(a.row_count for a in data),
        tombstones,
        error_rate,
    )


def _folders(ctx: EngineContext, target: CompactedVersion) -> _VersionFolders:
    """Where the compacted version goes. Its rows keep the version of the partition's head:
    a write planned against it still commits on top of them (its versions are higher), and
    its index entries still apply."""
    plan = target.plan
    assert plan.high_water_mark is not None, "a partition with files has a head version"
    return _VersionFolders(
        ctx.fileio,
        target.table.location,
        plan.partition.id,
        plan.path,
        plan.high_water_mark,
        target.tx,
    )


def _with_index_files(
    folders: _VersionFolders,
    data: list[FileAdd],
    tombstones: pa.Table,
    bloom: KeyBloomFilter,
    stats: dict[str, Any],
) -> CompactedFiles:
    """The compacted version's files: ``data``, the kept tombstones' index file and the
    Bloom filter (both written here)."""
    fileio, table_location = folders.fileio, folders.table_location
    partition_id, version = folders.partition_id, folders.version
    adds = list(data)
    # A key whose newest index entry is a delete has no row: a later write of the key found
    # it in the deleting version's filter and wrote a newer entry. So tombstones and rows
    # never share a key.
    if tombstones.num_rows:
        adds.append(folders.write_tombstones(tombstones))
    name = folders.claim(folders.index_dir, bloom_file_name())
    size = bloom.write(fileio, f"{table_location}/{name}")
    adds.append(FileAdd(partition_id, name, BLOOM_KIND, version, size, bloom.count, stats))
    return CompactedFiles(
        adds=tuple(adds),
        rows=sum(a.row_count for a in data),
        tombstones=tombstones.num_rows,
        data_bytes=sum(a.size_bytes for a in data),
    )


@dataclass(frozen=True)
class _VersionFolders:
    """The folders of the compacted version ``version`` of one partition."""

    fileio: FileIO
    table_location: str
    partition_id: int
    partition_path: str
    version: int
    tx: WriteTransaction
    """The compaction's transaction: names its files and deletes them if it aborts."""

    def own(self, folder: str) -> str:
        """``folder`` (relative to the table), claimed by the compaction's transaction:
        deleted with what it holds if the transaction aborts."""
        self.tx.own_dir(f"{self.table_location}/{folder}")
        return folder

    def claim(self, folder: str, name: str) -> str:
        """``folder/name``, its ``folder`` claimed (`own`)."""
        return f"{self.own(folder)}/{name}"

    @property
    def data_dir(self) -> str:
        return compacted_dir(version_dir(self.partition_path, self.version), self.tx.id)

    @property
    def index_dir(self) -> str:
        return compacted_dir(index_dir(self.partition_path, self.version), self.tx.id)

    def move_data_files(self, stage: str, file_format: str) -> list[FileAdd]:
        """Move Spark's output from ``stage`` into the version folder; drop empty files."""
        fileio, location = self.fileio, self.table_location
        data: list[FileAdd] = []
        for stat in fileio.list_files(stage):  # our own private output, not table data
            name = stat.path[len(stage) + 1 :]
            if is_hidden(name) or "/" in name:
                continue
            target = self.claim(self.data_dir, name)
            fileio.move(stat.path, f"{location}/{target}")
            count = _row_count(fileio, f"{location}/{target}", file_format)
            if count == 0:  # Spark writes an empty file for an empty result
                fileio.delete_file(f"{location}/{target}")
                continue
            data.append(FileAdd(self.partition_id, target, "data", self.version, stat.size, count))
        fileio.delete_dir(stage, missing_ok=True)
        if not data:  # every row was deleted: no data folder for this compaction
            fileio.delete_empty_dir(f"{location}/{self.data_dir}")
        return data

    def write_tombstones(self, tombstones: pa.Table) -> FileAdd:
        """The index file of the kept tombstones."""
        name = self.claim(self.index_dir, index_file_name())
        size = write_index(self.fileio, f"{self.table_location}/{name}", tombstones)
        oldest = pc.min(tombstones.column(VERSION_COLUMN)).as_py()
        stats = {"tombstones": tombstones.num_rows, "min_version": int(oldest)}
        return FileAdd(
            self.partition_id, name, "index", self.version, size, tombstones.num_rows, stats
        )


ROLLOVER_SLACK = 1.05
"""A task rolls over to a new file after this much more than its even share of rows: a task
with a few more rows than the average does not end with a tiny file."""


def file_shaping(files: int, scan_splits: int, rows_estimate: int) -> tuple[int, int]:
    """How to write about ``files`` files from ``scan_splits`` scan partitions, no shuffle.

    Returns:
        (tasks, max_rows): coalesce the scan into ``tasks`` write tasks (fewer than
        ``scan_splits`` means coalescing), each rolling over to a new file after ``max_rows``
        rows (0: one file per task).
    """
    scan_splits = max(scan_splits, 1)  # an empty scan may report none
    if files <= 1:
        return 1, 0
    if scan_splits >= files:
        return files, 0
    files_per_task = math.ceil(files / scan_splits)
    share = rows_estimate / (scan_splits * files_per_task)
    return scan_splits, max(1, math.ceil(share * ROLLOVER_SLACK))


def _row_count(fileio: FileIO, rel: str, file_format: str) -> int:
    with fileio.open_input(rel) as handle:
        if file_format == "orc":
            return int(paorc.ORCFile(handle).nrows)
        return int(pq.ParquetFile(handle).metadata.num_rows)
