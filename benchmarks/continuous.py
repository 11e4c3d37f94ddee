"""Issue 30's benchmark: a table that keeps receiving change batches, read after every one.

Run: ``.venv/bin/python -m benchmarks.continuous --rows 10000000`` (``make bench-continuous``;
writes ``benchmarks/results/continuous.{json,md,png}``; ``--report-only`` re-renders; runs of
other sizes already in the JSON are kept). ``--tpch`` adds the TPC-H variant
(`benchmarks.continuous_tpch`, ``lineitem`` at ``--tpch-scale``).

The goal of the issue: a table that keeps receiving change batches reads within 1.3x a plain
scan at every moment, and its writes plus whatever maintenance it runs on its own cost no
more than delta-rs MERGE of the same batches. Per workload (`benchmarks.continuous_data`: N
rows, 6 columns, 20 partitions, ``--batches`` batches of 1 % of N; or TPC-H), in the caller's
session (a session at Spark's defaults: see `caller_session`), with a SQLite catalog in the
scratch folder:

1. **Load**: the base table's one Parquet file into every table (``Table.upsert``) and into
   delta-rs (``write_deltalake``), each timed once (not part of the cost comparison).
2. **Batches**: every batch goes to every writer, in an order that rotates per batch: the
   version layout's table and the acid layout's (``--buckets``), both with their own
   maintenance on (the default), and with ``--maintenance-reference`` the same two tables
   with it off (``auto_compact=false``), as a reference line; and delta-rs MERGE of the batch
   read into an Arrow table beforehand. Timed: each upsert (wall, any maintenance it ran
   inline included) and each MERGE. No upsert warms up the measured tables: batch 1 is the
   session's first upsert of them (``--warm-up-rows`` runs the whole benchmark once, untimed,
   on a small table of its own first).
3. **Reads** after every batch: each query of the workload (``narrow`` and ``full``; TPC-H
   Q1 and Q6) through ``Catalog.sql`` on each table against the same query on a plain copy
   of the same live rows (Parquet for the version layout, ORC for acid), ``--repeat`` times
   alternately (`benchmarks.continuous_reads`); every answer must agree.
"""

from __future__ import annotations

import argparse
import shutil
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from benchmarks import continuous_data, continuous_tpch
from benchmarks.continuous_data import Workload
from benchmarks.continuous_engines import DeltaMerge, Writer, bench_catalog, create_subject
from benchmarks.continuous_reads import compare, delta_rs_live, write_plain_copies
from benchmarks.continuous_report import maintenance_text, render
from benchmarks.harness import (
    ResultsFile,
    command_line,
    log,
    rerender,
    rotated,
    spark_session,
    warm_up,
)

NAME = "continuous"
DRIVER_MEMORY = "6g"
SPARK_SETTINGS = (
    "spark.sql.shuffle.partitions",
    "spark.sql.adaptive.enabled",
    "spark.sql.session.timeZone",
    "spark.sql.sources.partitionOverwriteMode",
)
"""Settings a session versioned builds changes at run time: the caller's session has
Spark's defaults instead (those fixed when the JVM starts stay as they are)."""
WARM_UP_ROWS = 50_000


def caller_session(driver_memory: str) -> SparkSession:
    """The caller's session: ``local[2]`` with ``driver_memory`` (`spark_session`), as a new
    session set back to Spark's defaults for `SPARK_SETTINGS`."""
    own = spark_session("continuous-bench", {"spark.driver.memory": driver_memory})
    caller = own.newSession()
    for key in SPARK_SETTINGS:
        caller.conf.unset(key)
    return caller


def settings(caller: SparkSession) -> dict[str, Any]:
    """The caller's settings the reads depend on, and the ones ``Catalog.sql`` runs with (a
    new session of the same SparkContext: the settings the JVM started with)."""
    context = caller.sparkContext.getConf()
    return {
        "caller": {key: caller.conf.get(key) for key in SPARK_SETTINGS[:3]},
        "catalog_sql": {key: context.get(key, None) for key in ("spark.sql.shuffle.partitions",)},
        "driver_memory": context.get("spark.driver.memory", None),
        "master": caller.sparkContext.master,
    }


