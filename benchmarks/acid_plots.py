"""PNG plot of the acid benchmark: ``acid_read_ratio.png``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

QUERY_TITLES = {"full": "full (all columns)", "column": "one column", "key_range": "1 % key range"}
COMPACTED_X = 12  # where "after major compaction" sits on the deltas axis


def plot_read_ratio(runs: list[dict[str, Any]], path: Path) -> None:
    """Read time over a plain copy's, per query, against the deltas (and after compaction)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(QUERY_TITLES), figsize=(14, 4.5))
    for ax, (query, title) in zip(axes, QUERY_TITLES.items(), strict=True):
        for i, r in enumerate(runs):
            deltas = [p["deltas"] for p in r["reads"]]
            acid = [p["queries"][query]["ratio"]["acid/orc"] for p in r["reads"]]
            ver = [p["queries"][query]["ratio"]["versioned/parquet"] for p in r["reads"]]
            after = r["compaction"]["reads_after"]["queries"][query]["ratio"]["acid/orc"]
            ax.plot(deltas, acid, "o-", color=f"C{i}", label=f"acid / ORC, N={r['rows']:,}")
            ax.plot(COMPACTED_X, after, "*", color=f"C{i}", markersize=12)
            ax.plot(
                deltas, ver, "x--", color=f"C{i}", label=f"versioned / Parquet, N={r['rows']:,}"
            )
        ax.axhline(1.5, color="red", linestyle=":", label="target 1.5x")
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xticks([1, 5, 10, COMPACTED_X], ["1", "5", "10", "major\ncompaction"])
        ax.set(xlabel="deltas (change batches)", title=title)
        ax.set_ylim(bottom=0)
        ax.set_ylabel("table read / plain scan (wall, median)")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize="small")
    fig.suptitle("Latest-view reads vs plain scans of the same live rows")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
