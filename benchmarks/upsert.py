"""Upsert benchmark: versioned vs a naive full rewrite, delta-rs MERGE and pyiceberg upsert.

Run: ``.venv/bin/python -m benchmarks.upsert --rows 1000000 --rows 10000000``
(``--out benchmarks/results`` by default; ``--report-only`` re-renders upsert.md and the plots
from upsert.json). Runs of other sizes already in upsert.json are kept.

Per size N: generate a sell-like table of N rows and 9 change batches of 1 % of N (80 %
updates, 15 % inserts, 5 % deletes; `benchmarks.upsert_data`), then

1. initial load of every engine (versioned, naive rewrite, delta-rs, pyiceberg; timed apart);
2. batches 1-3 go to every engine in turn (rotating order, so outside load hits them alike);
   all engines must then agree on count and sum(total_amt);
3. versioned alone applies batches 4-9; the full latest-view aggregate is timed after 1, 5 and
   10 versions against the same aggregate over a plain Parquet copy of the same live rows
   (``--repeat`` interleaved runs, median).

Every timing records wall time and CPU time of the process tree (`benchmarks.harness.meter`).
Upsert ratios compare the medians of batches 1-3. The JVM is warmed first. A smoke run
(``--batches`` below 9) compares fewer batches and reads after versions 1, 5, 10 and the last.
"""

from __future__ import annotations

import argparse
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.harness import (
    ResultsFile,
    checkpoints,
    contention,
    interleave,
    log,
    median,
    rotated,
    spark_session,
    warm_up,
)
from benchmarks.internals import file_scans
from benchmarks.upsert_data import generate
from benchmarks.upsert_engines import (
    DeltaEngine,
    IcebergEngine,
    NaiveEngine,
    VersionedEngine,
    full_aggregate,
    spark_summary,
)
from benchmarks.upsert_report import render

COMPARED_BATCHES = 3
WARM_UP_ROWS = 200_000
READ_CHECKPOINTS = (1, 5, 10)  # table versions (the initial load is version 1)
BATCHES = max(READ_CHECKPOINTS) - 1


def _listing_job_read(engine: VersionedEngine) -> Any:
    """`read()` with the reader's driver-side listing off (Spark's listing job, as before)."""
    saved = file_scans.DRIVER_LISTING_MAX_PATHS
    file_scans.DRIVER_LISTING_MAX_PATHS = 0
    try:
        return engine.live()
    finally:
        file_scans.DRIVER_LISTING_MAX_PATHS = saved


def _aggregate_of(frame: Callable[[], Any]) -> Callable[[], Any]:
    """The timed read: ``full_aggregate`` of the frame ``frame`` builds."""
    return lambda: full_aggregate(frame())


def _read_checkpoint(spark: Any, engine: VersionedEngine, plain_dir: Path, repeat: int) -> dict:
    """Full aggregate over ``read()`` vs a plain Parquet copy of the same rows, interleaved."""
    versions = engine.versions()
    log(f"  read after {versions} versions: writing the plain Parquet copy (not timed)")
    shutil.rmtree(plain_dir, ignore_errors=True)
    engine.live().repartition("store_id").write.partitionBy("store_id").parquet(str(plain_dir))
    frames = {
        "versioned": engine.live,
        "plain": lambda: spark.read.parquet(str(plain_dir)),
        "listing_job": lambda: _listing_job_read(engine),
    }
    done = interleave({name: _aggregate_of(frame) for name, frame in frames.items()}, repeat)
    runs, results = done.timings, done.answers
    shutil.rmtree(plain_dir, ignore_errors=True)
    out: dict[str, Any] = {"versions": versions, "rows": results["versioned"][0], "runs": runs}
    for name, entries in runs.items():
        out[f"{name}_s"] = median([e["seconds"] for e in entries])
        out[f"{name}_cpu_s"] = median([e["cpu_s"] for e in entries])
    out["ratio"] = out["versioned_s"] / out["plain_s"]
    out["cpu_ratio"] = out["versioned_cpu_s"] / out["plain_cpu_s"]
    out["listing_job_ratio"] = out["listing_job_s"] / out["plain_s"]
    out["same_result"] = results["versioned"] == results["plain"] == results["listing_job"]
    out["contention"] = contention([e for v in runs.values() for e in v])
    log(
        f"  versioned {out['versioned_s']:.2f}s, plain {out['plain_s']:.2f}s "
        f"(ratio {out['ratio']:.2f}, CPU ratio {out['cpu_ratio']:.2f}); with Spark's listing "
        f"job {out['listing_job_s']:.2f}s; others used {out['contention']:.0%} of the cores"
    )
    return out


def _engines(spark: Any, work: Path, rows: int, iceberg_max: int) -> dict[str, Any]:
    makers = {
        "naive": lambda: NaiveEngine(spark, work),
        "delta": lambda: DeltaEngine(work),
        "iceberg": lambda: IcebergEngine(work),
    }
    if rows > iceberg_max:
        del makers["iceberg"]
    return {key: make() for key, make in makers.items()}


