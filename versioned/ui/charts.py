"""The table page's charts, drawn server-side as SVG with matplotlib (no pyplot, no
JavaScript; text is SVG text the browser draws, in DejaVu Sans or its own fonts for what
DejaVu Sans lacks, and nothing is fetched: `versioned.ui.chart_svg`).

A 1,000-commit history is a few filled polygons (one per series), not a bar per commit, so
it draws in tens of milliseconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from matplotlib import colormaps
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, MaxNLocator

from versioned.ui.chart_svg import ChartText, partition_value, shorten, text_width

SERIES = (
    ("inserted", "#4c9f70"),
    ("updated", "#3d7ab8"),
    ("deleted", "#c9743c"),
    ("rejected", "#b8323c"),
)
"""Row counts of a commit, bottom to top, with their colours."""
HEAT = "YlOrRd"
"""Colour map of read amplification (1 = nothing to skip, darker = more to read)."""
MAX_LABELLED_CELLS = 120
"""Heat map cells that get their value written in them (more would be unreadable)."""
CELL_NAME_WIDTH = 26
"""Character cells of a partition's name in its heat map cell before it is cut with ``…``
(Hive's name of a null value, ``__HIVE_DEFAULT_PARTITION__``, fits)."""
AXIS_NAME_WIDTH = 32
"""Character cells of a heat map row's or column's name before it is cut with ``…``."""
CELLS_PER_ROW = 12
"""Cells in a row of a heat map whose cells name their partitions, at most."""
MAX_INCHES = 12.0
"""The heat map's largest width and height."""


def commits_svg(history: Sequence[Mapping[str, Any]]) -> bytes:
    """Rows inserted, updated, deleted and rejected per commit (stacked), bytes written and
    seconds taken, one point per commit of ``history`` (metadata ``history`` rows)."""
    fig = Figure(figsize=(10, 6.2))
    # Fixed margins: matplotlib's constrained layout would double the drawing time.
    fig.subplots_adjust(left=0.075, right=0.985, top=0.95, bottom=0.11, hspace=0.14)
    rows_ax, bytes_ax, seconds_ax = fig.subplots(
        3, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1.2, 1.2]}
    )
    if not history:
        rows_ax.text(0.5, 0.5, "no commit yet", ha="center", va="center")
        rows_ax.set_axis_off()
        bytes_ax.set_axis_off()
        seconds_ax.set_axis_off()
        return ChartText().svg(fig)
    x = [h["commit"] for h in history]
    # each commit a step one unit wide, centred on its number: its edges, and each series
    # with its last value again for the last edge
    edges = [c - 0.5 for c in x] + [x[-1] + 0.5]
    stacked = [_steps([h[name] or 0 for h in history]) for name, _ in SERIES]
    rows_ax.stackplot(
        edges,
        *stacked,
        labels=[name for name, _ in SERIES],
        colors=[colour for _, colour in SERIES],
        step="post",
        linewidth=0,
    )
    rows_ax.set_ylabel("rows")
    rows_ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=4, frameon=False, fontsize=8)
    rows_ax.set_title("rows per commit", loc="left", fontsize=10)
    written = [(h["bytes_written"] or 0) / 1024 for h in history]
    bytes_ax.fill_between(edges, _steps(written), step="post", color="#7a6fb0", linewidth=0)
    bytes_ax.set_ylabel("KiB written")
    seconds = [h["seconds"] if h["seconds"] is not None else math.nan for h in history]
    seconds_ax.fill_between(edges, _steps(seconds), step="post", color="#8a8a8a", linewidth=0)
    seconds_ax.set_ylabel("seconds")
    for ax in (rows_ax, bytes_ax, seconds_ax):
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_locator(MaxNLocator(4, integer=ax is rows_ax))
        ax.grid(axis="y", color="#e4e4e4", linewidth=0.6)
        ax.set_xlim(x[0] - 0.5, x[-1] + 0.5)
    times = {h["commit"]: h["committed_at"] for h in history}
    # whole commit numbers only, also when the axis spans one commit (the locator's default
    # falls back to fractional ticks below two whole numbers in view)
    seconds_ax.xaxis.set_major_locator(MaxNLocator(8, integer=True, min_n_ticks=1))
    seconds_ax.xaxis.set_major_formatter(FuncFormatter(_commit_label(x, times)))
    seconds_ax.set_xlabel("commit (and its local time)")
    return ChartText().svg(fig)


