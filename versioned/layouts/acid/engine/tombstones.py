"""Delete tombstones of acid tables with an ordering column.

A delete event of the ACID layout has a null ``row``, so it cannot say how new the delete
was. With an ordering column, every applied delete (also of a key the table does not hold)
leaves a tombstone: the key's partition and primary key columns and the delete's ordering
value, so that a late change older than the delete is stale and cannot resurrect the key
(DESIGN.md, "Ordering column").

Tombstones are a side file per partition and write id, ``<partition>/_tombstones/
delete_delta_W_W_0000.orc``, listed by the commit like every other file (kind
`TOMBSTONE_KIND`). The folder is hidden (``_``), so Hive's readers skip it. Tombstones are
few (one per deleted key), so they are collected and written with pyarrow on the driver, and
read back by Spark only for the partitions a batch can touch.

A major compaction merges a partition's tombstones up to its base's write id into one file
(`merge_tombstones`, ``_tombstones/base_W_vT.orc``): the newest tombstone of each key.
"""

from __future__ import annotations

import io
from collections.abc import Collection, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as paorc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.catalog.records import DataFile, FileAdd, Snapshot
from versioned.engine.spark.file_scans import load_files
from versioned.engine.spark.types import spark_type
from versioned.layouts.acid.directories import DeltaDir
from versioned.layouts.acid.engine.event_writer import (
    PARTITION_VALUE,
    STATEMENT_ID,
    Claim,
    WrittenFile,
    partition_value_strings,
)
from versioned.layouts.acid.snapshot_dirs import TOMBSTONE_DIR, TOMBSTONE_KIND
from versioned.layouts.engine_protocol import EngineContext
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO
from versioned.storage.partition_paths import partition_path

_VALUE = PARTITION_VALUE


def tombstone_columns(spec: TableSpec) -> list[str]:
    """The columns of a tombstone: partition columns, primary key, ordering column."""
    assert spec.ordering_column is not None
    wanted = {*spec.partition_by, *spec.primary_key, spec.ordering_column}
    return [c.name for c in spec.columns if c.name in wanted]


def tombstone_fields(spec: TableSpec) -> dict[str, Column]:
    """What `write_tombstones` needs of an applied delete change, by the name it expects."""
    return {
        **{c: F.col(c) for c in tombstone_columns(spec)},
        **partition_value_strings(spec),
    }


def write_tombstones(
    collected: pa.Table,
    spec: TableSpec,
    fileio: FileIO,
    table_location: str,
    *,
    write_id: int,
    version: int,
    claim: Claim,
) -> list[WrittenFile]:
    """Write the tombstones of ``collected`` (the applied delete changes of a batch, columns
    `tombstone_fields`), one file per partition the deletes name; each file is claimed
    (``claim``: deleted if the transaction aborts) before it is written."""
    columns = tombstone_columns(spec)
    parts = list(spec.partition_by)
    if collected.num_rows == 0:
        return []
    name = DeltaDir(write_id, write_id, STATEMENT_ID, delete=True).name
    groups = collected.group_by([f"{_VALUE}{i}" for i in range(len(parts))], use_threads=False)
    keys = groups.aggregate([]) if parts else pa.table({})
    written: list[WrittenFile] = []
    for row in keys.to_pylist() if parts else [{}]:
        pvalues = tuple(row[f"{_VALUE}{i}"] for i in range(len(parts)))
        rows = collected
        for i, value in enumerate(pvalues):
            column = rows.column(f"{_VALUE}{i}")
            rows = rows.filter(pc.is_null(column) if value is None else pc.equal(column, value))
        ppath = partition_path(parts, pvalues)
        rel = "/".join(x for x in (ppath, TOMBSTONE_DIR, f"{name}.orc") if x)
        sink = io.BytesIO()
        paorc.write_table(rows.select(columns), sink, compression="zlib")
        data = sink.getvalue()
        fileio.write_bytes_atomic(claim(f"{table_location}/{rel}"), data)
        stats = {"write_id": write_id}
        add = FileAdd(None, rel, TOMBSTONE_KIND, version, len(data), rows.num_rows, stats)
        written.append(WrittenFile(pvalues, add))
    return written


def merge_tombstones(
    files: Sequence[DataFile],
    spec: TableSpec,
    fileio: FileIO,
    table_location: str,
    rel: str,
    *,
    write_id: int,
    version: int,
    claim: Claim,
) -> FileAdd | None:
    """Write the newest tombstone of each key among ``files`` (one partition's tombstone
    files) to ``rel`` (relative to the table; claimed first), or nothing when no tombstone
    has an ordering value (one without never makes a change stale)."""
    order = spec.ordering_column
    assert order is not None
    columns = tombstone_columns(spec)
    tables = [
        paorc.read_table(
            io.BytesIO(fileio.read_bytes(f"{table_location}/{f.path}")), columns=columns
        )
        for f in files
    ]
    every = pa.concat_tables(tables, promote_options="default")
    keys = [c for c in columns if c != order]
    grouped = every.group_by(keys, use_threads=False).aggregate([(order, "max")])
    grouped = grouped.filter(pc.is_valid(grouped.column(f"{order}_max")))
    newest = pa.table(
        [grouped.column(f"{order}_max" if c == order else c) for c in columns], names=columns
    )
    if newest.num_rows == 0:
        return None
    sink = io.BytesIO()
    paorc.write_table(newest, sink, compression="zlib")
    data = sink.getvalue()
    fileio.write_bytes_atomic(claim(f"{table_location}/{rel}"), data)
    stats = {"write_id": write_id}
    return FileAdd(None, rel, TOMBSTONE_KIND, version, len(data), newest.num_rows, stats)


def newest_tombstones(
    ctx: EngineContext,
    snapshot: Snapshot,
    partitions: Collection[int | None] | None,
) -> DataFrame | None:
    """The greatest tombstone ordering value of each record key in some partitions (ids;
    ``None``: all), as ``record key columns, ordering column``; None without tombstones."""
    spec = snapshot.table.spec
    order = spec.ordering_column
    assert order is not None
    spark = ctx.spark
    root = ctx.fileio.full_path(snapshot.table.location)
    paths = [
        f"{root}/{f.path}"
        for f in snapshot.files
        if f.kind == TOMBSTONE_KIND and (partitions is None or f.partition_id in partitions)
    ]
    if not paths:
        return None
    schema = T.StructType(
        [T.StructField(c, spark_type(spec.column(c).type)) for c in tombstone_columns(spec)]
    )
    keys = list(spec.record_key)
    frame = load_files(spark, spark.read.format("orc").schema(schema), paths)
    return frame.groupBy(*keys).agg(F.max(order).alias(order))
