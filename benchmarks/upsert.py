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

Every timing records wall time and CPU time of the process tree (`benchmarks.upsert_timing`).
Upsert ratios compare the medians of batches 1-3. The JVM is warmed first.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.upsert_data import generate
from benchmarks.upsert_engines import (
    DeltaEngine,
    IcebergEngine,
    NaiveEngine,
    VersionedEngine,
    full_aggregate,
    spark_summary,
)
from benchmarks.upsert_report import machine, render
from benchmarks.upsert_timing import Meter, contention
from versioned.engine import version_reader

COMPARED_BATCHES = 3
WARM_UP_ROWS = 200_000
READ_CHECKPOINTS = (1, 5, 10)  # table versions (the initial load is version 1)


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _timed_read(frame_fn: Any) -> tuple[dict[str, Any], Any]:
    with Meter() as meter:
        result = full_aggregate(frame_fn())
    return meter.result(), result


def _listing_job_read(engine: VersionedEngine) -> Any:
    """`read()` with the reader's driver-side listing off (Spark's listing job, as before)."""
    saved = getattr(version_reader, "DRIVER_LISTING_MAX_PATHS", None)
    if saved is not None:
        version_reader.DRIVER_LISTING_MAX_PATHS = 0
    try:
        return engine.live()
    finally:
        if saved is not None:
            version_reader.DRIVER_LISTING_MAX_PATHS = saved


