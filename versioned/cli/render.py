"""Render command results as an aligned text table, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, Literal

import click

OutputFormat = Literal["table", "csv", "json"]
OUTPUT_FORMATS: tuple[str, ...] = ("table", "csv", "json")


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    return value


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(_plain(value), separators=(",", ":"))
    return str(_plain(value))


_CONTROL = {i: f"\\x{i:02x}" for i in (*range(32), 127)} | {
    ord("\\"): "\\\\",
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
    0x85: "\\x85",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def _table_cell(value: Any) -> str:
    """A cell of the aligned text table: one line, control characters escaped (``\\n``)."""
    return _cell(value).translate(_CONTROL)


CELL_WIDTH = 40
"""Characters a table cell of `show` and `sql` shows before it is cut (``--no-truncate``)."""


def render_rows(
    rows: Iterable[Mapping[str, Any]],
    fmt: OutputFormat,
    columns: Sequence[str] | None = None,
    *,
    cell_width: int | None = None,
) -> str:
    """Render many records; ``columns`` fixes the order (default: keys of the first row).

    ``cell_width`` cuts longer table cells to that many characters, the last one ``…``
    (csv and json keep every value whole)."""
    rows = list(rows)
    cols = list(columns) if columns is not None else (list(rows[0]) if rows else [])
    if fmt == "json":
        return json.dumps([{c: _plain(r.get(c)) for c in cols} for r in rows], indent=2)
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(cols)
        for r in rows:
            writer.writerow([_cell(r.get(c)) for c in cols])
        return buf.getvalue().rstrip("\n")
    cells = [[_cut(_table_cell(r.get(c)), cell_width) for c in cols] for r in rows]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    if not rows:
        lines.append("(no rows)")
    return "\n".join(lines)


def _cut(text: str, width: int | None) -> str:
    if width is None or len(text) <= width:
        return text
    return text[: width - 1] + "…"


def render_record(record: Mapping[str, Any], fmt: OutputFormat) -> str:
    """Render one record: ``key  value`` lines as a table, one object as JSON, one CSV row."""
    if fmt == "json":
        return json.dumps(_plain(record), indent=2)
    if fmt == "csv":
        return render_rows([record], "csv")
    width = max((len(k) for k in record), default=0)
    return "\n".join(f"{k.ljust(width)}  {_table_cell(v)}" for k, v in record.items())


def utc_time(epoch: float | None, *, timespec: str = "seconds") -> str | None:
    """A catalog time (seconds since the epoch) as ISO-8601 UTC, to the second
    (``2024-05-01T12:00:00+00:00``, the form `export` writes too) or to ``timespec``;
    ``None`` stays ``None``."""
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec=timespec)


def echo(text: str) -> None:
    """Print a rendered result to standard output."""
    click.echo(text)
