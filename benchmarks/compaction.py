"""Compaction benchmark: versioned compaction against a plain Spark rewrite of the live rows.

Run: ``.venv/bin/python -m benchmarks.compaction --rows 1000000 --rows 10000000``
(``--out benchmarks/results`` by default; ``--report-only`` re-renders compaction.md and the
plot from compaction.json; runs of other sizes already in compaction.json are kept).

Per size N, one unpartitioned table (one partition, so one compaction job) gets an initial
load of N rows and 4 change batches of 5 % of N each (80 % updates, 15 % inserts, 5 %
deletes): 5 versions and ~0.2 N index entries. A plain Parquet copy of the same live rows is
written once. Then, ``--repeat`` times, alternating so that load from other processes hits
both alike:

1. **compaction**: restore the 5-version table (catalog and files), ``Table.compact()``;
2. **plain rewrite**: read the Parquet copy and write it again, shaped into files of the
   same target size the way the compactor shapes them, without a shuffle
   (``compacted_version.file_shaping``: coalesce the scan splits, or roll over to a new file
   after a share of the rows);

and, after the last compaction, the full read (all columns into Spark's ``noop`` sink) of the
compacted table against the same read of the plain rewrite's output (the same rows in the
same number of files), and the read of the table before compaction. Medians are reported,
with CPU seconds of this process tree (JVM included) next to wall time: CPU is far less
sensitive to other processes sharing the machine.
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
from pathlib import Path
from typing import Any

import versioned
from benchmarks.harness import (
    Meter,
    contention,
    log,
    machine,
    read_json,
    spark_session,
    stamp,
    warm_up,
    write_json,
)
from benchmarks.internals import file_shaping
from versioned import CompactionOptions

COLUMNS = (
    "sell_id BIGINT, acct_id BIGINT, change_ts STRING, status_id STRING, "
    "payment_type_id STRING, total_amt DOUBLE, store_id STRING, create_date STRING"
)
BATCHES = 4
BATCH_SHARE = 0.05
SCENARIOS = ("first", "steady")
READS = 5
WARM_UP_ROWS = 100_000


def _frame(spark: Any, ids: Any, salt: int) -> Any:
    from pyspark.sql import functions as F

    return ids.select(
        F.col("id").alias("sell_id"),
        (F.col("id") % 100_003).alias("acct_id"),
        F.format_string("2024-01-%02d 12:00:%02d", (F.col("id") % 28) + 1, F.lit(salt % 60)).alias(
            "change_ts"
        ),
        F.element_at(
            F.array(*[F.lit(s) for s in "ABCDE"]), (F.col("id") % 5 + 1).cast("int")
        ).alias("status_id"),
        F.format_string("PT%d", (F.col("id") + salt) % 7).alias("payment_type_id"),
        ((F.col("id") * 7 + salt) % 100_000 / 100.0).alias("total_amt"),
        F.format_string("S%03d", F.col("id") % 500).alias("store_id"),
        F.format_string("2024-%02d-01", F.col("id") % 12 + 1).alias("create_date"),
    )


def _batch(spark: Any, n: int, b: int) -> Any:
    """Change batch ``b``: 80 % updates, 15 % inserts, 5 % deletes of ``BATCH_SHARE * n`` keys."""
    from pyspark.sql import functions as F

    size = int(n * BATCH_SHARE)
    updates, inserts = int(size * 0.80), int(size * 0.15)
    deletes = size - updates - inserts
    step = max(1, n // max(updates + deletes, 1))
    changed = spark.range(0, (updates + deletes) * step, step).withColumn(
        "id", (F.col("id") + b * 7919) % n
    )
    rows = _frame(spark, changed, salt=b + 1)
    every = max(1, round((updates + deletes) / max(deletes, 1)))
    rows = rows.withColumn("op", F.when(F.col("sell_id") % every == 0, "D").otherwise("U"))
    new = _frame(spark, spark.range(n + b * inserts, n + (b + 1) * inserts), salt=b + 1)
    return rows.unionByName(new.withColumn("op", F.lit("I"))).dropDuplicates(["sell_id"])


def _noop_read(frame: Any) -> None:
    frame.write.format("noop").mode("overwrite").save()


def _plain_rewrite(frame: Any, live_rows: int, out: str) -> None:
    """Write ``frame`` into files of the compactor's target size, shaped as it shapes them."""
    files = max(1, math.ceil(live_rows / CompactionOptions().rows_per_file))
    splits = frame.rdd.getNumPartitions()
    tasks, max_rows = file_shaping(files, splits, live_rows)
    writer = (frame.coalesce(tasks) if tasks < splits else frame).write
    if max_rows:
        writer = writer.option("maxRecordsPerFile", max_rows)
    writer.parquet(out)


