"""Writing ACID events with Spark's native ORC writer.

The ACID struct is computed in Spark (``operation, originalTransaction, bucket, rowId,
currentTransaction, row``), the rows are shuffled so that each (partition, bucket) lands in
one task, sorted by ROW__ID, and written with ``partitionBy(<partition columns>, bucket)``
into the transaction's staging directory. Each part file is then copied, with the metadata
below added, to ``<partition>/delta_W_W_0000/bucket_NNNNN`` (or ``delete_delta_...``) and the
directory gets its ``_orc_acid_version`` marker. Each insert bucket file gets its key filters
(min/max key in its catalog stats, a ``_key_bloom_NNNNN`` Bloom side file:
`layouts.acid.key_filters`), read back from the file's key columns on the driver, one stripe
at a time. Nothing is
visible until the catalog commit lists them.

What Spark cannot write: ORC user metadata. Hive's readers need ``hive.acid.key.index``
(its row-mode reader fails without it) and ``hive.acid.stats`` (its vectorized reader fails on
a delete delta without it), so each file gets them, and ``hive.acid.version``, appended to its
footer on the way to its ACID name (`layouts.acid.orc_footer`: the file's events are read
once on the driver, one stripe of four integer columns at a time). ``CHAR``/``VARCHAR``
columns are written as ORC ``string``. Writes of up to ``write.driver_max_events`` events
(most change batches) are written on the driver with pyorc instead (`driver_events`): Spark's
writer costs ~25 ms per file, and a batch writes a file per partition and bucket.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow.orc as paorc
from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.catalog.records import FileAdd
from versioned.engine.spark.operation_conf import operation_conf
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.directories import AcidDir, BaseDir, DeltaDir, is_hidden
from versioned.layouts.acid.engine.bucketing import BUCKET_COLUMN
from versioned.layouts.acid.key_filters import (
    KEY_BLOOM_KIND,
    filter_key_columns,
    key_bloom_path,
    write_key_filter,
)
from versioned.layouts.acid.orc_footer import with_acid_metadata
from versioned.layouts.acid.paths import bucket_file_path, marker_path, write_acid_version_marker
from versioned.layouts.acid.snapshot_dirs import DELETE_KIND, MARKER_KIND
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO
from versioned.storage.partition_paths import (
    DEFAULT_PARTITION_NAME,
    parse_partition_path,
    partition_path,
)

STATEMENT_ID = 0
"""Every write is one statement: ``delta_W_W_0000``."""
_FILE_BUCKET = "acid_file_bucket"  # a partitionBy column: becomes a path segment
_CODEC_V1 = 1 << 29
ORC_COMPRESSION = "zlib"
"""Hive's default ORC compression."""


@dataclass(frozen=True)
class WrittenFile:
    """A file moved into its ACID directory (not yet committed; ``partition_id`` unset)."""

    partition_values: tuple[str | None, ...]
    add: FileAdd


Claim = Callable[[str], str]
"""Claims a path for the transaction (deleted on abort) and returns it."""


def _no_claim(path: str) -> str:
    return path


def bucket_property(bucket_id: SparkColumn) -> SparkColumn:
    """BucketCodec V1: ``(1 << 29) | (bucketId << 16) | statementId``."""
    shifted = F.shiftleft(bucket_id.cast("int"), 16)
    return F.lit(_CODEC_V1).bitwiseOR(shifted).bitwiseOR(F.lit(STATEMENT_ID)).cast("int")


PARTITION_VALUE = "#pv_"
"""Prefix of `partition_value_strings`' columns (``#pv_0``, ``#pv_1``, ...)."""


def partition_value_strings(spec: TableSpec, prefix: str = "") -> dict[str, SparkColumn]:
    """The partition values (columns ``prefix + p``) as the strings Spark's ``partitionBy``
    writes into paths, named ``#pv_<i>`` in partition column order; the driver's writers
    group collected rows by them."""
    return {
        f"{PARTITION_VALUE}{i}": F.col(prefix + p).cast("string")
        for i, p in enumerate(spec.partition_by)
    }


