"""Net change per key between two snapshots, for any layout: a full outer join of the live
rows of both snapshots by record key (the layout supplies the reader)."""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from versioned.catalog.records import Snapshot
from versioned.engine.spark.types import spark_schema, with_columns_of

CHANGE = "_change"
SnapshotReader = Callable[[Snapshot], DataFrame]
"""The live rows of a snapshot, in the table's columns."""


def net_changes_between(
    spark: SparkSession, read: SnapshotReader, before: Snapshot | None, after: Snapshot
) -> DataFrame:
    """``insert`` / ``update`` / ``delete`` per key between ``before`` (None: empty) and
    ``after``; keys whose record is unchanged are left out."""
    spec = after.table.spec
    new = read(after)
    old = read(before) if before is not None else spark.createDataFrame([], spark_schema(spec))
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
