"""A table's first load against a plain partitioned Spark write of the same DataFrame, each in
a fresh process, the way a new user tries it (issue 45 item 4).

Run: ``.venv/bin/python -m benchmarks.first_load`` (defaults: 10M narrow rows, 3M wide rows,
3 runs of each side; about 6 minutes on 2 cores; writes ``first_load.{json,md}`` under
``--out``, default benchmarks/results).

The source of each shape is one Parquet file written by pyarrow in 1M-row row groups:

* **narrow**, the issue's shape: ``id BIGINT`` (the key), two BIGINTs, a STRING, a DOUBLE
  and an INT partition column of 20 values;
* **wide**: the key, 8 BIGINTs, 6 DOUBLEs, 6 STRINGs, a DATE, a DECIMAL(12,2) and the INT
  partition column (24 columns).

Each run is a new Python process (a JVM of its own) with the caller's session at Spark's
defaults (``local[2]``, ``--driver-memory``) that reads the file with ``spark.read.parquet``
and times one of:

* **plain**: ``df.write.partitionBy("p").parquet(...)``;
* **versioned**: ``Table.upsert(df)`` into a new table (key ``id``, partitioned by ``p``;
  the table's creation is not timed), with the time of each progress message.

The two sides alternate; the report gives each side's median and the ratio of the medians
(the issue's target: 1.5x or less). ``others``: the share of the cores other processes used
in the second before and after each run (above 10 % marks a shape provisional).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import log, machine, save, table
from benchmarks.harness.meter import system_busy
from benchmarks.harness.results import rerender

NAME = "first_load"
SIDES = ("plain", "versioned")
TARGET = 1.5
BUSY = 0.10
PARTITIONS = 20
ROW_GROUP = 1_000_000
SHAPES: dict[str, str] = {
    "narrow": "id BIGINT, a BIGINT, b BIGINT, s STRING, d DOUBLE, p INT",
    "wide": ", ".join(
        [
            "id BIGINT",
            *(f"n{i} BIGINT" for i in range(8)),
            *(f"x{i} DOUBLE" for i in range(6)),
            *(f"s{i} STRING" for i in range(6)),
            "day DATE",
            "amount DECIMAL(12,2)",
            "p INT",
        ]
    ),
}


def write_source(path: Path, shape: str, rows: int, seed: int = 45) -> None:
    """The shape's source file: ``rows`` rows in row groups of 1M, written by pyarrow."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    names = [c.split()[0] for c in SHAPES[shape].split(", ")]
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")  # a failed run leaves no source behind
    with pq.ParquetWriter(partial, _schema(shape)) as writer:
        for start in range(0, rows, ROW_GROUP):
            n = min(ROW_GROUP, rows - start)
            ids = np.arange(start, start + n, dtype=np.int64)
            columns: dict[str, Any] = {}
            for name in names:
                if name == "id":
                    columns[name] = ids
                elif name == "p":
                    columns[name] = rng.integers(0, PARTITIONS, n).astype(np.int32)
                elif name in ("a", "b") or name.startswith("n"):
                    columns[name] = rng.integers(0, 1 << 40, n)
                elif name == "d" or name.startswith("x"):
                    columns[name] = rng.random(n)
                elif name == "s" or name.startswith("s"):
                    width = 8 + len(name) * 4
                    columns[name] = pa.array([f"{name}-{i % 100_003:0{width}d}" for i in ids])
                elif name == "day":
                    columns[name] = pa.array(rng.integers(18_000, 20_000, n).astype(np.int32))
                elif name == "amount":
                    cents = rng.integers(0, 10**9, n)  # whole units: fits DECIMAL(12,2)
                    columns[name] = pa.array(cents, pa.int64()).cast(pa.decimal128(19, 0))
            batch = pa.table(columns).cast(_schema(shape))
            writer.write_table(batch, row_group_size=ROW_GROUP)
    partial.rename(path)


def _schema(shape: str) -> Any:
    import pyarrow as pa

    types = {
        "BIGINT": pa.int64(),
        "DOUBLE": pa.float64(),
        "STRING": pa.string(),
        "DATE": pa.date32(),
        "DECIMAL(12,2)": pa.decimal128(12, 2),
        "INT": pa.int32(),
    }
    fields = [c.split(" ", 1) for c in SHAPES[shape].split(", ")]
    return pa.schema([pa.field(name, types[kind]) for name, kind in fields])


