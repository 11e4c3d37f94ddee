"""The engine of the acid layout: Hive ACID deltas written and merged on read in Spark.

Built: upsert and delete (`writer`), read with time travel, ``version_id`` and ``ROW__ID``
(`reader`), net changes, SQL views (`views`), minor and major compaction (`compactor`) and
Hive's cleaner (`vacuum`); export and import go through the shared collection code.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, NoReturn

from versioned.errors import NotSupportedError
from versioned.layouts.engine_protocol import EngineContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from versioned.catalog.records import Snapshot, TableInfo
    from versioned.layouts.layout import StorageLayout
    from versioned.layouts.table_request import CompactRequest, VacuumRequest, WriteRequest
    from versioned.results import CommitResult, CompactionResult, VacuumResult


class AcidEngine:
    """Hive ACID: ``delta_W_W_0000`` / ``delete_delta_W_W_0000`` folders of bucket ORC files."""

    def __init__(self, layout: StorageLayout) -> None:
        self.layout = layout

    def write(self, ctx: EngineContext, request: WriteRequest) -> CommitResult:
        from versioned.engine.spark.operation_conf import operation_conf, write_settings
        from versioned.layouts.acid.engine.writer import write_batch

        with operation_conf(ctx.spark, write_settings(ctx.spark, request.feed.rows)):
            return write_batch(ctx, request, self.layout)

    def read(
        self,
        ctx: EngineContext,
        snapshot: Snapshot,
        *,
        with_version: bool,
        with_row_id: bool = False,
    ) -> DataFrame:
        from versioned.layouts.acid.engine.reader import read_rows

        return read_rows(ctx, snapshot, with_version=with_version, with_row_id=with_row_id)

    def changes(self, ctx: EngineContext, before: Snapshot | None, after: Snapshot) -> DataFrame:
        from versioned.engine.net_changes import net_changes_between

        return net_changes_between(
            ctx.spark, lambda snapshot: self.read(ctx, snapshot, with_version=False), before, after
        )

    def compact(self, ctx: EngineContext, request: CompactRequest) -> CompactionResult:
        from versioned.engine.spark.operation_conf import conf_on_first_use, maintenance_settings
        from versioned.layouts.acid.engine.compactor import compact_acid_table

        # A dry run plans from the catalog and starts no Spark.
        with conf_on_first_use(ctx.session, maintenance_settings) as session:
            return compact_acid_table(replace(ctx, session=session), request, self.layout)

    def vacuum(self, ctx: EngineContext, request: VacuumRequest) -> VacuumResult:
        from versioned.layouts.acid.engine.vacuum import vacuum_acid_table

        return vacuum_acid_table(ctx, request, self.layout)

    def register_view(
        self, ctx: EngineContext, session: SparkSession, snapshot: Snapshot, source: str
    ) -> str:
        from versioned.layouts.acid.engine.views import register_view

        return register_view(ctx, session, snapshot, source=source)

    def _missing(self, operation: str, table: TableInfo) -> NoReturn:
        raise NotSupportedError.of(self.layout.name, operation, table.spec.name)
