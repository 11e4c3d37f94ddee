"""Rendering `benchmarks.peers`: ``peers.md`` (the side-by-side table, then each phase in
detail) and ``peers.png`` (`benchmarks.peers_plots`).

Every write figure is a ratio to versioned **in the same session** (the same Spark line,
process and batches): a peer's seconds over versioned's, so above 1 versioned is faster.
Read figures are each table's query time over the same query on a plain Parquet copy of the
same live rows, after every batch (median and worst of the batches). A peer that beats
versioned on a measure is marked in the table. ``benchmarks/results/peers_notes.md``, if
present, is appended verbatim (the hand-written analysis).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.harness import contention, median, table
from benchmarks.peers_plots import plot

NAME = "peers"
REFERENCE = "version"
"""The versioned table's label in a continuous run (`continuous_engines.create_subject`)."""


@dataclass(frozen=True)
class Row:
    """One engine of the side-by-side table."""

    group: str
    engine: str
    title: str
    label: str | None
    """Its writer's label in a continuous run (None: it takes no part)."""


ROWS = (
    Row("main", "versioned", "versioned", REFERENCE),
    Row("main", "delta_rs", "delta-rs MERGE", "delta"),
    Row("main", "plain", "plain Parquet (write; full rewrite per batch)", None),
    Row("delta", "versioned", "versioned", REFERENCE),
    Row("delta", "delta_cow", "Delta MERGE, copy-on-write", "delta_cow"),
    Row("delta", "delta_dv", "Delta MERGE, deletion vectors", "delta_dv"),
    Row("iceberg", "versioned", "versioned", REFERENCE),
    Row("iceberg", "iceberg_cow", "Iceberg MERGE, copy-on-write", "iceberg_cow"),
    Row("iceberg", "iceberg_mor", "Iceberg MERGE, merge-on-read", "iceberg_mor"),
)
HUDI_TITLE = "Hudi MOR upsert"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def writes(run: dict[str, Any], label: str) -> list[float]:
    """Seconds of each batch of writer ``label`` (``delta``: delta-rs MERGE)."""
    if label == "delta":
        return [step["merge"]["seconds"] for step in run["steps"]]
    return [step["upserts"][label]["seconds"] for step in run["steps"]]


def cost_curve(run: dict[str, Any], label: str) -> list[float]:
    """Cumulative seconds of ``label`` over versioned's, after each batch."""
    ours = theirs = 0.0
    curve = []
    for mine, ref in zip(writes(run, label), writes(run, REFERENCE), strict=True):
        ours, theirs = ours + mine, theirs + ref
        curve.append(ours / theirs)
    return curve


def read_ratios(run: dict[str, Any], label: str, query: str) -> list[float]:
    """The read ratio (table / plain copy) of ``query`` on ``label`` after each batch."""
    return [step["reads"][label][query]["ratio"] for step in run["steps"]]


def took_part(run: dict[str, Any], label: str | None) -> bool:
    """Whether writer ``label`` was fed the batches of ``run`` (``delta``: delta-rs)."""
    if label == "delta":
        return "merge" in run["steps"][0]
    return label is not None and label in run["tables"]


def _marked(ratio: float | None, peer: bool) -> str:
    """A write ratio; bold with "faster" where the peer beats versioned."""
    if ratio is None:
        return "-"
    return f"**{ratio:.2f}x faster**" if peer and ratio < 1.0 else _x(ratio)


def _reads(run: dict[str, Any] | None, row: Row, query: str) -> str:
    """``median / worst`` read ratio; "better" where it beats versioned's in its session."""
    label = row.label
    if run is None or label is None or not took_part(run, label):
        return "1.00x (it is the plain copy)" if row.engine == "plain" and run else "-"
    if label not in run["steps"][0].get("reads", {}):
        return "- (the copy's source)"
    if query not in run["queries"]:
        return "-"
    values = read_ratios(run, label, query)
    text = f"{median(values):.2f}x / {max(values):.2f}x"
    if label != REFERENCE:
        ours = median(read_ratios(run, REFERENCE, query))
        if median(values) < ours:
            text = f"**{text} better**"
    return text