def child(args: argparse.Namespace) -> dict[str, Any]:
    """One timed side in this (fresh) process."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", args.driver_memory)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    target = Path(args.target)
    shutil.rmtree(target, ignore_errors=True)
    frame = spark.read.parquet(args.source)
    stages: list[tuple[float, str]] = []
    if args.child == "plain":
        start = time.monotonic()
        frame.write.partitionBy("p").parquet(str(target))
        seconds = time.monotonic() - start
    else:
        import versioned

        catalog = versioned.connect(warehouse=str(target), spark=spark)
        created = catalog.create_table(
            "bench.first_load", columns=SHAPES[args.shape], primary_key="id", partition_by="p"
        )
        start = time.monotonic()
        result = created.upsert(
            frame, progress=lambda m: stages.append((round(time.monotonic() - start, 3), m))
        )
        seconds = time.monotonic() - start
        assert result.inserted == args.rows, result
    return {"seconds": round(seconds, 3), "stages": stages, "machine": machine(spark)}


def _run_child(args: argparse.Namespace, side: str, shape: str, source: Path) -> dict[str, Any]:
    rows = args.rows if shape == "narrow" else args.wide_rows
    argv = [
        sys.executable, "-m", "benchmarks.first_load", "--child", side, "--shape", shape,
        "--source", str(source), "--target", str(args.work / f"{shape}-{side}"),
        "--rows", str(rows), "--driver-memory", args.driver_memory,
    ]  # fmt: skip
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}  # an activated virtualenv's python
    others = _others()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{shape}/{side} failed:\n{done.stderr[-3000:]}")
    record: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    record["others"] = max(others, _others())
    return record


def _others(window_s: float = 1.0) -> float:
    """The share of the cores other processes use, sampled while no run of ours is going."""
    before = system_busy()
    time.sleep(window_s)
    return round(max(0.0, system_busy() - before) / (window_s * (os.cpu_count() or 1)), 3)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Every run of every shape (sources written first, untimed)."""
    shapes: dict[str, Any] = {}
    for shape in args.shapes:
        rows = args.rows if shape == "narrow" else args.wide_rows
        source = args.work / f"{shape}-{rows}.parquet"
        if not source.exists():
            log(f"{NAME}: writing the {shape} source ({rows:,} rows)")
            write_source(source, shape, rows)
        runs: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
        for k in range(args.runs):
            for side in SIDES if k % 2 == 0 else SIDES[::-1]:
                record = _run_child(args, side, shape, source)
                log(f"{NAME}: {shape} run {k + 1} {side}: {record['seconds']:.2f} s")
                runs[side].append(record)
        shapes[shape] = {"rows": rows, "columns": SHAPES[shape], "runs": runs}
    return {"shapes": shapes, "runs": args.runs, "driver_memory": args.driver_memory}


def summary(shape: dict[str, Any]) -> dict[str, Any]:
    """Medians of each side and their ratio."""
    medians = {s: statistics.median(r["seconds"] for r in shape["runs"][s]) for s in SIDES}
    return {**medians, "ratio": medians["versioned"] / medians["plain"]}


def render(doc: dict[str, Any], out: Path) -> None:
    """``first_load.md`` from the results document."""
    lines = [
        "# A table's first load against a plain partitioned Spark write (issue 45 item 4)",
        "",
        "```sh",
        "make bench-first-load   # .venv/bin/python -m benchmarks.first_load",
        "```",
        "",
        "Each run a fresh process, the caller's session at Spark's defaults (`local[2]`, "
        f"driver memory {doc['driver_memory']}); the sides alternate, {doc['runs']} runs each. "
        "What each side does: the module docstring of `benchmarks/first_load.py`. Target: "
        f"{TARGET}x or less.",
        "",
    ]
    rows = []
    for name, shape in doc["shapes"].items():
        s = summary(shape)
        others = max(r["others"] for side in SIDES for r in shape["runs"][side])
        rows.append(
            [
                name,
                len(shape["columns"].split(", ")),
                f"{shape['rows']:,}",
                f"{s['plain']:.2f}",
                f"{s['versioned']:.2f}",
                f"**{s['ratio']:.2f}x**" + ("" if others <= BUSY else " (provisional)"),
                " / ".join(f"{r['seconds']:.1f}" for r in shape["runs"]["plain"]),
                " / ".join(f"{r['seconds']:.1f}" for r in shape["runs"]["versioned"]),
                f"{others:.0%}",
            ]
        )
    lines += table(
        ["shape", "columns", "rows", "plain s", "versioned s", "ratio", "plain runs",
         "versioned runs", "others"],
        "lrrrrrrrr",
        rows,
    )  # fmt: skip
    lines += ["", "## Where a versioned load's time goes (its median run)", ""]
    for name, shape in doc["shapes"].items():
        runs = sorted(shape["runs"]["versioned"], key=lambda r: r["seconds"])
        middle = runs[len(runs) // 2]
        lines += [f"**{name}** ({middle['seconds']:.2f} s):", ""]
        lines += table(["until", "s"], "lr", _stage_rows(middle))
        lines.append("")
    first = next(iter(doc["shapes"].values()))["runs"]["plain"][0]["machine"]
    lines += [
        f"Machine: {first.get('cpu')}, {first.get('cores')} cores; Spark {first.get('spark')}, "
        f"Python {first.get('python')}.",
    ]
    notes = out / f"{NAME}_notes.md"
    if notes.exists():
        lines += ["", notes.read_text().rstrip()]
    (out / f"{NAME}.md").write_text("\n".join(lines) + "\n")


def _stage_rows(run: dict[str, Any]) -> list[list[str]]:
    rows, last = [], 0.0
    for at, message in run["stages"]:
        rows.append([message, f"{at - last:.2f}"])
        last = at
    rows.append(["return", f"{run['seconds'] - last:.2f}"])
    return rows


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.first_load", description=__doc__)
    p.add_argument("--rows", type=int, default=10_000_000, help="rows of the narrow shape")
    p.add_argument("--wide-rows", type=int, default=3_000_000, help="rows of the wide shape")
    p.add_argument("--shapes", nargs="+", choices=tuple(SHAPES), default=list(SHAPES))
    p.add_argument("--runs", type=int, default=3, help="runs of each side and shape")
    p.add_argument("--driver-memory", default="4g")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    p.add_argument("--work", type=Path, default=Path("/tmp/versioned-bench/first_load"))
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--child", choices=SIDES, help=argparse.SUPPRESS)
    p.add_argument("--shape", choices=tuple(SHAPES), help=argparse.SUPPRESS)
    p.add_argument("--source", help=argparse.SUPPRESS)
    p.add_argument("--target", help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.child:
        print(json.dumps(child(args), default=str))
        return
    if args.report_only:
        rerender(args.out, NAME, render)
        return
    args.work = args.work.resolve()
    doc = measure(args)
    save(args.out, NAME, doc, render)
    for name, shape in doc["shapes"].items():
        s = summary(shape)
        log(f"{NAME}: {name}: versioned {s['versioned']:.2f} s, plain {s['plain']:.2f} s, "
            f"{s['ratio']:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