def _tables(args: argparse.Namespace) -> list[tuple[str, bool]]:
    """(layout, own maintenance) of every versioned table of a run."""
    layouts = args.layout or ["versioned", "acid"]
    tables = [(layout, True) for layout in layouts]
    if args.maintenance_reference:
        tables += [(layout, False) for layout in layouts]
    return tables


def apply_batch(
    caller: SparkSession, writers: Sequence[Writer], delta: DeltaMerge | None, path: str, k: int
) -> dict[str, Any]:
    """Batch ``k`` to every writer (and delta-rs, unless None), in an order rotating with
    ``k``."""
    batch = pq.read_table(path)  # delta-rs merges an Arrow table in memory: read untimed
    names = [*(["delta"] if delta is not None else []), *(w.label for w in writers)]
    by_label = {w.label: w for w in writers}
    step: dict[str, Any] = {"batch": k, "rows": batch.num_rows, "upserts": {}}
    for name in rotated(names, k - 1):
        if name == "delta" and delta is not None:
            step["merge"] = delta.apply(batch)
        else:
            step["upserts"][name] = by_label[name].apply(caller, path)
    return step


def run_workload(
    caller: SparkSession,
    workload: Workload,
    work: Path,
    args: argparse.Namespace,
    *,
    peers: Sequence[Writer] = (),
    delta_rs: bool = True,
) -> dict[str, Any]:
    """Load, then every batch to every writer and the reads after each; the run's record.

    The writers are the versioned tables ``args`` asks for, then ``peers`` (other formats'
    tables in the same session: `benchmarks.peers`), and delta-rs MERGE unless ``delta_rs``
    is false. The plain copies the reads compare with are written from delta-rs's live rows,
    else from the first peer's: never from a versioned table's own.
    """
    if not delta_rs and not peers:
        raise ValueError("the plain copies need delta-rs or a peer: a writer not versioned")
    catalog = bench_catalog(caller, work)
    subjects = [
        create_subject(
            catalog,
            workload,
            layout=layout,
            auto_compact=auto,
            buckets=args.buckets,
            properties=dict(p.split("=", 1) for p in args.property),
        )
        for layout, auto in _tables(args)
    ]
    writers: list[Writer] = [*subjects, *peers]
    delta = DeltaMerge(work / "delta", workload) if delta_rs else None
    log(f"{workload.label}: loading {workload.rows:,} rows")
    loads = {"delta": delta.load()} if delta is not None else {}
    for writer in writers:
        loads[writer.label] = writer.load(caller, workload.base)
    steps = []
    formats = tuple(sorted({w.plain for w in writers}))
    for k, path in enumerate(workload.batches, start=1):
        step = apply_batch(caller, writers, delta, path, k)
        if delta is not None:
            live = delta_rs_live(caller, workload, delta.files(), delta.path)
        else:
            live = peers[0].live()
        plain = write_plain_copies(workload, live, work / "plain", formats)
        step["reads"] = {
            w.label: compare(
                w.sql, caller, workload, w.label, (w.plain, plain[w.plain]), args.repeat
            )
            for w in writers
        }
        steps.append(step)
        log(_line(step))
    catalog.close()
    return {
        "workload": workload.name,
        "label": workload.label,
        "rows": workload.rows,
        "batch_rows": [s["rows"] for s in steps],
        "live_rows": workload.live_rows,
        "columns": workload.columns,
        "queries": dict(workload.queries),
        "repeat": args.repeat,
        "tables": {w.label: w.describe() for w in writers},
        "load": loads,
        "steps": steps,
    }


def _line(step: dict[str, Any]) -> str:
    """One batch in the log."""
    merge = f"MERGE {step['merge']['seconds']:.2f}s" if "merge" in step else "no delta-rs"
    parts = [f"batch {step['batch']}: {merge}"]
    for label, upsert in step["upserts"].items():
        ratios = ", ".join(f"{q} {r['ratio']:.2f}x" for q, r in step["reads"][label].items())
        ran = maintenance_text(upsert)
        parts.append(f"{label} {upsert['seconds']:.2f}s ({ratios}; maintenance {ran})")
    return "; ".join(parts)