def bucket_id_of(bucket_prop: SparkColumn) -> SparkColumn:
    """The bucket id of a BucketCodec V1 property."""
    return F.shiftright(bucket_prop, 16).bitwiseAND(F.lit(0xFFF)).cast("int")


def write_insert_events(
    rows: DataFrame,
    spec: TableSpec,
    fileio: FileIO,
    table_location: str,
    stage: str,
    *,
    write_id: int,
    version: int,
    claim: Claim = _no_claim,
) -> list[WrittenFile]:
    """Write ``rows`` (table columns and `BUCKET_COLUMN`) as insert events of ``write_id``.

    Row ids count from 0 per bucket file, in key order.
    """
    parts = list(spec.partition_by)
    keys = [k for k in spec.primary_key if k not in parts]
    per_file = Window.partitionBy(*parts, BUCKET_COLUMN).orderBy(*keys)
    events = _spread(rows, [*parts, BUCKET_COLUMN]).select(
        F.lit(s.INSERT).cast("int").alias(s.OPERATION),
        F.lit(write_id).cast("long").alias(s.ORIGINAL_WRITE_ID),
        bucket_property(F.col(BUCKET_COLUMN)).alias(s.BUCKET),
        (F.row_number().over(per_file) - F.lit(1)).cast("long").alias(s.ROW_ID),
        F.lit(write_id).cast("long").alias(s.CURRENT_WRITE_ID),
        F.struct(*[F.col(c.name) for c in spec.data_columns]).alias(s.ROW),
        *_partition_columns(rows, parts),
        F.col(BUCKET_COLUMN).alias(_FILE_BUCKET),
    )
    # Already shuffled by (partition, bucket) for the row numbers; sorting by row id within
    # the tasks keeps each file in ROW__ID order (`UNPLANNED_WRITE`: Spark adds no sort).
    shaped = events.sortWithinPartitions(*parts, _FILE_BUCKET, s.ROW_ID)
    directory = DeltaDir(write_id, write_id, STATEMENT_ID)
    return _write(shaped, spec, fileio, table_location, f"{stage}/delta", directory, version, claim)


def write_delete_events(
    row_ids: DataFrame,
    spec: TableSpec,
    fileio: FileIO,
    table_location: str,
    stage: str,
    *,
    write_id: int,
    version: int,
    claim: Claim = _no_claim,
) -> list[WrittenFile]:
    """Write delete events of ``write_id`` for ``row_ids`` (partition columns and
    ``originalTransaction, bucket, rowId``), each into its row's partition and bucket file."""
    parts = list(spec.partition_by)
    events = row_ids.select(
        F.lit(s.DELETE).cast("int").alias(s.OPERATION),
        F.col(s.ORIGINAL_WRITE_ID).cast("long").alias(s.ORIGINAL_WRITE_ID),
        F.col(s.BUCKET).cast("int").alias(s.BUCKET),
        F.col(s.ROW_ID).cast("long").alias(s.ROW_ID),
        F.lit(write_id).cast("long").alias(s.CURRENT_WRITE_ID),
        F.lit(None).cast(_row_type(spec)).alias(s.ROW),
        *_partition_columns(row_ids, parts),
        bucket_id_of(F.col(s.BUCKET)).alias(_FILE_BUCKET),
    )
    directory = DeltaDir(write_id, write_id, STATEMENT_ID, delete=True)
    shaped = _spread(events, [*parts, _FILE_BUCKET]).sortWithinPartitions(
        *parts, _FILE_BUCKET, s.ORIGINAL_WRITE_ID, s.BUCKET, s.ROW_ID
    )
    return _write(
        shaped, spec, fileio, table_location, f"{stage}/delete", directory, version, claim
    )


