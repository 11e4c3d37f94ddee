"""The version-partition layout, named ``versioned`` for users (docs/architecture.md, "Layouts"):
its class, whose methods import the layout's modules on first call, and its one instance."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from versioned.layouts.abilities import (
    CanCountLiveRows,
    CanImportFiles,
    CanIngest,
    CanPlanCompaction,
    CanStreamChanges,
    ChangeFiles,
    ChangeImages,
    CompactionDue,
    LiveRows,
)
from versioned.layouts.layout import OPERATIONS, StorageLayout

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import TableEngine
    from versioned.layouts.ingest import SinkFactory
    from versioned.schema import TableSpec


class VersionPartitionLayout(
    StorageLayout,
    CanIngest,
    CanStreamChanges,
    CanImportFiles,
    CanPlanCompaction,
    CanCountLiveRows,
):
    """One ``version_id=V`` folder per batch, with a version index and Bloom filters."""

    def engine(self) -> TableEngine:
        from versioned.layouts.version_partition.engine.table_engine import (
            VersionPartitionEngine,
        )

        return VersionPartitionEngine(self)

    def table_settings(self, spec: TableSpec) -> dict[str, Any]:
        from versioned.layouts.version_partition.table_rules import version_table_settings

        return version_table_settings(spec)

    def ingest_sink(self) -> SinkFactory:
        from versioned.layouts.version_partition.ingest_sink import VersionIngestSink

        return VersionIngestSink

    def change_files(self) -> ChangeFiles:
        from versioned.layouts.version_partition.change_images import changed_files

        return changed_files

    def change_images(self) -> ChangeImages:
        from versioned.layouts.version_partition.change_images import version_images

        return version_images

    def import_files(self) -> Callable[..., tuple[int | None, int]]:
        from versioned.layouts.version_partition.collection_import import import_files

        return import_files

    def compaction_due(self) -> CompactionDue:
        from versioned.layouts.version_partition.compaction_plan import due_partitions

        return due_partitions

    def live_rows(self) -> LiveRows:
        from versioned.layouts.version_partition.retired_rows import live_rows_estimate

        return live_rows_estimate


LAYOUT = VersionPartitionLayout(
    name="versioned",
    description="version partitions: one version_id=V folder per batch, with a "
    "version index and Bloom filters over its keys",
    capabilities=frozenset(OPERATIONS),
    file_formats=("parquet", "orc"),
    # A version's folder, a staging folder, or a compaction's folder inside the folder of
    # the version it compacted (`paths.compacted_dir`).
    transaction_dirs=r"^(?:version_id=|txn=|compacted-)(\d+)$",
    data_kinds=frozenset({"data"}),
    entry_kinds=("index_entries", frozenset({"index"})),
)
