"""What the architecture pictures say: the floors of the code and the steps of one upsert.

Plain data for `draw.py`. Module and function names here are the code's (a test checks that
every ``*.py`` named exists), so rename them here when the code moves. The floors are those
of ``FLOORS`` in ``tests/unit/test_layers.py``, top to bottom.
"""

from __future__ import annotations

from dataclasses import dataclass

TITLE, BODY, NOTE = 13.0, 12.0, 11.0
PAD = 8.0


@dataclass(frozen=True)
class Box:
    """Text of a box: the first line, and lines starting with ``!``, are titles; lines
    starting with ``~`` are notes. A box without text is a gap in its row.

    ``spark``: the code it names is in an engine folder (it imports pyspark); ``share``: its
    part of the width of its row.
    """

    text: str
    spark: bool = False
    share: float = 1.0

    def lines(self) -> list[tuple[str, float]]:
        first, *rest = self.text.split("\n") if self.text else [""]
        size = {"~": NOTE, "!": TITLE}
        return [(first, TITLE)] + [
            (s[1:], size[s[0]]) if s[:1] in size else (s, BODY) for s in rest
        ]

    def height(self) -> float:
        return 2 * PAD + sum(size * 1.4 for _, size in self.lines()) - 4


@dataclass(frozen=True)
class Floor:
    """One floor of the layers picture: its colour key, its label, what it is, its boxes."""

    key: str
    label: str
    role: str
    rows: tuple[tuple[Box, ...], ...] = ()


