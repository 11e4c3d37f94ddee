"""Net change per key between two snapshots of a version-partition table."""

from __future__ import annotations

from pyspark.sql import DataFrame

from versioned.catalog.records import Snapshot
from versioned.engine.net_changes import CHANGE, net_changes_between
from versioned.layouts.engine_protocol import EngineContext
from versioned.layouts.version_partition.engine.reader import read_latest

__all__ = ["CHANGE", "net_changes"]


def net_changes(ctx: EngineContext, before: Snapshot | None, after: Snapshot) -> DataFrame:
    """``insert`` / ``update`` / ``delete`` per key between ``before`` (None: empty) and
    ``after``; keys whose record is unchanged are left out."""
    return net_changes_between(
        ctx.spark, lambda snapshot: read_latest(ctx, snapshot), before, after
    )
