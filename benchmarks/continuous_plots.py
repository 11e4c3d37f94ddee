"""PNG plot of the continuous benchmark: ``continuous.png``.

One row per run: the read ratio of every query on every table after each batch (left), and
the cumulative cost of each table's upserts over MERGE's (right), with the issue's targets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

STYLES = {
    "version": ("o", "-"),
    "acid": ("s", "-"),
    "version_off": ("o", ":"),
    "acid_off": ("s", ":"),
}
"""(marker, line style) of each table's lines: dotted for the references."""
COLORS = {"version": "C0", "acid": "C1", "version_off": "C0", "acid_off": "C1"}
READ_TARGETS = (("version layout", 1.3, "C0"), ("acid layout", 1.5, "C1"))
COST_TARGETS = (("version layout", 1.0, "C0"), ("acid layout", 1.5, "C1"))
MARKERS = ("", "x", "^", "v")
"""The first query takes its table's marker, the others these."""


def plot(series: list[dict[str, Any]], path: Path) -> None:
    """Read ratios and cumulative cost ratios against the batches, a row per run.

    Args:
        series: Per run: ``label``, ``batches``, ``reads`` (``{table: {query: ratios}}``)
            and ``cost`` (``{table: cumulative cost ratios}``), one value per batch.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    if not series:
        return
    fig, axes = plt.subplots(len(series), 2, figsize=(14, 4.5 * len(series)), squeeze=False)
    for (reads, cost), run in zip(axes, series, strict=True):
        batches = run["batches"]
        for label, by_query in run["reads"].items():
            (marker, line), color = STYLES.get(label, ("o", "-")), COLORS.get(label)
            for i, (query, values) in enumerate(by_query.items()):
                reads.plot(
                    batches,
                    values,
                    color=color,
                    linestyle=line,
                    marker=MARKERS[i % len(MARKERS)] or marker,
                    alpha=1.0 if i == 0 else 0.6,
                    label=f"{label}: {query}",
                )
        for label, values in run["cost"].items():
            marker, line = STYLES.get(label, ("o", "-"))
            cost.plot(
                batches, values, color=COLORS.get(label), marker=marker, linestyle=line, label=label
            )
        for name, limit, color in READ_TARGETS:
            reads.axhline(
                limit, color=color, linestyle="--", linewidth=0.8, label=f"{name} {limit}x"
            )
        for name, limit, color in COST_TARGETS:
            cost.axhline(
                limit, color=color, linestyle="--", linewidth=0.8, label=f"{name} {limit}x"
            )
        reads.set(
            xlabel="change batches",
            ylabel="table read / plain scan (median)",
            title=f"{run['label']}: reads",
        )
        cost.set(
            xlabel="change batches",
            ylabel="cumulative upsert s / cumulative MERGE s",
            title=f"{run['label']}: write cost",
        )
        for ax in (reads, cost):
            ax.axhline(1.0, color="grey", linewidth=0.5)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="x-small", ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