FLOORS: list[Floor] = [
    Floor(
        "cli",
        "cli/  ui/  demo.py",
        "click commands and the web page: parse, call the API, render",
        (
            (
                Box(
                    "data.py: upsert, show, sql, history\n"
                    "tables.py  maintenance.py  grants.py  collections.py  row_changes.py\n"
                    "stream.py  main.py  context.py  render.py (text, csv, json)  interrupts.py"
                ),
            ),
            (
                Box(
                    "ui/: versioned ui, the read-only web page: app.py (Starlette), pages.py,\n"
                    "health.py, charts.py (matplotlib SVG), templates/ (Jinja2), static/"
                ),
            ),
        ),
    ),
    Floor(
        "api",
        "api/",
        "versioned.connect() -> Catalog -> Table: the facades users hold",
        (
            (
                Box(
                    "catalog.py\nconnect(), Catalog: the\nengines' EngineContext;\n"
                    "grants, sql(), views"
                ),
                Box(
                    "table.py\nTable: upsert, read, changes,\ncompact, vacuum, history;\n"
                    "engine_for(layout, operation)",
                    share=1.3,
                ),
                Box("feed_precheck.py\nlocal files checked\nbefore Spark starts"),
            ),
            (
                Box(
                    "export.py  import_collection.py  import_rows.py  collection_files.py\n"
                    "stream_sink.py (foreachBatch)  change_stream.py  schema_evolution.py"
                ),
            ),
        ),
    ),
    Floor(
        "clients",
        "streaming/ mutation/ change_stream/",
        "clients of tables",
        (
            (
                Box(
                    "streaming/\nHive's streaming ingest API:\nEndPoint, TransactionBatch,\n"
                    "record writers; no Spark\n~writes through the layout's\n~ingest_sink hook"
                ),
                Box(
                    "mutation/\nHive's mutation API:\nMutatorClient, Transaction,\n"
                    "coordinator.py, validators\n~writes through the layout's\n"
                    "~mutation_format hook"
                ),
                Box(
                    "change_stream/\ncommit_tasks.py: one task\nper commit (driver);\n"
                    "commit_changes.py: rows\n~change_files and\n~change_images (abilities)"
                ),
            ),
            (
                Box(""),
                Box("mutation/engine/\napply.py: vm.apply(txn,\ntable, mutations_df)", spark=True),
                Box(
                    "change_stream/engine/\nsource.py: Spark's data\nsource, format(versioned)",
                    spark=True,
                ),
            ),
        ),
    ),
    Floor(
        "registry",
        "layouts/base.py",
        "the registry: the one place that tells layouts apart by name",
        (
            (
                Box(
                    "_LAYOUTS: one line per layout\n"
                    "versioned.layouts.version_partition.layout\n"
                    "versioned.layouts.acid.layout\n"
                    "~each defines LAYOUT; the first is the default"
                ),
                Box(
                    "lookups\nlayout_of(name) -> StorageLayout\nlayouts(), layout_names()\n"
                    "~create-table --layout offers these names"
                ),
            ),
        ),
    ),
    Floor(
        "layout",
        "layouts/<name>/",
        "one folder per layout: its format, and its Spark in engine/",
        (
            (
                Box(
                    'version_partition/  (layout "versioned")\n'
                    "layout.py: LAYOUT  table_rules.py\n"
                    "paths.py  index.py  probe.py  elsewhere.py\n"
                    "key_pieces.py  bloom_cache.py\n"
                    "compaction_plan.py  compacted_bloom.py\n"
                    "ingest_sink.py  change_images.py\n"
                    "collection_import.py (import_files)"
                ),
                Box(
                    'acid/  (layout "acid")\n'
                    "layout.py: LAYOUT  table_rules.py\n"
                    "directories.py  acid_state.py  paths.py\n"
                    "bucket_hash.py  orc_files.py  write_ids.py\n"
                    "snapshot_dirs.py  compaction_plan.py\n"
                    "ingest_sink.py  change_images.py\n"
                    "mutation/format.py (mutation_format)"
                ),
            ),
            (
                Box(
                    "version_partition/engine/\n"
                    "table_engine.py: VersionPartitionEngine\n"
                    "writer.py  write_plan.py  staging.py\n"
                    "bulk_load.py  reader.py  views.py\n"
                    "compactor.py  vacuum.py  net_changes.py",
                    spark=True,
                ),
                Box(
                    "acid/engine/\n"
                    "table_engine.py: AcidEngine\n"
                    "writer.py  row_lookup.py  event_writer.py\n"
                    "events.py: merge on read  views.py\n"
                    "compactor.py  placement.py  vacuum.py",
                    spark=True,
                ),
            ),
        ),
    ),
    Floor(
        "layouts",
        "layouts/",
        "what every layout declares, implements or shares",
        (
            (
                Box(
                    "layout.py\nStorageLayout: capabilities,\nengine(); require(op)\n"
                    "abilities.py: CanIngest, ...\nboth raise NotSupportedError"
                ),
                Box(
                    "engine_protocol.py\nTableEngine (the Spark\noperations), EngineContext,\n"
                    "engine_for(layout, op)"
                ),
                Box(
                    "what abilities return\ningest.py  ingest_errors.py\n"
                    "change_task.py  vacuum.py\n"
                    "mutation_format.py\ntable_properties.py"
                ),
            ),
        ),
    ),
    Floor(
        "engine",
        "engine/",
        "Spark machinery every layout shares",
        (
            (
                Box(
                    "feeds/  change feeds\nreader.py read_feed(): CSV, JSON,\n"
                    "Parquet, Debezium, DataFrame, Arrow\n-> typed rows + dead letters;\n"
                    "batch_dedup.py  kept_values.py",
                    spark=True,
                    share=1.3,
                ),
                Box(
                    "spark/\nsession.py  types.py\nsql_templates.py (+ sql/)\n"
                    "sql_guard.py: read-only SQL\ncatalog_views.py",
                    spark=True,
                ),
                Box(
                    "net_changes.py\nnet change per key\nbetween snapshots,\nany layout",
                    spark=True,
                    share=0.8,
                ),
            ),
        ),
    ),
    Floor("collections", "collections/", "the data-collection format: folder, metadata, matching"),
    Floor("options", "options.py", "WriteOptions, CompactionOptions, Progress, ..."),
    Floor(
        "catalog",
        "catalog/",
        "SQLAlchemy metastore: decides what is visible",
        (
            (
                Box(
                    "store.py: MetaStore\ntransactions.py  heartbeat.py\n"
                    "commits.py (compare-and-swap)\nsnapshots.py  partitions.py\n"
                    "locks.py  grants.py  write_ids.py"
                ),
                Box(
                    "write_transaction.py\nbegin, heartbeat, CAS commit,\n"
                    "abort + one cleanup policy,\nretry on conflict; every\n"
                    "writer of every layout"
                ),
            ),
        ),
    ),
    Floor(
        "keys",
        "keys/",
        "key machinery both layouts use",
        (
            (
                Box(
                    "encoding.py  bloom.py  ranges.py  stats.py  latest.py  columns.py\n"
                    "~key bytes, Bloom filters (pybloom-live), key ranges and stats,"
                    " last row per key"
                ),
            ),
        ),
    ),
    Floor(
        "storage",
        "storage/ values/",
        "files and partition paths; typed values from text",
        (
            (
                Box(
                    "filesystem.py: FileIO\nby URI through pyarrow.fs,\natomic writes, never\n"
                    "outside the warehouse"
                ),
                Box(
                    "partition_paths.py\nHive's escaping of values\npartition_spec.py: specs\n"
                    "as users type them"
                ),
                Box("values/\ntext_rules.py\narrow_text.py  orc_values.py\narrow_types.py"),
            ),
        ),
    ),
    Floor(
        "plain",
        "plain modules",
        "any floor may import them",
        (
            (
                Box(
                    "errors.py VersionedError  schema.py TableSpec  results.py CommitResult\n"
                    "names.py  config.py  schema_changes.py  transaction_state.py  record_ids.py"
                ),
            ),
        ),
    ),
]

