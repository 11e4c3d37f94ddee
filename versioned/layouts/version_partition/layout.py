"""The version-partition layout, named ``versioned`` for users (docs/architecture.md, "Layouts")."""

from __future__ import annotations

from versioned.layouts.layout import OPERATIONS, TableLayout

LAYOUT = TableLayout(
    name="versioned",
    description="version partitions: one version_id=V folder per batch, with a "
    "version index and Bloom filters over its keys",
    capabilities=frozenset(OPERATIONS),
    file_formats=("parquet", "orc"),
    # A version's folder, a staging folder, or a compaction's folder inside the folder of
    # the version it compacted (`paths.compacted_dir`).
    transaction_dirs=r"^(?:version_id=|txn=|compacted-)(\d+)$",
    engine="versioned.layouts.version_partition.engine.table_engine:VersionPartitionEngine",
    table_rules="versioned.layouts.version_partition.table_rules:version_table_settings",
    ingest_sink="versioned.layouts.version_partition.ingest_sink:VersionIngestSink",
    change_files="versioned.layouts.version_partition.change_images:changed_files",
    change_images="versioned.layouts.version_partition.change_images:version_images",
    import_files="versioned.layouts.version_partition.collection_import:import_files",
    compaction_due="versioned.layouts.version_partition.compaction_plan:due_partitions",
    live_rows="versioned.layouts.version_partition.retired_rows:live_rows_estimate",
)
