"""Mutation benchmark: the mutation API's Spark form (`vm.apply`) next to the acid layout's own
`upsert` and delta-rs MERGE of the same changes, at 1 % and 10 % of the table.

Run: ``.venv/bin/python -m benchmarks.mutation --rows 1000000 --rows 10000000`` (``make
bench-mutation``; writes ``benchmarks/results/mutation.{json,md}``; ``--report-only``
re-renders the Markdown). Runs of other sizes already in mutation.json are kept.

Per size N, with the data of `benchmarks.upsert_data` (N rows partitioned by ``store_id``):

* The **1 %** set is change batch 1 (80 % updates, 15 % inserts, 5 % deletes of N/100 rows);
  the **10 %** set is batches 1-10 with one change per key (a key's last batch wins), about
  N/10 rows. Both are written once as Parquet; every engine reads those bytes.
* The acid table (bucketed by the key, ``--buckets``) and the Delta table are loaded once and
  saved; before every timed run the table is put back, so each run starts from the load.
* **mutations** is the seed's whole recipe, timed from the Parquet file to the commit: read the
  snapshot with ``ROW__ID`` (`Table.read(with_row_id=True)`), left-join the changes on the
  business key (``store_id``, ``sell_id``), derive the op (a change of a key with no row is
  an insert, a delete of a key with no row is dropped), ``vm.apply`` and ``txn.commit()``.
  The join and the apply are also timed apart (``join`` is the time to the joined frame's
  first action, inside apply).
* **acid upsert** is ``Table.upsert`` of the same file (op codes ``I``/``U``/``D``).
* **delta-rs MERGE** is the MERGE of `benchmarks.upsert_engines.DeltaEngine`.

All three must end with the same (live rows, sum(total_amt)), or the run fails. Every timing is
wall and CPU time of the process tree (`benchmarks.harness.meter`); reports give medians of
``--repeat`` runs, engines interleaved so that outside load hits them alike.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks.acid_engines import AcidEngine
from benchmarks.acid_reads import same_answer
from benchmarks.harness import (
    Meter,
    ResultsFile,
    command_line,
    contention,
    log,
    median,
    rotated,
    spark_session,
    warm_up,
)
from benchmarks.upsert_data import COLUMN_NAMES, KEY, MAX_BATCHES, OP, PARTITION, generate
from benchmarks.upsert_engines import DeltaEngine
from versioned import mutation as vm

ENGINES = ("mutations", "acid upsert", "delta-rs MERGE")
SHARES = ("1%", "10%")
WARM_UP_ROWS = 100_000


def change_sets(spark: SparkSession, batches: tuple[str, ...], work: Path) -> dict[str, str]:
    """The 1 % and 10 % change files (Parquet, one change per key)."""
    sets = {"1%": batches[0]}
    ten = work / "changes_10pct"
    if not ten.exists():
        frames = [spark.read.parquet(b) for b in batches]
        union = frames[0]
        for frame in frames[1:]:
            union = union.unionByName(frame)
        last = F.max_by(F.struct(*[F.col(c) for c in union.columns]), F.col("batch"))
        one = union.groupBy(KEY).agg(last.alias("c")).select("c.*")
        one.coalesce(4).write.parquet(str(ten))
    sets["10%"] = str(ten)
    return sets


def mutations_of(table: Any, changes: DataFrame) -> DataFrame:
    """The recipe's join: changes with the ROW__ID of their key's row, and the op to apply."""
    key = [PARTITION, KEY]
    snapshot = table.read(with_row_id=True).select(*key, "ROW__ID")
    joined = changes.join(snapshot, key, "left")
    missing = F.col("ROW__ID").isNull()
    return joined.where(~((F.col(OP) == "D") & missing)).select(
        *COLUMN_NAMES,
        "ROW__ID",
        F.when(missing, "insert").when(F.col(OP) == "D", "delete").otherwise("update").alias("_op"),
    )


def run_mutations(spark: SparkSession, acid: AcidEngine, path: str) -> dict[str, Any]:
    """The recipe from the change file to the commit, timed as a whole and by step."""
    name = acid.table.name
    with Meter() as meter:
        client = vm.MutatorClient(acid.catalog, tables=[str(name)])
        txn = client.new_transaction()
        txn.begin()
        start = time.perf_counter()
        summary = vm.apply(txn, str(name), mutations_of(acid.table, spark.read.parquet(path)))
        applied = time.perf_counter()
        txn.commit()
        client.close()
        committed = time.perf_counter()
    return {
        **meter.result(),
        "apply_s": applied - start,
        "commit_s": committed - applied,
        "inserted": summary.inserted,
        "updated": summary.updated,
        "deleted": summary.deleted,
        "groups": summary.groups,
        "files": summary.files,
    }


def run_upsert(spark: SparkSession, acid: AcidEngine, path: str) -> dict[str, Any]:
    with Meter() as meter:
        result = acid.table.upsert(spark.read.parquet(path), op_code_column=OP)
    return {
        **meter.result(),
        "inserted": result.inserted,
        "updated": result.updated,
        "deleted": result.deleted,
    }


class _Tables:
    """The loaded acid and Delta tables, saved once and put back before every run."""

    def __init__(self, spark: SparkSession, work: Path, rows: int, buckets: int) -> None:
        self.spark = spark
        self.work = work
        self.acid = AcidEngine(spark, work, f"n{rows}", buckets)
        self.delta = DeltaEngine(work)
        self.saved_acid = work / "acid_saved"
        self.saved_delta = work / "delta_saved"

    def load(self, base: Any) -> dict[str, Any]:
        loads = {"acid": self.acid.load(base), "delta": self.delta.load(base)}
        self.acid.save(self.saved_acid)
        shutil.copytree(self.delta.path, self.saved_delta)
        return loads

    def restore(self) -> None:
        self.acid.restore(self.saved_acid)
        shutil.rmtree(self.delta.path)
        shutil.copytree(self.saved_delta, self.delta.path)

    def run(self, engine: str, path: str) -> tuple[dict[str, Any], tuple[int, float]]:
        self.restore()
        if engine == "mutations":
            result = run_mutations(self.spark, self.acid, path)
            return result, self.acid.summary()
        if engine == "acid upsert":
            result = run_upsert(self.spark, self.acid, path)
            return result, self.acid.summary()
        return self.delta.apply(path), self.delta.summary()

    def close(self) -> None:
        self.acid.close()


def run_size(
    spark: SparkSession, rows: int, work: Path, args: argparse.Namespace
) -> dict[str, Any]:
    """The benchmark for one table size; returns the JSON-ready results."""
    work.mkdir(parents=True, exist_ok=True)
    log(f"N={rows:,}: generating data")
    data = generate(spark, rows, work / "data", batches=MAX_BATCHES)
    sets = change_sets(spark, data.batches, work)
    set_rows = {share: spark.read.parquet(path).count() for share, path in sets.items()}
    tables = _Tables(spark, work, rows, args.buckets)
    log("initial loads")
    result: dict[str, Any] = {"rows": rows, "buckets": args.buckets, "set_rows": set_rows}
    result["loads"] = tables.load(data)
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {s: {e: [] for e in ENGINES} for s in sets}
    checks: dict[str, dict[str, list[Any]]] = {}
    for share, path in sets.items():
        checks[share] = {}
        for r in range(args.repeat):
            for engine in rotated(ENGINES, r):
                res, check = tables.run(engine, path)
                runs[share][engine].append(res)
                checks[share][engine] = list(check)
                log(f"  {share} {engine}: {res['seconds']:.2f}s (CPU {res['cpu_s']:.1f}s)")
        reference = checks[share][ENGINES[0]]
        if not all(same_answer(tuple(reference), tuple(c)) for c in checks[share].values()):
            raise AssertionError(f"engines disagree after the {share} set: {checks[share]}")
    tables.close()
    result["runs"] = runs
    result["checks"] = checks
    result["summary"] = summarise(runs)
    return result


def summarise(runs: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """Medians per set and engine, and the ratios of the mutations to the others."""
    out: dict[str, Any] = {}
    for share, engines in runs.items():
        row: dict[str, Any] = {}
        for engine, entries in engines.items():
            row[f"{engine}_s"] = median([e["seconds"] for e in entries])
            row[f"{engine}_cpu_s"] = median([e["cpu_s"] for e in entries])
            row[f"{engine}_others"] = contention(entries)
        for engine in ENGINES[1:]:
            row[f"over {engine}"] = row["mutations_s"] / row[f"{engine}_s"]
            row[f"cpu over {engine}"] = row["mutations_cpu_s"] / row[f"{engine}_cpu_s"]
        mutations = engines["mutations"]
        row["apply_s"] = median([e["apply_s"] for e in mutations])
        row["commit_s"] = median([e["commit_s"] for e in mutations])
        out[share] = row
    return out


def render(doc: dict[str, Any], out: Path) -> None:
    """``mutation.md`` from the JSON document."""
    m = doc["machine"]
    lines = [
        "# Mutation benchmark: `vm.apply` vs the acid upsert and delta-rs MERGE",
        "",
        "## How to reproduce",
        "",
        "```sh",
        "make bench-mutation   # .venv/bin/python -m benchmarks.mutation "
        "--rows 1000000 --rows 10000000",
        ".venv/bin/python -m benchmarks.mutation --report-only   # re-render from mutation.json",
        "```",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB RAM; Spark "
        f"`{m['spark_master']}` driver memory {m['driver_memory']}, pyspark {m.get('pyspark')}, "
        f"deltalake {m.get('deltalake')}, Python {m['python']}.",
        "",
        "## How to read this",
        "",
        "Seconds from the change file (Parquet) to a committed table, median of the runs, for",
        "the same changes: **mutations** is the mutation API's whole recipe (snapshot with",
        "`ROW__ID`, join on the business key, `vm.apply`, `txn.commit()`), **acid upsert** is",
        "`Table.upsert` of the acid table, **delta-rs MERGE** the Delta table's MERGE. Each run",
        "starts from the freshly loaded table (put back from a copy). `mutations / X` below 1",
        "means the mutation API was faster. *apply* is `vm.apply` alone (the join runs inside",
        "it: Spark is lazy), *commit* is `txn.commit()`. **others**: the share of the cores",
        "other processes used meanwhile (near 0 % is a quiet machine). All engines ended with",
        "the same live rows and sum(total_amt) (the run fails otherwise).",
        "",
    ]
    for run in doc["runs"]:
        rows = run["rows"]
        lines += [
            f"## N = {rows:,} ({run['buckets']} buckets)",
            "",
            "| set | rows | engine | wall s | CPU s | mutations / engine (wall) | (CPU) | others |",
            "|---|---:|---|---:|---:|---:|---:|---:|",
        ]
        for share, row in run["summary"].items():
            for engine in ENGINES:
                ratio = "-" if engine == ENGINES[0] else f"**{row[f'over {engine}']:.2f}x**"
                cpu = "-" if engine == ENGINES[0] else f"{row[f'cpu over {engine}']:.2f}x"
                lines.append(
                    f"| {share} | {run['set_rows'][share]:,} | {engine} | "
                    f"{row[f'{engine}_s']:.2f} | {row[f'{engine}_cpu_s']:.2f} | {ratio} | "
                    f"{cpu} | {row[f'{engine}_others']:.0%} |"
                )
        lines.append("")
        lines.append("Mutations by step (median s): ")
        for share, row in run["summary"].items():
            lines.append(f"- {share}: apply {row['apply_s']:.2f}, commit {row['commit_s']:.2f}")
        loads = run["loads"]
        lines += [
            "",
            f"Initial loads: acid {loads['acid']['seconds']:.1f} s, "
            f"delta-rs {loads['delta']['seconds']:.1f} s. Checks (live rows, sum(total_amt)): "
            + "; ".join(f"{s}: {c[ENGINES[0]]}" for s, c in run["checks"].items()),
            "",
        ]
    (out / "mutation.md").write_text("\n".join(lines))


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="table size N (repeatable)")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--work", default="/tmp/versioned-bench-mutation", help="scratch folder")
    parser.add_argument("--repeat", type=int, default=2, help="runs per engine and set")
    parser.add_argument("--buckets", type=int, default=8, help="buckets of the acid table")
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--warm-up-rows", type=int, default=WARM_UP_ROWS, help="0: none")
    parser.add_argument("--report-only", action="store_true")
    return parser


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    args = parser().parse_args(argv)
    if args.repeat < 1 or args.buckets < 1:
        parser().error("--repeat and --buckets must be >= 1")
    return args


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark for every ``--rows`` (or re-render) and write the results."""
    args = _arguments(argv)
    out = Path(args.out)
    results = ResultsFile(out, "mutation")
    if args.report_only:
        render(results.previous, out)
        return
    spark = spark_session("mutation-bench", {"spark.driver.memory": args.driver_memory})
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    started = time.perf_counter()
    warm, once = work / "warmup", argparse.Namespace(**{**vars(args), "repeat": 1})
    warm_up(args.warm_up_rows, warm, lambda: run_size(spark, args.warm_up_rows, warm, once))
    command = command_line("benchmarks.mutation", argv)
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