def _read_checkpoint(spark: Any, engine: VersionedEngine, plain_dir: Path, repeat: int) -> dict:
    """Full aggregate over ``read()`` vs a plain Parquet copy of the same rows, interleaved."""
    versions = engine.versions()
    _log(f"  read after {versions} versions: writing the plain Parquet copy (not timed)")
    shutil.rmtree(plain_dir, ignore_errors=True)
    engine.live().repartition("store_id").write.partitionBy("store_id").parquet(str(plain_dir))
    runs: dict[str, list[dict[str, Any]]] = {"versioned": [], "plain": [], "listing_job": []}
    results = {}
    variants = {
        "versioned": engine.live,
        "plain": lambda: spark.read.parquet(str(plain_dir)),
        "listing_job": lambda: _listing_job_read(engine),
    }
    for _ in range(repeat):
        for name, frame_fn in variants.items():
            timing, results[name] = _timed_read(frame_fn)
            runs[name].append(timing)
    shutil.rmtree(plain_dir, ignore_errors=True)
    out: dict[str, Any] = {"versions": versions, "rows": results["versioned"][0], "runs": runs}
    for name, entries in runs.items():
        out[f"{name}_s"] = _median([e["seconds"] for e in entries])
        out[f"{name}_cpu_s"] = _median([e["cpu_s"] for e in entries])
    out["ratio"] = out["versioned_s"] / out["plain_s"]
    out["cpu_ratio"] = out["versioned_cpu_s"] / out["plain_cpu_s"]
    out["listing_job_ratio"] = out["listing_job_s"] / out["plain_s"]
    out["same_result"] = results["versioned"] == results["plain"] == results["listing_job"]
    out["contention"] = contention([e for v in runs.values() for e in v])
    _log(
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


def run_size(spark: Any, rows: int, work: Path, repeat: int, iceberg_max: int) -> dict:
    """The whole benchmark for one table size; returns the JSON-ready results.

    All engines load first; batches 1-3 then go to every engine in turn (the order rotates
    per batch), so that load from other processes hits them alike.
    """
    work.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"rows": rows, "batch_rows": rows // 100}
    _log(f"N={rows:,}: generating data")
    start = time.perf_counter()
    data = generate(spark, rows, work / "data", batches=max(READ_CHECKPOINTS) - 1)
    result["generate_s"] = time.perf_counter() - start

    _log("versioned: initial load")
    ver = VersionedEngine(spark, work, label=f"n{rows}")
    result["versioned_load"] = ver.load(data)
    _log(f"  load {result['versioned_load']['seconds']:.1f}s")
    others = _engines(spark, work, rows, iceberg_max)
    if "iceberg" not in others:
        result["iceberg"] = {"skipped": f"not run above {iceberg_max:,} rows (see notes)"}
    for key, engine in others.items():
        _log(f"{key}: initial load")
        result[key] = {"load": engine.load(data), "batches": []}
        _log(f"  load {result[key]['load']['seconds']:.1f}s")
    reads = [_read_checkpoint(spark, ver, work / "plain", repeat)]
    order = ["versioned", *others]
    ver_batches: list[dict[str, Any]] = []
    checks: dict[str, Any] = {}
    for k, batch in enumerate(data.batches, start=1):
        turn = order[(k - 1) % len(order) :] + order[: (k - 1) % len(order)]
        for key in turn if k <= COMPARED_BATCHES else ["versioned"]:
            if key == "versioned":
                res = ver.apply(batch)
                ver_batches.append(res)
            elif key in others:
                res = others[key].apply(batch)
                result[key]["batches"].append(res)
                if res["seconds"] > 600:
                    _log(f"  {key}: a batch took > 10 min; not running the others")
                    del others[key]
            _log(f"  {key} batch {k}: {res['seconds']:.2f}s (CPU {res['cpu_s']:.1f}s)")
        if k == COMPARED_BATCHES:
            checks["versioned"] = spark_summary(ver.live())
            for key, engine in others.items():
                checks[key] = engine.summary()
                shutil.rmtree(work / key, ignore_errors=True)
            others.clear()
        if k + 1 in READ_CHECKPOINTS:
            reads.append(_read_checkpoint(spark, ver, work / "plain", repeat))
    result["versioned_batches"] = ver_batches
    result["reads"] = reads
    result["checks"] = {k: list(v) for k, v in checks.items()}
    result["checks_agree"] = len({tuple(v) for v in checks.values()}) == 1
    _log(f"checks after batch {COMPARED_BATCHES}: {checks} agree={result['checks_agree']}")
    result["summary"] = summarise(result)
    return result


def summarise(result: dict) -> dict:
    """Medians of batches 1-3 (wall and CPU) and the ratios the targets are about."""
    ver = result["versioned_batches"][:COMPARED_BATCHES]
    out: dict[str, Any] = {
        "versioned_s": _median([b["seconds"] for b in ver]),
        "versioned_cpu_s": _median([b["cpu_s"] for b in ver]),
        "versioned_contention": contention(ver),
    }
    for key in ("naive", "delta", "iceberg"):
        batches = result.get(key, {}).get("batches", [])
        if batches:
            out[f"{key}_s"] = _median([b["seconds"] for b in batches])
            out[f"{key}_cpu_s"] = _median([b["cpu_s"] for b in batches])
            out[f"{key}_over_versioned"] = out[f"{key}_s"] / out["versioned_s"]
            out[f"{key}_cpu_over_versioned"] = out[f"{key}_cpu_s"] / out["versioned_cpu_s"]
            out[f"{key}_contention"] = contention(batches)
    out["versioned_all_s"] = _median([b["seconds"] for b in result["versioned_batches"]])
    return out


def warm_up(spark: Any, work: Path, rows: int) -> None:
    """A small run of the Spark paths so the timed runs do not pay JIT and class loading."""
    _log(f"warming up the JVM ({rows:,} rows, not recorded)")
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
    shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="table size N (repeatable)")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--work", default="/tmp/versioned-bench", help="scratch directory")
    parser.add_argument("--repeat", type=int, default=3, help="timings per read (median)")
    parser.add_argument("--iceberg-max-rows", type=int, default=10_000_000)
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--warm-up-rows", type=int, default=WARM_UP_ROWS)
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "upsert.json"
    previous = json.loads(json_path.read_text()) if json_path.exists() else {"runs": []}
    if args.report_only:
        render(previous, out)
        return

    from versioned.engine.spark.session import get_or_create_spark

    spark = get_or_create_spark(
        "local[2]", app_name="upsert-bench", conf={"spark.driver.memory": args.driver_memory}
    )
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    started = time.perf_counter()
    warm_up(spark, work / "warmup", args.warm_up_rows)
    runs = {r["rows"]: r for r in previous.get("runs", [])}
    for rows in sorted(args.rows or [1_000_000]):
        size_start = time.perf_counter()
        runs[rows] = run_size(spark, rows, work / f"n{rows}", args.repeat, args.iceberg_max_rows)
        runs[rows]["wall_s"] = time.perf_counter() - size_start
        shutil.rmtree(work / f"n{rows}", ignore_errors=True)
        doc = {
            "machine": machine(spark, args.driver_memory),
            "runs": [runs[k] for k in sorted(runs)],
        }
        json_path.write_text(json.dumps(doc, indent=1, default=str) + "\n")
        render(doc, out)
    _log(f"done in {time.perf_counter() - started:.0f}s; results in {out}")


if __name__ == "__main__":
    main()
