"""Merge on read of the acid layout, in Spark.

The rows of a snapshot are the insert events of the chosen base and insert deltas whose
``currentTransaction`` write id is valid, minus those matched by a valid delete event on
``(partition, originalTransaction, bucket, rowId)``: a ROW__ID is unique within one
partition only. The delete events are broadcast when there are at most ``broadcast_limit``.
Files are scanned natively (Spark's ORC reader, nested columns pruned to what is selected);
partition values come from each file's path.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import unquote

from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.catalog.records import Snapshot
from versioned.engine.spark.file_scans import load_files
from versioned.engine.spark.types import spark_type
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.engine.delete_keys import without_deleted, without_driver_deleted
from versioned.layouts.acid.engine.driver_reads import (
    PARTITION_ID,
    KeyMatch,
    read_on_driver,
    split_for_driver,
)
from versioned.layouts.acid.snapshot_dirs import DELETE_KIND, BucketFileRef, SnapshotFiles
from versioned.layouts.acid.write_ids import ValidWriteIdList
from versioned.layouts.engine_protocol import EngineContext
from versioned.schema import TableSpec

ROW_ID_FIELDS = (s.ORIGINAL_WRITE_ID, s.BUCKET, s.ROW_ID)


def row_struct_type(spec: TableSpec) -> T.StructType:
    """The Spark type of the ``row`` field: the data columns, in table order."""
    return T.StructType([T.StructField(c.name, spark_type(c.type)) for c in spec.data_columns])


def event_schema(spec: TableSpec) -> T.StructType:
    """The ACID event struct as Spark reads it from a bucket file."""
    return T.StructType(
        [
            T.StructField(s.OPERATION, T.IntegerType()),
            T.StructField(s.ORIGINAL_WRITE_ID, T.LongType()),
            T.StructField(s.BUCKET, T.IntegerType()),
            T.StructField(s.ROW_ID, T.LongType()),
            T.StructField(s.CURRENT_WRITE_ID, T.LongType()),
            T.StructField(s.ROW, row_struct_type(spec)),
        ]
    )


def read_events(
    ctx: EngineContext,
    snapshot: Snapshot,
    refs: Sequence[BucketFileRef],
    *,
    match: KeyMatch | None = None,
) -> DataFrame:
    """The events of exactly the files ``refs`` (no directory listing), with the partition
    columns (values from the catalog) and `PARTITION_ID` (the catalog's partition id).
    ``refs`` are all insert-event files (bases, deltas) or all delete-event files.
    ``match``: a key lookup's (`driver_reads.KeyMatch`); the events may then include
    others, and fields it does not name may read as null.

    Small files are read on the driver (`driver_reads`: ~0.2 ms a file against Spark's
    ~1.5-2 ms), the others by one Spark scan (`_scan_events`).
    """
    spec = snapshot.table.spec
    schema = event_schema(spec)
    partition_fields = [
        T.StructField(p, spark_type(spec.column(p).type)) for p in spec.partition_by
    ]
    full = T.StructType(
        [*schema.fields, *partition_fields, T.StructField(PARTITION_ID, T.LongType())]
    )
    if not refs:
        return ctx.spark.createDataFrame([], full)
    deletes = {ref.file.kind == DELETE_KIND for ref in refs}
    assert len(deletes) == 1, "insert and delete events are read apart"
    on_driver, refs = split_for_driver(spec, refs, deletes=deletes.pop(), match=match)
    if on_driver:
        small = read_on_driver(ctx, snapshot, on_driver, full, match)
        if not refs:
            return small
        return small.unionByName(_scan_events(ctx, snapshot, refs))
    return _scan_events(ctx, snapshot, refs)


def _scan_events(
    ctx: EngineContext, snapshot: Snapshot, refs: Sequence[BucketFileRef]
) -> DataFrame:
    """The events of ``refs`` by Spark scans (as `read_events` returns them).

    The files are one scan, so Spark packs small files into few tasks. The ORC
    library takes a file for Hive ACID when its top-level fields are the six event fields,
    and then reads a requested schema that is not exactly those six as the ``row`` struct.
    So Spark must request all six and nothing else: the partition values are not
    discovered from paths but joined to each row by a constant of its file, and a filter
    that is always true names every event field (``row`` through one field, so that Spark
    still reads only the ``row`` fields that are selected).
    """
    spec = snapshot.table.spec
    schema = event_schema(spec)
    partition_fields = [
        T.StructField(p, spark_type(spec.column(p).type)) for p in spec.partition_by
    ]
    ids = sorted({ref.file.partition_id for ref in refs if ref.file.partition_id is not None})
    partitions = [snapshot.partitions[pid] for pid in ids]
    events = _load_events(ctx, snapshot, refs)
    if not spec.partition_by:  # one partition (the catalog's id as `driver_reads` gives it)
        assert len(ids) <= 1, "an unpartitioned table has one partition"
        pid = F.lit(ids[0] if ids else 0).cast(T.LongType())
        return events.select(*schema.names, pid.alias(PARTITION_ID))
    if len(partitions) == 1:  # a literal is cheaper than the join
        return events.select(
            *schema.names,
            *[
                F.lit(v).cast(f.dataType).alias(f.name)
                for f, v in zip(partition_fields, partitions[0].values, strict=True)
            ],
            F.lit(ids[0]).cast(T.LongType()).alias(PARTITION_ID),
        )
    return _with_partition_values(ctx.spark, events, refs, snapshot, partition_fields)


def _load_events(
    ctx: EngineContext, snapshot: Snapshot, refs: Sequence[BucketFileRef]
) -> DataFrame:
    """The six event fields of ``refs`` by one Spark scan (see `_scan_events`)."""
    spark, spec = ctx.spark, snapshot.table.spec
    root = ctx.fileio.full_path(snapshot.table.location)
    paths = [f"{root}/{ref.file.path}" for ref in refs]
    reader = spark.read.format("orc").schema(event_schema(spec))
    return load_files(spark, reader, paths).where(_names_every_event_field(spec))


_SIZE = "#file_size"
_FOLDER = "#partition_folder"
_FOUND = "#partition_found"


def _with_partition_values(
    spark: SparkSession,
    events: DataFrame,
    refs: Sequence[BucketFileRef],
    snapshot: Snapshot,
    fields: Sequence[T.StructField],
) -> DataFrame:
    """``events`` (of one Spark scan of ``refs``) with the partition columns of each row's
    file.

    Spark's native ORC reader cannot add partition values from paths to an ACID file (it
    would ask the ORC library for the six event fields plus the partition columns, and the
    library would then read that request as the ``row`` struct), so each row is joined to
    its partition by constants of its file, which Spark holds once per file:
    ``_metadata.file_size`` (a long: the join costs ~0.1 s per 1M rows), and, only for the
    sizes that files of two partitions have, the partition folder cut out of
    ``_metadata.file_path`` (string slicing per row: joining every row by it cost ~0.6 s
    per 1M rows). A path is ``.../<partition path>/<acid dir>/bucket_N`` and Spark's is a
    URI (percent-encoding over the escaped folder names), so the folders to compare are
    cut from ``events.inputFiles()`` the same way and decoded once per file on the driver.

    Sizes are the catalog's. The join keeps every row: should a file's size differ from the
    catalog's, reading the row's partition values fails instead of the row being lost.
    """
    n = len(fields)
    partitions: dict[int, set[int]] = {}
    for ref in refs:
        assert ref.file.partition_id is not None
        partitions.setdefault(ref.file.size_bytes, set()).add(ref.file.partition_id)
    rows: set[tuple[object, ...]] = {
        (size, None, pid, *snapshot.partitions[pid].values)
        for size, ids in partitions.items()
        if len(ids) == 1
        for pid in ids
    }
    shared = {ref.file.path: ref for ref in refs if len(partitions[ref.file.size_bytes]) > 1}
    for uri in events.inputFiles() if shared else ():
        match = shared.get(unquote("/".join(uri.split("/")[-(n + 2) :])))
        if match is not None:
            assert match.file.partition_id is not None
            pid = match.file.partition_id
            values = snapshot.partitions[pid].values
            rows.add((match.file.size_bytes, _folder_of(uri, n), pid, *values))
    table = spark.createDataFrame(
        sorted(rows, key=repr),
        T.StructType(
            [
                T.StructField(_SIZE, T.LongType()),
                T.StructField(_FOLDER, T.StringType()),
                T.StructField(PARTITION_ID, T.LongType()),
            ]
            + [T.StructField(f.name, T.StringType()) for f in fields]
        ),
    ).withColumn(_FOUND, F.lit(True))
    path = F.col("_metadata.file_path")
    folder = F.substring_index(F.substring_index(path, "/", -(n + 2)), "/", n)
    on = (F.col(_SIZE) == F.col(f"`#t{_SIZE}`")) & (
        F.col(f"`#t{_FOLDER}`").isNull() | (F.col(f"`#t{_FOLDER}`") == F.col(f"`#e{_FOLDER}`"))
    )
    names = events.columns
    # The file's folder as a column before the join: a join condition over `_metadata` fails
    # in PySpark 4.0's Dataset.join (ClassCastException in resolveSelfJoinCondition).
    sized = events.withColumn(_SIZE, F.col("_metadata.file_size"))
    joined = sized.withColumn(f"#e{_FOLDER}", folder).join(
        F.broadcast(table.select(*[F.col(f"`{c}`").alias(f"#t{c}") for c in table.columns])),
        on,
        "left",
    )
    missing = F.raise_error(
        F.concat(
            F.lit("a bucket file of "),
            F.col(_SIZE).cast("string"),
            F.lit(" bytes matches no file of the scan in the catalog (sizes differ)"),
        )
    )
    return joined.select(
        *names,
        *[
            F.when(F.col(f"`#t{_FOUND}`").isNull(), missing)
            .otherwise(F.col(f"`#t{f.name}`").cast(f.dataType))
            .alias(f.name)
            for f in fields
        ],
        F.when(F.col(f"`#t{_FOUND}`").isNull(), missing)
        .otherwise(F.col(f"`#t{PARTITION_ID}`"))
        .alias(PARTITION_ID),
    )


def _folder_of(uri: str, segments: int) -> str:
    """The partition folder of a bucket file's URI, still encoded (as `_with_partition_values`
    cuts it in Spark)."""
    return "/".join(uri.split("/")[-(segments + 2) :][:segments])


def _names_every_event_field(spec: TableSpec) -> SparkColumn:
    """A condition true for every event that names all six event fields.

    Spark drops a condition it can prove true (``x IS NOT NULL OR ...`` once it knows
    ``x`` is not null), so this one is opaque to it: ``greatest`` of non-negative ints.
    """
    first = F.col(s.ROW).getField(spec.data_columns[0].name)
    parts = [F.when(F.col(name).isNull(), F.lit(0)).otherwise(F.lit(1)) for name in s.EVENT_FIELDS]
    parts.append(F.when(first.isNull(), F.lit(0)).otherwise(F.lit(1)))
    return F.greatest(*parts) >= F.lit(0)


def valid_write_id(column: SparkColumn, write_ids: ValidWriteIdList) -> SparkColumn:
    """Whether the write id in ``column`` is valid in ``write_ids`` (a Spark condition)."""
    condition = column <= F.lit(write_ids.high_water_mark)
    if write_ids.invalid_ids:
        condition = condition & ~column.isin(list(write_ids.invalid_ids))
    return condition


def live_events(
    ctx: EngineContext,
    snapshot: Snapshot,
    files: SnapshotFiles,
    *,
    match: KeyMatch | None = None,
) -> DataFrame:
    """The insert events of the snapshot's live rows: ``operation ... row`` and partition
    columns, merged with the delete events (broadcast when they are at most
    ``ctx.broadcast_limit``). ``match``: only what a key lookup needs (see `read_events`)."""
    write_ids = files.write_ids
    rows = read_events(ctx, snapshot, files.inserts, match=match).where(
        valid_write_id(F.col(s.CURRENT_WRITE_ID), write_ids)
    )
    if not files.deletes:
        return rows.drop(PARTITION_ID)
    merged = without_driver_deleted(ctx, snapshot, files, rows)
    if merged is None:  # some delete files are for Spark to read
        deletes = read_events(ctx, snapshot, files.deletes).where(
            valid_write_id(F.col(s.CURRENT_WRITE_ID), write_ids)
        )
        broadcast = sum(r.file.row_count for r in files.deletes) <= ctx.broadcast_limit
        merged = without_deleted(rows, deletes, broadcast=broadcast)
    return merged.drop(PARTITION_ID)


def row_id_struct() -> SparkColumn:
    """Hive's ``ROW__ID``: ``struct<writeid:bigint, bucketid:int, rowid:bigint>``."""
    return F.struct(
        F.col(s.ORIGINAL_WRITE_ID).alias("writeid"),
        F.col(s.BUCKET).alias("bucketid"),
        F.col(s.ROW_ID).alias("rowid"),
    )