def upsert_ratios(doc: dict[str, Any], row: Row) -> dict[str, float] | None:
    """Load, first batch and median of the later batches over versioned's, same Spark."""
    entries = doc["entries"]
    mine = entries.get(f"upsert/{row.group}/{row.engine}")
    ref = entries.get(f"upsert/{row.group}/versioned")
    if mine is None or ref is None:
        return None
    return {
        "load": mine["load"]["seconds"] / ref["load"]["seconds"],
        "first": mine["first_s"] / ref["first_s"],
        "median": mine["median_s"] / ref["median_s"],
    }


def _spark(doc: dict[str, Any], row: Row) -> str:
    """The Spark release of the row's group (delta-rs runs beside it, without Spark)."""
    for key, entry in doc["entries"].items():
        if key.split("/")[1] == row.group:
            spark = str(entry.get("spark", "?"))
            return f"no Spark; beside {spark}" if row.engine == "delta_rs" else spark
    return "-"


def _ran(doc: dict[str, Any], group: str) -> bool:
    """Whether the document holds any measurement of ``group``."""
    return any(key.split("/")[1] == group for key in doc["entries"])


def side_by_side(doc: dict[str, Any]) -> list[str]:
    """The one table of every engine and measure (the README's)."""
    entries = doc["entries"]
    synthetic = next((e for k, e in entries.items() if k.startswith("continuous/")), None)
    tpch = next((e for k, e in entries.items() if k.startswith("tpch/")), None)
    rows_n = synthetic["rows"] if synthetic else doc["config"]["rows"]
    later = max(doc["config"].get("upsert_batches", 4), 2)
    header = [
        "engine (Spark)",
        "load",
        "1st batch, fresh session",
        f"median of batches 2-{later}",
        f"{_batches(doc, 'continuous')} batches: cost",
        "narrow read median / worst",
        "full read median / worst",
        f"TPC-H {_batches(doc, 'tpch')} refreshes: cost",
        "Q1 median / worst",
        "Q6 median / worst",
    ]
    lines = table(header, "l" + "r" * (len(header) - 1), [])
    for row in ROWS:
        if not _ran(doc, row.group):
            continue
        runs = {p: entries.get(f"{p}/{row.group}") for p in ("continuous", "tpch")}
        ratios = upsert_ratios(doc, row)
        peer = row.engine != "versioned"
        cells = [f"{row.title} ({_spark(doc, row)})"]
        if not peer:
            cells += ["ref.", "ref.", "ref."]
        else:
            cells += [
                _marked(ratios[k] if ratios else None, peer) for k in ("load", "first", "median")
            ]
        for phase, queries in (("continuous", ("narrow", "full")), ("tpch", ("q1", "q6"))):
            run = runs[phase]
            if not peer:
                cost = "ref."
            elif run is None or row.label is None or not took_part(run, row.label):
                cost = "-"
            else:
                cost = _marked(cost_curve(run, row.label)[-1], peer)
            cells += [cost, *(_reads(run, row, q) for q in queries)]
        lines.append("| " + " | ".join(cells) + " |")
    hudi = doc.get("hudi", "")
    lines.append("| " + " | ".join([HUDI_TITLE, hudi.split(" (")[0], *["-"] * 8]) + " |")
    lines += [
        "",
        f"Writes: the engine's seconds over versioned's in the same session (its Spark line, "
        f"process and batches); **faster** where the peer beats versioned. Reads: the table's "
        f"query over the same query on a plain Parquet copy of the same live rows, after every "
        f"batch; **better** where the peer's median beats versioned's of the same session. "
        f"6-column table of {rows_n:,} rows, batches of 1 %"
        + (f"; TPC-H lineitem SF {tpch['scale']:g}." if tpch else "."),
    ]
    return lines


def _batches(doc: dict[str, Any], phase: str) -> str:
    counts = sorted(
        {len(e["steps"]) for k, e in doc["entries"].items() if k.startswith(f"{phase}/")}
    )
    return "/".join(str(c) for c in counts) or "-"


