"""The Hive ACID layout, as the registry sees it (`versioned.layouts.base`): its class, whose
methods import the layout's modules on first call, and its one instance."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from versioned.layouts.abilities import (
    CanIngest,
    CanMutate,
    CanPlanCompaction,
    CanStreamChanges,
    ChangeFiles,
    ChangeImages,
    CompactionDue,
)
from versioned.layouts.layout import OPERATIONS, StorageLayout

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import TableEngine
    from versioned.layouts.ingest import SinkFactory
    from versioned.layouts.mutation_format import MutationFormat
    from versioned.schema import TableSpec


class AcidLayout(StorageLayout, CanIngest, CanStreamChanges, CanPlanCompaction, CanMutate):
    """Hive's base / delta / delete_delta folders of bucket ORC files with ROW__IDs."""

    def engine(self) -> TableEngine:
        from versioned.layouts.acid.engine.table_engine import AcidEngine

        return AcidEngine(self)

    def table_settings(self, spec: TableSpec) -> dict[str, Any]:
        from versioned.layouts.acid.table_rules import acid_table_settings

        return acid_table_settings(spec)

    def ingest_sink(self) -> SinkFactory:
        from versioned.layouts.acid.ingest_sink import AcidIngestSink

        return AcidIngestSink

    def change_files(self) -> ChangeFiles:
        from versioned.layouts.acid.change_images import changed_files

        return changed_files

    def change_images(self) -> ChangeImages:
        from versioned.layouts.acid.change_images import acid_images

        return acid_images

    def compaction_due(self) -> CompactionDue:
        from versioned.layouts.acid.compaction_plan import due_partitions

        return due_partitions

    def mutation_format(self) -> MutationFormat:
        from versioned.layouts.acid.mutation.format import MUTATIONS

        return MUTATIONS


LAYOUT = AcidLayout(
    name="acid",
    description="Hive ACID deltas: base / delta / delete_delta folders of bucket ORC "
    "files with ROW__IDs",
    capabilities=frozenset(OPERATIONS),
    file_formats=("orc",),
    # an old compactor's ``_vT`` folder (or merged tombstones), the staging folder, and a
    # compactor's mark in its output folder (`layouts.acid.compacted_dirs`)
    transaction_dirs=(
        r"^(?:(?:base|delta|delete_delta)_\d+(?:_\d+)?(?:_\d{4})?_v|txn="
        r"|_versioned_compactor_txn=)(\d+)(?:\.orc)?$"
    ),
    data_kinds=frozenset({"base", "delta"}),
    entry_kinds=("delete_events", frozenset({"delete_delta"})),
    reserved_columns=frozenset({"ROW__ID"}),
    versions_follow_commits=True,
    allocates_write_ids=True,
    compaction_kinds=("minor", "major"),
)
