"""What the architecture pictures say: the boxes of each layer and the steps of one upsert.

Plain data for `draw.py`. Module and function names here are the code's (a test checks that
every ``*.py`` named exists), so rename them here when the code moves.
"""

from __future__ import annotations

from dataclasses import dataclass

TITLE, BODY, NOTE = 13.0, 12.0, 11.0
PAD = 8.0


@dataclass(frozen=True)
class Box:
    """Text of a box: the first line, and lines starting with ``!``, are titles; lines
    starting with ``~`` are notes.

    ``status``: ``built``, ``landing`` (being built now) or ``planned``; ``share``: its part
    of the width of its row.
    """

    text: str
    status: str = "built"
    share: float = 1.0

    def lines(self) -> list[tuple[str, float]]:
        first, *rest = self.text.split("\n") if self.text else [""]
        size = {"~": NOTE, "!": TITLE}
        return [(first, TITLE)] + [
            (s[1:], size[s[0]]) if s[:1] in size else (s, BODY) for s in rest
        ]

    def height(self) -> float:
        return 2 * PAD + sum(size * 1.4 for _, size in self.lines()) - 4


BANDS: list[tuple[str, str, list[list[Box]]]] = [
    (
        "cli",
        "click commands: parse, call the API, render text/csv/json",
        [
            [
                Box(
                    "data.py: upsert, show, sql, history\n"
                    "tables.py  maintenance.py  grants.py  collections.py\n"
                    "main.py  context.py  render.py (text, csv, json)"
                )
            ]
        ],
    ),
    (
        "api",
        "thin facades: versioned.connect() -> Catalog -> Table",
        [
            [
                Box("catalog.py\nconnect(), Catalog\ngrants, sql()"),
                Box("table.py\nTable: upsert, read, changes,\ncompact, vacuum, history", share=1.3),
                Box("feed_precheck.py\nlocal files checked\nbefore Spark starts"),
            ]
        ],
    ),
    (
        "engine",
        "Spark: the only code that imports pyspark",
        [
            [
                Box(
                    "table_engine.py: the TableEngine protocol\n"
                    "upsert/apply, read, changes, compact, vacuum, register_view,\n"
                    "export/import hooks; one engine per layout"
                )
            ],
            [
                Box(
                    "feeds/  change-feed normalisation\n"
                    "reader.py read_feed(): CSV, JSON, Parquet,\n"
                    "Debezium, DataFrame/Arrow -> typed rows\n"
                    "+ dead letters; batch_dedup, kept_values"
                ),
                Box(
                    "spark/\nsession.py  types.py\nsql_templates.py (+ sql/)\n"
                    "sql_guard.py: read-only SQL",
                    share=0.75,
                ),
            ],
            [
                Box(
                    "version_partition/\n"
                    "table_engine.py: VersionPartitionEngine\n"
                    "writer.py  write_plan.py  staging.py\n"
                    "reader.py  net_changes.py  views.py\n"
                    "compactor.py  vacuum.py"
                ),
                Box(
                    "acid/  AcidEngine\nkey -> ROW__ID lookup\nmerge-on-read reader\n"
                    "~compaction: next",
                    status="landing",
                    share=0.75,
                ),
            ],
        ],
    ),
    (
        "layouts",
        "plain Python: how each layout sits on storage",
        [
            [
                Box(
                    "base.py\nTableLayout + the registry\nlayout_of(spec.layout)\n"
                    "require(op) raises\n  NotSupportedError\nload_engine()"
                ),
                Box(
                    "version_partition/\npaths  index  bloom  keys\nstats  elsewhere  probe\n"
                    "compaction_plan\ncompacted_bloom"
                ),
                Box(
                    "acid/\ndirectories, ROW__ID,\nbucket hash, ORC ACID\nschema, ValidWriteIdList"
                ),
            ]
        ],
    ),
    (
        "catalog",
        "SQLAlchemy metastore: decides what is visible",
        [
            [
                Box(
                    "store.py: MetaStore\ntransactions.py  heartbeat.py\n"
                    "commits.py (compare-and-swap)\nsnapshots.py  partitions.py\n"
                    "locks.py  grants.py  access.py"
                ),
                Box(
                    "write_transaction.py\nbegin, heartbeat, CAS commit,\n"
                    "abort + one cleanup policy,\nretry on conflict; used by\n"
                    "upsert, compaction, import"
                ),
            ]
        ],
    ),
    (
        "storage",
        "files by URI (pyarrow.fs)",
        [
            [
                Box("filesystem.py: FileIO\natomic writes, inside the warehouse"),
                Box("partition_paths.py\nHive's escaping of values"),
            ]
        ],
    ),
]

