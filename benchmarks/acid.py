"""Acid benchmark: the acid layout next to versioned, delta-rs MERGE and a naive Spark rewrite.

Run: ``.venv/bin/python -m benchmarks.acid --rows 1000000 --rows 10000000`` (``make
bench-acid``; ``--out benchmarks/results`` by default; ``--report-only`` re-renders acid.md
and acid_read_ratio.png from acid.json). Runs of other sizes already in acid.json are kept.

Per size N, with the data of `benchmarks.upsert_data` (N rows partitioned by ``store_id``, 10
change batches of 1 % of N: 80 % updates, 15 % inserts, 5 % deletes):

1. **Upserts.** Initial load of every engine: an acid table bucketed by the key
   (``--buckets``, 8), a versioned table, delta-rs and the naive full rewrite (and with
   ``--unbucketed`` an unbucketed acid table). Batches 1-3 (``--shared-batches``) go to every
   engine in turn, the order rotating per batch so that outside load hits them alike; all
   engines must then agree on count and sum(total_amt), or the benchmark fails. The acid and
   versioned tables alone take batches 4-10.
2. **Reads** after 1, 5 and 10 change batches (deltas on top of the initial load, which is
   itself ``delta_1_1``): full / one-column / key-range aggregates over ``read()`` of both
   tables and over plain ORC and Parquet copies of the same live rows (`benchmarks.acid_reads`).
3. **Major compaction** of the acid table after 10 deltas (``Table.compact`` with
   ``CompactionOptions(kind="major")``, as ``versioned compact --kind major``) against a plain
   Spark rewrite of the same live rows (read the latest view, write ORC), ``--repeat`` times
   (the table is restored before each round), then the reads again.

Every timing records wall and CPU time of the process tree (`benchmarks.harness.meter`);
reports give medians. The JVM is warmed first.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path
from typing import Any

from benchmarks.acid_engines import AcidEngine, plain_rewrite
from benchmarks.acid_footer import footer_cost
from benchmarks.acid_reads import checkpoint, same_answer
from benchmarks.acid_report import render
from benchmarks.harness import (
    ResultsFile,
    checkpoints,
    command_line,
    contention,
    log,
    median,
    rotated,
    spark_session,
    warm_up,
)
from benchmarks.upsert_data import MAX_BATCHES, generate
from benchmarks.upsert_engines import DeltaEngine, NaiveEngine, VersionedEngine, spark_summary

READ_CHECKPOINTS = (1, 5, 10)  # change batches applied on top of the initial load
TABLES = ("acid", "versioned")  # take every batch; the others only the shared ones
WARM_UP_ROWS = 200_000


def _engines(spark: Any, work: Path, rows: int, args: argparse.Namespace) -> dict[str, Any]:
    engines: dict[str, Any] = {
        "acid": AcidEngine(spark, work, f"n{rows}", args.buckets),
        "versioned": VersionedEngine(spark, work, label=f"n{rows}"),
        "delta": DeltaEngine(work),
        "naive": NaiveEngine(spark, work),
    }
    if args.unbucketed:
        engines["acid_unbucketed"] = AcidEngine(spark, work, f"n{rows}_unbucketed", None)
    return engines


def _check_agree(checks: dict[str, tuple[int, float]]) -> None:
    reference = next(iter(checks.values()))
    if not all(same_answer(reference, c) for c in checks.values()):
        raise AssertionError(f"engines disagree on (live rows, sum(total_amt)): {checks}")


def _drop_others(engines: dict[str, Any], work: Path) -> None:
    """Free the disk of the engines that only take the shared batches."""
    for key in [k for k in engines if k not in TABLES]:
        engine = engines.pop(key)
        if isinstance(engine, AcidEngine):
            engine.close()
            shutil.rmtree(engine.state, ignore_errors=True)
        else:
            shutil.rmtree(work / key, ignore_errors=True)


def run_size(spark: Any, rows: int, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The whole benchmark for one table size; returns the JSON-ready results."""
    work.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"rows": rows, "batch_rows": rows // 100, "buckets": args.buckets}
    log(f"N={rows:,}: generating data")
    start = time.perf_counter()
    data = generate(spark, rows, work / "data", batches=args.batches)
    reads_after = checkpoints(READ_CHECKPOINTS, args.batches)
    result["generate_s"] = time.perf_counter() - start
    engines = _engines(spark, work, rows, args)
    acid, ver = engines["acid"], engines["versioned"]
    result["loads"] = {}
    for key, engine in engines.items():
        log(f"{key}: initial load")
        with footer_cost() as footer:
            result["loads"][key] = engine.load(data)
        result["loads"][key]["footer"] = footer
        seconds = result["loads"][key]["seconds"]
        log(f"  {seconds:.1f}s (hive.acid metadata {footer['seconds']:.1f}s)")
    batches: dict[str, list[dict[str, Any]]] = {key: [] for key in engines}
    reads: list[dict[str, Any]] = []
    for k, batch in enumerate(data.batches, start=1):
        for key in rotated(list(engines), k - 1):
            res = engines[key].apply(batch)
            batches[key].append(res)
            log(f"  {key} batch {k}: {res['seconds']:.2f}s (CPU {res['cpu_s']:.1f}s)")
        if k == args.shared_batches:
            checks = {key: engine.summary() for key, engine in engines.items()}
            log(f"checks after batch {k}: {checks}")
            _check_agree(checks)
            result["checks"] = {key: list(c) for key, c in checks.items()}
            _drop_others(engines, work)
        if k in reads_after:
            log(f"reads after {k} deltas")
            files = acid.event_files()
            tables = {"acid": acid.live, "versioned": ver.live}
            point = checkpoint(
                spark, tables, work / "plain", rows=rows, repeat=args.repeat, log=log
            )
            reads.append({"deltas": k, "event_files": files, **point})
    result["batches"] = batches
    result["reads"] = reads
    log("major compaction vs a plain rewrite")
    result["compaction"] = _compaction(spark, acid, work, rows, args.repeat)
    acid.close()
    ver.catalog.close()
    result["summary"] = summarise(result, args.shared_batches)
    return result


