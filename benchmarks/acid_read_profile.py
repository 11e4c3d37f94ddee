"""Where a read of an acid table spends its time, step by step (issue 12).

Run: ``.venv/bin/python -m benchmarks.acid_read_profile --rows 10000000`` (writes
``benchmarks/results/acid_read_profile.{json,md}``). Builds the acid table of
`benchmarks.acid` (N rows of `benchmarks.upsert_data` in 20 ``store_id`` partitions, 8
buckets by the key, then 10 change batches of 1 % of N: 10 deltas and 10 delete deltas on
top of the initial ``delta_1_1``) and a plain ORC copy of its live rows, then times the
benchmark's one-column query ``count(*), sum(total_amt)`` (interleaved, medians of
``--repeat``), each step adding one thing to the one above:

- ``plain ORC``: the plain copy (one file per partition);
- ``insert scan``: one Spark scan of every insert-event file, no partition values, no merge
  (the ORC library's ACID handling makes Spark read all six event fields: the format's floor
  on Spark);
- ``insert events``: the insert events as the reader takes them (small files read on the
  driver, partition values joined on);
- ``delete events``: only the delete events (``count(*)``);
- ``latest view``: ``Table.read()``: the insert events minus the deleted ones.

Then the table is major-compacted (one ``base`` per partition, no delete events) and the
steps are timed again.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks.acid_engines import AcidEngine
from benchmarks.acid_reads import write_plain_copies
from benchmarks.harness import (
    log,
    machine,
    rerender,
    save,
    spark_session,
    table,
)
from benchmarks.internals import acid_events, acid_files_of
from benchmarks.read_profile import measure
from benchmarks.upsert_data import MAX_BATCHES, generate
from versioned import CompactionOptions

NAME = "acid_read_profile"
STEPS = ("plain ORC", "insert scan", "insert events", "delete events", "latest view")


def _column(frame: DataFrame, field: str = "total_amt") -> tuple[Any, ...]:
    return tuple(frame.agg(F.count(F.lit(1)), F.sum(field)).collect()[0])


def build(
    spark: SparkSession, rows: int, work: Path, batches: int = MAX_BATCHES, buckets: int = 8
) -> AcidEngine:
    """The acid table after 10 change batches, and the plain copy under ``work/plain``."""
    shutil.rmtree(work, ignore_errors=True)
    data = generate(spark, rows, work / "data", batches=batches)
    engine = AcidEngine(spark, work, f"n{rows}", buckets)
    log("initial load")
    engine.load(data)
    for k, batch in enumerate(data.batches, start=1):
        log(f"batch {k}")
        engine.apply(batch)
    write_plain_copies(engine.live(), spark, work / "plain")
    return engine


def steps(spark: SparkSession, engine: AcidEngine, work: Path) -> dict[str, Callable[[], Any]]:
    """The query at each step (the plain copy's ORC folder under ``work/plain/orc``)."""
    read_events = acid_events.read_events
    catalog = engine.catalog
    snapshot = engine.table.snapshot()
    ctx = catalog.engine_context
    files = acid_files_of(ctx.store, snapshot)
    plain = spark.read.orc(str(work / "plain" / "orc"))

    def delete_count() -> Any:
        if not files.deletes:
            return 0
        return read_events(ctx, snapshot, files.deletes).count()

    return {
        "plain ORC": lambda: _column(plain),
        "insert scan": lambda: _column(
            acid_events._load_events(ctx, snapshot, files.inserts),
            "row.total_amt",
        ),
        "insert events": lambda: _column(
            read_events(ctx, snapshot, files.inserts), "row.total_amt"
        ),
        "delete events": delete_count,
        "latest view": lambda: _column(engine.table.read()),
    }


def run_size(
    spark: SparkSession,
    rows: int,
    work: Path,
    repeat: int,
    batches: int = MAX_BATCHES,
    buckets: int = 8,
) -> dict[str, Any]:
    """Both states of one table size: after 10 change batches, after a major compaction.

    ``batches`` and ``buckets`` make a smoke run small; its first state keeps the name
    ``10 deltas``.
    """
    engine = build(spark, rows, work, batches, buckets)
    files = engine.event_files()
    result: dict[str, Any] = {"10 deltas": measure(steps(spark, engine, work), repeat)}
    result["files"] = {"10 deltas": files}
    log("major compaction")
    engine.table.compact(options=CompactionOptions(kind="major"))
    result["major compaction"] = measure(steps(spark, engine, work), repeat)
    result["files"]["major compaction"] = engine.event_files()
    engine.close()
    return result


def render(doc: dict[str, Any], out: Path) -> None:
    """Write ``acid_read_profile.md`` under ``out`` for ``doc`` (the JSON document)."""
    lines = [
        "# Where a read of an acid table spends its time (issue 12)",
        "",
        "```sh",
        ".venv/bin/python -m benchmarks.acid_read_profile --rows 1000000 --rows 10000000",
        "```",
        "",
        f"{doc['machine']['cpu']}, {doc['machine']['cores']} cores, Spark "
        f"`{doc['machine']['spark_master']}`. `count(*), sum(total_amt)`; each step is "
        "described in the module docstring of `benchmarks/acid_read_profile.py`; medians of "
        f"{doc['repeat']} interleaved runs.",
    ]
    for rows, result in doc["runs"].items():
        for state in ("10 deltas", "major compaction"):
            timings = result[state]
            plain = timings["plain ORC"]["seconds"]
            lines += ["", f"## N = {int(rows):,}, after {state}", ""]
            lines += [f"Bucket files: {result['files'][state]}.", ""]
            lines += table(
                ("step", "wall s", "CPU s", "/ plain ORC"),
                "lrrr",
                (
                    (
                        name,
                        f"{e['seconds']:.2f}",
                        f"{e['cpu_s']:.2f}",
                        f"{e['seconds'] / plain:.2f}x",
                    )
                    for name, e in ((name, timings[name]) for name in STEPS)
                ),
            )
    (out / f"{NAME}.md").write_text("\n".join(lines) + "\n")


def parser() -> argparse.ArgumentParser:
    """The profile's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="table size (repeatable)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--batches", type=int, default=MAX_BATCHES, help="change batches")
    parser.add_argument("--buckets", type=int, default=8, help="buckets of the acid table")
    parser.add_argument("--work", default="/tmp/versioned-acid-read-profile")
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
    spark = spark_session("acid-read-profile", {"spark.driver.memory": "8g"})
    doc: dict[str, Any] = {"machine": machine(spark), "repeat": args.repeat, "runs": {}}
    for rows in args.rows or [10_000_000]:
        doc["runs"][str(rows)] = result = run_size(
            spark, rows, Path(args.work) / f"n{rows}", args.repeat, args.batches, args.buckets
        )
        for state in ("10 deltas", "major compaction"):
            for name in STEPS:
                log(f"N={rows:,} {state} {name}: {result[state][name]['seconds']:.2f}s")
    save(out, NAME, doc, render)


if __name__ == "__main__":
    main()
