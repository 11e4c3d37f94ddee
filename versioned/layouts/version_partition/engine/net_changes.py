"""Net change per key between two snapshots of a version-partition table."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from versioned.catalog.records import Snapshot
from versioned.engine.net_changes import CHANGE, net_changes_between
from versioned.layouts.version_partition.engine.reader import read_latest
from versioned.storage.filesystem import FileIO

__all__ = ["CHANGE", "net_changes"]


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
    return net_changes_between(
        spark,
        lambda snapshot: read_latest(spark, fileio, snapshot, broadcast_limit=broadcast_limit),
        before,
        after,
    )
