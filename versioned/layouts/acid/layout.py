"""The Hive ACID layout, as the registry sees it (`versioned.layouts.base`)."""

from __future__ import annotations

from versioned.layouts.layout import OPERATIONS, TableLayout

LAYOUT = TableLayout(
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
    engine="versioned.layouts.acid.engine.table_engine:AcidEngine",
    reserved_columns=frozenset({"ROW__ID"}),
    table_rules="versioned.layouts.acid.table_rules:acid_table_settings",
    data_kinds=frozenset({"base", "delta"}),
    entry_kinds=("delete_events", frozenset({"delete_delta"})),
    versions_follow_commits=True,
    ingest_sink="versioned.layouts.acid.ingest_sink:AcidIngestSink",
    allocates_write_ids=True,
    change_files="versioned.layouts.acid.change_images:changed_files",
    change_images="versioned.layouts.acid.change_images:acid_images",
    compaction_kinds=("minor", "major"),
    compaction_due="versioned.layouts.acid.compaction_plan:due_partitions",
    mutation_format="versioned.layouts.acid.mutation.format:MUTATIONS",
)
