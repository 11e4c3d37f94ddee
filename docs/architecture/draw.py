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
from pathlib import Path

from canvas import INK, MUTED, Canvas, Rect, preview_png, problems, to_svg
from content import (
    BANDS,
    BEGIN,
    BODY,
    CLIENTS,
    COLLECTIONS,
    COMMIT,
    NOTE,
    PAD,
    PLAIN_TYPES,
    STEPS,
    TITLE,
    Box,
)

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
        ("landing", "partly built (issue 12)"),
        ("planned", "planned (next issues)"),
    ):
        box(c, x, 60, 30, Box("", status), "#ffffff", h=14)
        c.text(x + 36, 71, words, NOTE, color=MUTED)
        x += 36 + len(words) * 0.6 * NOTE + 22


# ----------------------------------------------------------------------------- the layers

MAIN_X, MAIN_W = 16.0, 700.0
SIDE_X, SIDE_W = 740.0, 244.0
GAP = 26.0


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
