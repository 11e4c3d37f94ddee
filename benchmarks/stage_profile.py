"""Where a first load and a 1 % upsert spend their time, stage by stage (issue 15).

Run: ``.venv/bin/python -m benchmarks.stage_profile --rows 10000000`` (writes
``benchmarks/results/stage_profile.{json,md}``). In a session at Spark's defaults for what
versioned's own session changes (the caller's session of `benchmarks.caller_session`), with
the data of `benchmarks.upsert_data` (N rows, 20 ``store_id`` partitions, 1 % batches):

1. ``--loads`` first loads of the N base rows into a new table, each next to a plain
   partitioned Spark Parquet write of the same rows;
2. ``--batches`` upserts of the change batches (the first is a warm-up, not counted);
3. one upsert of a 10 % batch (every tenth key of the base, its ``total_amt`` changed).

Peak resident memory is sampled during each (every 100 ms): of the Python driver alone, and
of the driver with the Spark JVM (in ``local`` mode the JVM is the executors too).

Each operation's progress messages are timed: a stage is the time from one message to the
next, named by the message that ends it; the last stage ends with the call's return. Medians
per stage over the counted runs.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from benchmarks.caller_session import sessions
from benchmarks.harness import (
    Meter,
    PeakRss,
    log,
    machine,
    rerender,
    save,
    table,
)
from benchmarks.upsert_data import COLUMNS, KEY, OP, PARTITION, generate
from versioned import connect

NAME = "stage_profile"
TABLE = "bench.stages"


def _digits_out(message: str) -> str:
    """A progress message with its numbers replaced by ``N`` (stages compare across runs)."""
    return " ".join("N" if w.replace(",", "").isdigit() else w for w in message.split())


def timed_stages(run: Callable[..., object]) -> dict[str, Any]:
    """Run ``run(progress)``; the seconds of each stage, the total, its CPU and peak RSS."""
    marks: list[tuple[str, float]] = []
    start = time.perf_counter()

    def say(message: str) -> None:
        marks.append((_digits_out(message), time.perf_counter()))

    with Meter() as meter, PeakRss() as peak:
        run(say)
    end = time.perf_counter()
    stages: dict[str, float] = {}
    last = start
    for message, at in marks:
        stages[f"until: {message}"] = stages.get(f"until: {message}", 0.0) + at - last
        last = at
    stages["until: return"] = end - last
    return {
        "stages": stages,
        **meter.result(),
        "peak_rss": peak.bytes,
        "python_peak_rss": peak.python_bytes,
    }


def _upsert(table: Any, rows: Any, say: Callable[[str], None], *, op: str | None = None) -> object:
    return table.upsert(rows, op_code_column=op, progress=say)


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    names: list[str] = []
    for r in runs:
        names += [n for n in r["stages"] if n not in names]
    return {
        "stages": {n: statistics.median(r["stages"].get(n, 0.0) for r in runs) for n in names},
        "seconds": statistics.median(r["seconds"] for r in runs),
        "cpu_s": statistics.median(r["cpu_s"] for r in runs),
        "peak_rss": max(r["peak_rss"] for r in runs),
        "python_peak_rss": max(r["python_peak_rss"] for r in runs),
    }


def profile(spark: SparkSession, rows: int, work: Path, loads: int, batches: int) -> dict:
    """Loads, upserts and the 10 % upsert of one table size, stage by stage."""
    data = generate(spark, rows, work / "data")
    load_runs, plain_runs, upsert_runs = [], [], []
    cat = None
    for k in range(loads):
        if cat is not None:
            cat.close()
        warehouse = work / "warehouse"
        shutil.rmtree(warehouse, ignore_errors=True)
        warehouse.mkdir(parents=True)
        cat = connect(
            catalog=f"sqlite:///{warehouse}/catalog.db", warehouse=str(warehouse), spark=spark
        )
        table = cat.create_table(TABLE, columns=COLUMNS, primary_key=KEY, partition_by=PARTITION)
        load = timed_stages(partial(_upsert, table, spark.read.parquet(data.base)))
        load_runs.append(load)
        plain = work / "plain"
        with Meter() as meter:
            spark.read.parquet(data.base).write.mode("overwrite").partitionBy(PARTITION).parquet(
                str(plain)
            )
        plain_runs.append(meter.result())
        log(f"load {k + 1}: {load['seconds']:.1f}s, plain {plain_runs[-1]['seconds']:.1f}s")
    assert cat is not None
    table = cat.table(TABLE)
    for k, batch in enumerate(data.batches[:batches], start=1):
        run = timed_stages(partial(_upsert, table, spark.read.parquet(batch), op=OP))
        log(f"batch {k}: {run['seconds']:.2f}s")
        if k > 1:
            upsert_runs.append(run)
    tenth = spark.read.parquet(data.base).where(F.col(KEY) % 10 == 0)
    big = timed_stages(
        partial(_upsert, table, tenth.withColumn("total_amt", F.col("total_amt") + F.lit(1)))
    )
    log(f"10 % batch: {big['seconds']:.2f}s")
    cat.close()
    return {
        "big_upsert": _medians([big]),
        "rows": rows,
        "load": _medians(load_runs),
        "plain_write": {
            "seconds": statistics.median(r["seconds"] for r in plain_runs),
            "cpu_s": statistics.median(r["cpu_s"] for r in plain_runs),
        },
        "upsert": _medians(upsert_runs),
    }


def render(doc: dict[str, Any], out: Path) -> None:
    """Write ``stage_profile.md`` under ``out`` for ``doc`` (the JSON document)."""
    m = doc["machine"]
    lines = [
        "# Where a first load and a 1 % upsert spend their time (issue 15)",
        "",
        "```sh",
        ".venv/bin/python -m benchmarks.stage_profile --rows 10000000",
        "```",
        "",
        f"{m['cpu']}, {m['cores']} cores, Spark `{m['spark_master']}`, the caller's session "
        "at Spark's defaults (200 shuffle partitions, AQE on). Each stage runs from one "
        "progress message to the next and is named by the message that ends it (numbers "
        "as N); medians (module docstring of `benchmarks/stage_profile.py`).",
    ]
    for run in doc["runs"]:
        plain = run["plain_write"]
        titles = {
            "load": "first load",
            "upsert": "upsert of a 1 % batch",
            "big_upsert": "upsert of a 10 % batch",
        }
        for what, title in titles.items():
            r = run[what]
            lines += [
                "",
                f"## N = {run['rows']:,}: {title} ({r['seconds']:.2f} s wall, "
                f"{r['cpu_s']:.2f} s CPU)",
                "",
                f"Peak RSS: Python driver {r['python_peak_rss'] / 2**30:.2f} GiB; driver and "
                f"Spark JVM together {r['peak_rss'] / 2**30:.2f} GiB.",
                "",
            ]
            if what == "load":
                lines.append(
                    f"A plain partitioned Spark Parquet write of the same rows: "
                    f"{plain['seconds']:.2f} s wall, {plain['cpu_s']:.2f} s CPU "
                    f"(load / plain: {r['seconds'] / plain['seconds']:.2f}x wall, "
                    f"{r['cpu_s'] / plain['cpu_s']:.2f}x CPU)."
                )
                lines.append("")
            lines += table(
                ("stage", "s", "share"),
                "lrr",
                (
                    (name, f"{seconds:.2f}", f"{seconds / r['seconds']:.0%}")
                    for name, seconds in r["stages"].items()
                ),
            )
    (out / f"{NAME}.md").write_text("\n".join(lines) + "\n")


def parser() -> argparse.ArgumentParser:
    """The profile's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="table size (repeatable)")
    parser.add_argument("--loads", type=int, default=2)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--work", default="/tmp/versioned-stage-profile")
    parser.add_argument("--out", default="benchmarks/results", help="results folder")
    parser.add_argument("--report-only", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Profile every ``--rows`` (or re-render) and write the results."""
    args = parser().parse_args(argv)
    out = Path(args.out)
    if args.report_only:
        rerender(out, NAME, render)
        return
    own, caller = sessions("stage-profile")
    doc: dict[str, Any] = {"machine": machine(own), "runs": []}
    for rows in args.rows or [10_000_000]:
        doc["runs"].append(
            profile(caller, rows, Path(args.work) / f"n{rows}", args.loads, args.batches)
        )
    shutil.rmtree(args.work, ignore_errors=True)
    save(out, NAME, doc, render)


if __name__ == "__main__":
    main()
