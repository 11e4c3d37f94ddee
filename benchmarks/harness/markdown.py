"""Markdown tables of the reports (plots stay with each benchmark's report module)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

ALIGN = {"l": "---", "r": "---:"}


def row(cells: Iterable[object]) -> str:
    """One table row: ``| a | b |``."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def table(header: Sequence[str], align: str, rows: Iterable[Iterable[object]] = ()) -> list[str]:
    """The lines of a table: the header, the alignment line (``align`` has one letter per
    column, ``l`` or ``r``) and one line per row."""
    if len(align) != len(header):
        raise ValueError(f"{len(header)} columns but alignment {align!r}")
    return [row(header), "|" + "".join(ALIGN[a] + "|" for a in align), *(row(r) for r in rows)]
