"""A version's data files written by Spark's tasks with pyarrow, straight into their
``version_id=V`` folders: no staging folder, no sort, no move (on an object store: no copy).

What a Parquet table's writes use: its first load (`bulk_load`, `write_in_tasks`), the
general path's rows (`staging.write_version_files`) and a compaction's
(`compacted_version`), through `write_rows_in_tasks`. One ``mapInArrow`` job reads the rows,
and each task:

* for a first load, reads the feed's checked rows (`Feed.checked`: every row, with its op
  code and whether it was rejected or coerced) and counts the rejected rows, the applied
  deletes and the applied rows with coerced values, so the job carries no observation of
  Spark's (its ``CollectMetrics`` node cost a first load of 10M rows 1-2 s);
* groups the rows it writes by their partition and writes them, typed as the table's data
  columns (`arrow_version.data_rows`), as files of at most ``rows_per_file`` rows in row
  groups of up to `ROW_GROUP_ROWS`, each in its partition's ``version_id=V`` folder (or in
  the one folder the write names: a compaction's);
* returns one row per file (partition values, path, rows, bytes) and one row of its counts.

A file is named as Spark's writer names its own, ``part-<split>-<uuid>.parquet`` (the split
is the task's partition of the job: which task wrote a file); the driver's pyarrow files
(`arrow_version.write_data_file`) are ``part-<uuid>.parquet``.

Nothing written is visible before the catalog commit lists it. The folders the files go to
are claimed by the write's transaction (deleted if it aborts). A task attempt that fails
deletes the files it opened; what an attempt that died left in a folder the job wrote is
deleted after the job (each folder is listed once): SQL views read whole version folders, so
no file but the reported ones may stay there.
"""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark import TaskContext
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema

from versioned.engine.feeds.op_codes import DELETE
from versioned.engine.feeds.rows import COERCED_FLAG, OP, REJECTED_FLAG
from versioned.engine.spark.operation_conf import operation_conf
from versioned.engine.spark.python_workers import python_worker_job
from versioned.layouts.version_partition.arrow_version import data_rows, dictionary_columns
from versioned.layouts.version_partition.paths import version_dir
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO
from versioned.storage.partition_paths import partition_path

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROW_GROUP_ROWS = 1 << 20
"""Rows of a row group (pyarrow's default; Spark's reader splits work by row group)."""
BUFFER_BYTES = 256 << 20
"""Bytes of rows a task holds before it writes its largest partitions' rows out."""
ARROW_BATCH_ROWS = "100000"
"""Rows of each Arrow batch Spark hands a task (its default of 10,000 costs a write of 10M
rows about 1 s in per-batch work)."""
PartitionValues = tuple[str | None, ...]
_FILE, _COUNTS = 0, 1
_ARROW_OUT = pa.schema(
    [
        ("kind", pa.int8()),
        ("values", pa.string()),  # the file's partition values, as JSON
        ("path", pa.string()),  # relative to the file system's root
        *[(name, pa.int64()) for name in ("rows", "bytes", "rejected", "deletes", "coerced")],
    ]
)
_OUT = from_arrow_schema(_ARROW_OUT)  # what the tasks return, in Spark's types
# Partition columns whose text a task makes from the Arrow value as Spark's cast to STRING
# would; the others are cast by Spark into a column of their own.
_TEXT_IN_TASK = (
    T.ByteType,
    T.ShortType,
    T.IntegerType,
    T.LongType,
    T.StringType,
    T.BooleanType,
    T.DateType,
)
_PART_TEXT = "#part:"


@dataclass(frozen=True)
class WrittenFile:
    """A data file a task wrote into its partition's version folder (not yet committed)."""

    partition_values: PartitionValues
    path: str
    """Relative to the file system's root."""
    row_count: int
    size_bytes: int


@dataclass(frozen=True)
class TaskWrites:
    """What the tasks wrote and counted."""

    files: list[WrittenFile]
    rejected: int
    deletes: int
    coerced: int


