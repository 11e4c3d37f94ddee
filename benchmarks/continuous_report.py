"""Rendering the continuous benchmark: ``continuous.md`` (per run: summary against the issue's
targets, then a table per versioned table, batch by batch) and ``continuous.png``.

``benchmarks/results/continuous_notes.md``, if present, is appended verbatim to
``continuous.md`` (the hand-written analysis), so re-rendering never loses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.continuous_plots import plot
from benchmarks.harness import contention, median, table

NAME = "continuous"


@dataclass(frozen=True)
class Target:
    """Issue 30's targets for a layout's table with its own maintenance on."""

    median: float
    """Median read ratio over the batches, every query."""
    worst: float | None
    """Worst read ratio over the batches, every query (None: no target)."""
    cost: float
    """Cumulative upsert seconds over cumulative MERGE seconds."""


TARGETS = {"versioned": Target(1.3, 1.6, 1.0), "acid": Target(1.5, None, 1.5)}
TITLES = {
    "version": "version layout, own maintenance on",
    "acid": "acid layout, own maintenance on",
    "version_off": "version layout, maintenance off (reference)",
    "acid_off": "acid layout, maintenance off (reference)",
}
HOW_TO_READ = """\
## How to read this

- Every change batch goes to every writer (the order rotates per batch): each versioned table
  through `Table.upsert` of the batch's Parquet file, in the caller's session; delta-rs MERGE
  of the same batch read into an Arrow table beforehand (`when_matched_delete` on `op = 'D'`,
  `when_matched_update_all`, `when_not_matched_insert_all`). **upsert s** is the wall time of
  the upsert, including the maintenance the table ran inline after its commit; **cost** is
  the cumulative upsert seconds over the cumulative MERGE seconds up to that batch.
- **maintenance** is what the table ran on its own after the batch: from
  `CommitResult.maintenance` (partitions compacted, seconds), else the compaction commits the
  table's history gained (`-`: none).
- After every batch, each query runs through `Catalog.sql` on the table and on a plain copy of
  the same live rows (written by Spark from delta-rs's data files, one file per partition:
  Parquet next to the version layout, ORC next to acid), alternately, in the caller's session;
  **ratio** = table / plain copy, medians of `repeat` timings each. Every answer agreed (the
  run fails otherwise), so versioned and delta-rs held the same rows after every batch.
- No upsert warmed up the measured tables: batch 1 is their first upsert of the session. With
  `warm-up rows` > 0 the whole benchmark first ran untimed on a small table of its own (JIT,
  class loading).
- **others** is the share of the machine's cores other processes used meanwhile.
"""


def maintenance_text(upsert: dict[str, Any]) -> str:
    """What maintenance a batch's upsert ran, in a few words."""
    ran = upsert.get("maintenance")
    if ran:
        return (
            f"{ran['compacted']}/{ran['partitions']} partitions compacted, {ran['seconds']:.2f} s"
        )
    commits = upsert.get("commits", {})
    if commits.get("compactions"):
        triggers = ", ".join(commits.get("triggers", []))
        return f"{commits['compactions']} compaction commits (trigger {triggers})"
    return "-"


def cost_curve(run: dict[str, Any], label: str) -> list[float]:
    """Cumulative upsert seconds over cumulative MERGE seconds, after each batch."""
    ours = theirs = 0.0
    curve = []
    for step in run["steps"]:
        ours += step["upserts"][label]["seconds"]
        theirs += step["merge"]["seconds"]
        curve.append(ours / theirs)
    return curve


def ratios(run: dict[str, Any], label: str, query: str) -> list[float]:
    """The read ratio of ``query`` on table ``label`` after each batch."""
    return [step["reads"][label][query]["ratio"] for step in run["steps"]]


def summary(run: dict[str, Any], label: str) -> dict[str, Any]:
    """Median and worst read ratio per query, the cumulative cost ratio, and whether each
    meets its target (None: no target for this table)."""
    spec = run["tables"][label]
    target = TARGETS.get(spec["layout"]) if spec["auto_compact"] else None
    out: dict[str, Any] = {"cost": cost_curve(run, label)[-1], "queries": {}}
    out["cost_ok"] = None if target is None else out["cost"] <= target.cost
    for query in run["queries"]:
        values = ratios(run, label, query)
        entry: dict[str, Any] = {"median": median(values), "worst": max(values)}
        if target is not None:
            entry["median_ok"] = entry["median"] <= target.median
            entry["worst_ok"] = None if target.worst is None else entry["worst"] <= target.worst
        out["queries"][query] = entry
    return out


def plot_series(run: dict[str, Any]) -> dict[str, Any]:
    """What `continuous_plots.plot` draws of one run."""
    return {
        "label": run["label"],
        "batches": [step["batch"] for step in run["steps"]],
        "reads": {t: {q: ratios(run, t, q) for q in run["queries"]} for t in run["tables"]},
        "cost": {t: cost_curve(run, t) for t in run["tables"]},
    }


def _x(value: float) -> str:
    return f"{value:.2f}x"


def _verdict(value: float, ok: bool | None, limit: float | None) -> str:
    if ok is None or limit is None:
        return _x(value)
    return f"**{_x(value)}** ({'meets' if ok else 'misses'} <= {limit:g}x)"