def _compaction(spark: Any, acid: AcidEngine, work: Path, rows: int, repeat: int) -> dict[str, Any]:
    """Major compaction against a plain rewrite of the same live rows, then the reads."""
    saved, rewritten = work / "acid_saved", work / "rewrite"
    acid.save(saved)
    before = acid.event_files()
    live = acid.summary()
    rewrites: list[dict[str, Any]] = []
    compactions: list[dict[str, Any]] = []
    for r in range(repeat):
        if r:
            acid.restore(saved)
        rewrites.append(plain_rewrite(acid.live(), rewritten))
        with footer_cost() as footer:
            compactions.append(acid.compact_major())
        compactions[-1]["footer"] = footer
        log(
            f"  round {r + 1}: plain rewrite {rewrites[-1]['seconds']:.2f}s, "
            f"major compaction {compactions[-1]['seconds']:.2f}s"
        )
    checks = {"compacted": acid.summary(), "rewrite": spark_summary(spark.read.orc(str(rewritten)))}
    if not all(same_answer(live, c) for c in checks.values()):
        raise AssertionError(f"compaction changed the live rows: {live} before, {checks}")
    shutil.rmtree(saved, ignore_errors=True)
    shutil.rmtree(rewritten, ignore_errors=True)
    log("reads after major compaction")
    files = acid.event_files()
    point = checkpoint(
        spark, {"acid": acid.live}, work / "plain", rows=rows, repeat=repeat, log=log
    )
    return {
        "event_files_before": before,
        "event_files_after": files,
        "compaction": compactions,
        "rewrite": rewrites,
        "reads_after": point,
    }


