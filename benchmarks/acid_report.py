"""Rendering the acid benchmark: ``acid.md`` (a section per size, targets) and the plot.

``benchmarks/results/acid_notes.md``, if present, is appended verbatim to ``acid.md`` (the
hand-written analysis), so re-rendering never loses it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.acid_plots import plot_read_ratio

ENGINES = (
    ("acid", "acid, bucketed by the key"),
    ("acid_unbucketed", "acid, unbucketed"),
    ("versioned", "versioned"),
    ("delta", "delta-rs MERGE"),
    ("naive", "naive Spark rewrite"),
)
READ_TARGET = 1.5
HOW_TO_READ = """\
## How to read this

- **Upsert**: seconds to apply one 1 % change batch (80 % updates, 15 % inserts, 5 % deletes,
  `benchmarks/upsert_data.py`), median of the batches every engine took (the order of the
  engines rotates per batch so that outside load hits them alike). `acid / X` below 1 means
  the acid table was faster than X. All engines agreed on count and sum(total_amt) afterwards
  (the run fails otherwise).
- **Reads**: `full` is `count(*), sum(total_amt), sum(hash(all 9 columns))` (every column is
  read), `column` is `count(*), sum(total_amt)` (one column), `key range` is the same over 1 %
  of the key range. Each runs over the table's `read()` (the latest view: for acid the merge on
  read of the insert and delete events) and over plain ORC and Parquet copies of the same live
  rows written by Spark (one file per partition); ratio = table / plain copy, medians of
  interleaved runs. *Deltas* count the change batches on top of the initial load (which is
  itself `delta_1_1`). Every source gave the same answer (the run fails otherwise).
- **Compaction**: a major compaction of the acid table after 10 deltas (`Table.compact` with
  `kind="major"`, as `versioned compact --kind major`) against a plain Spark rewrite of the same
  live rows (read the latest view, write ORC partitioned by `store_id`); the table is restored
  before each round. The reads are then repeated on the compacted table.
- **CPU** is user + system CPU of the benchmark process and its children (the Spark JVM,
  delta-rs threads): other processes on the machine disturb it much less than wall time;
  **others** is the share of the cores other processes used meanwhile (near 0 % means a quiet
  machine; numbers from a loaded machine are not worth much).
