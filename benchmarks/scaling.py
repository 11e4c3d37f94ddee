"""Issue 15's scaling benchmark: a fixed-size batch on tables of growing size, STRING and INT
partitions.

Run: ``.venv/bin/python -m benchmarks.scaling`` (``make bench-scaling``; default sizes 3M, 10M
and 30M rows, batches of 100,000 rows, both partition types; writes
``benchmarks/results/scaling.{json,md}`` and ``scaling.png``; ``--report-only`` re-renders).

Per partition type and size N (`benchmarks.upsert_data.fixed_size_data`: N rows of 9 columns,
20 ``store_id`` partitions as ``store_NN`` text or INT ``NN``):

1. **Load**: ``Table.upsert`` of the N base rows into an empty table in versioned's own session,
   and a plain partitioned Spark Parquet write of the same rows (interleaved, one each).
2. **Upserts**: ``--batches`` batches of a fixed ``--batch-rows`` (80 % updates spread over the
   whole key space, 15 % inserts, 5 % deletes), each from its Parquet folder as a DataFrame; the
   first is a warm-up (not counted), the median of the rest is t(N).
3. The table's count and sum(total_amt) must equal a plain Spark replay of the same batches.

Target (issue 15, 2): t(30M) / t(3M) <= 1.3: the cost grows with the batch, not the table.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from benchmarks.acid_reads import same_answer
from benchmarks.harness import (
    Meter,
    ResultsFile,
    command_line,
    contention,
    log,
    median,
    spark_session,
)
from benchmarks.upsert_data import KEY, OP, PARTITION, columns, fixed_size_data
from versioned import connect

TABLE = "bench.scale"
SIZES = (3_000_000, 10_000_000, 30_000_000)
TYPES = ("STRING", "INT")


def _replay(spark: SparkSession, base: str, batches: list[str]) -> tuple[int, float]:
    """Count and sum(total_amt) of the live rows after the batches, by plain Spark."""
    rows = spark.read.parquet(base).withColumn(OP, F.lit("I")).withColumn("_k", F.lit(0))
    for k, path in enumerate(batches, start=1):
        rows = rows.unionByName(spark.read.parquet(path).withColumn("_k", F.lit(k)))
    latest = Window.partitionBy(KEY).orderBy(F.col("_k").desc())
    live: DataFrame = (
        rows.withColumn("_n", F.row_number().over(latest))
        .where((F.col("_n") == 1) & (F.col(OP) != "D"))
        .agg(F.count("*"), F.sum("total_amt"))
    )
    count, total = live.first()  # type: ignore[misc]
    return int(count), round(float(total), 2)


def run_size(
    spark: SparkSession, rows: int, int_partitions: bool, args: argparse.Namespace, work: Path
) -> dict[str, Any]:
    """Load, upserts and the replay check of one table size and partition type."""
    kind = "INT" if int_partitions else "STRING"
    log(f"N={rows:,}, {kind} partitions: generating data")
    data = fixed_size_data(
        spark,
        rows,
        work / "data",
        batch_rows=args.batch_rows,
        batches=args.batches,
        int_partitions=int_partitions,
    )
    warehouse = work / "warehouse"
    shutil.rmtree(warehouse, ignore_errors=True)
    warehouse.mkdir(parents=True)
    cat = connect(
        catalog=f"sqlite:///{warehouse}/catalog.db",
        warehouse=str(warehouse),
        spark=spark,
        user="bench",
    )
    table = cat.create_table(
        TABLE, columns=columns(int_partitions), primary_key=KEY, partition_by=PARTITION
    )
    result: dict[str, Any] = {"rows": rows, "partition_type": kind}
    plain_out = work / "plain"
    for what in ("plain", "load") if rows % 2 else ("load", "plain"):
        with Meter() as meter:
            if what == "load":
                table.upsert(spark.read.parquet(data.base))
            else:
                spark.read.parquet(data.base).write.partitionBy(PARTITION).parquet(str(plain_out))
        result[what] = meter.result()
    shutil.rmtree(plain_out, ignore_errors=True)
    log(f"  load {result['load']['seconds']:.1f}s, plain write {result['plain']['seconds']:.1f}s")
    upserts = []
    for k, path in enumerate(data.batches, start=1):
        with Meter() as meter:
            table.upsert(spark.read.parquet(path), op_code_column=OP)
        upserts.append({"batch": k, **meter.result()})
        log(f"  batch {k}: {upserts[-1]['seconds']:.2f}s")
    result["upserts"] = upserts
    result["upsert_s"] = median([u["seconds"] for u in upserts[1:]])
    live = table.read().agg(F.count("*"), F.sum("total_amt")).first()
    got = (int(live[0]), round(float(live[1]), 2))  # type: ignore[index]
    expected = _replay(spark, data.base, list(data.batches))
    if not same_answer(got, expected):
        raise AssertionError(f"table {got} != replay {expected}")
    result["check"] = got
    cat.close()
    return result


def render(doc: dict[str, Any], out: Path) -> None:
    """``scaling.md`` and ``scaling.png`` from the JSON document."""
    m = doc["machine"]
    runs = doc["runs"]
    lines = [
        "# A fixed batch on growing tables (issue 15, target 2)",
        "",
        "```sh",
        f"make bench-scaling   # {runs[0].get('command', 'python -m benchmarks.scaling')}"
        if runs
        else "make bench-scaling",
        "```",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB; Spark "
        f"`{m['spark_master']}`, pyspark {m.get('pyspark')}.",
        "",
        "`benchmarks/scaling.py`'s docstring says what is measured. t(N) is the median upsert",
        f"of a {doc.get('batch_rows', 100_000):,}-row batch (80 % updates spread over the whole",
        "key space, 15 % inserts, 5 % deletes) after a warm-up batch; **others** is the share",
        "of the cores other processes used meanwhile.",
        "",
        "| partitions | N | t(N) s | t(N) / t(smallest) | load s | plain write s | "
        "load / plain | others |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in TYPES:
        mine = sorted((r for r in runs if r["partition_type"] == kind), key=lambda r: r["rows"])
        if not mine:
            continue
        first = mine[0]["upsert_s"]
        for r in mine:
            load, plain = r["load"]["seconds"], r["plain"]["seconds"]
            entries = [r["load"], r["plain"], *r["upserts"]]
            lines.append(
                f"| {kind} | {r['rows']:,} | {r['upsert_s']:.2f} | "
                f"**{r['upsert_s'] / first:.2f}** | {load:.1f} | {plain:.1f} | "
                f"{load / plain:.2f}x | {contention(entries):.0%} |"
            )
    lines.append("")
    (out / "scaling.md").write_text("\n".join(lines))
    _plot(runs, out / "scaling.png")


def _plot(runs: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for kind in TYPES:
        mine = sorted((r for r in runs if r["partition_type"] == kind), key=lambda r: r["rows"])
        if mine:
            ax.plot(
                [r["rows"] / 1e6 for r in mine],
                [r["upsert_s"] for r in mine],
                marker="o",
                label=f"{kind} partitions",
            )
    ax.set_xscale("log")
    sizes = sorted({r["rows"] / 1e6 for r in runs})
    ax.set_xticks(sizes, [f"{m:g}" for m in sizes])
    ax.minorticks_off()
    ax.set_xlabel("table rows (millions)")
    ax.set_ylabel("upsert of a fixed batch (s)")
    ax.set_ylim(bottom=0)
    ax.set_title("Cost grows with the batch, not the table")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help=f"table size (default {SIZES})")
    parser.add_argument("--type", choices=TYPES, action="append", help="partition type (both)")
    parser.add_argument("--batch-rows", type=int, default=100_000)
    parser.add_argument("--batches", type=int, default=4, help="the first is a warm-up")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--work", default="/tmp/versioned-bench-scaling", help="scratch folder")
    parser.add_argument("--report-only", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run every size and partition type (or re-render) and write the results."""
    args = parser().parse_args(argv)
    out = Path(args.out)
    results = ResultsFile(out, "scaling", key=lambda r: (r["partition_type"], r["rows"]))
    if args.report_only:
        render(results.previous, out)
        return
    spark = spark_session("scaling-bench")
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    command = command_line("benchmarks.scaling", argv)
    for kind in args.type or TYPES:
        for rows in sorted(args.rows or SIZES):
            where = work / f"{kind.lower()}_{rows}"
            run = run_size(spark, rows, kind == "INT", args, where)
            run["command"] = command
            shutil.rmtree(where, ignore_errors=True)
            render(results.add(run, spark, batch_rows=args.batch_rows), out)
    shutil.rmtree(work, ignore_errors=True)
    log(f"done; results in {out}")


if __name__ == "__main__":
    main()
