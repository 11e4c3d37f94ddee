"""How the charts write text and become SVG documents.

Text is SVG text, not paths in matplotlib's DejaVu Sans: the browser draws it with DejaVu
Sans where it has it and with its own fonts for any character DejaVu Sans lacks (``東京``,
``서울``), so every script the viewer's fonts cover is readable and nothing is fetched.
matplotlib still measures the text with DejaVu Sans to lay the chart out; for a character
that font lacks it measures a stand-in glyph and would warn about it, which says nothing
about what the browser shows, so that warning is silenced while a chart is drawn.

A partition value is written as the page's partitions table writes it (a null one as
Hive names it, `NULL_PARTITION_NAME`) and cut with ``…`` past a width; a cut label carries
the whole value as its SVG ``<title>`` (the tooltip of the chart opened on its own).
"""

from __future__ import annotations

import io
import unicodedata
import warnings
from xml.sax.saxutils import escape

import matplotlib
from matplotlib.figure import Figure
from matplotlib.text import Text

from versioned.api.metadata_tables import NULL_PARTITION_NAME

MISSING_GLYPH = r"Glyph \d+ .* missing from font"
"""matplotlib's warning when the font it measures with lacks a character."""


def partition_value(value: str | None) -> str:
    """A partition value as a chart label: Hive's name for null."""
    return NULL_PARTITION_NAME if value is None else value


def text_width(text: str) -> int:
    """Width of ``text`` in character cells: a wide (CJK) character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def shorten(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` cells, its last one ``…`` when cut."""
    if text_width(text) <= width:
        return text
    kept, used = [], 1  # the ellipsis
    for ch in text:
        used += text_width(ch)
        if used > width:
            break
        kept.append(ch)
    return "".join(kept) + "…"


class ChartText:
    """The titles of one chart's labels, put into its SVG by `svg`."""

    def __init__(self) -> None:
        self._titles: dict[str, str] = {}

    def label(self, text: Text, full: str) -> None:
        """Give ``text`` (a label showing ``full``, maybe cut) ``full`` as its title when it
        was cut."""
        if text.get_text() != full:
            gid = f"label-{len(self._titles) + 1}"
            text.set_gid(gid)
            self._titles[gid] = full

    def svg(self, fig: Figure) -> bytes:
        """``fig`` as an SVG document, its text as text, its cut labels titled."""
        buffer = io.BytesIO()
        # both are process-wide: the page draws one chart at a time (under its lock)
        with warnings.catch_warnings(), matplotlib.rc_context({"svg.fonttype": "none"}):
            warnings.filterwarnings("ignore", MISSING_GLYPH, UserWarning)
            fig.savefig(buffer, format="svg", metadata={"Date": None})
        document = buffer.getvalue().decode()
        for gid, full in self._titles.items():
            group = f'<g id="{gid}">'
            document = document.replace(group, f"{group}\n   <title>{escape(full)}</title>", 1)
        return document.encode()