RULES = Box(
    "the rules\n~checked on the source by\n~tests/unit/test_layers.py\n"
    "1 imports point down\n  the floors\n2 nothing outside a layout's\n  folder imports it\n"
    "3 no layout-name comparison\n  outside layouts/base.py\n4 pyspark only in engine/\n"
    "  folders (orange boxes)\n5 every layout folder\n  is registered\n"
    "6 ui/ imports only the\n  public API"
)
NEW_LAYOUT = Box(
    "a new layout\none folder layouts/<name>/\n  with layout.py: LAYOUT\n"
    "one line in _LAYOUTS\nwhat it lacks raises\n  NotSupportedError\n"
    "tests/table/ runs it\n~tests/unit/test_a_new_layout.py\n~plugs in a throw-away one"
)
CALLERS = Box(
    "who asks a layout\nTable: its engine\n  engine_for(layout, op)\nstreaming/: ingest_sink,\n"
    "  allocates_write_ids\nchange_stream/: change_files\n  and change_images\n"
    "mutation/: mutation_format\nimport: import_files\ncompact --kind:\n  compaction_kinds"
)


STEPS: list[tuple[str, Box]] = [
    (
        "cli",
        Box(
            "versioned upsert test.sell changes.csv\n"
            "cli/data.py upsert(): parse the flags, call Table.upsert;\n"
            "cli/render.py prints the result; Ctrl-C: cli/interrupts.py"
        ),
    ),
    (
        "registry",
        Box(
            "which layout, which engine  (asked first)\n"
            "api/table.py Table.upsert -> layouts/base.py layout_of(spec.layout)\n"
            'layouts/engine_protocol.py engine_for(layout, "upsert"):\n'
            "no such capability: NotSupportedError, before anything is read;\n"
            "else the layout's engine (StorageLayout.engine), loaded once"
        ),
    ),
    (
        "api",
        Box(
            "checks before Spark starts\n"
            "api/table.py: MetaStore.check(name, 'write')\n"
            "api/feed_precheck.py precheck_feed(): paths, headers,\n"
            "Parquet schema, empty input -- answered in about a second"
        ),
    ),
    (
        "engine",
        Box(
            "read the feed: typed rows + dead letters\n"
            "engine/feeds/reader.py read_feed() -> Feed(rows, rejected)\n"
            "CSV, JSON lines, Parquet, Debezium, DataFrame, Arrow;\n"
            "--partial: engine/feeds/kept_values.py, stored rows via the engine",
            spark=True,
        ),
    ),
    (
        "layout",
        Box(
            "the layout's engine writes\n"
            "Table._apply hands the feed to VersionPartitionEngine.write\n"
            "-> writer.py write_batch() -> layouts/write_run.py run_write()\n"
            "(attempts, dead letters); a first load in bulk: bulk_load.py",
            spark=True,
        ),
    ),
    (
        "engine",
        Box(
            "in-batch dedup\n"
            "engine/feeds/batch_dedup.py latest_per_key(): last change per\n"
            "key (ordering column, else input order); others: superseded\n"
            "rejected rows -> _dead_letter/ (run_write, feeds/dead_letters.py)",
            spark=True,
        ),
    ),
    (
        "catalog",
        Box(
            "begin transaction V\n"
            "catalog/write_transaction.py write_transaction():\n"
            "MetaStore.begin() + heartbeat.py TransactionKeeper\n"
            "V is the version this write becomes; heartbeated"
        ),
    ),
    (
        "layout",
        Box(
            "plan the version: which keys may exist\n"
            "layouts/version_partition/engine/write_plan.py plan_version()\n"
            "probe.py probe_partition(): min/max key, then Bloom filters\n"
            "  (no data file is read)\n"
            "elsewhere.py probe_elsewhere(): table-wide keys\n"
            "engine/stored_state.py: stale changes (ordering column)\n"
            "writes _index/.../version_id=V/: index.py entries, keys/bloom.py",
            spark=True,
        ),
    ),
    (
        "layout",
        Box(
            "stage the data files\n"
            "layouts/version_partition/engine/staging.py write_version_files()\n"
            "Spark writes _staging/txn=V/; each file moves to\n"
            "<partition>/version_id=V/; a small batch is written by the driver;\n"
            "invisible until the commit",
            spark=True,
        ),
    ),
    (
        "catalog",
        Box(
            "commit with compare-and-swap\n"
            "catalog/store.py MetaStore.commit() -> commits.py\n"
            "one SQL transaction: partition heads (and, for table-wide\n"
            "keys, the table's seq) still as planned, files listed"
        ),
    ),
    (
        "plain",
        Box(
            "CommitResult\n"
            "results.py: version, inserted, updated, deleted, stale,\n"
            "superseded, rejected, files, bytes; cli/render.py prints it"
        ),
    ),
]
BEGIN, COMMIT = 6, 9
"""Positions in `STEPS` of the steps a lost race goes back from and to."""

TAGS = {
    "cli": "cli/",
    "api": "api/",
    "registry": "layouts/",
    "layout": "layouts/<name>",
    "engine": "engine/",
    "catalog": "catalog/",
    "plain": "results.py",
}
"""The floor each step's tag names (the registry step spans base.py and engine_protocol.py)."""