def _shuffled_rewrite(frame: Any, live_rows: int, out: str) -> None:
    """The rewrite shaped with a shuffle (``repartition(n)``), as compaction did before."""
    files = max(1, math.ceil(live_rows / CompactionOptions().rows_per_file))
    (frame.coalesce(1) if files == 1 else frame.repartition(files)).write.parquet(out)


def run_size(
    spark: Any, n: int, repeat: int, work: Path, batches: int = BATCHES, timed_reads: int = READS
) -> dict[str, Any]:
    """Both scenarios for N rows: the first compaction, then a steady-state one (``batches``
    change batches before each; the reads after, at least ``timed_reads`` times)."""
    base = work / f"n{n}"
    shutil.rmtree(base, ignore_errors=True)
    state = base / "state"
    state.mkdir(parents=True)
    catalog = versioned.connect(
        catalog=f"sqlite:///{state}/catalog.db", warehouse=str(state), spark=spark, user="bench"
    )
    table = catalog.create_table(
        "bench.sales", columns=COLUMNS, primary_key="sell_id", op_code_column="op"
    )
    log(f"N={n}: initial load")
    table.upsert(_frame(spark, spark.range(n), salt=0).withColumn("op", _lit("I")))
    catalog.close()
    _changes(spark, state, n, range(batches))
    run: dict[str, Any] = {"rows": n}
    run["first"] = _scenario(spark, base, "first", n, repeat)
    _changes(spark, state, n, range(batches, 2 * batches))  # on top of the compacted table
    run["steady"] = _scenario(spark, base, "steady", n, repeat)

    cat, t = _open_table(spark, state)
    reads: list[dict[str, Any]] = []
    plain_reads: list[dict[str, Any]] = []
    _noop_read(t.read())  # the first read of each compiles its plan's code: not timed
    _noop_read(spark.read.parquet(str(base / "rewrite")))
    for _ in range(max(repeat, timed_reads)):
        with Meter() as meter:
            _noop_read(t.read())
        reads.append(meter.result())
        with Meter() as meter:
            _noop_read(spark.read.parquet(str(base / "rewrite")))
        plain_reads.append(meter.result())
    cat.close()
    run["read_after"], run["plain_read"] = reads, plain_reads
    shutil.rmtree(base, ignore_errors=True)
    return run


def _changes(spark: Any, state: Path, n: int, batches: range) -> None:
    cat, table = _open_table(spark, state)
    for b in batches:
        result = table.upsert(_batch(spark, n, b))
        log(
            f"N={n}: batch {b + 1}: {result.updated} updated, {result.inserted} inserted, "
            f"{result.deleted} deleted"
        )
    cat.close()


