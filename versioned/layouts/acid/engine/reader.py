"""Reading a snapshot of an acid table: the live rows in the table's columns."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from versioned.catalog.records import Snapshot
from versioned.catalog.store import MetaStore
from versioned.engine.spark.types import VERSION_KEY
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.engine.events import live_events, row_id_struct
from versioned.layouts.acid.snapshot_dirs import SnapshotFiles, snapshot_files
from versioned.layouts.engine_protocol import EngineContext

"""Column of `read_rows` ``with_version``: the version (transaction) that wrote the row."""
ROW_ID_COLUMN = "ROW__ID"
"""Column of `read_rows` ``with_row_id``: Hive's ``struct<writeid, bucketid, rowid>``."""


def files_of(store: MetaStore, snapshot: Snapshot) -> SnapshotFiles:
    """The bucket files ``snapshot`` reads, with the catalog's write ids of its commit."""
    return snapshot_files(snapshot, store.write_ids(snapshot.table.spec.name, snapshot.seq))


def read_rows(
    ctx: EngineContext,
    snapshot: Snapshot,
    *,
    with_version: bool = False,
    with_row_id: bool = False,
) -> DataFrame:
    """The live rows of ``snapshot``: the table's columns in order (partition columns from
    the paths), plus ``version_id`` and ``ROW__ID`` when asked."""
    spec = snapshot.table.spec
    ids = ctx.store.write_ids(spec.name, snapshot.seq)
    files = snapshot_files(snapshot, ids)
    events = live_events(ctx, snapshot, files)
    columns = [
        F.col(c.name)
        if c.name in spec.partition_by
        else F.col(s.ROW).getField(c.name).alias(c.name)
        for c in spec.columns
    ]
    if with_row_id:
        columns.append(row_id_struct().alias(ROW_ID_COLUMN))
    if not with_version:
        return events.select(*columns)
    versions = ctx.spark.createDataFrame(
        sorted(ids.versions.items()), f"`#w` bigint, `{VERSION_KEY}` bigint"
    )
    joined = events.join(F.broadcast(versions), F.col(s.CURRENT_WRITE_ID) == F.col("#w"), "left")
    return joined.select(*columns, F.col(VERSION_KEY))
