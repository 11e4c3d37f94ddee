"""Fixed cost benchmark: an upsert of a 10-row batch and a query of a 10-row table.

Run: ``.venv/bin/python -m benchmarks.fixed_cost --runs 15`` (``--out benchmarks/results``
by default: ``fixed_cost.md`` and ``fixed_cost.json``). Issue 15, target 5.

In one warm JVM (every operation runs ``--warm-up`` times first, untimed), per layout:

* **upsert**: `Table.upsert` of 10 rows (a pyarrow table; 5 updates of stored keys, 5 new
  keys) into a 10-row table, median of ``--runs``; against a plain Spark Parquet write of the
  same 10 rows (``createDataFrame(...).write.mode("overwrite").parquet``);
* **query**: ``Catalog.sql("SELECT count(*), sum(v) FROM db.t").collect()`` on an unchanged
  10-row table (the view registration is cached by the table's commit sequence) and the
  same through `Table.read`; against the same aggregate over a plain Parquet copy of 10 rows
  (``spark.read.parquet(path)``).

The session is the caller's at Spark's default of 200 shuffle partitions
(``--shuffle-partitions``): the engine sets its own per operation. Every timing records wall
time, the CPU of this process tree and of other processes (`benchmarks.harness.meter`); a
mean contention above 10 % marks the results as provisional.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from benchmarks.harness import (
    contention,
    log,
    machine,
    read_json,
    repeat,
    spark_session,
    stamp,
    write_json,
)
from versioned import connect

LAYOUTS = ("versioned", "acid")
ROWS = 10
BUSY = 0.10
"""Mean share of the cores other processes used above which results are provisional."""


def _rows(start: int) -> pa.Table:
    keys = list(range(start, start + ROWS))
    return pa.table({"k": keys, "v": [float(k) for k in keys], "p": [k % 2 for k in keys]})


def _measure(name: str, runs: int, warm_up: int, work: Callable[[int], object]) -> dict[str, Any]:
    entries = repeat(work, runs, warm_up=warm_up)
    seconds = [e["seconds"] for e in entries]
    result = {
        "name": name,
        "runs": runs,
        "median_s": statistics.median(seconds),
        "min_s": min(seconds),
        "max_s": max(seconds),
        "median_cpu_s": statistics.median(e["cpu_s"] for e in entries),
        "contention": contention(entries),
    }
    log(f"{name}: median {result['median_s'] * 1000:.0f} ms (min {result['min_s'] * 1000:.0f})")
    return result


def run(spark: Any, root: Path, *, runs: int, warm_up: int, layouts: list[str]) -> dict[str, Any]:
    """Time every operation; returns the results as plain data."""
    plain = str(root / "plain")
    results: list[dict[str, Any]] = []

    def plain_write(i: int) -> None:
        spark.createDataFrame(_rows(i * ROWS).to_pandas()).write.mode("overwrite").parquet(plain)

    results.append(_measure("plain Spark Parquet write", runs, warm_up, plain_write))
    plain_query = f"SELECT count(*), sum(v) FROM parquet.`{plain}`"
    results.append(
        _measure(
            "plain Spark Parquet query",
            runs,
            warm_up,
            lambda _i: spark.sql(plain_query).collect(),
        )
    )
    with connect(warehouse=str(root / "warehouse"), spark=spark, user="bench") as cat:
        for layout in layouts:
            table = cat.create_table(
                f"{layout}.t",
                columns="k BIGINT, v DOUBLE, p INT",
                primary_key="k",
                partition_by="p",
                layout=layout,
            )
            table.upsert(_rows(0))

            def upsert(i: int, table: Any = table) -> None:
                # Half the keys are stored, half are new: 5 updates, 5 inserts (and the
                # table grows by 5 rows a run).
                table.upsert(_rows(ROWS // 2 + i * ROWS))

            results.append(_measure(f"{layout}: upsert of {ROWS} rows", runs, warm_up, upsert))
            query = cat.create_table(
                f"{layout}.q",
                columns="k BIGINT, v DOUBLE, p INT",
                primary_key="k",
                partition_by="p",
                layout=layout,
            )
            query.upsert(_rows(0))
            sql = f"SELECT count(*), sum(v) FROM {layout}.q"

            def sql_query(_i: int, sql: str = sql) -> object:
                return cat.sql(sql).collect()

            def read_query(_i: int, query: Any = query) -> object:
                return query.read().agg({"v": "sum", "*": "count"}).collect()

            results.append(
                _measure(f"{layout}: Catalog.sql on a {ROWS}-row table", runs, warm_up, sql_query)
            )
            results.append(
                _measure(
                    f"{layout}: Table.read aggregate on a {ROWS}-row table",
                    runs,
                    warm_up,
                    read_query,
                )
            )
    return {"results": results}


def render(report: dict[str, Any]) -> str:
    """``fixed_cost.md``: each operation's median next to its plain Spark reference."""
    by_name = {r["name"]: r for r in report["results"]}
    write_ref = by_name["plain Spark Parquet write"]["median_s"]
    read_ref = by_name["plain Spark Parquet query"]["median_s"]
    busy = max(r["contention"] for r in report["results"])
    lines = [
        "# Fixed cost: 10-row upsert and 10-row query",
        "",
        f"Generated by `python -m benchmarks.fixed_cost` on {report['date']}: "
        f"`{report['spark_master']}`, {report['cores']} cores, caller's session with "
        f"`spark.sql.shuffle.partitions={report['shuffle_partitions']}`, medians of "
        f"{report['runs']} runs after {report['warm_up']} untimed ones.",
        "",
    ]
    if busy > BUSY:
        lines += [
            f"**Provisional**: other processes used up to {busy:.0%} of the cores during a "
            "measurement; rerun on a quiet machine.",
            "",
        ]
    lines += [
        "| operation | median | min | CPU (median) | reference | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for r in report["results"]:
        is_write = "upsert" in r["name"] or "write" in r["name"]
        ref = write_ref if is_write else read_ref
        ref_name = "plain write" if is_write else "plain query"
        lines.append(
            f"| {r['name']} | {r['median_s'] * 1000:.0f} ms | {r['min_s'] * 1000:.0f} ms | "
            f"{r['median_cpu_s']:.2f} s | {ref_name} {ref * 1000:.0f} ms | "
            f"{r['median_s'] / ref:.1f}x |"
        )
    lines.append("")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--warm-up", type=int, default=3)
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--shuffle-partitions", default="200")
    parser.add_argument("--layout", action="append", choices=LAYOUTS)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    parser.add_argument("--report-only", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark (or re-render) and write ``fixed_cost.{json,md}``."""
    args = parser().parse_args(argv)
    if args.runs < 1:
        parser().error("--runs must be at least 1")
    if args.report_only:
        report = read_json(args.out / "fixed_cost.json", None)
        (args.out / "fixed_cost.md").write_text(render(report), encoding="utf-8")
        return
    spark = spark_session(
        "versioned-fixed-cost",
        {"spark.sql.shuffle.partitions": args.shuffle_partitions},
        master=args.master,
    )
    root = Path(tempfile.mkdtemp(prefix="versioned-fixed-cost-"))
    try:
        report = run(
            spark, root, runs=args.runs, warm_up=args.warm_up, layouts=args.layout or list(LAYOUTS)
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    report.update(
        date=time.strftime("%Y-%m-%d %H:%M"),
        spark_master=spark.sparkContext.master,
        cores=spark.sparkContext.defaultParallelism,
        shuffle_partitions=args.shuffle_partitions,
        runs=args.runs,
        warm_up=args.warm_up,
        machine=machine(spark),
        stamp=stamp(),
    )
    write_json(args.out / "fixed_cost.json", report, indent=2)
    (args.out / "fixed_cost.md").write_text(render(report), encoding="utf-8")
    log(f"wrote {args.out / 'fixed_cost.md'}")


if __name__ == "__main__":
    main()