def _scenario(spark: Any, base: Path, name: str, n: int, repeat: int) -> dict[str, Any]:
    """Time compactions of ``base/state`` against plain rewrites of its live rows; leaves the
    table compacted and the last rewrite in ``base/rewrite``."""
    state, pristine, plain = base / "state", base / f"pristine-{name}", base / f"plain-{name}"
    cat, t = _open_table(spark, state)
    snapshot = t.snapshot()
    facts: dict[str, Any] = {
        "versions_before": len({f.version for f in snapshot.files}),
        "data_rows_before": sum(f.row_count for f in snapshot.files if f.kind == "data"),
        "index_entries_before": sum(f.row_count for f in snapshot.files if f.kind == "index"),
    }
    t.read().write.parquet(str(plain))
    facts["live_rows"] = spark.read.parquet(str(plain)).count()
    with Meter() as meter:
        _noop_read(t.read())
    facts["read_before"] = meter.result()
    cat.close()
    shutil.copytree(state, pristine)
    compactions: list[dict[str, Any]] = []
    rewrites: list[dict[str, Any]] = []
    shuffled: list[dict[str, Any]] = []
    for r in range(repeat):
        shutil.rmtree(state)
        shutil.copytree(pristine, state)
        cat, t = _open_table(spark, state)
        with Meter() as meter:
            result = t.compact()
        compactions.append(meter.result())
        (part,) = result.partitions
        facts["files_written"] = part.files_added - 1  # less the Bloom filter
        cat.close()
        out = base / "rewrite"
        shutil.rmtree(out, ignore_errors=True)
        with Meter() as meter:
            _plain_rewrite(spark.read.parquet(str(plain)), facts["live_rows"], str(out))
        rewrites.append(meter.result())
        reshuffled = base / "rewrite-shuffled"  # not read: `rewrite` is the read baseline
        shutil.rmtree(reshuffled, ignore_errors=True)
        with Meter() as meter:
            _shuffled_rewrite(spark.read.parquet(str(plain)), facts["live_rows"], str(reshuffled))
        shuffled.append(meter.result())
        log(
            f"N={n} {name}: round {r + 1}: compaction {compactions[-1]['seconds']:.1f}s, "
            f"plain rewrite {rewrites[-1]['seconds']:.1f}s, "
            f"with a shuffle {shuffled[-1]['seconds']:.1f}s"
        )
    cat, t = _open_table(spark, state)
    assert t.read().count() == facts["live_rows"], "compaction changed the live rows"
    cat.close()
    return {
        **facts,
        "compaction": compactions,
        "plain_rewrite": rewrites,
        "shuffled_rewrite": shuffled,
    }


def _lit(value: str) -> Any:
    from pyspark.sql import functions as F

    return F.lit(value)


def _open_table(spark: Any, state: Path) -> tuple[Any, Any]:
    catalog = versioned.connect(
        catalog=f"sqlite:///{state}/catalog.db", warehouse=str(state), spark=spark, user="bench"
    )
    return catalog, catalog.table("bench.sales")


def _median(entries: list[dict[str, Any]], key: str) -> float:
    return statistics.median(e[key] for e in entries)


def summary(run: dict[str, Any]) -> dict[str, float]:
    """Medians and ratios of one size's run."""
    out: dict[str, float] = {}
    measured: list[dict[str, Any]] = run["read_after"] + run["plain_read"]
    for scenario in SCENARIOS:
        data = run[scenario]
        measured += data["compaction"] + data["plain_rewrite"] + data.get("shuffled_rewrite", [])
        for name in ("compaction", "plain_rewrite", "shuffled_rewrite"):
            if data.get(name):
                out[f"{scenario}_{name}_s"] = _median(data[name], "seconds")
                out[f"{scenario}_{name}_cpu_s"] = _median(data[name], "cpu_s")
        out[f"{scenario}_ratio"] = (
            out[f"{scenario}_compaction_s"] / out[f"{scenario}_plain_rewrite_s"]
        )
        out[f"{scenario}_cpu_ratio"] = (
            out[f"{scenario}_compaction_cpu_s"] / out[f"{scenario}_plain_rewrite_cpu_s"]
        )
    for name in ("read_after", "plain_read"):
        out[f"{name}_s"] = _median(run[name], "seconds")
        out[f"{name}_cpu_s"] = _median(run[name], "cpu_s")
    out["read_ratio"] = out["read_after_s"] / out["plain_read_s"]
    out["read_cpu_ratio"] = out["read_after_cpu_s"] / out["plain_read_cpu_s"]
    out["read_before_s"] = run["steady"]["read_before"]["seconds"]
    out["contention"] = contention(measured)
    return out


