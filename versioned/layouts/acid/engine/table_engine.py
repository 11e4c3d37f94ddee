"""The engine of the acid layout: Hive ACID deltas written and merged on read in Spark.

Built: upsert and delete (`writer`), read with time travel, ``version_id`` and ``ROW__ID``
(`reader`), net changes, SQL views (`views`), minor and major compaction (`compactor`) and
Hive's cleaner (`vacuum`); export and import go through the shared collection code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

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


class AcidEngine:
    """Hive ACID: ``delta_W_W_0000`` / ``delete_delta_W_W_0000`` folders of bucket ORC files."""

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
        from versioned.layouts.acid.engine.writer import WriteContext, write_batch

        context = WriteContext(ctx.spark, ctx.store, ctx.fileio, self.layout, ctx.broadcast_limit)
        with operation_conf(ctx.spark, write_settings(ctx.spark, feed.rows)):
            return write_batch(
                context, table, feed, options=options, progress=progress, operation=operation
            )

    def read(
        self,
        ctx: EngineContext,
        snapshot: Snapshot,
        *,
        with_version: bool,
        with_row_id: bool = False,
    ) -> DataFrame:
        from versioned.layouts.acid.engine.reader import read_rows

        return read_rows(
            ctx.spark,
            ctx.store,
            ctx.fileio,
            snapshot,
            broadcast_limit=ctx.broadcast_limit,
            with_version=with_version,
            with_row_id=with_row_id,
        )

    def changes(self, ctx: EngineContext, before: Snapshot | None, after: Snapshot) -> DataFrame:
        from versioned.engine.net_changes import net_changes_between

        return net_changes_between(
            ctx.spark, lambda snapshot: self.read(ctx, snapshot, with_version=False), before, after
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
        from versioned.layouts.acid.engine.compactor import (
            AcidCompactionContext,
            compact_acid_table,
        )

        # A dry run plans from the catalog and starts no Spark.
        with conf_on_first_use(lambda: ctx.spark, maintenance_settings) as spark:
            context = AcidCompactionContext(spark, ctx.store, ctx.fileio, self.layout)
            return compact_acid_table(
                context,
                table,
                partitions=partitions,
                thresholds=thresholds,
                options=options,
                dry_run=dry_run,
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
        from versioned.layouts.acid.engine.vacuum import vacuum_acid_table

        return vacuum_acid_table(
            ctx.store,
            ctx.fileio,
            self.layout,
            table,
            retain_hours=retain_hours,
            grace_hours=grace_hours,
            dry_run=dry_run,
            progress=progress,
        )

    def register_view(
        self, ctx: EngineContext, session: SparkSession, snapshot: Snapshot, source: str
    ) -> str:
        from versioned.layouts.acid.engine.views import register_view

        return register_view(
            session,
            ctx.store,
            ctx.fileio,
            snapshot,
            source=source,
            broadcast_limit=ctx.broadcast_limit,
        )

    def _missing(self, operation: str, table: TableInfo) -> NoReturn:
        raise NotSupportedError.of(self.layout.name, operation, table.spec.name)
