"""Issue 15's benchmark: versioned inside the caller's own Spark job, next to delta-rs MERGE.

Run: ``.venv/bin/python -m benchmarks.caller_session --rows 1000000 --rows 10000000``
(``make bench-caller``; writes ``benchmarks/results/caller_session.{json,md}``;
``--report-only`` re-renders). Runs of other sizes already in the JSON are kept.

Two sessions share one JVM: **own** is the session versioned builds itself
(`get_or_create_spark`), **caller** is ``own.newSession()`` set back to Spark's defaults for
what versioned's session changes (``spark.sql.shuffle.partitions=200``, AQE on) — what a user's
``SparkSession.builder.getOrCreate()`` job hands in. Per size N (`benchmarks.upsert_data`: N
rows, 9 columns, 20 ``store_id`` partitions, change batches of 1 % of N):

1. **Bulk load** in the caller's session: ``Table.upsert`` of the base rows into an empty
   table against a plain partitioned Spark Parquet write of the same rows (same session,
   interleaved, median of ``--repeat``); peak RSS of the process tree (Python driver + JVM)
   during the load.
2. **Upserts**: batches 1-6 go to versioned as (session, input) = (caller, DataFrame), (own,
   DataFrame), (caller, one Parquet file), (own, one Parquet file), (caller, CSV), (own, CSV)
   (the files written by pyarrow, as an upstream job would), and every batch to delta-rs MERGE
   of the same rows (`benchmarks.upsert_engines.DeltaEngine`); ratio = versioned / MERGE of the
   same batch. Both tables must then agree on count and sum(total_amt).
3. **Reads** after 1, 5 and 10 versions (batches 7-9 go to versioned alone), through
   ``Catalog.sql`` in the caller's session: ``narrow`` = ``GROUP BY store_id
   SUM(total_amt)``, ``full`` = count, sum and a hash of every column; against the same
   queries over a plain Parquet copy of the live rows (median of ``--repeat``, interleaved).
4. **Small operations on the big table**: an upsert of a 10-row batch and a ``Catalog.sql``
   count of the 10-version table, in the caller's session (median of ``--repeat``); the fixed
   cost on a 10-row table is `benchmarks.fixed_cost`'s.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

import pyarrow.csv as pcsv
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from benchmarks.acid_reads import same_answer
from benchmarks.harness import (
    Meter,
    PeakRss,
    ResultsFile,
    command_line,
    contention,
    interleave,
    log,
    median,
    spark_session,
    warm_up,
)
from benchmarks.upsert_data import COLUMNS, KEY, OP, PARTITION, generate
from benchmarks.upsert_engines import DeltaEngine, full_aggregate, spark_summary
from versioned import connect

SPARK_DEFAULTS = {"spark.sql.shuffle.partitions": "200", "spark.sql.adaptive.enabled": "true"}
UPSERTS = (
    ("caller", "DataFrame"),
    ("own", "DataFrame"),
    ("caller", "Parquet file"),
    ("own", "Parquet file"),
    ("caller", "CSV"),
    ("own", "CSV"),
)
READ_CHECKPOINTS = (1, 5, 10)
TABLE = "bench.sell"
WARM_UP_ROWS = 100_000


def inputs(batch: str, work: Path, k: int) -> dict[str, str]:
    """Batch ``k`` as one Parquet file and as one CSV file, written by pyarrow."""
    rows = pq.read_table(batch)
    single = work / f"batch_{k:02d}.parquet"
    csv = work / f"batch_{k:02d}.csv"
    pq.write_table(rows, single)
    pcsv.write_csv(rows, csv)
    return {"Parquet file": str(single), "CSV": str(csv)}


def sessions(app_name: str) -> tuple[SparkSession, SparkSession]:
    """versioned's own session and the caller's: a new session of it at Spark's defaults."""
    own = spark_session(app_name)
    caller = own.newSession()
    for key, value in SPARK_DEFAULTS.items():
        caller.conf.set(key, value)
    return own, caller


