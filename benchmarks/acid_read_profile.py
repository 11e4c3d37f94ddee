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
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks.acid_engines import AcidEngine
from benchmarks.acid_reads import write_plain_copies
from benchmarks.read_profile import measure
from benchmarks.upsert_data import MAX_BATCHES, generate
from benchmarks.upsert_report import machine

STEPS = ("plain ORC", "insert scan", "insert events", "delete events", "latest view")


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _column(frame: DataFrame, field: str = "total_amt") -> tuple[Any, ...]:
    return tuple(frame.agg(F.count(F.lit(1)), F.sum(field)).collect()[0])


def build(spark: SparkSession, rows: int, work: Path) -> AcidEngine:
    """The acid table after 10 change batches, and the plain copy under ``work/plain``."""
    shutil.rmtree(work, ignore_errors=True)
    data = generate(spark, rows, work / "data", batches=MAX_BATCHES)
    engine = AcidEngine(spark, work, f"n{rows}", 8)
    _log("initial load")
    engine.load(data)
    for k, batch in enumerate(data.batches, start=1):
        _log(f"batch {k}")
        engine.apply(batch)
    write_plain_copies(engine.live(), spark, work / "plain")
    return engine


def steps(spark: SparkSession, engine: AcidEngine, work: Path) -> dict[str, Callable[[], Any]]:
    """The query at each step (the plain copy's ORC folder under ``work/plain/orc``)."""
    from versioned.layouts.acid.engine.events import _load_events, read_events
    from versioned.layouts.acid.engine.reader import files_of

    catalog = engine.catalog
    snapshot = engine.table.snapshot()
    files = files_of(catalog.store, snapshot)
    plain = spark.read.orc(str(work / "plain" / "orc"))

    def delete_count() -> Any:
        if not files.deletes:
            return 0
        return read_events(spark, catalog.fileio, snapshot, files.deletes).count()

    return {
        "plain ORC": lambda: _column(plain),
        "insert scan": lambda: _column(
            _load_events(spark, catalog.fileio, snapshot, files.inserts), "row.total_amt"
        ),
        "insert events": lambda: _column(
            read_events(spark, catalog.fileio, snapshot, files.inserts), "row.total_amt"
        ),
        "delete events": delete_count,
        "latest view": lambda: _column(engine.table.read()),
    }


def run_size(spark: SparkSession, rows: int, work: Path, repeat: int) -> dict[str, Any]:
    from versioned.options import CompactionOptions

    engine = build(spark, rows, work)
    files = engine.event_files()
    result: dict[str, Any] = {"10 deltas": measure(steps(spark, engine, work), repeat)}
    result["files"] = {"10 deltas": files}
    _log("major compaction")
    engine.table.compact(options=CompactionOptions(kind="major"))
    result["major compaction"] = measure(steps(spark, engine, work), repeat)
    result["files"]["major compaction"] = engine.event_files()
    engine.close()
    return result


def render(doc: dict[str, Any], out: Path) -> None:
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
            lines += [
                "",
                f"## N = {int(rows):,}, after {state}",
                "",
                f"Bucket files: {result['files'][state]}.",
                "",
                "| step | wall s | CPU s | / plain ORC |",
                "|---|---:|---:|---:|",
            ]
            for name in STEPS:
                e = timings[name]
                lines.append(
                    f"| {name} | {e['seconds']:.2f} | {e['cpu_s']:.2f} | "
                    f"{e['seconds'] / plain:.2f}x |"
                )
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    out.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="table size (repeatable)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--work", default="/tmp/versioned-acid-read-profile")
    parser.add_argument("--out", default="benchmarks/results/acid_read_profile")
    args = parser.parse_args()
    from versioned.engine.spark.session import get_or_create_spark

    spark = get_or_create_spark(
        "local[2]", app_name="acid-read-profile", conf={"spark.driver.memory": "8g"}
    )
    doc: dict[str, Any] = {"machine": machine(spark, "8g"), "repeat": args.repeat, "runs": {}}
    for rows in args.rows or [10_000_000]:
        doc["runs"][str(rows)] = result = run_size(
            spark, rows, Path(args.work) / f"n{rows}", args.repeat
        )
        for state in ("10 deltas", "major compaction"):
            for name in STEPS:
                _log(f"N={rows:,} {state} {name}: {result[state][name]['seconds']:.2f}s")
    render(doc, Path(args.out))


if __name__ == "__main__":
    main()
