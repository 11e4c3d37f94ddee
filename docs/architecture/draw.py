"""Draw the pictures of docs/architecture.md: the layers, and the path of one upsert.

    python docs/architecture/draw.py            # rewrites layers.svg and upsert.svg here
    python docs/architecture/draw.py --out DIR  # writes them into DIR instead
    python docs/architecture/draw.py --png      # also PNG previews (needs matplotlib)

`make docs` runs the first form; tests/unit/test_architecture_pictures.py checks that the
committed SVGs are what this script draws, that no label overlaps another, and that every
module named exists. Needs nothing but the standard library.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from canvas import INK, MUTED, Canvas, Rect, preview_png, problems, to_svg

HERE = Path(__file__).resolve().parent

LAYER_FILL = {  # one colour per layer, the same in both pictures
    "cli": "#e8eaf6",
    "api": "#e1f0fb",
    "engine": "#fff1e0",
    "layouts": "#e6f4e7",
    "catalog": "#f3e6f5",
    "storage": "#eceff1",
    "results": "#f7f7f7",
}
LANDING_FILL, LANDING_STROKE = "#fff6b8", "#b7791f"
RETRY = "#c0392b"
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


def box(c: Canvas, x: float, y: float, w: float, spec: Box, fill: str, h: float = 0) -> Rect:
    """Draw ``spec`` at ``x, y``, ``w`` wide (and ``h`` high, else as high as its text)."""
    style: dict[str, object] = {"fill": fill}
    color = INK
    if spec.status == "landing":
        style = {"fill": LANDING_FILL, "stroke": LANDING_STROKE, "stroke_width": 1.4}
    elif spec.status == "planned":
        style = {"fill": "#ffffff", "stroke": MUTED, "dashed": True}
        color = MUTED
    rect = c.rect(x, y, w, h or spec.height(), **style)
    baseline = y + PAD
    for text, size in spec.lines() if spec.text else []:
        baseline += size * 1.1
        c.text(x + PAD, baseline, text, size, bold=size == TITLE, color=color, owner=rect)
        baseline += size * 0.3
    return rect


def heading(c: Canvas, title: str, subtitle: str) -> None:
    """Title, subtitle and the legend of the three box styles."""
    c.text(16, 28, title, 18, bold=True)
    c.text(16, 48, subtitle, BODY, color=MUTED)
    x = 16.0
    for status, words in (
        ("built", "built"),
        ("landing", "being built now (issue 11)"),
        ("planned", "planned (next issues)"),
    ):
        box(c, x, 60, 30, Box("", status), "#ffffff", h=14)
        c.text(x + 36, 71, words, NOTE, color=MUTED)
        x += 36 + len(words) * 0.6 * NOTE + 22


# ----------------------------------------------------------------------------- the layers

MAIN_X, MAIN_W = 16.0, 700.0
SIDE_X, SIDE_W = 740.0, 244.0
GAP = 26.0

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
                    "export/import hooks; one engine per layout",
                    status="landing",
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
                    "~  (being built)\n"
                    "writer.py  write_plan.py  staging.py\n"
                    "reader.py  net_changes.py  views.py\n"
                    "compactor.py  vacuum.py"
                ),
                Box(
                    "acid/\nkey -> ROW__ID lookup\nmerge-on-read reader\nminor/major compaction",
                    status="planned",
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
                    "acid/\ndirectories, ROW__ID,\nbucket hash, ORC ACID\nschema, ValidWriteIdList",
                    status="planned",
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
                    "upsert, compaction, import",
                    status="landing",
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


def band(c: Canvas, y: float, layer: str, role: str, rows: list[list[Box]]) -> Rect:
    """A layer: its name and role on top, then rows of boxes side by side."""
    inner_x, inner_w = MAIN_X + 10, MAIN_W - 20
    heights = [max(b.height() for b in row) for row in rows]
    rect = c.rect(
        MAIN_X,
        y,
        MAIN_W,
        34 + sum(heights) + 10 * len(rows),
        fill=LAYER_FILL[layer],
        stroke="#9aa5b1",
    )
    name = f"{layer}/"
    c.text(MAIN_X + 10, y + 21, name, 15, bold=True, owner=rect)
    c.text(MAIN_X + 24 + len(name) * 9, y + 21, role, BODY, color=MUTED, owner=rect)
    top = y + 32
    for row, row_h in zip(rows, heights, strict=True):
        x, total = inner_x, sum(b.share for b in row)
        for b in row:
            w = (inner_w - 10 * (len(row) - 1)) * b.share / total
            box(c, x, top, w, b, "#ffffff", h=row_h)
            x += w + 10
        top += row_h + 10
    return rect


def layers() -> Canvas:
    c = Canvas(1000, 0, "versioned: the layers (imports point down)")
    heading(c, "versioned: the layers", "imports point down only; tests/unit/test_layers.py")
    bands: list[Rect] = []
    y = 90.0
    for layer, role, rows in BANDS:
        bands.append(band(c, y, layer, role, rows))
        y = bands[-1].bottom + GAP
    for upper, lower in itertools.pairwise(bands):
        x = MAIN_X + MAIN_W / 2
        c.arrow((x, upper.bottom + 2), (x, lower.y - 2))
    cli, _api, engine, layouts, catalog, _storage = bands
    plain = box(c, SIDE_X, cli.y, SIDE_W, PLAIN_TYPES, LAYER_FILL["results"])
    box(c, SIDE_X, plain.bottom + 12, SIDE_W, COLLECTIONS, LAYER_FILL["api"])
    clients = box(c, SIDE_X + 30, engine.y + 40, SIDE_W - 30, CLIENTS, "#ffffff")
    x, into_layouts, into_catalog = SIDE_X + 12, layouts.y + 40, catalog.y + 40
    c.arrow(
        (clients.x, clients.y + 30),
        (x, clients.y + 30),
        (x, into_layouts),
        (layouts.right + 2, into_layouts),
        color=MUTED,
        dashed=True,
    )
    c.arrow(
        (x, into_layouts),
        (x, into_catalog),
        (catalog.right + 2, into_catalog),
        color=MUTED,
        dashed=True,
    )
    c.fit_height()
    return c


# ------------------------------------------------------------------------ one upsert

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
            "load_engine() imports the layout's engine (and Spark)\n"
            "~(today Table._require_layout; Table moves to the registry\n"
            "~ with the TableEngine)"
        ),
    ),
    (
        "engine",
        Box(
            "VersionPartitionEngine.upsert  (being built)\n"
            "engine/version_partition/table_engine.py, behind the\n"
            "TableEngine protocol (engine/table_engine.py); until it\n"
            "lands, Table._apply calls the steps below itself",
            status="landing",
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
            "catalog/write_transaction.py (being built); today\n"
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

TAG_X, TAG_W = 16.0, 86.0
STEP_X, STEP_W = 116.0, 520.0


def upsert_path() -> Canvas:
    c = Canvas(900, 0, "versioned: the path of one upsert")
    heading(c, "versioned: the path of one upsert", "from the command line to the catalog commit")
    y = 94.0
    rects: list[Rect] = []
    for layer, step in STEPS:
        rects.append(box(c, STEP_X, y, STEP_W, step, LAYER_FILL[layer]))
        tag = c.rect(TAG_X, y, TAG_W, 22, fill=LAYER_FILL[layer], stroke="#9aa5b1")
        c.text(TAG_X + TAG_W / 2, y + 15, layer, NOTE, anchor="middle", owner=tag)
        y = rects[-1].bottom + 18
    for upper, lower in itertools.pairwise(rects):
        c.arrow((upper.cx, upper.bottom + 1), (upper.cx, lower.y - 1))
    begin, commit = rects[BEGIN], rects[COMMIT]
    x = STEP_X + STEP_W + 24
    c.arrow(
        (commit.right, commit.y + 20),
        (x, commit.y + 20),
        (x, begin.y + 20),
        (begin.right + 2, begin.y + 20),
        color=RETRY,
        dashed=True,
    )
    why = (
        "lost the race:",
        "CommitConflictError,",
        "abort V, retry as a",
        "new version (up to",
        "WriteOptions.max_attempts)",
    )
    for i, text in enumerate(why):
        c.text(x + 8, (begin.bottom + commit.y) / 2 - 30 + 15 * i, text, NOTE, color=RETRY)
    c.fit_height()
    return c


# ----------------------------------------------------------------------------------- main


def pictures() -> dict[str, Canvas]:
    """The pictures by file stem."""
    return {"layers": layers(), "upsert": upsert_path()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Draw the pictures of docs/architecture.md.")
    parser.add_argument("--out", type=Path, default=HERE, help="folder for the SVGs")
    parser.add_argument("--png", action="store_true", help="also PNG previews (matplotlib)")
    args = parser.parse_args(argv)
    failed = False
    for stem, canvas in pictures().items():
        for problem in problems(canvas):
            print(f"{stem}: {problem}", file=sys.stderr)
            failed = True
        (args.out / f"{stem}.svg").write_text(to_svg(canvas), encoding="utf-8")
        if args.png:
            preview_png(canvas, args.out / f"{stem}.png")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