def _catalog(spark: SparkSession, warehouse: Path) -> Any:
    return connect(
        catalog=f"sqlite:///{warehouse}/catalog.db",
        warehouse=str(warehouse),
        spark=spark,
        user="bench",
    )


def bulk_load(caller: SparkSession, base: str, work: Path, repeat: int) -> dict[str, Any]:
    """Load the base rows into an empty table vs a plain partitioned Parquet write."""
    loads: list[dict[str, Any]] = []
    plain: list[dict[str, Any]] = []
    for r in range(repeat):
        warehouse = work / "warehouse"
        shutil.rmtree(warehouse, ignore_errors=True)
        warehouse.mkdir(parents=True)
        cat = _catalog(caller, warehouse)
        table = cat.create_table(TABLE, columns=COLUMNS, primary_key=KEY, partition_by=PARTITION)
        out = work / "plain_load"
        shutil.rmtree(out, ignore_errors=True)
        order = ("plain", "load") if r % 2 else ("load", "plain")
        for what in order:
            if what == "plain":
                with Meter() as meter:
                    caller.read.parquet(base).write.partitionBy(PARTITION).parquet(str(out))
                plain.append(meter.result())
            else:
                with PeakRss() as peak, Meter() as meter:
                    table.upsert(caller.read.parquet(base))
                loads.append({**meter.result(), "peak_rss": peak.bytes})
        log(f"  load {loads[-1]['seconds']:.1f}s, plain write {plain[-1]['seconds']:.1f}s")
        if r + 1 < repeat:
            cat.close()
    shutil.rmtree(work / "plain_load", ignore_errors=True)
    return {"load": loads, "plain": plain, "catalog": cat}


def upserts(
    own: SparkSession,
    caller: SparkSession,
    cat_caller: Any,
    cat_own: Any,
    data: Any,
    work: Path,
    after_4: Any,
) -> tuple[list[dict[str, Any]], DeltaEngine]:
    """Batches 1-6 to versioned as (session, input) and to delta-rs MERGE; ``after_4()`` runs
    after batch 4 (the table then has 5 versions)."""
    delta = DeltaEngine(work)
    delta.load(data)
    out = []
    for k, (session, kind) in enumerate(UPSERTS, start=1):
        batch = data.batches[k - 1]
        spark, cat = (caller, cat_caller) if session == "caller" else (own, cat_own)
        table = cat.table(TABLE)
        files = inputs(batch, work, k)
        source: Any = spark.read.parquet(batch) if kind == "DataFrame" else files[kind]
        order = ("delta", "versioned") if k % 2 else ("versioned", "delta")
        entry: dict[str, Any] = {"batch": k, "session": session, "input": kind}
        for engine in order:
            if engine == "delta":
                entry["delta"] = delta.apply(batch)
            else:
                with PeakRss() as peak, Meter() as meter:
                    table.upsert(source, op_code_column=OP)
                entry["versioned"] = {**meter.result(), "peak_rss": peak.bytes}
        entry["ratio"] = entry["versioned"]["seconds"] / entry["delta"]["seconds"]
        entry["cpu_ratio"] = entry["versioned"]["cpu_s"] / entry["delta"]["cpu_s"]
        log(
            f"  batch {k} ({session}, {kind}): versioned {entry['versioned']['seconds']:.2f}s, "
            f"MERGE {entry['delta']['seconds']:.2f}s -> {entry['ratio']:.2f}x"
        )
        out.append(entry)
        if k == 4:
            after_4()
    return out, delta


_NARROW = f"SELECT {PARTITION}, SUM(total_amt) AS s FROM {{t}} GROUP BY {PARTITION}"


def _narrow(frame_sql: Any) -> tuple[Any, ...]:
    rows = sorted(tuple(r) for r in frame_sql(_NARROW).collect())
    return (len(rows), round(sum(r[1] for r in rows), 2))