PLAIN_TYPES = Box(
    "plain types\n~beside the layers: any\n~layer may import them\n"
    "results.py  CommitResult,\n  CompactionResult, ...\noptions.py  WriteOptions, ...\n"
    "errors.py  VersionedError\nschema.py  TableSpec\nnames.py"
)
COLLECTIONS = Box(
    "collections/\ndata-collection folders:\n"
    "export/import format; read\nand write without a catalog"
)
CLIENTS = Box(
    "streaming/\nHive streaming ingest API\n\n!mutation/\nHive mutation API\n\n"
    "~write files directly,\n~transactions through\n~catalog/, no Spark",
    status="planned",
)


STEPS: list[tuple[str, Box]] = [
    (
        "cli",
        Box(
            "versioned upsert test.sell changes.csv\n"
            "cli/data.py upsert(): parse the flags, call Table.upsert"
        ),
    ),
    (
        "api",
        Box(
            "Table.upsert  (no Spark yet)\n"
            "api/table.py: MetaStore.check(name, 'write')\n"
            "api/feed_precheck.py precheck_feed(): paths, headers,\n"
            "Parquet schema, empty input -- answered in about a second"
        ),
    ),
    (
        "layouts",
        Box(
            "the layout registry\n"
            'layouts/base.py layout_of(spec.layout).require("upsert")\n'
            "no such operation: NotSupportedError naming layout and operation\n"
            "load_engine() imports the layout's engine (and Spark)"
        ),
    ),
    (
        "engine",
        Box(
            "VersionPartitionEngine.write\n"
            "engine/version_partition/table_engine.py, behind the\n"
            "TableEngine protocol (engine/table_engine.py), chosen by\n"
            "engine_for(layout, operation)"
        ),
    ),
    (
        "engine",
        Box(
            "read the feed: typed rows + dead letters\n"
            "engine/feeds/reader.py read_feed() -> Feed(rows, rejected)\n"
            "CSV, JSON lines, Parquet, Debezium, DataFrame, Arrow;\n"
            "--partial: engine/feeds/kept_values.py kept_values_filled()"
        ),
    ),
    (
        "engine",
        Box(
            "in-batch dedup\n"
            "engine/feeds/batch_dedup.py latest_per_key(): last change per\n"
            "key (ordering column, else input order); others: superseded\n"
            "rejected rows -> _dead_letter/ with _reason (writer.py)"
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
        "engine",
        Box(
            "plan the version: which keys may exist\n"
            "engine/version_partition/write_plan.py plan_version()\n"
            "layouts/version_partition/probe.py probe_partition():\n"
            "  min/max key, then Bloom filters (no data files read)\n"
            "elsewhere.py probe_elsewhere(): table-wide keys\n"
            "stored_state.py: stale changes (ordering column)\n"
            "writes _index/.../version_id=V/: index.py entries, bloom.py"
        ),
    ),
    (
        "engine",
        Box(
            "stage the data files\n"
            "engine/version_partition/staging.py write_version_files()\n"
            "Spark writes _staging/txn=V/, files move to\n"
            "<partition>/version_id=V/ -- invisible until the commit"
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
        "results",
        Box(
            "CommitResult\n"
            "results.py: version, inserted, updated, deleted, stale,\n"
            "superseded, rejected, files, bytes; cli/render.py prints it"
        ),
    ),
]
BEGIN, COMMIT = 6, 9
"""Positions in `STEPS` of the steps a lost race goes back from and to."""