def write_events(
    events: DataFrame,
    spec: TableSpec,
    fileio: FileIO,
    table_location: str,
    stage: str,
    directory: AcidDir,
    *,
    version: int,
    claim: Claim = _no_claim,
) -> list[WrittenFile]:
    """Write ACID events as they are (the six event fields and the partition columns) into
    ``directory`` of their partitions, one file per bucket in ROW__ID order (compaction)."""
    parts = list(spec.partition_by)
    events = events.select(*s.EVENT_FIELDS, s.ROW, *_partition_columns(events, parts)).withColumn(
        _FILE_BUCKET, bucket_id_of(F.col(s.BUCKET))
    )
    shaped = _spread(events, [*parts, _FILE_BUCKET]).sortWithinPartitions(
        *parts, _FILE_BUCKET, s.ORIGINAL_WRITE_ID, s.BUCKET, s.ROW_ID
    )
    return _write(
        shaped,
        spec,
        fileio,
        table_location,
        f"{stage}/{directory.name}",
        directory,
        version,
        claim,
    )


UNPLANNED_WRITE = {"spark.sql.optimizer.plannedWrite.enabled": "false"}
"""Event files must keep the ROW__ID order our sort gives them (Hive's merging readers
assume it: out of order they return deleted rows and updated keys twice; issue 28 item 1).
Spark's planned write adds its own sort by the partition columns to the logical plan, and the
optimizer then drops ours below it. Unplanned, Spark's file writer adds a sort only when the
plan's ordering does not start with the partition columns, which ours does
(`_partition_columns` keeps a STRING one from being wrapped in ``empty2null``)."""


def _partition_columns(frame: DataFrame, parts: list[str]) -> list[SparkColumn]:
    """The partition columns to write, a STRING one never null: null and ``""`` become Hive's
    default partition name, the directory Spark wrote for both anyway.

    Spark's file writer writes a nullable STRING partition column through ``empty2null``,
    an expression no sort of ours can order by, and then sorts each task by it again.
    """
    columns = []
    for p in parts:
        if isinstance(frame.schema[p].dataType, T.StringType):
            # null and "" are both Hive's default partition; coalesce with a literal last is
            # what Spark knows to be non-null
            value = F.nullif(F.col(p), F.lit(""))
            columns.append(F.coalesce(value, F.lit(DEFAULT_PARTITION_NAME)).alias(p))
        else:
            columns.append(F.col(p))
    return columns


def _spread(frame: DataFrame, columns: list[str]) -> DataFrame:
    """``frame`` hash-partitioned by ``columns`` (one task writes each file) into as many
    tasks as Spark has cores.

    Adaptive execution would coalesce a small batch's shuffle into one task, which then
    writes every (partition, bucket) file alone: ~25 ms a file, 160 files for 20 partitions
    of 8 buckets. An explicit task count is kept (2x faster writes on 2 cores).
    """
    tasks = max(1, frame.sparkSession.sparkContext.defaultParallelism)
    return frame.repartition(tasks, *columns)


def _row_type(spec: TableSpec) -> str:
    from versioned.layouts.acid.engine.events import row_struct_type

    return row_struct_type(spec).simpleString()


@dataclass(frozen=True)
class PlacedFile:
    """A bucket file at its ACID name (claimed, not yet committed)."""

    partition_values: tuple[str | None, ...]
    bucket: int
    path: str
    size: int