def reads(caller: SparkSession, cat: Any, work: Path, repeat: int) -> dict[str, Any]:
    """Narrow and full queries through ``Catalog.sql`` vs a plain Parquet copy."""
    plain = work / "plain_copy"
    shutil.rmtree(plain, ignore_errors=True)
    cat.table(TABLE).read().write.partitionBy(PARTITION).parquet(str(plain))
    caller.read.parquet(str(plain)).createOrReplaceTempView("plain_copy")

    def table_sql(text: str) -> Any:
        return cat.sql(text.replace("{t}", TABLE))

    def plain_sql(text: str) -> Any:
        return caller.sql(text.replace("{t}", "plain_copy"))

    queries = {
        "narrow": (lambda: _narrow(table_sql), lambda: _narrow(plain_sql)),
        "full": (
            lambda: full_aggregate(cat.sql(f"SELECT * FROM {TABLE}")),
            lambda: full_aggregate(caller.table("plain_copy")),
        ),
    }
    result: dict[str, Any] = {}
    for name, (ours, theirs) in queries.items():
        # The first round warms both (not timed); the order alternates from round to round.
        done = interleave(
            {"table": ours, "plain": theirs}, repeat, order="alternate", warm_up_rounds=1
        )
        times, answers = done.timings, done.answers
        if not same_answer(tuple(answers["table"]), tuple(answers["plain"])):
            raise AssertionError(f"{name}: table {answers['table']} != plain {answers['plain']}")
        t, p = (
            median([e["seconds"] for e in times["table"]]),
            median([e["seconds"] for e in times["plain"]]),
        )
        result[name] = {"table_s": t, "plain_s": p, "ratio": t / p, "times": times}
        log(f"  {name}: table {t:.2f}s, plain {p:.2f}s -> {t / p:.2f}x")
    shutil.rmtree(plain, ignore_errors=True)
    return result


def fixed_cost(caller: SparkSession, cat: Any, repeat: int) -> dict[str, Any]:
    """A 10-row upsert and a count query on the table, in the caller's session."""
    table = cat.table(TABLE)
    rows = table.read().limit(10).toArrow()
    upserts, queries = [], []
    for _ in range(repeat + 1):
        with Meter() as meter:
            table.upsert(rows)
        upserts.append(meter.result())
        with Meter() as meter:
            cat.sql(f"SELECT COUNT(*) FROM {TABLE}").collect()
        queries.append(meter.result())
    return {
        "upsert_10_rows_s": median([e["seconds"] for e in upserts[1:]]),
        "query_s": median([e["seconds"] for e in queries[1:]]),
    }


def run_size(own: SparkSession, caller: SparkSession, rows: int, work: Path, repeat: int) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    log(f"N={rows:,}: generating data")
    data = generate(own, rows, work / "data")
    log("bulk load (caller's session) vs a plain partitioned Parquet write")
    load = bulk_load(caller, data.base, work, repeat)
    cat_caller = load.pop("catalog")
    cat_own = _catalog(own, work / "warehouse")
    result: dict[str, Any] = {"rows": rows, "load": load}
    result["read_1"] = reads(caller, cat_caller, work, repeat)
    log("upserts: versioned (caller / own session; DataFrame / Parquet file / CSV) vs MERGE")

    def read_5() -> None:
        result["read_5"] = reads(caller, cat_caller, work, repeat)

    result["upserts"], delta = upserts(own, caller, cat_caller, cat_own, data, work, read_5)
    checks = {"versioned": spark_summary(cat_caller.table(TABLE).read()), "delta": delta.summary()}
    if not same_answer(checks["versioned"], checks["delta"]):
        raise AssertionError(f"versioned and delta-rs disagree: {checks}")
    result["checks"] = checks
    for batch in data.batches[len(UPSERTS) : len(UPSERTS) + 3]:
        cat_caller.table(TABLE).upsert(caller.read.parquet(batch), op_code_column=OP)
    result["versions"] = len(cat_caller.table(TABLE).history())
    result["read_10"] = reads(caller, cat_caller, work, repeat)
    result["fixed_cost"] = fixed_cost(caller, cat_caller, repeat)
    cat_caller.close()
    cat_own.close()
    return result


