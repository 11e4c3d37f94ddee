"""A small drawing surface for the architecture pictures: boxes, text, arrows -> SVG text.

The SVG is written by hand (no plotting library), so the same input always gives the same
bytes, on any machine and with any library versions: no timestamps, no generated ids. Text is
monospace, so its width is known without fonts (0.6 em a character) and `problems` can tell
whether a label overlaps another or sticks out of its box. `preview_png` draws the same
items with matplotlib, for looking at the picture only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

FONT_FAMILY = "DejaVu Sans Mono, Menlo, Consolas, Liberation Mono, monospace"
CHAR_WIDTH = 0.6
"""Advance of one monospace character, in em (DejaVu Sans Mono: 0.602, Menlo and Consolas 0.6)."""

INK = "#1f2933"
MUTED = "#616e7c"

Point = tuple[float, float]


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str = "#ffffff"
    stroke: str = INK
    dashed: bool = False
    stroke_width: float = 1.0

    @property
    def bottom(self) -> float:
        return self.y + self.h

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def cx(self) -> float:
        return self.x + self.w / 2


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    """Baseline."""
    text: str
    size: float
    bold: bool = False
    color: str = INK
    anchor: str = "start"
    owner: Rect | None = None
    """The box the text must stay inside, if any."""

    def bounds(self) -> tuple[float, float, float, float]:
        """Left, top, right, bottom of the glyphs (monospace estimate)."""
        width = len(self.text) * CHAR_WIDTH * self.size
        left = {"start": self.x, "middle": self.x - width / 2, "end": self.x - width}[self.anchor]
        return left, self.y - 0.8 * self.size, left + width, self.y + 0.25 * self.size


@dataclass(frozen=True)
class Arrow:
    points: tuple[Point, ...]
    color: str = INK
    dashed: bool = False
    head: float = 7.0

    def head_polygon(self) -> tuple[Point, Point, Point]:
        (x0, y0), (x1, y1) = self.points[-2], self.points[-1]
        length = max(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5, 1e-9)
        ux, uy = (x1 - x0) / length, (y1 - y0) / length
        bx, by = x1 - ux * self.head, y1 - uy * self.head
        half = self.head * 0.45
        return (x1, y1), (bx - uy * half, by + ux * half), (bx + uy * half, by - ux * half)


@dataclass
class Canvas:
    width: float
    height: float
    title: str
    items: list[Rect | Text | Arrow] = field(default_factory=list)

    def rect(self, x: float, y: float, w: float, h: float, **style: object) -> Rect:
        rect = Rect(x, y, w, h, **style)  # type: ignore[arg-type]
        self.items.append(rect)
        return rect

    def text(self, x: float, y: float, text: str, size: float, **style: object) -> Text:
        item = Text(x, y, text, size, **style)  # type: ignore[arg-type]
        self.items.append(item)
        return item

    def arrow(self, *points: Point, color: str = INK, dashed: bool = False) -> Arrow:
        item = Arrow(tuple(points), color=color, dashed=dashed)
        self.items.append(item)
        return item

    def fit_height(self, margin: float = 16.0) -> None:
        """Make the picture as tall as its content plus ``margin``."""
        bottoms = [
            item.bottom
            if isinstance(item, Rect)
            else item.bounds()[3]
            if isinstance(item, Text)
            else max(y for _, y in item.points)
            for item in self.items
        ]
        self.height = max(bottoms) + margin

    def texts(self) -> list[Text]:
        return [item for item in self.items if isinstance(item, Text)]


def problems(canvas: Canvas, margin: float = 1.0) -> list[str]:
    """Labels that overlap each other, leave their box or the picture (empty: readable)."""
    found: list[str] = []
    texts = canvas.texts()
    for i, a in enumerate(texts):
        al, at, ar, ab = a.bounds()
        if al < 0 or at < 0 or ar > canvas.width or ab > canvas.height:
            found.append(f"outside the picture: {a.text!r}")
        box = a.owner
        if box is not None and (
            al < box.x + margin or ar > box.right - margin or at < box.y or ab > box.bottom
        ):
            found.append(f"outside its box: {a.text!r}")
        for b in texts[i + 1 :]:
            bl, bt, br, bb = b.bounds()
            if al < br and bl < ar and at < bb and bt < ab:
                found.append(f"overlap: {a.text!r} and {b.text!r}")
    return found


def _num(value: float) -> str:
    return f"{round(value, 2):g}"


def _points(points: Sequence[Point]) -> str:
    return " ".join(f"{_num(x)},{_num(y)}" for x, y in points)


def to_svg(canvas: Canvas) -> str:
    """The picture as SVG text (deterministic)."""
    w, h = _num(canvas.width), _num(canvas.height)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" font-family="{FONT_FAMILY}" style="white-space: pre">',
        f"<title>{escape(canvas.title)}</title>",
        f'<rect x="0" y="0" width="{w}" height="{h}" fill="#ffffff"/>',
    ]
    for item in canvas.items:
        if isinstance(item, Rect):
            dash = ' stroke-dasharray="6 4"' if item.dashed else ""
            out.append(
                f'<rect x="{_num(item.x)}" y="{_num(item.y)}" width="{_num(item.w)}" '
                f'height="{_num(item.h)}" rx="4" fill="{item.fill}" stroke="{item.stroke}" '
                f'stroke-width="{_num(item.stroke_width)}"{dash}/>'
            )
        elif isinstance(item, Text):
            weight = ' font-weight="bold"' if item.bold else ""
            anchor = f' text-anchor="{item.anchor}"' if item.anchor != "start" else ""
            out.append(
                f'<text x="{_num(item.x)}" y="{_num(item.y)}" font-size="{_num(item.size)}" '
                f'fill="{item.color}"{weight}{anchor} xml:space="preserve">'
                f"{escape(item.text)}</text>"
            )
        else:
            dash = ' stroke-dasharray="5 4"' if item.dashed else ""
            out.append(
                f'<polyline points="{_points(item.points)}" fill="none" stroke="{item.color}" '
                f'stroke-width="1.4"{dash}/>'
            )
            out.append(f'<polygon points="{_points(item.head_polygon())}" fill="{item.color}"/>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def preview_png(canvas: Canvas, path: Path, dpi: int = 150) -> None:
    """Draw the picture with matplotlib into a PNG, to look at (not committed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch, Polygon

    fig = plt.figure(figsize=(canvas.width / 100, canvas.height / 100), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, canvas.width)
    ax.set_ylim(canvas.height, 0)
    ax.axis("off")
    for item in canvas.items:
        if isinstance(item, Rect):
            ax.add_patch(
                FancyBboxPatch(
                    (item.x, item.y),
                    item.w,
                    item.h,
                    boxstyle="round,pad=0,rounding_size=4",
                    facecolor=item.fill,
                    edgecolor=item.stroke,
                    linewidth=item.stroke_width * 0.72,
                    linestyle=(0, (6, 4)) if item.dashed else "-",
                )
            )
        elif isinstance(item, Text):
            ax.text(
                item.x,
                item.y,
                item.text,
                fontsize=item.size * 0.72,
                family="DejaVu Sans Mono",
                weight="bold" if item.bold else "normal",
                color=item.color,
                ha={"start": "left", "middle": "center", "end": "right"}[item.anchor],
                va="baseline",
            )
        else:
            xs, ys = zip(*item.points, strict=True)
            ax.plot(xs, ys, color=item.color, linewidth=1.0, linestyle="--" if item.dashed else "-")
            ax.add_patch(Polygon(item.head_polygon(), closed=True, color=item.color))
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