def summarise(result: dict[str, Any], shared: int) -> dict[str, Any]:
    """Medians of the shared batches (wall and CPU) and the ratios of acid to each engine."""
    out: dict[str, Any] = {"shared_batches": shared}
    for key, batches in result["batches"].items():
        some = batches[:shared]
        out[f"{key}_s"] = median([b["seconds"] for b in some])
        out[f"{key}_cpu_s"] = median([b["cpu_s"] for b in some])
        out[f"{key}_contention"] = contention(some)
    for key in result["batches"]:
        if key != "acid":
            out[f"acid_over_{key}"] = out["acid_s"] / out[f"{key}_s"]
            out[f"acid_cpu_over_{key}"] = out["acid_cpu_s"] / out[f"{key}_cpu_s"]
    for key in TABLES:
        out[f"{key}_all_s"] = median([b["seconds"] for b in result["batches"][key]])
        out[f"{key}_all_cpu_s"] = median([b["cpu_s"] for b in result["batches"][key]])
    out["acid_over_versioned_all"] = out["acid_all_s"] / out["versioned_all_s"]
    comp = result["compaction"]
    for name in ("compaction", "rewrite"):
        out[f"{name}_s"] = median([e["seconds"] for e in comp[name]])
        out[f"{name}_cpu_s"] = median([e["cpu_s"] for e in comp[name]])
    out["compaction_ratio"] = out["compaction_s"] / out["rewrite_s"]
    out["compaction_cpu_ratio"] = out["compaction_cpu_s"] / out["rewrite_cpu_s"]
    out["compaction_contention"] = contention(comp["compaction"] + comp["rewrite"])
    # Issue 28 item 2: the driver's hive.acid.* step on Spark-written files, as a share.
    footers = [e["footer"]["seconds"] / e["seconds"] for e in comp["compaction"] if "footer" in e]
    if footers:
        out["compaction_footer_share"] = median(footers)
    load = result["loads"].get("acid", {})
    if "footer" in load:
        out["load_footer_share"] = load["footer"]["seconds"] / load["seconds"]
    return out


def _warm_up(spark: Any, work: Path, rows: int, args: argparse.Namespace) -> None:
    """Every engine's Spark paths on ``rows`` rows (`benchmarks.harness.warm_up`)."""
    data = generate(spark, rows, work / "data", batches=3)
    acid = AcidEngine(spark, work, "warmup", args.buckets)
    ver = VersionedEngine(spark, work, label="warmup")
    naive = NaiveEngine(spark, work)
    engines = (acid, ver, naive)
    for engine in engines:
        engine.load(data)
    for batch in data.batches:
        for engine in engines:
            engine.apply(batch)
        checkpoint(
            spark,
            {"acid": acid.live, "versioned": ver.live},
            work / "plain",
            rows=rows,
            repeat=1,
            log=lambda _: None,
        )
    acid.compact_major()
    acid.close()
    ver.catalog.close()


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="table size N (repeatable)")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--work", default="/tmp/versioned-bench-acid", help="scratch directory")
    parser.add_argument("--repeat", type=int, default=3, help="timings per read and compaction")
    parser.add_argument("--buckets", type=int, default=8, help="buckets of the acid table")
    parser.add_argument("--unbucketed", action="store_true", help="add an unbucketed acid table")
    parser.add_argument("--shared-batches", type=int, default=3, help="batches every engine takes")
    parser.add_argument(
        "--batches",
        type=int,
        default=MAX_BATCHES,
        help="change batches (reads after 1, 5, 10 and the last)",
    )
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--warm-up-rows", type=int, default=WARM_UP_ROWS, help="0: none")
    parser.add_argument("--report-only", action="store_true")
    return parser


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    args = parser().parse_args(argv)
    if not 1 <= args.shared_batches <= args.batches <= MAX_BATCHES:
        parser().error(f"1 <= --shared-batches <= --batches <= {MAX_BATCHES}")
    if args.repeat < 1 or args.buckets < 1:
        parser().error("--repeat and --buckets must be >= 1")
    return args


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark for every ``--rows`` (or re-render) and write the results."""
    args = _arguments(argv)
    out = Path(args.out)
    results = ResultsFile(out, "acid")
    if args.report_only:
        render(results.previous, out)
        return
    spark = spark_session("acid-bench", {"spark.driver.memory": args.driver_memory})
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    started = time.perf_counter()
    warm = work / "warmup"
    warm_up(args.warm_up_rows, warm, lambda: _warm_up(spark, warm, args.warm_up_rows, args))
    command = command_line("benchmarks.acid", argv)
    for rows in sorted(args.rows or [100_000]):
        size_start = time.perf_counter()
        run = run_size(spark, rows, work / f"n{rows}", args)
        run["wall_s"] = time.perf_counter() - size_start
        run["command"] = command
        shutil.rmtree(work / f"n{rows}", ignore_errors=True)
        render(results.add(run, spark), out)
    log(f"done in {time.perf_counter() - started:.0f}s; results in {out}")


if __name__ == "__main__":
    main()