@dataclass(frozen=True)
class TaskTarget:
    """Where a job's tasks put their files."""

    table_location: str
    """The table's folder, relative to the root of the file system."""
    version: int
    folder: str | None = None
    """The folder of every file, relative to the table (a compaction's), or None: each
    partition's ``version_id=V`` folder."""

    def folder_of(self, spec: TableSpec, values: PartitionValues) -> str:
        """The folder, relative to the file system's root, of the rows of ``values``."""
        folder = self.folder or version_dir(partition_path(spec.partition_by, values), self.version)
        return f"{self.table_location}/{folder}"


def write_in_tasks(
    spark: SparkSession,
    fileio: FileIO,
    checked: DataFrame,
    spec: TableSpec,
    table_location: str,
    version: int,
    rows_per_file: int,
) -> TaskWrites:
    """Write the applicable rows of ``checked`` (`Feed.checked`, empty partition values as
    null) as version ``version`` of their partitions, in one job of Python tasks.

    Args:
        table_location: The table's folder, relative to the root of ``fileio``.
    """
    texts: list[Column] = []
    keys: list[str] = []
    for i, name in enumerate(spec.partition_by):
        if isinstance(checked.schema[name].dataType, _TEXT_IN_TASK):
            keys.append(name)
        else:
            texts.append(F.col(name).cast("string").alias(f"{_PART_TEXT}{i}"))
            keys.append(f"{_PART_TEXT}{i}")
    frame = checked.select(*spec.column_names, OP, REJECTED_FLAG, COERCED_FLAG, *texts)
    task = _Task(fileio, spec, TaskTarget(table_location, version), rows_per_file, keys)
    return _run(spark, fileio, frame, task)


def write_rows_in_tasks(
    spark: SparkSession,
    fileio: FileIO,
    rows: DataFrame,
    spec: TableSpec,
    target: TaskTarget,
    *,
    partition_columns: Sequence[str],
    rows_per_file: int,
) -> list[WrittenFile]:
    """Write every row of ``rows`` in one job of Python tasks (each task's rows as a file
    per partition, or more of at most ``rows_per_file`` rows).

    Args:
        rows: The table's data columns and ``partition_columns``.
        partition_columns: Columns holding each partition column's value, in the table's
            order, as Spark's cast to STRING writes it (none: one folder, `TaskTarget`).
    """
    names = [c.name for c in spec.data_columns]
    frame = rows.select(*names, *[c for c in partition_columns if c not in names])
    task = _Task(fileio, spec, target, rows_per_file, list(partition_columns), checked=False)
    return _run(spark, fileio, frame, task).files


def _run(spark: SparkSession, fileio: FileIO, frame: DataFrame, task: _Task) -> TaskWrites:
    """Run ``task`` over ``frame``'s partitions; what the tasks reported, once the files no
    task reported are deleted."""
    settings = {"spark.sql.execution.arrow.maxRecordsPerBatch": ARROW_BATCH_ROWS}
    with operation_conf(spark, settings), python_worker_job(spark):
        found = frame.mapInArrow(task.run, _OUT).toArrow()
    written = _gathered(found)
    _remove_unreported(fileio, written.files)
    return written


def _remove_unreported(fileio: FileIO, files: Sequence[WrittenFile]) -> None:
    """Delete the files of the folders written that no task reported (a lost attempt's)."""
    reported = {f.path for f in files}
    for folder in sorted({f.path.rpartition("/")[0] for f in files}):
        for stat in fileio.list_files(folder, recursive=False):
            if stat.path not in reported:
                fileio.delete_file(stat.path, missing_ok=True)


