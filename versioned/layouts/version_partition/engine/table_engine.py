"""The engine of the version-partition layout: its writer, reader, compactor and vacuum."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from versioned.errors import NotSupportedError
from versioned.layouts.engine_protocol import EngineContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from versioned.catalog.records import Snapshot
    from versioned.layouts.layout import StorageLayout
    from versioned.layouts.table_request import CompactRequest, VacuumRequest, WriteRequest
    from versioned.results import CommitResult, CompactionResult, VacuumResult


class VersionPartitionEngine:
    """Version partitions: each commit a ``version_id=V`` folder with its index and Bloom filter."""

    def __init__(self, layout: StorageLayout) -> None:
        self.layout = layout

    def write(self, ctx: EngineContext, request: WriteRequest) -> CommitResult:
        from versioned.engine.spark.operation_conf import operation_conf, write_settings
        from versioned.layouts.version_partition.engine.writer import write_batch

        with operation_conf(ctx.spark, write_settings(ctx.spark, request.feed.rows)):
            return write_batch(ctx, request)

    def read(
        self,
        ctx: EngineContext,
        snapshot: Snapshot,
        *,
        with_version: bool,
        with_row_id: bool = False,
    ) -> DataFrame:
        from versioned.layouts.version_partition.engine.reader import read_latest

        if with_row_id:
            raise NotSupportedError.of(
                self.layout.name, "read with ROW__ID", snapshot.table.spec.name
            )
        return read_latest(ctx, snapshot, with_version=with_version)

    def changes(self, ctx: EngineContext, before: Snapshot | None, after: Snapshot) -> DataFrame:
        from versioned.layouts.version_partition.engine.net_changes import net_changes

        return net_changes(ctx, before, after)

    def compact(self, ctx: EngineContext, request: CompactRequest) -> CompactionResult:
        from versioned.engine.spark.operation_conf import conf_on_first_use, maintenance_settings
        from versioned.layouts.version_partition.engine.compactor import compact_table

        # A dry run plans from the catalog and starts no Spark.
        with conf_on_first_use(ctx.session, maintenance_settings) as session:
            return compact_table(replace(ctx, session=session), request)

    def vacuum(self, ctx: EngineContext, request: VacuumRequest) -> VacuumResult:
        from versioned.layouts.version_partition.engine.vacuum import vacuum_table

        return vacuum_table(ctx, request)

    def register_view(
        self, ctx: EngineContext, session: SparkSession, snapshot: Snapshot, source: str
    ) -> str:
        from versioned.layouts.version_partition.engine.views import register_view

        return register_view(ctx, session, snapshot, source=source)
