"""Draw the pictures of docs/architecture.md: the floors, and the path of one upsert.

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
    BEGIN,
    BODY,
    CALLERS,
    COMMIT,
    FLOORS,
    NEW_LAYOUT,
    NOTE,
    PAD,
    RULES,
    STEPS,
    TAGS,
    TITLE,
    Box,
    Floor,
)

HERE = Path(__file__).resolve().parent

LAYER_FILL = {  # one colour per floor, the same in both pictures
    "cli": "#e8eaf6",
    "api": "#e1f0fb",
    "clients": "#e0f2f1",
    "registry": "#dcedc8",
    "layout": "#e6f4e7",
    "layouts": "#f1f8e9",
    "engine": "#fff1e0",
    "collections": "#fce4ec",
    "options": "#f5f5f5",
    "catalog": "#f3e6f5",
    "keys": "#fffde7",
    "storage": "#eceff1",
    "plain": "#f7f7f7",
}
SPARK_FILL, SPARK_STROKE = "#fde3c4", "#c05621"
RETRY = "#c0392b"


def box(c: Canvas, x: float, y: float, w: float, spec: Box, fill: str, h: float = 0) -> Rect:
    """Draw ``spec`` at ``x, y``, ``w`` wide (and ``h`` high, else as high as its text).

    A box of Spark code gets the Spark border (and, on white, the Spark fill)."""
    style: dict[str, object] = {"fill": fill}
    if spec.spark:
        style = {
            "fill": SPARK_FILL if fill == "#ffffff" else fill,
            "stroke": SPARK_STROKE,
            "stroke_width": 1.6,
        }
    rect = c.rect(x, y, w, h or spec.height(), **style)
    baseline = y + PAD
    for text, size in spec.lines() if spec.text else []:
        baseline += size * 1.1
        c.text(x + PAD, baseline, text, size, bold=size == TITLE, color=INK, owner=rect)
        baseline += size * 0.3
    return rect


def heading(c: Canvas, title: str, subtitle: str) -> None:
    """Title, subtitle and the legend of the two box styles."""
    c.text(16, 28, title, 18, bold=True)
    c.text(16, 48, subtitle, BODY, color=MUTED)
    x = 16.0
    for spark, words in (
        (False, "plain Python"),
        (True, "Spark: code in an engine folder (imports pyspark)"),
    ):
        box(c, x, 60, 30, Box("", spark), "#ffffff", h=14)
        c.text(x + 36, 71, words, NOTE, color=MUTED)
        x += 36 + len(words) * 0.6 * NOTE + 22


# ----------------------------------------------------------------------------- the layers

MAIN_X, MAIN_W = 16.0, 700.0
SIDE_X, SIDE_W = 740.0, 244.0
GAP = 18.0


def band(c: Canvas, y: float, floor: Floor) -> Rect:
    """A floor: its label and role on top, then rows of boxes side by side."""
    inner_x, inner_w = MAIN_X + 10, MAIN_W - 20
    heights = [max(b.height() for b in row) for row in floor.rows]
    rect = c.rect(
        MAIN_X,
        y,
        MAIN_W,
        34 + sum(heights) + 10 * len(heights),
        fill=LAYER_FILL[floor.key],
        stroke="#9aa5b1",
    )
    c.text(MAIN_X + 10, y + 21, floor.label, 15, bold=True, owner=rect)
    role_x = MAIN_X + 28 + len(floor.label) * 9
    c.text(role_x, y + 21, floor.role, BODY, color=MUTED, owner=rect)
    top = y + 32
    for row, row_h in zip(floor.rows, heights, strict=True):
        x, total = inner_x, sum(b.share for b in row)
        for b in row:
            w = (inner_w - 10 * (len(row) - 1)) * b.share / total
            if b.text:  # an empty box is a gap
                box(c, x, top, w, b, "#ffffff", h=row_h)
            x += w + 10
        top += row_h + 10
    return rect


def pointer(c: Canvas, side: Rect, *targets: Rect) -> None:
    """Dashed arrows from a side note to the floors it is about."""
    x, start = SIDE_X + 8, side.y + 20
    for target in targets:
        y = target.y + 21
        points = [(side.x, start), (x, start), (x, y)] if abs(y - start) > 1 else [(side.x, y)]
        c.arrow(*points, (target.right + 2, y), color=MUTED, dashed=True)


def layers() -> Canvas:
    c = Canvas(1000, 0, "versioned: the floors (imports point down)")
    heading(c, "versioned: the floors", "imports point down only; tests/unit/test_layers.py")
    floors: dict[str, Rect] = {}
    y = 90.0
    for floor in FLOORS:
        floors[floor.key] = band(c, y, floor)
        y = floors[floor.key].bottom + GAP
    rects = list(floors.values())
    for upper, lower in itertools.pairwise(rects):
        x = MAIN_X + MAIN_W / 2
        c.arrow((x, upper.bottom + 2), (x, lower.y - 2))
    box(c, SIDE_X, floors["cli"].y, SIDE_W, RULES, LAYER_FILL["plain"])
    new = box(c, SIDE_X + 20, floors["registry"].y, SIDE_W - 20, NEW_LAYOUT, "#ffffff")
    pointer(c, new, floors["registry"], floors["layout"])
    callers = box(c, SIDE_X + 20, floors["layouts"].y, SIDE_W - 20, CALLERS, "#ffffff")
    pointer(c, callers, floors["layouts"])
    c.fit_height()
    return c


# ------------------------------------------------------------------------ one upsert


TAG_X, TAG_W = 16.0, 112.0
STEP_X, STEP_W = 140.0, 520.0


def upsert_path() -> Canvas:
    c = Canvas(900, 0, "versioned: the path of one upsert")
    heading(c, "versioned: the path of one upsert", "from the command line to the catalog commit")
    y = 94.0
    rects: list[Rect] = []
    for floor, step in STEPS:
        rects.append(box(c, STEP_X, y, STEP_W, step, LAYER_FILL[floor]))
        tag = c.rect(TAG_X, y, TAG_W, 22, fill=LAYER_FILL[floor], stroke="#9aa5b1")
        c.text(TAG_X + TAG_W / 2, y + 15, TAGS[floor], NOTE, anchor="middle", owner=tag)
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