def _write(
    events: DataFrame,
    spec: TableSpec,
    fileio: FileIO,
    table_location: str,
    stage: str,
    directory: AcidDir,
    version: int,
    claim: Claim,
) -> list[WrittenFile]:
    """Write the events with Spark into ``stage``, then move each file to its ACID name.

    Every file is claimed (``claim``: deleted if the transaction aborts) before it moves.
    """
    with operation_conf(events.sparkSession, UNPLANNED_WRITE):
        (
            events.write.mode("errorifexists")
            .option("compression", ORC_COMPRESSION)
            .partitionBy(*spec.partition_by, _FILE_BUCKET)
            .orc(fileio.full_path(stage))
        )
    placed: list[PlacedFile] = []
    seen: set[str] = set()
    for stat in fileio.list_files(stage):  # our own private output, not table data
        rel = stat.path[len(stage) + 1 :]
        if any(is_hidden(part) for part in rel.split("/")):
            continue
        pairs = parse_partition_path(rel.rpartition("/")[0])
        values = tuple(v for _, v in pairs[:-1])
        bucket = int(pairs[-1][1] or 0)
        target = bucket_file_path(partition_path(spec.partition_by, values), directory, bucket)
        if target in seen:  # one task writes each (partition, bucket): never happens
            raise AssertionError(f"Spark wrote two files for {target}")
        seen.add(target)
        # Spark cannot write ORC user metadata: add Hive's hive.acid.* to the footer
        data = with_acid_metadata(fileio.read_bytes(stat.path))
        fileio.write_bytes_atomic(claim(f"{table_location}/{target}"), data)
        placed.append(PlacedFile(values, bucket, target, len(data)))
    fileio.delete_dir(stage, missing_ok=True)
    return register_files(placed, spec, fileio, table_location, directory, version, claim)


def register_files(
    placed: list[PlacedFile],
    spec: TableSpec,
    fileio: FileIO,
    table_location: str,
    directory: AcidDir,
    version: int,
    claim: Claim,
) -> list[WrittenFile]:
    """The catalog entries of bucket files placed in ``directory``: each file with its row
    count and key filters (insert files), and the directory's ``_orc_acid_version`` marker
    in each partition."""
    if isinstance(directory, BaseDir):
        kind, max_write_id = "base", directory.write_id
    else:
        kind = DELETE_KIND if directory.delete else "delta"
        max_write_id = directory.max_write_id
    written: list[WrittenFile] = []
    partitions: dict[tuple[str | None, ...], str] = {}
    for file in placed:
        rows = _row_count(fileio, f"{table_location}/{file.path}")
        stats = {"write_id": max_write_id, "bucket": file.bucket}
        if kind != DELETE_KIND:
            filters = _key_filter(fileio, table_location, file.path, spec, version, claim)
            if filters is not None:
                stats.update(filters[0])
                written.append(WrittenFile(file.partition_values, filters[1]))
        add = FileAdd(None, file.path, kind, version, file.size, rows, stats)
        written.append(WrittenFile(file.partition_values, add))
        partitions[file.partition_values] = partition_path(spec.partition_by, file.partition_values)
    for values, ppath in partitions.items():
        where = f"{table_location}/{ppath}".rstrip("/")
        marker = marker_path(ppath, directory)
        claim(f"{table_location}/{marker}")
        write_acid_version_marker(fileio, where, directory)
        size = fileio.size(f"{table_location}/{marker}")
        written.append(WrittenFile(values, FileAdd(None, marker, MARKER_KIND, version, size, 0)))
    return written


def _key_filter(
    fileio: FileIO, table_location: str, target: str, spec: TableSpec, version: int, claim: Claim
) -> tuple[dict[str, Any], FileAdd] | None:
    """The key stats of an insert bucket file and its Bloom side file (`key_filters`)."""
    if filter_key_columns(spec) is None:
        return None
    claim(f"{table_location}/{key_bloom_path(target)}")  # before it exists: see `Claim`
    written = write_key_filter(fileio, table_location, target, spec)
    assert written is not None
    add = FileAdd(
        None, written.bloom_path, KEY_BLOOM_KIND, version, written.bloom_size, written.keys
    )
    return written.stats, add


def _row_count(fileio: FileIO, rel: str) -> int:
    with fileio.open_input(rel) as handle, fileio.reading(rel):
        return int(paorc.ORCFile(handle).nrows)