def render(results: dict[str, Any], out: Path) -> None:
    """Write compaction.md and compaction.png from the results."""
    runs = sorted(results["runs"].values(), key=lambda r: r["rows"])
    lines = [
        "# Compaction benchmark",
        "",
        "`.venv/bin/python -m benchmarks.compaction "
        + " ".join(f"--rows {r['rows']}" for r in runs)
        + f" --repeat {results['repeat']}`",
        "",
        f"Machine: {_machine(results['machine'])}. Spark `local[2]`, SQLite catalog. "
        "One unpartitioned",
        "table (one partition, so one compaction job). **first**: initial load of N rows, then",
        f"{BATCHES} change batches of {BATCH_SHARE:.0%} of N (80 % updates, 15 % inserts, 5 %",
        "deletes), compacted: the initial load's Bloom filter (written with 25 % spare",
        "capacity) is extended with the keys of the change batches. **steady**: the",
        f"compacted table plus {BATCHES} more such batches, compacted again: the compacted",
        "version's filter has room and is extended likewise (the scheduled case). Compaction",
        "reads every version and the version index and writes the live rows;",
        "the **plain rewrite** reads a Parquet copy of exactly those live rows and writes them",
        "into files of the same target size, shaped without a shuffle as compaction shapes them;",
        "the **rewrite with shuffle** shapes them with `repartition(n)` instead (for reference:",
        "it is how compaction shaped its files before, and what most hand-written jobs do).",
        "**Read**: all columns into Spark's `noop` sink, of the compacted table and of the plain",
        "rewrite's output (same rows, same files). Medians of the rounds, compaction and rewrite",
        "alternating. CPU = user + system seconds of the benchmark's process tree (the Spark",
        "JVM included): other processes on the machine disturb it much less than wall time.",
        "`contention` is the share of the machine's cores other processes used meanwhile.",
        "",
        "| N | scenario | live rows | versions | index entries | files written "
        "| compaction s (cpu) | plain rewrite s (cpu) | ratio wall | ratio cpu "
        "| rewrite with shuffle s (cpu) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        s = summary(run)
        for scenario in SCENARIOS:
            d = run[scenario]
            lines.append(
                f"| {run['rows']:,} | {scenario} | {d['live_rows']:,} | {d['versions_before']} "
                f"| {d['index_entries_before']:,} | {d['files_written']} "
                f"| {s[f'{scenario}_compaction_s']:.1f} ({s[f'{scenario}_compaction_cpu_s']:.1f}) "
                f"| {s[f'{scenario}_plain_rewrite_s']:.1f} "
                f"({s[f'{scenario}_plain_rewrite_cpu_s']:.1f}) "
                f"| **{s[f'{scenario}_ratio']:.2f}** | {s[f'{scenario}_cpu_ratio']:.2f} "
                f"| {_timing(s, f'{scenario}_shuffled_rewrite')} |"
            )
    lines += [
        "",
        "| N | read after compaction s (cpu) | Parquet read s (cpu) | ratio wall | ratio cpu "
        "| read before compaction s | contention |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        s = summary(run)
        lines.append(
            f"| {run['rows']:,} | {s['read_after_s']:.2f} ({s['read_after_cpu_s']:.1f}) "
            f"| {s['plain_read_s']:.2f} ({s['plain_read_cpu_s']:.1f}) "
            f"| **{s['read_ratio']:.2f}** | {s['read_cpu_ratio']:.2f} "
            f"| {s['read_before_s']:.2f} | {s['contention']:.0%} |"
        )
    lines += ["", "Targets: compaction <= 1.2x the plain rewrite; read after compaction ~1.0x.", ""]
    lines += results.get("notes", [])
    (out / "compaction.md").write_text("\n".join(lines) + "\n")
    _plot(runs, out / "compaction.png")


def _timing(s: dict[str, float], key: str) -> str:
    if f"{key}_s" not in s:
        return "-"
    return f"{s[f'{key}_s']:.1f} ({s[f'{key}_cpu_s']:.1f})"


def _plot(runs: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['rows']:,}" for r in runs]
    sums = [summary(r) for r in runs]
    panels = [
        ("first_compaction", "first_plain_rewrite", "first", "First compaction"),
        ("steady_compaction", "steady_plain_rewrite", "steady", "Steady-state compaction"),
        ("read_after", "plain_read", "read", "Full read after compaction"),
    ]
    fig, axes = plt.subplots(1, len(panels), figsize=(14, 4.2))
    width = 0.27
    xs = list(range(len(runs)))
    for ax, (a, b, ratio, title) in zip(axes, panels, strict=True):
        ax.bar([x - width for x in xs], [s[f"{a}_s"] for s in sums], width, label="versioned")
        ax.bar(xs, [s[f"{b}_s"] for s in sums], width, label="plain")
        shuffled = f"{ratio}_shuffled_rewrite_s"
        if all(shuffled in s for s in sums):
            heights = [s[shuffled] for s in sums]
            ax.bar([x + width for x in xs], heights, width, label="plain, shuffled")
        for x, s in zip(xs, sums, strict=True):
            text = f"{s[f'{ratio}_ratio']:.2f}x (cpu {s[f'{ratio}_cpu_ratio']:.2f}x)"
            top = max(s[f"{a}_s"], s[f"{b}_s"], s.get(shuffled, 0.0))
            ax.annotate(text, (x, top), ha="center", va="bottom")
        ax.set_xticks(xs, labels)
        ax.set_xlabel("rows")
        ax.set_ylabel("seconds, median (wall)")
        ax.set_title(title)
        ax.margins(y=0.12)
        ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, action="append", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batches", type=int, default=BATCHES, help="change batches per scenario")
    parser.add_argument("--reads", type=int, default=READS, help="timed reads (at least)")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--work", default="/tmp/versioned-bench-compaction")
    parser.add_argument("--warm-up-rows", type=int, default=WARM_UP_ROWS, help="0: none")
    parser.add_argument("--report-only", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark (or re-render) and write the results."""
    args = parser().parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "compaction.json"
    results: dict[str, Any] = read_json(json_path, {"runs": {}})
    if not args.report_only:
        spark = spark_session(
            "compaction-bench",
            {"spark.driver.memory": "6g", "spark.sql.shuffle.partitions": "8"},
        )
        work = Path(args.work)
        warm_up(args.warm_up_rows, work, lambda: run_size(spark, args.warm_up_rows, 1, work))
        for n in args.rows or [1_000_000]:
            results["runs"][str(n)] = run_size(
                spark, n, args.repeat, work, args.batches, args.reads
            )
            results["repeat"] = args.repeat
            results["machine"] = machine(spark)
            results["stamp"] = stamp()
            write_json(json_path, results, newline=False)
            render(results, out)
    render(results, out)
    for run in sorted(results["runs"].values(), key=lambda r: r["rows"]):
        s = summary(run)
        log(
            f"N={run['rows']:,}: first compaction {s['first_ratio']:.2f}x the plain rewrite "
            f"(cpu {s['first_cpu_ratio']:.2f}x), steady {s['steady_ratio']:.2f}x "
            f"(cpu {s['steady_cpu_ratio']:.2f}x), read {s['read_ratio']:.2f}x Parquet "
            f"(cpu {s['read_cpu_ratio']:.2f}x), contention {s['contention']:.0%}"
        )


def _machine(m: dict[str, Any] | str) -> str:
    """The machine as this report has always shown it: cores and memory (earlier results
    stored that line itself)."""
    if isinstance(m, str):
        return m
    return f"{m['cores']} cores, {m['memory_gb']:.0f} GB RAM"


if __name__ == "__main__":
    main()
