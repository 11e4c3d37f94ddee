"""The engine of the version-partition layout: its writer, reader, compactor and vacuum."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from versioned.errors import NotSupportedError
from versioned.layouts.engine_protocol import EngineContext
from versioned.options import Progress

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from versioned.catalog.records import PartitionInfo, Snapshot, TableInfo
    from versioned.engine.feeds.reader import Feed
    from versioned.layouts.layout import TableLayout
    from versioned.options import CompactionOptions, CompactionThresholds, WriteOptions
    from versioned.results import CommitResult, CompactionResult, VacuumResult


class VersionPartitionEngine:
    """Version partitions: each commit a ``version_id=V`` folder with its index and Bloom filter."""

    def __init__(self, layout: TableLayout) -> None:
        self.layout = layout

    def write(
        self,
        ctx: EngineContext,
        table: TableInfo,
        feed: Feed,
        *,
        options: WriteOptions | None,
        progress: Progress | None,
        operation: str,
    ) -> CommitResult:
        from versioned.engine.spark.operation_conf import operation_conf, write_settings
        from versioned.layouts.version_partition.engine.writer import write_batch

        with operation_conf(ctx.spark, write_settings(ctx.spark, feed.rows)):
            return write_batch(
                ctx.spark,
                ctx.store,
                ctx.fileio,
                table,
                feed,
                options=options,
                progress=progress,
                operation=operation,
            )

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

        return read_latest(
            ctx.spark,
            ctx.fileio,
            snapshot,
            broadcast_limit=ctx.broadcast_limit,
            with_version=with_version,
        )

    def changes(self, ctx: EngineContext, before: Snapshot | None, after: Snapshot) -> DataFrame:
        from versioned.layouts.version_partition.engine.net_changes import net_changes

        return net_changes(
            ctx.spark, ctx.fileio, before, after, broadcast_limit=ctx.broadcast_limit
        )

    def compact(
        self,
        ctx: EngineContext,
        table: TableInfo,
        *,
        partitions: Sequence[PartitionInfo] | None,
        thresholds: CompactionThresholds | None,
        options: CompactionOptions | None,
        dry_run: bool,
        progress: Progress | None,
    ) -> CompactionResult:
        from versioned.engine.spark.operation_conf import conf_on_first_use, maintenance_settings
        from versioned.layouts.version_partition.engine.compactor import compact_table

        # A dry run plans from the catalog and starts no Spark.
        with conf_on_first_use(lambda: ctx.spark, maintenance_settings) as spark:
            return compact_table(
                spark,
                ctx.store,
                ctx.fileio,
                table,
                partitions=partitions,
                thresholds=thresholds,
                options=options,
                dry_run=dry_run,
                broadcast_limit=ctx.broadcast_limit,
                progress=progress,
            )

    def vacuum(
        self,
        ctx: EngineContext,
        table: TableInfo,
        *,
        retain_hours: float,
        grace_hours: float,
        dry_run: bool,
        progress: Progress | None,
    ) -> VacuumResult:
        from versioned.layouts.version_partition.engine.vacuum import vacuum_table

        return vacuum_table(
            ctx.store,
            ctx.fileio,
            table,
            retain_hours=retain_hours,
            grace_hours=grace_hours,
            dry_run=dry_run,
            progress=progress,
        )

    def register_view(
        self, ctx: EngineContext, session: SparkSession, snapshot: Snapshot, source: str
    ) -> str:
        from versioned.layouts.version_partition.engine.views import register_view

        return register_view(
            session, ctx.fileio, snapshot, source=source, broadcast_limit=ctx.broadcast_limit
        )