def _steps(values: list[float]) -> list[float]:
    return [*values, values[-1]]


def _commit_label(commits: Sequence[int], times: Mapping[int, datetime]) -> Any:
    """Tick labels: the commit number and, below it, its local time."""
    stamps = [times[c].astimezone() for c in commits]
    same_day = stamps[0].date() == stamps[-1].date()

    def label(value: float, _pos: int) -> str:
        commit = round(value)
        if commit != value or commit not in times:  # between commits: no label
            return ""
        local = times[commit].astimezone()
        return f"{commit}\n{local:%H:%M:%S}" if same_day else f"{commit}\n{local:%m-%d %H:%M}"

    return label


def partitions_svg(partitions: Sequence[Mapping[str, Any]], partition_by: Sequence[str]) -> bytes:
    """A heat map of read amplification, one cell per partition (metadata ``partitions``
    rows), hatched where the maintenance policy would compact now.

    With two or more partition columns, rows are the first column's values and columns the
    others'; with one, the partitions fill rows of up to 12 cells in order, each cell naming
    its partition. A null value is named as Hive names it; a name too long is cut with ``…``
    and carries the whole one as its title."""
    text = ChartText()
    named_cells = len(partition_by) < 2  # no axis names: each cell says its partition
    names = [_cell_name(p, partition_by) for p in partitions] if named_cells else []
    # a cell is as wide as the longest name it shows (8 pt: about 0.07 in a character)
    cell_width = max([0.9] + [0.07 * text_width(shorten(n, CELL_NAME_WIDTH)) + 0.2 for n in names])
    per_row = min(CELLS_PER_ROW, max(1, int((MAX_INCHES - 1.2) / cell_width + 1e-6)))
    cells = _grid(partitions, partition_by, per_row)
    n_rows = max((r for r, _, _ in cells), default=0) + 1
    n_cols = max((c for _, c, _ in cells), default=0) + 1
    row_names, col_names = _axis_names(partitions, partition_by)
    row_shown = [shorten(n, AXIS_NAME_WIDTH) for n in row_names]
    col_shown = [shorten(n, AXIS_NAME_WIDTH) for n in col_names]
    # Fixed margins in inches, from the longest names (constrained layout draws twice)
    # (a column name, written at 30 degrees, reaches left of its cell by about 0.065 in a
    # character)
    left = max(
        0.3 + 0.08 * max((text_width(n) for n in row_shown), default=0),
        0.065 * text_width(col_shown[0]) - 0.3 if col_shown else 0.0,
    )
    bottom = 0.2 + 0.05 * max((text_width(n) for n in col_shown), default=0)
    width = min(left + cell_width * n_cols + 1.2, MAX_INCHES)
    height = min(max(bottom + 0.6 * n_rows + 0.2, 1.9), MAX_INCHES)
    fig = Figure(figsize=(width, height))
    right = 1.1  # the colour bar and its label
    ax = fig.add_axes(
        (left / width, bottom / height, 1 - (left + right) / width, 1 - (bottom + 0.15) / height)
    )
    bar_ax = fig.add_axes(
        (
            (width - right + 0.15) / width,
            bottom / height,
            0.15 / width,
            1 - (bottom + 0.15) / height,
        )
    )
    if not partitions:
        ax.text(0.5, 0.5, "no partition yet", ha="center", va="center")
        ax.set_axis_off()
        bar_ax.set_axis_off()
        return text.svg(fig)
    values = [[math.nan] * n_cols for _ in range(n_rows)]
    worst = 4.0
    for r, c, part in cells:
        amp = part["read_amplification"]
        if amp is not None:
            values[r][c] = amp
            worst = max(worst, amp)
    norm = Normalize(vmin=1.0, vmax=worst)  # 1 = nothing to skip; at least 1 to 4
    cmap = colormaps[HEAT].with_extremes(bad="none")  # no such partition: nothing
    mesh = ax.pcolormesh(values, cmap=cmap, norm=norm, edgecolors="none")
    # white gaps between the cells (and around them: a mesh's own edges leave slivers)
    ax.hlines(range(n_rows + 1), 0, n_cols, colors="white", linewidth=3)
    ax.vlines(range(n_cols + 1), 0, n_rows, colors="white", linewidth=3)
    for i, (r, c, part) in enumerate(cells):
        if part["read_amplification"] is None:  # no live row: grey
            ax.add_patch(Rectangle((c, r), 1, 1, facecolor="#d9d9d9", edgecolor="white", lw=3))
        if part["compaction_due"]:
            ax.add_patch(
                Rectangle((c, r), 1, 1, fill=False, hatch="///", edgecolor="#00000073", lw=0)
            )
        if len(cells) <= MAX_LABELLED_CELLS:
            amp = part["read_amplification"]
            dark = amp is not None and norm(amp) > 0.6
            due = bool(part["compaction_due"])
            # over the hatching, the text sits on a light patch
            style: dict[str, Any] = {
                "ha": "center",
                "va": "center",
                "fontsize": 8,
                "color": "white" if dark and not due else "black",
                "bbox": {"boxstyle": "round,pad=0.25", "fc": "#ffffffcc", "lw": 0} if due else None,
            }
            # one line per text, so that the browser centres it (text-anchor) whatever
            # font draws it
            reading = "no live row" if amp is None else f"{amp:.2f}"
            if named_cells:
                shown = shorten(names[i], CELL_NAME_WIDTH)
                text.label(ax.text(c + 0.5, r + 0.36, shown, **style), names[i])
                ax.text(c + 0.5, r + 0.66, reading, **style)
            else:
                ax.text(c + 0.5, r + 0.5, reading, **style)
    ax.set_xticks(
        [i + 0.5 for i in range(len(col_shown))],
        col_shown,
        rotation=30,
        ha="right",
        rotation_mode="anchor",
    )
    ax.set_yticks([i + 0.5 for i in range(len(row_shown))], row_shown)
    for label, full in [
        *zip(ax.get_xticklabels(), col_names, strict=True),
        *zip(ax.get_yticklabels(), row_names, strict=True),
    ]:
        text.label(label, full)
    # a little room around the cells, so that their white borders are not cut
    ax.set_xlim(-0.05, n_cols + 0.05)
    ax.set_ylim(n_rows + 0.05, -0.05)  # the first row on top
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    bar = fig.colorbar(mesh, cax=bar_ax)
    bar.set_label("read amplification")
    return text.svg(fig)