def workloads(args: argparse.Namespace) -> list[tuple[str, Callable[[Path], Workload]]]:
    """What the run measures: (its scratch folder's name, what writes its data there)."""
    todo: list[tuple[str, Callable[[Path], Workload]]] = []
    for rows in sorted(args.rows or ([] if args.tpch else [1_000_000])):
        synthetic = partial(
            continuous_data.generate, rows, batches=args.batches, partitions=args.partitions
        )
        todo.append((f"n{rows}", synthetic))
    if args.tpch:
        tpch = partial(continuous_tpch.generate, args.tpch_scale, batches=args.batches)
        todo.append((f"tpch{args.tpch_scale:g}", tpch))
    return todo


def _warm_up(caller: SparkSession, work: Path, args: argparse.Namespace) -> None:
    """The whole benchmark on ``--warm-up-rows`` rows and two batches, one repeat, untimed."""
    small = argparse.Namespace(**{**vars(args), "batches": 2, "repeat": 1})
    workload = continuous_data.generate(
        args.warm_up_rows, work / "data", 2, partitions=args.partitions
    )
    run_workload(caller, workload, work, small)


def _run_key(run: dict[str, Any]) -> tuple[Any, ...]:
    """Which earlier run of the JSON a new run replaces: same workload, size and properties."""
    layouts = tuple(run.get("layouts", ("versioned", "acid")))
    return (run["workload"], run["rows"], tuple(run.get("properties", ())), layouts)


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="table size N (repeatable)")
    parser.add_argument("--batches", type=int, default=30, help="change batches of 1 %% of N")
    parser.add_argument("--partitions", type=int, default=continuous_data.PARTITIONS)
    parser.add_argument("--tpch", action="store_true", help="also the TPC-H lineitem variant")
    parser.add_argument("--tpch-scale", type=float, default=1.0, help="its scale factor")
    parser.add_argument("--buckets", type=int, default=8, help="buckets of the acid tables")
    parser.add_argument(
        "--layout",
        action="append",
        choices=("versioned", "acid"),
        help="only tables of this layout (repeatable; default: both)",
    )
    parser.add_argument(
        "--maintenance-reference",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also both tables with their own maintenance off (auto_compact=false)",
    )
    parser.add_argument(
        "--property",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a property of the tables with maintenance on, e.g. auto_compact.min_versions=3",
    )
    parser.add_argument("--repeat", type=int, default=3, help="timings per query and side")
    parser.add_argument("--driver-memory", default=DRIVER_MEMORY)
    parser.add_argument("--warm-up-rows", type=int, default=WARM_UP_ROWS, help="0: none")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--work", default="/tmp/versioned-bench-continuous", help="scratch")
    parser.add_argument("--report-only", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run every workload asked for (or re-render) and write the results."""
    args = parser().parse_args(argv)
    if args.repeat < 1 or args.batches < 1 or args.buckets < 1:
        parser().error("--repeat, --batches and --buckets must be >= 1")
    out = Path(args.out)
    if args.report_only:
        rerender(out, NAME, render)
        return
    results = ResultsFile(out, NAME, key=_run_key)
    caller = caller_session(args.driver_memory)
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    warm = work / "warmup"
    warm_up(args.warm_up_rows, warm, lambda: _warm_up(caller, warm, args))
    command = command_line(f"benchmarks.{NAME}", argv)
    for folder, make in workloads(args):
        started = time.perf_counter()
        workload = make(work / folder / "data")
        log(f"{workload.label}: data in {time.perf_counter() - started:.1f}s")
        run = run_workload(caller, workload, work / folder, args)
        run.update(
            command=command,
            warm_up_rows=args.warm_up_rows,
            session=settings(caller),
            properties=args.property,
            layouts=args.layout or ["versioned", "acid"],
            wall_s=time.perf_counter() - started,
        )
        shutil.rmtree(work / folder, ignore_errors=True)
        render(results.add(run, caller), out)
    shutil.rmtree(work, ignore_errors=True)
    log(f"done; results in {out}")


if __name__ == "__main__":
    main()