def run_size(
    spark: Any, rows: int, work: Path, repeat: int, iceberg_max: int, batches: int = BATCHES
) -> dict:
    """The whole benchmark for one table size; returns the JSON-ready results.

    All engines load first; batches 1-3 then go to every engine in turn (the order rotates
    per batch), so that load from other processes hits them alike.
    """
    work.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"rows": rows, "batch_rows": rows // 100}
    log(f"N={rows:,}: generating data")
    start = time.perf_counter()
    data = generate(spark, rows, work / "data", batches=batches)
    compared = min(COMPARED_BATCHES, batches)
    reads_after = checkpoints(READ_CHECKPOINTS, batches + 1)
    result["generate_s"] = time.perf_counter() - start

    log("versioned: initial load")
    ver = VersionedEngine(spark, work, label=f"n{rows}")
    result["versioned_load"] = ver.load(data)
    log(f"  load {result['versioned_load']['seconds']:.1f}s")
    others = _engines(spark, work, rows, iceberg_max)
    if "iceberg" not in others:
        result["iceberg"] = {"skipped": f"not run above {iceberg_max:,} rows (see notes)"}
    for key, engine in others.items():
        log(f"{key}: initial load")
        result[key] = {"load": engine.load(data), "batches": []}
        log(f"  load {result[key]['load']['seconds']:.1f}s")
    reads = [_read_checkpoint(spark, ver, work / "plain", repeat)]
    order = ["versioned", *others]
    ver_batches: list[dict[str, Any]] = []
    checks: dict[str, Any] = {}
    for k, batch in enumerate(data.batches, start=1):
        for key in rotated(order, k - 1) if k <= compared else ["versioned"]:
            if key == "versioned":
                res = ver.apply(batch)
                ver_batches.append(res)
            elif key in others:
                res = others[key].apply(batch)
                result[key]["batches"].append(res)
                if res["seconds"] > 600:
                    log(f"  {key}: a batch took > 10 min; not running the others")
                    del others[key]
            log(f"  {key} batch {k}: {res['seconds']:.2f}s (CPU {res['cpu_s']:.1f}s)")
        if k == compared:
            checks["versioned"] = spark_summary(ver.live())
            for key, engine in others.items():
                checks[key] = engine.summary()
                shutil.rmtree(work / key, ignore_errors=True)
            others.clear()
        if k + 1 in reads_after:
            reads.append(_read_checkpoint(spark, ver, work / "plain", repeat))
    result["versioned_batches"] = ver_batches
    result["reads"] = reads
    result["checks"] = {k: list(v) for k, v in checks.items()}
    result["checks_agree"] = len({tuple(v) for v in checks.values()}) == 1
    log(f"checks after batch {compared}: {checks} agree={result['checks_agree']}")
    result["summary"] = summarise(result)
    return result


def summarise(result: dict) -> dict:
    """Medians of batches 1-3 (wall and CPU) and the ratios the targets are about."""
    ver = result["versioned_batches"][:COMPARED_BATCHES]
    out: dict[str, Any] = {
        "versioned_s": median([b["seconds"] for b in ver]),
        "versioned_cpu_s": median([b["cpu_s"] for b in ver]),
        "versioned_contention": contention(ver),
    }
    for key in ("naive", "delta", "iceberg"):
        batches = result.get(key, {}).get("batches", [])
        if batches:
            out[f"{key}_s"] = median([b["seconds"] for b in batches])
            out[f"{key}_cpu_s"] = median([b["cpu_s"] for b in batches])
            out[f"{key}_over_versioned"] = out[f"{key}_s"] / out["versioned_s"]
            out[f"{key}_cpu_over_versioned"] = out[f"{key}_cpu_s"] / out["versioned_cpu_s"]
            out[f"{key}_contention"] = contention(batches)
    out["versioned_all_s"] = median([b["seconds"] for b in result["versioned_batches"]])
    return out


def _warm_up(spark: Any, work: Path, rows: int) -> None:
    """Every engine's Spark paths on ``rows`` rows (`benchmarks.harness.warm_up`)."""
    data = generate(spark, rows, work / "data", batches=3)
    ver = VersionedEngine(spark, work, label="warmup")
    ver.load(data)
    naive = NaiveEngine(spark, work)
    naive.load(data)
    for batch in data.batches:
        ver.apply(batch)
        naive.apply(batch)
        full_aggregate(ver.live())
        full_aggregate(naive.live())


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="table size N (repeatable)")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--work", default="/tmp/versioned-bench", help="scratch directory")
    parser.add_argument("--repeat", type=int, default=3, help="timings per read (median)")
    parser.add_argument(
        "--batches",
        type=int,
        choices=range(1, BATCHES + 1),
        default=BATCHES,
        metavar=f"1..{BATCHES}",
        help="change batches (reads after versions 1, 5, 10 and the last)",
    )
    parser.add_argument("--iceberg-max-rows", type=int, default=10_000_000)
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--warm-up-rows", type=int, default=WARM_UP_ROWS, help="0: none")
    parser.add_argument("--report-only", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark for every ``--rows`` (or re-render) and write the results."""
    args = parser().parse_args(argv)
    out = Path(args.out)
    results = ResultsFile(out, "upsert")
    if args.report_only:
        render(results.previous, out)
        return
    spark = spark_session("upsert-bench", {"spark.driver.memory": args.driver_memory})
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    started = time.perf_counter()
    warm = work / "warmup"
    warm_up(args.warm_up_rows, warm, lambda: _warm_up(spark, warm, args.warm_up_rows))
    for rows in sorted(args.rows or [1_000_000]):
        size_start = time.perf_counter()
        run = run_size(
            spark, rows, work / f"n{rows}", args.repeat, args.iceberg_max_rows, args.batches
        )
        run["wall_s"] = time.perf_counter() - size_start
        shutil.rmtree(work / f"n{rows}", ignore_errors=True)
        render(results.add(run, spark), out)
        if not run["checks_agree"]:  # recorded above; a run that disagrees fails, too
            raise AssertionError(f"N={rows:,}: the engines disagree: {run['checks']}")
    log(f"done in {time.perf_counter() - started:.0f}s; results in {out}")


if __name__ == "__main__":
    main()