def _grid(
    partitions: Sequence[Mapping[str, Any]], partition_by: Sequence[str], per_row: int
) -> list[tuple[int, int, Mapping[str, Any]]]:
    """Each partition's cell (row, column)."""
    if len(partition_by) >= 2:
        firsts = _ordered(_value(p, 0) for p in partitions)
        rests = _ordered(_rest(p) for p in partitions)
        return [(firsts.index(_value(p, 0)), rests.index(_rest(p)), p) for p in partitions]
    width = min(max(len(partitions), 1), per_row)
    return [(i // width, i % width, p) for i, p in enumerate(partitions)]


def _axis_names(
    partitions: Sequence[Mapping[str, Any]], partition_by: Sequence[str]
) -> tuple[list[str], list[str]]:
    """Names of the heat map's rows and columns (none when the cells name themselves)."""
    if len(partition_by) < 2:
        return [], []
    rows = [f"{partition_by[0]}={v}" for v in _ordered(_value(p, 0) for p in partitions)]
    return rows, _ordered(_rest(p) for p in partitions)


def _cell_name(partition: Mapping[str, Any], partition_by: Sequence[str]) -> str:
    """What a cell of a table with at most one partition column says it is."""
    return _value(partition, 0) if partition_by else "(table)"


def _value(partition: Mapping[str, Any], i: int) -> str:
    values = partition["values"] or []
    return "" if i >= len(values) else partition_value(values[i][1])


def _rest(partition: Mapping[str, Any]) -> str:
    return "/".join(f"{k}={partition_value(v)}" for k, v in (partition["values"] or [])[1:])


def _ordered(items: Any) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)
