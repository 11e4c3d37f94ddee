"""PNG plots of the upsert benchmark: upsert_time, upsert_versions, upsert_read_ratio."""

from __future__ import annotations

from pathlib import Path

ENGINES = (("naive", "naive rewrite"), ("delta", "delta-rs MERGE"), ("iceberg", "pyiceberg upsert"))


def plots(runs: list[dict], out: Path) -> None:
    """Write the three PNG plots of the results."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    for i, (key, label) in enumerate([("versioned", "versioned"), *ENGINES]):
        for value, style, suffix in (("s", "o-", " (wall)"), ("cpu_s", "x--", " (CPU)")):
            name = f"{key}_{value}"
            pts = [(r["rows"], r["summary"][name]) for r in runs if name in r["summary"]]
            if pts:
                ax.plot(*zip(*pts, strict=True), style, color=f"C{i}", label=label + suffix)
    ax.set(xscale="log", yscale="log", xlabel="table rows N", ylabel="seconds per 1 % batch")
    ax.set_title("Upsert of a 1 % change batch (median of 3)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    fig.savefig(out / "upsert_time.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for r in runs:
        times = [b["seconds"] for b in r["versioned_batches"]]
        ax.plot(range(2, len(times) + 2), times, "o-", label=f"N={r['rows']:,}")
    ax.set(xlabel="version written (1 = initial load)", ylabel="seconds", ylim=(0, None))
    ax.set_title("versioned: upsert time per batch as versions accumulate")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "upsert_versions.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for i, r in enumerate(runs):
        versions = [c["versions"] for c in r["reads"]]
        ax.plot(
            versions,
            [c["ratio"] for c in r["reads"]],
            "o-",
            color=f"C{i}",
            label=f"N={r['rows']:,} (wall)",
        )
        ax.plot(
            versions,
            [c.get("cpu_ratio", c["ratio"]) for c in r["reads"]],
            "x--",
            color=f"C{i}",
            label=f"N={r['rows']:,} (CPU)",
        )
    ax.axhline(1.3, color="red", linestyle="--", label="target 1.3x")
    ax.set(xlabel="table versions", ylabel="versioned read / plain Parquet scan", ylim=(0, None))
    ax.set_title("Full latest-view read vs plain Parquet scan")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "upsert_read_ratio.png", dpi=110)
    plt.close(fig)
