"""PNG plot of `benchmarks.peers`: ``peers.png``.

Top: each peer's upsert (first batch of a fresh session, median of the later ones) over
versioned's in the same session. Then one row per workload (6 columns, TPC-H): each peer's
cumulative cost over versioned's after every batch, and each table's read ratio (table / plain
copy) of each query after every batch; versioned's lines of the three Spark lines are grey.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

COLORS = {
    "delta": "C2",
    "delta_cow": "C0",
    "delta_dv": "C9",
    "iceberg_cow": "C1",
    "iceberg_mor": "C3",
    "version": "0.5",
}
VERSIONED_STYLES = {"main": "-", "delta": "--", "iceberg": ":"}
NAMES = {"delta": "delta-rs", "version": "versioned"}


def plot(doc: dict[str, Any], path: Path) -> None:
    """Draw the figure of the results document ``doc`` into ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from benchmarks.peers_report import ROWS, cost_curve, read_ratios, upsert_ratios

    entries = doc["entries"]
    phases = [p for p in ("continuous", "tpch") if any(k.startswith(p) for k in entries)]
    fig, axes = plt.subplots(1 + len(phases), 3, figsize=(16, 4.2 * (1 + len(phases))))
    axes = axes.reshape(1 + len(phases), 3)
    bars = [
        (r, ratios)
        for r in ROWS
        if r.engine != "versioned" and (ratios := upsert_ratios(doc, r)) is not None
    ]
    top = axes[0][0]
    for i, key in enumerate(("load", "first", "median")):
        top.bar(
            [j + 0.27 * (i - 1) for j in range(len(bars))],
            [v[key] for _, v in bars],
            width=0.27,
            label={"load": "load", "first": "1st batch, fresh", "median": "median batch"}[key],
        )
    top.set_xticks(range(len(bars)), [r.title.replace(", ", "\n") for r, _ in bars], fontsize=7)
    top.axhline(1.0, color="grey", linewidth=0.8)
    top.set(yscale="log", ylabel="seconds / versioned's (same Spark)", title="Upsert, 1 % batch")
    top.legend(fontsize="x-small")
    for ax in axes[0][1:]:
        ax.axis("off")
    for row, phase in zip(axes[1:], phases, strict=True):
        runs = {k.split("/")[1]: v for k, v in entries.items() if k.startswith(f"{phase}/")}
        cost, *reads = row
        queries: list[str] = []
        for group, run in runs.items():
            queries = list(run["queries"])
            batches = [s["batch"] for s in run["steps"]]
            peers = [lb for lb in run["tables"] if lb != "version"]
            peers += ["delta"] if "merge" in run["steps"][0] else []
            for label in peers:
                cost.plot(batches, cost_curve(run, label), color=COLORS.get(label), label=label)
            for ax, query in zip(reads, queries, strict=False):
                for label in run["tables"]:
                    mine = label == "version"
                    ax.plot(
                        batches,
                        read_ratios(run, label, query),
                        color=COLORS.get(label),
                        linestyle=VERSIONED_STYLES[group] if mine else "-",
                        label=f"versioned ({group})" if mine else label,
                    )
        title = "6 columns" if phase == "continuous" else "TPC-H lineitem"
        cost.set(
            title=f"{title}: cumulative cost",
            ylabel="cumulative s / versioned's (same Spark)",
            yscale="log",
        )
        for ax, query in zip(reads, queries, strict=False):
            ax.set(title=f"{title}: {query} read", ylabel="table / plain Parquet copy")
            ax.set_ylim(bottom=0)
        for ax in row:
            ax.set_xlabel("change batches")
            ax.axhline(1.0, color="grey", linewidth=0.5)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="x-small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
