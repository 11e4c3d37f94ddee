"""Finding the current ROW__ID (and ordering value) of each key of a batch.

Only the files that can hold a key are read, and of them only the key columns, the ordering
column and the ROW__ID fields (Spark prunes the nested ``row`` struct): the files of the
batch's partitions (every partition when a key may move between partitions) and, when the
bucket columns are part of the primary key, only the bucket files of the batch's buckets. A
batch whose partitions and buckets hold no file reads nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from versioned.catalog.records import Snapshot
from versioned.engine.acid.bucketing import BUCKET_COLUMN
from versioned.engine.acid.events import ROW_ID_FIELDS, live_events
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.snapshot_dirs import SnapshotFiles
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO

STORED = "#s_"
"""Prefix of the stored row's columns in `stored_rows`."""


@dataclass(frozen=True)
class LookupScope:
    """Which files a lookup reads: partition ids and bucket ids (``None``: all)."""

    partitions: frozenset[int | None] | None
    buckets: frozenset[int] | None


def lookup_scope(batch: DataFrame, spec: TableSpec, snapshot: Snapshot) -> LookupScope:
    """The partitions and buckets the batch's keys can live in (one small Spark job)."""
    parts = list(spec.partition_by)
    by_key = bool(spec.bucket_by) and set(spec.bucket_by) <= set(spec.primary_key)
    if spec.keys_move and not by_key:
        return LookupScope(None, None)
    wanted = [F.col(p).cast("string").alias(p) for p in parts] + [F.col(BUCKET_COLUMN)]
    pairs = batch.select(*wanted).distinct().collect()
    buckets = frozenset(int(r[BUCKET_COLUMN]) for r in pairs) if by_key else None
    if spec.keys_move:
        return LookupScope(None, buckets)
    by_values = {p.values: p.id for p in snapshot.partitions.values()}
    values = {tuple(None if r[p] in (None, "") else r[p] for p in parts) for r in pairs}
    return LookupScope(frozenset(by_values[v] for v in values if v in by_values), buckets)


def stored_rows(
    spark: SparkSession,
    fileio: FileIO,
    snapshot: Snapshot,
    files: SnapshotFiles,
    batch: DataFrame,
    scope: LookupScope,
    *,
    broadcast_limit: int,
) -> DataFrame:
    """The live stored row of each batch key: its record key, partition columns, ordering
    value and ROW__ID fields, each prefixed with `STORED`. Keys the table lacks are absent."""
    spec = snapshot.table.spec
    chosen = files.only(scope.partitions, scope.buckets)
    if not chosen.inserts:
        chosen = files.only(frozenset(), frozenset())  # nothing to read: an empty frame
    live = live_events(spark, fileio, snapshot, chosen, broadcast_limit=broadcast_limit)
    wanted = list(dict.fromkeys([*spec.partition_by, *spec.record_key]))
    if spec.ordering_column and spec.ordering_column not in wanted:
        wanted.append(spec.ordering_column)
    flat = live.select(
        *[
            F.col(c) if c in spec.partition_by else F.col(s.ROW).getField(c).alias(c)
            for c in wanted
        ],
        *ROW_ID_FIELDS,
    )
    keys = list(spec.record_key)
    probe = batch.select(*[F.col(k).alias(f"#k_{k}") for k in keys])
    cond = [F.col(k).eqNullSafe(F.col(f"#k_{k}")) for k in keys]
    found = flat.join(probe, cond, "left_semi")
    return found.select(*[F.col(c).alias(STORED + c) for c in [*wanted, *ROW_ID_FIELDS]])