def _gathered(found: pa.Table) -> TaskWrites:
    kinds = found.column("kind").to_numpy(zero_copy_only=False)
    counts = found.filter(pa.array(kinds == _COUNTS))
    files = found.filter(pa.array(kinds == _FILE))
    written = [
        WrittenFile(tuple(json.loads(values)), path, rows, size)
        for values, path, rows, size in zip(
            files.column("values").to_pylist(),
            files.column("path").to_pylist(),
            files.column("rows").to_pylist(),
            files.column("bytes").to_pylist(),
            strict=True,
        )
    ]

    def total(name: str) -> int:
        return int(pc.sum(counts.column(name)).as_py() or 0)

    return TaskWrites(written, total("rejected"), total("deletes"), total("coerced"))


class _Task:
    """The function each task runs over its Arrow batches (pickled to the executors)."""

    def __init__(
        self,
        fileio: FileIO,
        spec: TableSpec,
        target: TaskTarget,
        rows_per_file: int,
        keys: Sequence[str],
        *,
        checked: bool = True,
    ) -> None:
        """
        Args:
            keys: The columns of the partition values, in the table's order (a column whose
                values are not text is made text as Spark's cast to STRING would: `_text`).
            checked: The rows are `Feed.checked`'s (rejected ones are counted, not written);
                False: every row is written.
        """
        self.fileio, self.spec, self.target = fileio, spec, target
        self.rows_per_file, self.keys, self.checked = rows_per_file, list(keys), checked

    def run(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        context = TaskContext.get()
        files = _PartitionFiles(self, context.partitionId() if context is not None else 0)
        try:
            yield from self._write(batches, files)
        except BaseException:
            files.abandon()
            raise

    def _write(
        self, batches: Iterator[pa.RecordBatch], files: _PartitionFiles
    ) -> Iterator[pa.RecordBatch]:
        rejected = deletes = coerced = 0
        for batch in batches:
            if not self.checked:
                for values, rows in self._by_partition(batch):
                    files.add(values, rows)
                continue
            bad = _flags(batch.column(REJECTED_FLAG))
            rejected += int(bad.sum())
            good = batch.filter(pa.array(~bad)) if bad.any() else batch
            if good.num_rows == 0:
                continue
            deletes += int(pc.sum(pc.equal(good.column(OP), DELETE)).as_py() or 0)
            coerced += int(_flags(good.column(COERCED_FLAG)).sum())
            for values, rows in self._by_partition(good):
                files.add(values, rows)
        yield from files.close()
        yield _row(kind=_COUNTS, rejected=rejected, deletes=deletes, coerced=coerced)

    def _by_partition(self, batch: pa.RecordBatch) -> Iterator[tuple[PartitionValues, pa.Table]]:
        """The batch's rows (the table's data columns, typed) per partition."""
        spec, keys = self.spec, self.keys
        table = pa.Table.from_batches([batch])
        if table.num_rows == 0:
            return
        if not keys:
            yield (), data_rows(table, spec)
            return
        if len(keys) == 1 and not table.column(keys[0]).null_count:
            order = pc.array_sort_indices(table.column(keys[0]))
        else:
            by = [(k, "ascending") for k in keys]
            order = pc.sort_indices(table, by, null_placement="at_end")
        table = table.take(order)
        starts = _group_starts(table, keys)
        data = data_rows(table, spec)
        ends = [*starts[1:], table.num_rows]
        for start, end in zip(starts, ends, strict=True):
            values = tuple(_text(table.column(k)[start].as_py()) for k in keys)
            yield values, data.slice(start, end - start)


def _flags(column: pa.Array | pa.ChunkedArray) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """A BOOLEAN column as a numpy mask (null: false)."""
    filled = pc.fill_null(column, False)
    return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=bool)


def _group_starts(table: pa.Table, keys: Sequence[str]) -> list[int]:
    """Where each run of equal partition values starts in ``table`` (sorted by ``keys``)."""
    n = table.num_rows
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for key in keys:
        column = table.column(key)
        after, before = column.slice(1), column.slice(0, n - 1)
        differs = pc.fill_null(pc.not_equal(after, before), False)
        nulls = pc.not_equal(pc.is_null(after), pc.is_null(before))
        change[1:] |= _flags(pc.or_(differs, nulls))
    return np.flatnonzero(change).tolist()


