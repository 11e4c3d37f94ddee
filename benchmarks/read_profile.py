"""Where a narrow read of an uncompacted version-partition table spends its time (issue 15).

Run: ``.venv/bin/python -m benchmarks.read_profile --rows 10000000`` (writes
``benchmarks/results/read_profile.{json,md}``). Builds the benchmark table of
`benchmarks.upsert_data` (N rows in 20 ``store_id`` partitions, then 9 change batches of 1 %
of N: 10 versions) and a plain Parquet copy of its live rows, then times, interleaved and
median of ``--repeat``, the narrow query ``GROUP BY store_id SUM(total_amt)`` built step by
step from the plain scan to the latest view:

- ``plain``: the plain copy of the live rows;
- ``all rows``: every row of every version, no join (more files, ~9 % more rows);
- ``+ key read``: the same, also reading the key column (a filter on it that keeps every row);
- ``+ key hash``: the same, also computing the join's ``xxhash64`` of partition and key;
- ``broadcast only``: the anti join of one data row against the whole index (the index scan,
  the driver's hash map and its broadcast: the fixed part of the join);
- ``latest view``: the query through ``Table.read()``.

Other shapes of the anti join, tried against the latest view (each keeps the live rows of this
table; only the first is also right for every table):

- ``raw key join``: the join on the LONG key column alone, no hash, no partition, no version
  condition (the cheapest join Spark has: its single-long-key map);
- ``max version per key``: the index entries first reduced to the highest version per key
  (unique build keys, but a shuffle before the broadcast);
- ``index cached``: the index entries read once and cached in memory (no Parquet scan of the
  index per query; the map is still built and broadcast per query).
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks.harness import (
    interleave,
    log,
    machine,
    medians,
    rerender,
    save,
    spark_session,
    table,
)
from benchmarks.internals import version_reader
from benchmarks.upsert_data import COLUMNS, KEY, OP, PARTITION, generate
from versioned import connect

NAME = "read_profile"
TABLE = "bench.sell"
STEPS = ("plain", "all rows", "+ key read", "+ key hash", "broadcast only", "latest view")
TRIED = ("raw key join", "max version per key", "index cached")


def _narrow(frame: DataFrame) -> int:
    return len(frame.groupBy(PARTITION).agg(F.sum("total_amt")).collect())


def build(spark: SparkSession, rows: int, work: Path, batches: int = 9) -> tuple[Any, DataFrame]:
    """The 10-version table (``batches`` + 1 versions) and the plain copy of its live rows."""
    data = generate(spark, rows, work / "data", batches=batches)
    warehouse = work / "warehouse"
    plain = work / "plain_copy"
    if (work / "_BUILT").exists():  # an earlier run's table
        cat = connect(
            catalog=f"sqlite:///{warehouse}/catalog.db", warehouse=str(warehouse), spark=spark
        )
        return cat, spark.read.parquet(str(plain))
    shutil.rmtree(warehouse, ignore_errors=True)
    warehouse.mkdir(parents=True)
    cat = connect(
        catalog=f"sqlite:///{warehouse}/catalog.db", warehouse=str(warehouse), spark=spark
    )
    table = cat.create_table(TABLE, columns=COLUMNS, primary_key=KEY, partition_by=PARTITION)
    log("loading the base rows")
    table.upsert(spark.read.parquet(data.base))
    for k, batch in enumerate(data.batches[:batches], start=1):
        log(f"batch {k}")
        table.upsert(spark.read.parquet(batch), op_code_column=OP)
    shutil.rmtree(plain, ignore_errors=True)
    table.read().write.partitionBy(PARTITION).parquet(str(plain))
    (work / "_BUILT").write_text("ok\n")
    return cat, spark.read.parquet(str(plain))


def steps(spark: SparkSession, cat: Any, plain: DataFrame) -> dict[str, Callable[[], int]]:
    """The query at each step, as a function returning its (checked) group count."""
    SnapshotFrames = version_reader.SnapshotFrames
    latest_rows, snapshot_frames = version_reader.latest_rows, version_reader.snapshot_frames
    table = cat.table(TABLE)
    snapshot = table.snapshot()
    frames = snapshot_frames(cat.engine_context, snapshot)
    data, index = frames.data, frames.index
    assert index is not None
    hashed = F.xxhash64(F.col(PARTITION), F.col(KEY))
    one_row = SnapshotFrames(data.limit(1).localCheckpoint(), index, frames.index_entries)
    probe = latest_rows(spark, snapshot, one_row)
    index.createOrReplaceTempView("read_profile_index")
    data.createOrReplaceTempView("read_profile_data")
    cached = index.select(PARTITION, KEY, "version_id").cache()
    cached.count()
    one_max = spark.sql(
        f"SELECT {PARTITION}, {KEY}, max(version_id) AS version_id FROM read_profile_index "
        f"GROUP BY {PARTITION}, {KEY}"
    )
    raw = spark.sql(
        f"SELECT /*+ BROADCAST(m) */ d.* FROM read_profile_data d LEFT ANTI JOIN "
        f"(SELECT {KEY} FROM read_profile_index) m ON d.{KEY} = m.{KEY}"
    )

    def view_over(index_rows: DataFrame) -> DataFrame:
        return latest_rows(spark, snapshot, SnapshotFrames(data, index_rows, frames.index_entries))

    return {
        "plain": lambda: _narrow(plain),
        "all rows": lambda: _narrow(data),
        "+ key read": lambda: _narrow(data.where(F.col(KEY) != F.lit(-1))),
        "+ key hash": lambda: _narrow(data.where(hashed != F.lit(0))),
        "broadcast only": lambda: probe.count(),
        "latest view": lambda: _narrow(table.read()),
        "raw key join": lambda: _narrow(raw),
        "max version per key": lambda: _narrow(view_over(one_max)),
        "index cached": lambda: _narrow(view_over(cached)),
    }


def measure(runs: Mapping[str, Callable[[], object]], repeat: int) -> dict[str, dict[str, float]]:
    """Median wall and CPU seconds of each step: ``repeat`` rounds after one untimed round
    that warms every step, the order reversed every other round."""
    done = interleave(runs, repeat, order="alternate", warm_up_rounds=1)
    return {name: medians(timings) for name, timings in done.timings.items()}


def render(doc: dict[str, Any], out: Path) -> None:
    """Write ``read_profile.md`` under ``out`` for ``doc`` (the JSON document)."""
    lines = [
        "# Where a narrow read after 10 versions spends its time (issue 15)",
        "",
        "```sh",
        ".venv/bin/python -m benchmarks.read_profile --rows 10000000",
        "```",
        "",
        f"{doc['machine']['cpu']}, {doc['machine']['cores']} cores, Spark "
        f"`{doc['machine']['spark_master']}`. `GROUP BY store_id SUM(total_amt)`; "
        "each step adds one thing to the one above (module docstring of "
        "`benchmarks/read_profile.py`); medians of "
        f"{doc['repeat']} interleaved runs.",
    ]
    for rows, result in doc["runs"].items():
        plain = result["plain"]["seconds"]
        lines += ["", f"## N = {int(rows):,}", ""]
        lines += table(
            ("step", "wall s", "CPU s", "/ plain"),
            "lrrr",
            (
                (name, f"{e['seconds']:.2f}", f"{e['cpu_s']:.2f}", f"{e['seconds'] / plain:.2f}x")
                for name, e in ((name, result[name]) for name in (*STEPS, *TRIED))
            ),
        )
    (out / f"{NAME}.md").write_text("\n".join(lines) + "\n")


def parser() -> argparse.ArgumentParser:
    """The profile's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="table size (repeatable)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--batches", type=int, default=9, help="change batches after the load")
    parser.add_argument("--work", default="/tmp/versioned-read-profile")
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
    spark = spark_session("read-profile")
    doc: dict[str, Any] = {"machine": machine(spark), "repeat": args.repeat, "runs": {}}
    for rows in args.rows or [10_000_000]:
        work = Path(args.work) / f"n{rows}"
        cat, plain = build(spark, rows, work, args.batches)
        doc["runs"][str(rows)] = result = measure(steps(spark, cat, plain), args.repeat)
        for name in (*STEPS, *TRIED):
            log(f"N={rows:,} {name}: {result[name]['seconds']:.2f}s")
        cat.close()
    save(out, NAME, doc, render)


if __name__ == "__main__":
    main()