def _summary_lines(run: dict[str, Any]) -> list[str]:
    queries = list(run["queries"])
    header = ["table", "cost vs MERGE"]
    for q in queries:
        header += [f"{q} median", f"{q} worst"]
    rows = []
    for label, spec in run["tables"].items():
        s = summary(run, label)
        target = TARGETS.get(spec["layout"]) if spec["auto_compact"] else None
        cells = [
            TITLES.get(label, label),
            _verdict(s["cost"], s["cost_ok"], target.cost if target else None),
        ]
        for q in queries:
            e = s["queries"][q]
            cells.append(
                _verdict(e["median"], e.get("median_ok"), target.median if target else None)
            )
            cells.append(_verdict(e["worst"], e.get("worst_ok"), target.worst if target else None))
        rows.append(cells)
    return table(header, "l" + "r" * (len(header) - 1), rows)


def _table_lines(run: dict[str, Any], label: str) -> list[str]:
    queries = list(run["queries"])
    header = ["batch", "upsert s", "MERGE s", "cost", *(f"{q} ratio" for q in queries)]
    header += ["maintenance", "others"]
    curve = cost_curve(run, label)
    rows = []
    for step, cost in zip(run["steps"], curve, strict=True):
        upsert, merge = step["upserts"][label], step["merge"]
        reads = step["reads"][label]
        times = [upsert, merge] + [
            t for r in reads.values() for v in r["times"].values() for t in v
        ]
        rows.append(
            [
                step["batch"],
                f"{upsert['seconds']:.2f}",
                f"{merge['seconds']:.2f}",
                _x(cost),
                *(_x(reads[q]["ratio"]) for q in queries),
                maintenance_text(upsert),
                f"{contention(times):.0%}",
            ]
        )
    return table(header, "r" * (len(header) - 2) + "lr", rows)


def _settings(settings: dict[str, Any] | None) -> str:
    """``shuffle.partitions=200, adaptive.enabled=true`` (Spark settings, ``spark.sql.`` off)."""
    if not settings:
        return "-"
    return ", ".join(f"`{k.removeprefix('spark.sql.')}={v}`" for k, v in settings.items())


def _run_lines(run: dict[str, Any]) -> list[str]:
    low, high = min(run["batch_rows"]), max(run["batch_rows"])
    sizes = f"{low:,}" if low == high else f"{low:,}-{high:,}"
    load = ", ".join(f"{k} {v['seconds']:.1f} s" for k, v in run["load"].items())
    session = run.get("session", {})
    props = run.get("properties") or []
    title = run["label"] + (f", table properties {', '.join(props)}" if props else "")
    if run.get("layouts") and len(run["layouts"]) == 1:
        title += f", {run['layouts'][0]} layout only"
    lines = [
        f"## {title}",
        "",
        f"{run['rows']:,} rows loaded, then {len(run['steps'])} batches of "
        f"{sizes} rows; {run['live_rows']:,} live rows at the "
        f"end; {run['repeat']} timing(s) per query and side; warm-up rows "
        f"{run.get('warm_up_rows', 0):,}; whole run {run.get('wall_s', 0):.0f} s.",
        f"Command: `{run.get('command', '')}`.",
        f"Session: {_settings(session.get('caller'))} in the caller's; `Catalog.sql`'s own "
        f"session (new, of the same SparkContext): {_settings(session.get('catalog_sql'))}.",
        f"Loads (not in the cost): {load}.",
        "",
        *_summary_lines(run),
        "",
    ]
    for label in run["tables"]:
        spec = run["tables"][label]
        extra = f", {spec['buckets']} buckets by {spec['bucket_by']}" if "buckets" in spec else ""
        extra += f", key scope {spec['key_scope']}" if "key_scope" in spec else ""
        lines += [
            f"### {TITLES.get(label, label)} (`{spec['table']}`{extra}; plain copy: "
            f"{spec['plain']})",
            "",
            *_table_lines(run, label),
            "",
        ]
    return lines


def render(doc: dict[str, Any], out: Path) -> None:
    """``continuous.md`` and ``continuous.png`` from the JSON document."""
    m = doc.get("machine", {})
    lines = [
        "# Continuous change batches: reads and write cost over time (issue 30)",
        "",
        "```sh",
        "make bench-continuous   # .venv/bin/python -m benchmarks.continuous --rows 10000000",
        ".venv/bin/python -m benchmarks.continuous --report-only   # re-render from the JSON",
        "```",
        "",
        f"Machine: {m.get('cpu')}, {m.get('cores')} cores, {m.get('memory_gb')} GB RAM; Spark "
        f"`{m.get('spark_master')}` driver memory {m.get('driver_memory')}, pyspark "
        f"{m.get('pyspark')}, pyarrow {m.get('pyarrow')}, deltalake {m.get('deltalake')}.",
        "",
        "Targets (tables with their own maintenance on): version layout, read ratio median <= "
        "1.3x and worst <= 1.6x for every query, cumulative cost <= 1.0x MERGE; acid layout, "
        "median <= 1.5x, cost <= 1.5x. The module docstring of `benchmarks/continuous.py` says "
        "what is measured.",
        "",
        HOW_TO_READ,
    ]
    for run in doc["runs"]:
        lines += _run_lines(run)
    notes = out / f"{NAME}_notes.md"  # hand-written, kept across re-renders
    if notes.exists():
        lines += ["", notes.read_text()]
    (out / f"{NAME}.md").write_text("\n".join(lines))
    plot([plot_series(run) for run in doc["runs"]], out / f"{NAME}.png")