def upsert_lines(doc: dict[str, Any]) -> list[str]:
    """Each engine's load and batches in a fresh process."""
    header = [
        "group",
        "engine",
        "Spark",
        "load s",
        "batch 1 s",
        "median s",
        "CPU 1 / median",
        "ratio load / 1st / median",
        "others",
        "what the write did (batch 2)",
    ]
    rows = []
    for row in ROWS:
        entry = doc["entries"].get(f"upsert/{row.group}/{row.engine}")
        if entry is None:
            continue
        ratios = upsert_ratios(doc, row) or {}
        rows.append(
            [
                row.group,
                row.title,
                entry.get("spark", "-"),
                f"{entry['load']['seconds']:.1f}",
                f"{entry['first_s']:.2f}",
                f"{entry['median_s']:.2f}",
                f"{entry['first_cpu_s']:.1f} / {entry['median_cpu_s']:.1f}",
                " / ".join(_x(ratios.get(k)) for k in ("load", "first", "median")),
                f"{contention(entry['batches']):.0%}",
                did(entry["batches"][min(1, len(entry["batches"]) - 1)]),
            ]
        )
    return table(header, "lllrrrrrrl", rows)


METRICS = (
    ("numTargetRowsCopied", "rows copied"),
    ("numTargetFilesAdded", "files added"),
    ("numTargetFilesRemoved", "files removed"),
    ("numTargetDeletionVectorsAdded", "DVs added"),
    ("scanTimeMs", "scan ms"),
    ("rewriteTimeMs", "rewrite ms"),
    ("added-data-files", "data files added"),
    ("removed-data-files", "data files removed"),
    ("added-position-deletes", "position deletes"),
    ("added-delete-files", "delete files added"),
    ("spark.merge-into.num-target-rows-copied", "rows copied"),
    ("num_target_rows_updated", "rows updated"),
    ("num_target_files_added", "files added"),
    ("num_target_files_removed", "files removed"),
    ("files_written", "files written"),
    ("updated", "rows updated"),
)


def did(batch: dict[str, Any]) -> str:
    """What one write reported doing, in a few words (format metrics, versioned's counts)."""
    metrics = {**batch, **batch.get("commits", {}).get("merge_metrics", {})}
    parts = [f"{name} {metrics[key]}" for key, name in METRICS if metrics.get(key) is not None]
    return ", ".join(parts) or "-"


def continuous_lines(run: dict[str, Any], group: str) -> list[str]:
    """One group's continuous run: a summary line per writer, then batch by batch."""
    labels = [*run["tables"], *(["delta"] if "merge" in run["steps"][0] else [])]
    queries = list(run["queries"])
    header = ["writer", "cumulative s", "cost vs versioned", "batches with upkeep", "files at end"]
    header += [f"{q} median / worst" for q in queries]
    rows = []
    for label in labels:
        spec = run["tables"].get(label, {"title": "delta-rs MERGE"})
        upkeep = sum(
            bool((step["upserts"][label].get("maintenance") or {}).get("compacted"))
            or bool(step["upserts"][label].get("peer_maintenance"))
            or bool(step["upserts"][label].get("commits", {}).get("compactions"))
            for step in run["steps"]
            if label in step["upserts"]
        )
        reads = [
            (f"{median(read_ratios(run, label, q)):.2f}x / {max(read_ratios(run, label, q)):.2f}x")
            if label in run["steps"][0]["reads"]
            else "-"
            for q in queries
        ]
        files = spec.get("files", {})
        rows.append(
            [
                spec.get("title", "versioned" if label == REFERENCE else label),
                f"{sum(writes(run, label)):.1f}",
                _x(cost_curve(run, label)[-1]),
                str(upkeep) if label != "delta" else "-",
                ", ".join(f"{k} {v}" for k, v in files.items()) or "-",
                *reads,
            ]
        )
    title = f"### {run['label']}: {group} group (Spark {run.get('spark', '?')})"
    lines = [title, "", *table(header, "lrrrl" + "r" * len(queries), rows), ""]
    batch_header = ["batch", *(f"{_short(run, lb)} s" for lb in labels)]
    batch_header += [f"{_short(run, lb)} {q}" for lb in run["tables"] for q in queries]
    batch_rows = []
    for step in run["steps"]:
        cells = [str(step["batch"])]
        for label in labels:
            seconds = step["merge"] if label == "delta" else step["upserts"][label]
            cells.append(f"{seconds['seconds']:.2f}")
        for label in run["tables"]:
            cells += [_x(step["reads"][label][q]["ratio"]) for q in queries]
        batch_rows.append(cells)
    lines += [
        "<details><summary>batch by batch</summary>",
        "",
        *table(batch_header, "r" * len(batch_header), batch_rows),
        "",
        "</details>",
        "",
    ]
    return lines