def render(doc: dict[str, Any], out: Path) -> None:
    """``caller_session.md`` from the JSON document."""
    m = doc["machine"]
    lines = [
        "# versioned in the caller's own Spark session (issue 15)",
        "",
        "```sh",
        "make bench-caller   # .venv/bin/python -m benchmarks.caller_session "
        "--rows 1000000 --rows 10000000",
        "```",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB; Spark "
        f"`{m['spark_master']}`, pyspark {m.get('pyspark')}, deltalake {m.get('deltalake')}.",
        "",
        "The module docstring of `benchmarks/caller_session.py` says what each row measures.",
        "Ratios are versioned / reference from the same run; **others** is the share of the",
        "cores other processes used meanwhile.",
        "",
    ]
    for run in doc["runs"]:
        load = run["load"]
        ls = median([e["seconds"] for e in load["load"]])
        ps = median([e["seconds"] for e in load["plain"]])
        rss = max(e["peak_rss"] for e in load["load"]) / 2**30
        lines += [
            f"## N = {run['rows']:,}",
            "",
            "| what | versioned s | reference s | ratio | (CPU) | others |",
            "|---|---:|---:|---:|---:|---:|",
            f"| bulk load vs plain partitioned Parquet write (caller's session) | {ls:.2f} | "
            f"{ps:.2f} | **{ls / ps:.2f}x** | - | "
            f"{contention(load['load'] + load['plain']):.0%} |",
        ]
        for u in run["upserts"]:
            v, d = u["versioned"], u["delta"]
            lines.append(
                f"| upsert of batch {u['batch']} ({u['session']} session, {u['input']}) vs "
                f"delta-rs MERGE | {v['seconds']:.2f} | {d['seconds']:.2f} | "
                f"**{u['ratio']:.2f}x** | {u['cpu_ratio']:.2f}x | {contention([v, d]):.0%} |"
            )
        for point in ("read_1", "read_5", "read_10"):
            for name, r in run[point].items():
                times = r["times"]["table"] + r["times"]["plain"]
                lines.append(
                    f"| {name} query after {point.split('_')[1]} versions vs plain Parquet | "
                    f"{r['table_s']:.2f} | {r['plain_s']:.2f} | **{r['ratio']:.2f}x** | - | "
                    f"{contention(times):.0%} |"
                )
        fc = run["fixed_cost"]
        lines += [
            "",
            f"Peak RSS of driver + JVM during the load: {rss:.2f} GiB; during the upserts: "
            + ", ".join(f"{u['versioned']['peak_rss'] / 2**30:.2f}" for u in run["upserts"])
            + " GiB.",
            f"On the 10-version table (caller's session): an upsert of 10 rows "
            f"{fc['upsert_10_rows_s']:.2f} s, a `Catalog.sql` count of every row "
            f"{fc['query_s']:.2f} s (the fixed cost on a 10-row table: `fixed_cost.md`).",
            "",
        ]
    notes = out / "caller_session_notes.md"  # hand-written, kept across re-renders
    if notes.exists():
        lines += ["", notes.read_text()]
    (out / "caller_session.md").write_text("\n".join(lines))


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="table size N (repeatable)")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--work", default="/tmp/versioned-bench-caller", help="scratch folder")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warm-up-rows", type=int, default=WARM_UP_ROWS, help="0: none")
    parser.add_argument("--report-only", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark for every ``--rows`` (or re-render) and write the results."""
    args = parser().parse_args(argv)
    out = Path(args.out)
    results = ResultsFile(out, "caller_session")
    if args.report_only:
        render(results.previous, out)
        return
    own, caller = sessions("caller-session-bench")
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    warm = work / "warmup"
    warm_up(args.warm_up_rows, warm, lambda: run_size(own, caller, args.warm_up_rows, warm, 1))
    command = command_line("benchmarks.caller_session", argv)
    for rows in sorted(args.rows or [100_000]):
        run = run_size(own, caller, rows, work / f"n{rows}", args.repeat)
        run["command"] = command
        shutil.rmtree(work / f"n{rows}", ignore_errors=True)
        render(results.add(run, own), out)
    shutil.rmtree(work, ignore_errors=True)
    log(f"done; results in {out}")


if __name__ == "__main__":
    main()
