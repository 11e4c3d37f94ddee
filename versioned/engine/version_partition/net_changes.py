"""Net change per key between two snapshots of a version-partition table."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from versioned.catalog.records import Snapshot
from versioned.engine.version_partition.reader import empty_frame, read_latest, with_columns_of
from versioned.storage.filesystem import FileIO

CHANGE = "_change"


def net_changes(
    spark: SparkSession,
    fileio: FileIO,
    before: Snapshot | None,
    after: Snapshot,
    *,
    broadcast_limit: int,
) -> DataFrame:
    """``insert`` / ``update`` / ``delete`` per key between ``before`` (None: empty) and
    ``after``; keys whose record is unchanged are left out."""
    spec = after.table.spec
    new = read_latest(spark, fileio, after, broadcast_limit=broadcast_limit)
    old = (
        read_latest(spark, fileio, before, broadcast_limit=broadcast_limit)
        if before is not None
        else empty_frame(spark, after)
    )
    old = with_columns_of(old, spec)  # ``before`` may predate added or widened columns
    # A table-wide key that moved partition is an update: compare by the key alone.
    keys = list(spec.record_key)
    values = [c for c in spec.column_names if c not in keys]
    o, n = old.alias("o"), new.alias("n")
    cond = [F.col(f"o.`{k}`").eqNullSafe(F.col(f"n.`{k}`")) for k in keys]
    joined = o.join(n, cond, "full_outer")
    old_present = F.col(f"o.`{keys[-1]}`").isNotNull()
    new_present = F.col(f"n.`{keys[-1]}`").isNotNull()
    same = F.lit(True)
    for c in values:
        same = same & F.col(f"o.`{c}`").eqNullSafe(F.col(f"n.`{c}`"))
    change = (
        F.when(~old_present, F.lit("insert"))
        .when(~new_present, F.lit("delete"))
        .when(~same, F.lit("update"))
    )
    picked = [
        F.when(new_present, F.col(f"n.`{c}`")).otherwise(F.col(f"o.`{c}`")).alias(c)
        for c in spec.column_names
    ]
    return joined.select(change.alias(CHANGE), *picked).where(F.col(CHANGE).isNotNull())