"""


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.2f}" if x < 100 else f"{x:.0f}"


def _ratio(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.1f}x" if x >= 10 else f"{x:.2f}x"


def _header(doc: dict[str, Any]) -> list[str]:
    m = doc.get("machine", {})
    commands = sorted({r.get("command", "") for r in doc["runs"]} - {""})
    return [
        "# Acid benchmark: the acid layout vs versioned, delta-rs MERGE and a naive rewrite",
        "",
        "## How to reproduce",
        "",
        "```sh",
        "make bench-acid   # .venv/bin/python -m benchmarks.acid --rows 1000000 --rows 10000000",
        ".venv/bin/python -m benchmarks.acid --report-only   # re-render from acid.json",
        "```",
        "",
        "The runs below were made by: " + ", ".join(f"`{c}`" for c in commands) + ".",
        "",
        "Machine: "
        + f"{m.get('cpu')}, {m.get('cores')} cores, {m.get('memory_gb')} GB RAM, {m.get('os')}; "
        + f"Spark `{m.get('spark_master')}` driver memory {m.get('driver_memory')}, "
        + f"pyspark {m.get('pyspark')}, {m.get('java')}, pyarrow {m.get('pyarrow')}, "
        + f"deltalake {m.get('deltalake')}, Python {m.get('python')}.",
        "",
        HOW_TO_READ,
    ]


def _upserts(r: dict[str, Any]) -> list[str]:
    s = r["summary"]
    lines = [
        f"### Upsert of a 1 % batch ({r['batch_rows']:,} rows; median of batches "
        f"1-{s['shared_batches']})",
        "",
        "| engine | load s | wall s | CPU s | acid / engine (wall) | acid / engine (CPU) "
        "| others |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for key, label in ENGINES:
        if f"{key}_s" not in s:
            continue
        load = r["loads"].get(key, {}).get("seconds")
        lines.append(
            f"| {label} | {_fmt(load)} | {_fmt(s[f'{key}_s'])} | {_fmt(s[f'{key}_cpu_s'])} "
            f"| **{_ratio(s.get(f'acid_over_{key}'))}** | {_ratio(s.get(f'acid_cpu_over_{key}'))} "
            f"| {s[f'{key}_contention']:.0%} |"
        )
    lines += [
        "",
        f"Over all {len(r['batches']['acid'])} batches: acid {_fmt(s['acid_all_s'])} s "
        f"(CPU {_fmt(s['acid_all_cpu_s'])}), versioned {_fmt(s['versioned_all_s'])} s "
        f"(CPU {_fmt(s['versioned_all_cpu_s'])}): acid / versioned "
        f"**{_ratio(s['acid_over_versioned_all'])}**. Every batch (wall s):",
        "",
        "| engine | " + " | ".join(f"b{i}" for i in range(1, len(r["batches"]["acid"]) + 1)) + " |",
        "|---|" + "---:|" * len(r["batches"]["acid"]),
    ]
    for key, label in ENGINES:
        if key in r["batches"]:
            times = [_fmt(b["seconds"]) for b in r["batches"][key]]
            lines.append(f"| {label} | " + " | ".join(times) + " |")
    checks = ", ".join(f"{k} {tuple(v)}" for k, v in r.get("checks", {}).items())
    lines += ["", f"(live rows, sum(total_amt)) after batch {s['shared_batches']}: {checks}.", ""]
    return lines


def _read_rows(label: str, point: dict[str, Any]) -> list[str]:
    rows = []
    for q, d in point["queries"].items():
        t, ratio, cpu = d["s"], d["ratio"], d["cpu_ratio"]
        rows.append(
            f"| {label} | {q.replace('_', ' ')} | {_fmt(t.get('acid'))} "
            f"| {_fmt(t.get('versioned'))} | {_fmt(t['orc'])} | {_fmt(t['parquet'])} "
            f"| **{_ratio(ratio['acid/orc'])}** | {_ratio(cpu['acid/orc'])} "
            f"| {_ratio(ratio['acid/parquet'])} | {_ratio(ratio['versioned/parquet'])} "
            f"| {_ratio(cpu['versioned/parquet'])} | {point['contention']:.0%} |"
        )
    return rows


def _reads(r: dict[str, Any]) -> list[str]:
    lines = [
        "### Reads (median seconds; ratio = table / plain copy)",
        "",
        "| after | query | acid | versioned | plain ORC | plain Parquet | acid / ORC "
        "| (CPU) | acid / Parquet | versioned / Parquet | (CPU) | others |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for point in r["reads"]:
        lines += _read_rows(_deltas(point["deltas"]), point)
    comp = r["compaction"]
    lines += _read_rows("major compaction", comp["reads_after"])
    files = [f"{_deltas(p['deltas'])}: {_files(p['event_files'])}" for p in r["reads"]]
    files.append(f"compacted: {_files(comp['event_files_after'])}")
    lines += ["", f"Live rows {r['reads'][-1]['rows']:,}. Acid bucket files: " + "; ".join(files)]
    return [*lines, ""]


def _deltas(n: int) -> str:
    return f"{n} delta" if n == 1 else f"{n} deltas"


def _files(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)


def _compaction(r: dict[str, Any]) -> list[str]:
    s, comp = r["summary"], r["compaction"]
    last = comp["compaction"][-1]
    return [
        f"### Major compaction after 10 deltas (median of {len(comp['compaction'])} rounds)",
        "",
        "| | wall s | CPU s |",
        "|---|---:|---:|",
        f"| major compaction | {_fmt(s['compaction_s'])} | {_fmt(s['compaction_cpu_s'])} |",
        f"| plain rewrite (read latest view, write ORC) | {_fmt(s['rewrite_s'])} "
        f"| {_fmt(s['rewrite_cpu_s'])} |",
        f"| **compaction / rewrite** | **{_ratio(s['compaction_ratio'])}** "
        f"| {_ratio(s['compaction_cpu_ratio'])} |",
        "",
        f"Compaction wrote {last['rows']:,} rows into {last['files_added']} files over "
        f"{last['compacted']} partitions ({last['bytes_before'] / 2**20:.1f} MiB before, "
        f"{last['bytes_after'] / 2**20:.1f} MiB after); others used "
        f"{s['compaction_contention']:.0%} of the cores meanwhile.",
        "",
        *_footer_lines(r),
    ]


def _footer_lines(r: dict[str, Any]) -> list[str]:
    """The share of the driver's hive.acid.* step (issue 28 item 2) in the Spark-written load
    and compaction, when the run measured it (`benchmarks/acid_footer.py`)."""
    s, load = r["summary"], r["loads"].get("acid", {})
    if "compaction_footer_share" not in s:
        return []
    last = r["compaction"]["compaction"][-1]["footer"]
    lines = [
        "Hive's `hive.acid.*` ORC metadata on Spark-written bucket files (the driver reads each "
        "file, adds the metadata to its footer, writes it to its ACID name; a move before): "
        f"{s['compaction_footer_share']:.0%} of the major compaction's wall time "
        f"({last['seconds']:.2f} s for {last['files']:.0f} files, {last['mb']:.0f} MB; "
        f"the metadata alone {last['metadata_s']:.2f} s)"
    ]
    if "load_footer_share" in s:
        lines[0] += (
            f", {s['load_footer_share']:.0%} of the initial load's ({load['footer']['seconds']:.2f}"
            f" s for {load['footer']['files']:.0f} files)"
        )
    return [lines[0] + ".", ""]


def _targets(runs: list[dict[str, Any]]) -> list[str]:
    lines = ["## Targets (issue 12)", "", "| target | measured | met |", "|---|---|---|"]
    for r in runs:
        s, n = r["summary"], f"{r['rows']:,}"
        if "acid_over_delta" in s:
            wall, cpu = s["acid_over_delta"], s["acid_cpu_over_delta"]
            lines.append(
                f"| acid upsert no slower than delta-rs MERGE (N={n}; the issue asks at 10M) "
                f"| wall {_ratio(wall)}, CPU {_ratio(cpu)} | {_verdict(wall <= 1, cpu <= 1)} |"
            )
    for r in runs:
        last = r["reads"][-1]
        for q, d in last["queries"].items():
            wall, cpu = d["ratio"]["acid/orc"], d["cpu_ratio"]["acid/orc"]
            lines.append(
                f"| {q.replace('_', ' ')} read after {last['deltas']} deltas <= "
                f"{READ_TARGET}x plain ORC (N={r['rows']:,}) | wall {_ratio(wall)}, CPU "
                f"{_ratio(cpu)} | {_verdict(wall <= READ_TARGET, (cpu or 0) <= READ_TARGET)} |"
            )
    return [*lines, ""]


def _verdict(wall_ok: bool, cpu_ok: bool) -> str:
    if wall_ok and cpu_ok:
        return "yes"
    if wall_ok or cpu_ok:
        return f"{'wall' if wall_ok else 'CPU'} only"
    return "NO"


def render(doc: dict[str, Any], out: Path) -> None:
    """Write ``acid.md`` and ``acid_read_ratio.png`` for ``doc`` (the contents of acid.json)."""
    runs = doc["runs"]
    lines = _header(doc)
    for r in runs:
        lines += [f"## N = {r['rows']:,} ({r['buckets']} buckets)", ""]
        lines += _upserts(r) + _reads(r) + _compaction(r)
    lines += _targets(runs)
    lines += ["Plot: `acid_read_ratio.png` (acid / plain ORC and versioned / plain Parquet).", ""]
    notes = out / "acid_notes.md"
    if notes.exists():
        lines += [notes.read_text().rstrip(), ""]
    (out / "acid.md").write_text("\n".join(lines) + "\n")
    plot_read_ratio(runs, out / "acid_read_ratio.png")