def _text(value: object) -> str | None:
    """A partition value as Spark's cast to STRING writes it."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.date):
        return value.isoformat()
    return str(value)


class _PartitionFiles:
    """A task's open files, one per partition, and the rows waiting for a row group."""

    def __init__(self, task: _Task, split: int) -> None:
        self.task, self.split = task, split
        self.waiting: dict[PartitionValues, list[pa.Table]] = {}
        self.waiting_rows: dict[PartitionValues, int] = {}
        self.open: dict[PartitionValues, _OpenFile] = {}
        self.done: list[pa.RecordBatch] = []
        self.closed: list[_OpenFile] = []
        self.buffered = 0

    def add(self, values: PartitionValues, rows: pa.Table) -> None:
        self.waiting.setdefault(values, []).append(rows)
        self.waiting_rows[values] = self.waiting_rows.get(values, 0) + rows.num_rows
        self.buffered += rows.nbytes
        if self.waiting_rows[values] >= ROW_GROUP_ROWS:
            self._flush(values)
        while self.buffered > BUFFER_BYTES and self.waiting:
            self._flush(max(self.waiting_rows, key=self.waiting_rows.__getitem__))

    def abandon(self) -> None:
        """Close and delete every file this task opened (its attempt failed)."""
        for opened in [*self.open.values(), *self.closed]:
            try:
                opened.out.close()
                self.task.fileio.delete_file(opened.path, missing_ok=True)
            except Exception:  # the job fails anyway: the folder's listing removes it
                pass

    def close(self) -> Iterator[pa.RecordBatch]:
        for values in list(self.waiting):
            self._flush(values)
        for values in list(self.open):
            self._close(values)
        yield from self.done

    def _flush(self, values: PartitionValues) -> None:
        rows = pa.concat_tables(self.waiting.pop(values))
        self.waiting_rows.pop(values)
        self.buffered -= rows.nbytes
        while rows.num_rows:
            current = self.open.get(values) or self._open(values, rows.schema)
            room = self.task.rows_per_file - current.rows
            piece, rows = rows.slice(0, room), rows.slice(room)
            current.write(piece)
            if current.rows >= self.task.rows_per_file:
                self._close(values)

    def _open(self, values: PartitionValues, schema: pa.Schema) -> _OpenFile:
        task = self.task
        folder = task.target.folder_of(task.spec, values)
        path = f"{folder}/part-{self.split:05d}-{uuid.uuid4().hex}.parquet"
        opened = _OpenFile(path, task.fileio.open_output(path), schema)
        self.open[values] = opened
        return opened

    def _close(self, values: PartitionValues) -> None:
        opened = self.open.pop(values)
        size = opened.close()
        self.closed.append(opened)
        self.done.append(
            _row(
                kind=_FILE,
                values=json.dumps(list(values)),
                path=opened.path,
                rows=opened.rows,
                bytes=size,
            )
        )


class _OpenFile:
    def __init__(self, path: str, out: pa.NativeFile, schema: pa.Schema) -> None:
        self.path, self.out, self.rows = path, out, 0
        self.writer = pq.ParquetWriter(out, schema, use_dictionary=dictionary_columns(schema))

    def write(self, rows: pa.Table) -> None:
        self.writer.write_table(rows, row_group_size=ROW_GROUP_ROWS)
        self.rows += rows.num_rows

    def close(self) -> int:
        self.writer.close()
        size = int(self.out.tell())
        self.out.close()
        return size


def _row(**values: object) -> pa.RecordBatch:
    """One output row of a task (columns not given are null)."""
    return pa.RecordBatch.from_pylist([values], schema=_ARROW_OUT)