def _short(run: dict[str, Any], label: str) -> str:
    return {"version": "versioned", "delta": "delta-rs"}.get(label, label)


HOW_TO_READ = """\
## How to read this

- Three groups of processes, one after another on the same machine, each on its own Spark
  line: **main** (ours: versioned, delta-rs MERGE, the plain write), **delta** (Delta Lake's
  newest Spark line: versioned, Delta MERGE copy-on-write and with deletion vectors),
  **iceberg** (Iceberg's: versioned, Iceberg MERGE copy-on-write and merge-on-read). Every
  ratio compares an engine with versioned **in the same session** of that line.
- **Upsert**: each engine in a fresh process: load the 6-column table, then batches 1-4 of
  1 %; **1st batch** is the first of a fresh session (class loading, JIT), **median** that of
  batches 2-4.
- **Continuous** and **TPC-H**: every batch to every writer of the group in one session (the
  order rotates per batch), with the maintenance each runs (versioned's own after its
  commits; Delta's auto compaction; Iceberg's scheduled `rewrite_data_files`, and
  `rewrite_position_delete_files` for merge-on-read, every few batches); **cost** =
  cumulative seconds over versioned's. After every batch each table's queries run against
  the same queries on a plain Parquet copy of the same live rows (read ratio; median and worst
  over the batches). Every answer agreed with the plain copy's, and the groups' with each
  other's (the run fails otherwise).
- **others** is the share of the machine's cores other processes used meanwhile.
"""


def render(doc: dict[str, Any] | None, out: Path) -> None:
    """``peers.md`` and ``peers.png`` from the JSON document."""
    if doc is None:
        return
    m = doc.get("machine", {})
    config = doc.get("config", {})
    lines = [
        "# versioned and its peers on the same Spark (issue 45)",
        "",
        "```sh",
        "make bench-peers   # .venv/bin/python -m benchmarks.peers (needs make jars, "
        "make spark-venvs)",
        ".venv/bin/python -m benchmarks.peers --report-only   # re-render from the JSON",
        "```",
        "",
        f"Machine: {m.get('cpu')}, {m.get('cores')} cores, {m.get('memory_gb')} GB RAM; "
        f"Spark `local[2]`, driver memory {config.get('driver_memory')}.",
        "",
        *(
            f"- `{run['command']}`: {run['wall_s'] / 60:.0f} min, {run['stamp']['date']}, "
            f"commit {run['stamp']['commit'][:10]}"
            for run in doc.get("invocations", [])
        ),
        "",
        *side_by_side(doc),
        "",
    ]
    for name, why in doc.get("skipped", {}).items():
        lines += [f"The {name} group did not run: {why}", ""]
    for run in doc.get("invocations", []):
        lines += [f"FAILED: {failure}" for failure in run["failures"]]
    lines += [HOW_TO_READ, "## Upsert: one engine a fresh process", "", *upsert_lines(doc), ""]
    for phase, title in (("continuous", "Continuous"), ("tpch", "TPC-H")):
        runs = {k.split("/")[1]: v for k, v in doc["entries"].items() if k.startswith(phase)}
        if runs:
            lines += [f"## {title}", ""]
            for group, run in runs.items():
                lines += continuous_lines(run, group)
    notes = out / f"{NAME}_notes.md"  # hand-written, kept across re-renders
    if notes.exists():
        lines += ["", notes.read_text()]
    (out / f"{NAME}.md").write_text("\n".join(lines))
    plot(doc, out / f"{NAME}.png")
