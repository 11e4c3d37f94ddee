"""Writing a version's data files: a Parquet table's are written in place by Spark's tasks
with pyarrow (`task_writes`); an ORC table's by Spark into a private staging directory, from
which each file is moved into its partition's ``version_id=V`` directory; for a small version
of a Parquet table (``write.driver_max_rows``, `layouts.version_partition.table_rules`), the
driver writes each partition's file in place with pyarrow (`write_version_files_on_driver`).

A private staging directory per transaction keeps concurrent Spark jobs of different writers
apart (Hadoop's committer would otherwise share ``<table>/_temporary``). Nothing written here
is visible until the catalog commit lists it. The folders written are claimed by the write's
transaction (`versioned.catalog.write_transaction`), which removes them when it aborts; a
crash leaves orphans for vacuum.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.orc as paorc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame

from versioned.catalog.records import FileAdd, TableInfo
from versioned.catalog.write_transaction import WriteTransaction
from versioned.keys.columns import part_column
from versioned.layouts.layout import STAGING_DIR
from versioned.layouts.version_partition.arrow_version import data_rows, write_data_file
from versioned.layouts.version_partition.engine.task_writes import (
    PartitionValues,
    TaskTarget,
    write_rows_in_tasks,
)
from versioned.layouts.version_partition.paths import version_dir
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO
from versioned.storage.partition_paths import is_hidden, parse_partition_path, partition_path

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import EngineContext

DEFAULT_ROWS_PER_FILE = 2_000_000


@dataclass(frozen=True)
class StagedFile:
    """A data file moved into its version directory (not yet committed)."""

    partition_values: tuple[str | None, ...]
    add: FileAdd


def staging_dir(table_location: str, txn_id: int) -> str:
    """The private staging directory of one transaction."""
    return f"{table_location}/{STAGING_DIR}/txn={txn_id}"


def write_version_files(
    ctx: EngineContext,
    rows: DataFrame,
    table: TableInfo,
    tx: WriteTransaction,
    *,
    row_count: int,
    partitions: Sequence[PartitionValues],
    rows_per_file: int = DEFAULT_ROWS_PER_FILE,
) -> list[StagedFile]:
    """Write ``rows`` (the table's columns, and each partition column's value as a string in
    `part_column`'s columns) as version ``tx.id`` of their partitions.

    Rows are shuffled by partition columns so each table partition gets one file (or
    ``row_count / rows_per_file`` files when unpartitioned). A Parquet table's are written
    by the tasks straight into the ``version_id=V`` folders (`task_writes`), each claimed by
    the transaction first; an ORC table's by Spark into the transaction's private staging
    folder, from which each file moves into its folder (claimed before the move).

    Args:
        partitions: The partitions the rows may land in (their values as partition strings).

    Returns:
        The files, in their ``<partition>/version_id=<version>/`` folders, with sizes and row
        counts, with ``partition_id`` unset.
    """
    if row_count == 0:
        return []
    spec = table.spec
    if spec.partition_by:
        parts = [part_column(i) for i in range(len(spec.partition_by))]
        shaped = rows.repartition(max(1, min(len(partitions), 200)), *parts)
    else:
        shaped = rows.repartition(max(1, math.ceil(row_count / rows_per_file)))
    if spec.file_format == "parquet":
        return _written_in_tasks(ctx, shaped, table, tx, partitions, rows_per_file)
    writer = shaped.select(*spec.column_names).write.mode("errorifexists")
    if spec.partition_by:
        writer = writer.partitionBy(*spec.partition_by)
    stage = _stage(tx)
    writer.format(spec.file_format).save(ctx.fileio.full_path(stage))
    staged = list_staged(ctx.fileio, spec, stage)
    moved = move_staged(ctx.fileio, staged, table, tx)
    ctx.fileio.delete_dir(stage, missing_ok=True)
    return moved


def _written_in_tasks(
    ctx: EngineContext,
    rows: DataFrame,
    table: TableInfo,
    tx: WriteTransaction,
    partitions: Sequence[PartitionValues],
    rows_per_file: int,
) -> list[StagedFile]:
    """The tasks' write of a Parquet table's rows into the version's folders."""
    spec, location = table.spec, table.location
    for values in partitions:
        tx.own_dir(f"{location}/{version_dir(partition_path(spec.partition_by, values), tx.id)}")
    written = write_rows_in_tasks(
        ctx.spark,
        ctx.fileio,
        rows,
        spec,
        TaskTarget(location, tx.id),
        partition_columns=[part_column(i) for i in range(len(spec.partition_by))],
        rows_per_file=rows_per_file,
    )
    unclaimed = {f.partition_values for f in written} - {tuple(v) for v in partitions}
    if unclaimed:  # the rows name a partition the batch's keys do not: a bug of ours
        raise AssertionError(f"rows written into partitions not planned: {sorted(unclaimed)}")
    return [
        StagedFile(
            f.partition_values,
            FileAdd(None, f.path[len(location) + 1 :], "data", tx.id, f.size_bytes, f.row_count),
        )
        for f in written
    ]


def _stage(tx: WriteTransaction) -> str:
    assert tx.staging_dir is not None, "the write transaction was opened without a staging folder"
    return tx.staging_dir


@dataclass(frozen=True)
class StagedOutput:
    """A data file Spark wrote into a transaction's staging folder."""

    partition_values: tuple[str | None, ...]
    path: str
    size_bytes: int
    row_count: int


def list_staged(fileio: FileIO, spec: TableSpec, stage: str) -> list[StagedOutput]:
    """The data files under ``stage`` (Spark's ``<column>=<value>/`` folders), with their
    partition values and row counts (read from the files' footers)."""
    staged: list[StagedOutput] = []
    for stat in fileio.list_files(stage):  # our own private output, not table data
        rel = stat.path[len(stage) + 1 :]
        if is_hidden(rel):
            continue
        directory = rel.rpartition("/")[0]
        values = tuple(v for _, v in parse_partition_path(directory))
        count = _row_count(fileio, stat.path, spec.file_format)
        staged.append(StagedOutput(values, stat.path, stat.size, count))
    return staged


def move_staged(
    fileio: FileIO, staged: Sequence[StagedOutput], table: TableInfo, tx: WriteTransaction
) -> list[StagedFile]:
    """Move staged files into their partitions' ``version_id=<tx.id>`` folders (claimed by
    the transaction first); returns them with ``partition_id`` unset."""
    spec, version = table.spec, tx.id
    moved: list[StagedFile] = []
    for f in staged:
        ppath = partition_path(spec.partition_by, f.partition_values)
        target = f"{version_dir(ppath, version)}/{f.path.rpartition('/')[2]}"
        tx.own_dir(f"{table.location}/{version_dir(ppath, version)}")
        fileio.move(f.path, f"{table.location}/{target}")
        add = FileAdd(None, target, "data", version, f.size_bytes, f.row_count)
        moved.append(StagedFile(f.partition_values, add))
    return moved


def write_version_files_on_driver(
    ctx: EngineContext,
    groups: Mapping[tuple[str | None, ...], pa.Table],
    table: TableInfo,
    tx: WriteTransaction,
    *,
    rows_per_file: int = DEFAULT_ROWS_PER_FILE,
) -> list[StagedFile]:
    """Write each partition's rows as version ``tx.id`` with pyarrow (Parquet tables).

    The same files Spark's path writes (one per partition, or ``rows / rows_per_file`` files
    when unpartitioned; data columns only, typed as the table's), straight into their
    ``version_id=V`` folders, each claimed by the transaction before a file is written
    into it: nothing is visible before the catalog commit lists them.

    Args:
        groups: The rows of each partition (its values as partition strings), with at
            least the table's data columns.

    Raises:
        SchemaError: The rows do not fit the table's data columns.
    """
    spec, version = table.spec, tx.id
    staged: list[StagedFile] = []
    for values, rows in groups.items():
        if rows.num_rows == 0:
            continue
        data = data_rows(rows, spec)
        directory = version_dir(partition_path(spec.partition_by, values), version)
        tx.own_dir(f"{table.location}/{directory}")
        pieces = max(1, math.ceil(data.num_rows / rows_per_file))
        for bounds in _slices(data.num_rows, pieces):
            part = data.slice(bounds[0], bounds[1] - bounds[0])
            target, size = write_data_file(ctx.fileio, table.location, directory, part)
            add = FileAdd(None, target, "data", version, size, part.num_rows)
            staged.append(StagedFile(tuple(values), add))
    return staged


def _slices(rows: int, pieces: int) -> Sequence[tuple[int, int]]:
    edges = np.linspace(0, rows, pieces + 1).astype(int)
    return list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))


def _row_count(fileio: FileIO, rel: str, file_format: str) -> int:
    with fileio.open_input(rel) as handle:
        if file_format == "orc":
            return int(paorc.ORCFile(handle).nrows)
        return int(pq.ParquetFile(handle).metadata.num_rows)
