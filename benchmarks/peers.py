"""Issue 45's benchmark: versioned and its peers on the same Spark, the same batches, one run.

Run: ``make bench-peers`` (= ``.venv/bin/python -m benchmarks.peers``; writes
``benchmarks/results/peers.{json,md,png}``; ``--report-only`` re-renders). Needs `make jars`
and `make spark-venvs`: Delta Lake runs on PySpark 4.2 and Iceberg on 4.1 (the newest Spark
lines they are built for; docs/jvm-dependencies.md), each in a process of that line's
virtualenv with versioned beside it in the same session, so every peer is compared with
versioned on its own Spark. The groups (`GROUPS`), run one after another, never two at once:

* ``main`` (ours, PySpark 4.3): versioned, delta-rs MERGE, and the plain write (a plain
  partitioned Parquet write to load, a full rewrite of the table per batch);
* ``delta`` (PySpark 4.2): versioned, Delta MERGE copy-on-write, Delta MERGE with deletion
  vectors (`benchmarks.peer_engines`: with the maintenance Delta's docs recommend, auto
  compaction and a scheduled OPTIMIZE every ``--every`` batches);
* ``iceberg`` (PySpark 4.1): versioned, Iceberg MERGE copy-on-write and merge-on-read (with
  the compaction Iceberg's docs recommend, on the same schedule);
* Hudi (MOR upsert) is not run: no Hudi bundle for Spark 4 is served (`HUDI`).

The data is generated once, here, and every process reads the same files
(`benchmarks.continuous_data`: the 6-column table of ``--rows`` rows in 20 partitions and
batches of 1 %; `benchmarks.continuous_tpch`: lineitem at ``--tpch-scale`` with RF1/RF2 and
updates). Phases (`benchmarks.peer_child` runs each):

1. **upsert**: each engine in a fresh process of its own: load, then ``--upsert-batches``
   batches; the first is the first batch of a fresh session, the others give the median;
2. **continuous**: each group in one process: `benchmarks.continuous.run_workload` with all
   the group's engines fed every batch (``--batches``; the order rotates per batch), each
   read after every batch against a plain Parquet copy of the same live rows;
3. **tpch**: the same on TPC-H lineitem (``--tpch-batches``; Q1 and Q6).

Every answer is checked: each table against its plain copy after every batch (in the
child), and the engines' answers against each other here; a disagreement fails the run after
the results are written. Entries of an earlier run of the same sizes are kept in
``peers.json`` when this run measures only some (``--groups``, ``--phases``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks import continuous_data, continuous_tpch
from benchmarks.continuous_data import Workload
from benchmarks.continuous_reads import agree
from benchmarks.harness import command_line, log, machine, read_json, stamp, write_json
from benchmarks.harness.jars import REPO, MissingJarsError, spark_jars, spark_python
from benchmarks.peer_engines import MAINTENANCE_EVERY
from benchmarks.peers_report import render

NAME = "peers"
REQUIRE_JARS = "VERSIONED_REQUIRE_JARS"
PHASES = ("upsert", "continuous", "tpch")
HUDI = (
    "not runnable here: no Spark 4 bundle served (the Maven repository this project reaches "
    "has no org.apache.hudi:hudi-spark4.0-bundle_2.13 nor a 4.1 bundle; its Hudi bundles "
    "are for Spark 3.5, where versioned cannot run beside them)"
)
SMOKE_CONF = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "spark.databricks.delta.snapshotPartitions": "1",
}
"""A smoke run's JVMs: interpreted expressions, the C1 compiler (`harness.runner`'s), and
Delta's table state in one partition (its default, 50, is a job of 50 tasks per snapshot)."""
SMOKE_CALLER_CONF = {"spark.sql.shuffle.partitions": "2"}
"""A smoke run's sessions: a shuffle partition a core (Spark's default is 200)."""


@dataclass(frozen=True)
class Group:
    """The engines that run in one Spark line's processes."""

    name: str
    jar_set: str | None
    """The jar set of its peers (None: ours, no jars)."""
    format: str | None
    engines: tuple[str, ...]


GROUPS = (
    Group("main", None, None, ("versioned", "delta_rs", "plain")),
    Group("delta", "delta", "delta", ("versioned", "delta_cow", "delta_dv")),
    Group("iceberg", "iceberg", "iceberg", ("versioned", "iceberg_cow", "iceberg_mor")),
)


def python_of(group: Group) -> Path | str:
    """The interpreter of ``group``, or why it cannot run (its jars or virtualenv missing).

    Raises:
        MissingJarsError: They are missing and ``VERSIONED_REQUIRE_JARS=1``.
    """
    if group.jar_set is None:
        return Path(sys.executable)
    try:
        spark_jars(group.jar_set)
        return spark_python(group.jar_set)
    except MissingJarsError as exc:
        if os.environ.get(REQUIRE_JARS) == "1":
            raise
        return f"skipped: {exc}"


def child_env(python: Path) -> dict[str, str]:
    """A child's environment: its own PySpark (no SPARK_HOME or PYTHONPATH of ours)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_HOME", "PYTHONPATH")}
    env["PYSPARK_PYTHON"] = str(python)
    return env


def run_child(python: Path, spec: dict[str, Any], folder: Path, name: str) -> list[dict]:
    """Run `benchmarks.peer_child` with ``spec``; its output into ours; its records.

    Raises:
        RuntimeError: The child failed (its last lines say why).
    """
    folder.mkdir(parents=True, exist_ok=True)
    spec_path, result = folder / f"{name}.spec.json", folder / f"{name}.result.json"
    write_json(spec_path, spec)
    result.unlink(missing_ok=True)
    command = [str(python), "-m", "benchmarks.peer_child", str(spec_path), str(result)]
    tail: list[str] = []
    with subprocess.Popen(
        command,
        cwd=REPO,
        env=child_env(python),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as child:
        assert child.stdout is not None
        for line in child.stdout:
            print(f"  | {line}", end="", flush=True)
            tail = [*tail[-30:], line]
    if child.returncode != 0 or not result.exists():
        raise RuntimeError(
            f"{name}: exit status {child.returncode}: {''.join(tail[-8:]).strip()[-1500:]}"
        )
    records: list[dict] = read_json(result, {})["runs"]
    return records


def sliced(workload: Workload, batches: int) -> Workload:
    """``workload`` with its first ``batches`` batches (live rows unknown: 0)."""
    if batches >= len(workload.batches):
        return workload
    return replace(workload, batches=workload.batches[:batches], live_rows=0)


def plan(args: argparse.Namespace, data: dict[str, Workload]) -> list[dict[str, Any]]:
    """The child processes of the run, in order: (group, name, spec) as dicts."""
    todo: list[dict[str, Any]] = []
    base = {"driver_memory": args.driver_memory, "repeat": args.repeat, "every": args.every}
    base["conf"] = SMOKE_CONF if args.smoke_jvm else {}
    base["caller_conf"] = SMOKE_CALLER_CONF if args.smoke_jvm else {}
    work = Path(args.work) / "run"
    groups = [g for g in GROUPS if g.name in args.groups]
    for phase in args.phases:
        for group in groups:
            common = {**base, "group": group.name, "jar_set": group.jar_set}
            common["format"] = group.format
            if phase == "upsert":
                workload = sliced(data["synthetic"], args.upsert_batches)
                runs = [
                    {
                        "phase": "upsert",
                        "engine": engine,
                        "batches": args.upsert_batches,
                        "workload": asdict(workload),
                        "work": str(work / f"{group.name}-{engine}"),
                    }
                    for engine in group.engines
                ]
            else:
                workload = data["synthetic" if phase == "continuous" else "tpch"]
                batches = args.batches if phase == "continuous" else args.tpch_batches
                if group.jar_set is not None and args.peer_batches:
                    batches = min(batches, args.peer_batches)
                workload = sliced(workload, batches)
                runs = [
                    {
                        "phase": "continuous",
                        "engines": list(group.engines),
                        "workload": asdict(workload),
                        "work": str(work / f"{group.name}-{phase}"),
                    }
                ]
            for run in runs:
                run["key"] = phase
            todo.append({"group": group, "phase": phase, "runs": runs, "common": common})
    if args.one_process_per_group:  # a smoke run: each group's phases in one process
        merged: dict[str, dict[str, Any]] = {}
        for item in todo:
            entry = merged.setdefault(item["group"].name, {**item, "phase": "all", "runs": []})
            entry["runs"] += item["runs"]
        return list(merged.values())
    return [{**item, "runs": [run]} for item in todo for run in item["runs"]]  # a process each


def generate(args: argparse.Namespace) -> dict[str, Workload]:
    """The data every process reads (written once, under ``--work``)."""
    data: dict[str, Workload] = {}
    root = Path(args.work) / "data"
    started = time.perf_counter()
    if {"upsert", "continuous"} & set(args.phases):
        batches = max(args.batches, args.upsert_batches)
        data["synthetic"] = continuous_data.generate(
            args.rows, root / "synthetic", batches, partitions=args.partitions
        )
    if "tpch" in args.phases:
        data["tpch"] = continuous_tpch.generate(args.tpch_scale, root / "tpch", args.tpch_batches)
    log(f"data in {time.perf_counter() - started:.1f}s under {root}")
    return data


def record_key(phase: str, group: str, record: dict[str, Any]) -> str:
    """Where a child's record goes in the document: ``upsert/<group>/<engine>``,
    ``continuous/<group>``, ``tpch/<group>``."""
    if phase == "upsert":
        return f"upsert/{group}/{record['engine']}"
    return f"{phase}/{group}"


def same_size(entry: dict[str, Any], args: argparse.Namespace) -> bool:
    """Whether an earlier entry was measured at this run's size."""
    if entry.get("workload") == "tpch":
        return bool(entry.get("scale") == args.tpch_scale)
    return bool(entry.get("rows") == args.rows)


def check(doc: dict[str, Any]) -> list[str]:
    """Where the engines' answers disagree (empty: they all agree)."""
    problems = []
    upserts = {k: v for k, v in doc["entries"].items() if k.startswith("upsert/")}
    by_batches: dict[int, list[tuple[str, Any]]] = {}
    for key, entry in upserts.items():
        by_batches.setdefault(len(entry["batches"]), []).append((key, entry["answer"]))
    for answers in by_batches.values():
        first_key, first = answers[0]
        problems += [
            f"{key} answers {answer}, {first_key} {first}"
            for key, answer in answers[1:]
            if not agree(answer, first)
        ]
    for phase in ("continuous", "tpch"):
        runs = {k: v for k, v in doc["entries"].items() if k.startswith(f"{phase}/")}
        seen: dict[tuple[int, str], tuple[str, Any]] = {}  # (batch, query): first answer
        for key, run in runs.items():
            for step in run["steps"]:
                for label, reads in step["reads"].items():
                    for query, read in reads.items():
                        name = f"{key} {label} {query} after batch {step['batch']}"
                        first = seen.setdefault((step["batch"], query), (name, read["answer"]))
                        if not agree(read["answer"], first[1]):
                            problems.append(f"{name}: {read['answer']}; {first[0]}: {first[1]}")
    return problems


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows of the 6-column table")
    parser.add_argument("--partitions", type=int, default=continuous_data.PARTITIONS)
    parser.add_argument("--upsert-batches", type=int, default=4, help="first + median of rest")
    parser.add_argument("--batches", type=int, default=30, help="batches of the continuous run")
    parser.add_argument("--tpch-scale", type=float, default=1.0)
    parser.add_argument("--tpch-batches", type=int, default=30, help="refreshes of the TPC-H run")
    parser.add_argument(
        "--peer-batches",
        type=int,
        help="at most this many continuous and TPC-H batches in the Delta and Iceberg groups",
    )
    parser.add_argument("--repeat", type=int, default=3, help="timings per query and side")
    parser.add_argument("--every", type=int, default=MAINTENANCE_EVERY, help="Iceberg upkeep")
    parser.add_argument(
        "--groups", nargs="+", choices=[g.name for g in GROUPS], default=[g.name for g in GROUPS]
    )
    parser.add_argument("--phases", nargs="+", choices=PHASES, default=list(PHASES))
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument(
        "--one-process-per-group",
        action="store_true",
        help="each group's phases in one process (smoke: no fresh session per engine)",
    )
    parser.add_argument(
        "--smoke-jvm", action="store_true", help="interpreted, C1, 2 shuffle partitions (smoke)"
    )
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--work", default="/tmp/versioned-bench-peers", help="scratch folder")
    parser.add_argument("--report-only", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Generate the data, run every process of the plan, merge and render the results."""
    args = parser().parse_args(argv)
    out = Path(args.out)
    path = out / f"{NAME}.json"
    if args.report_only:
        render(read_json(path, None), out)
        return
    if min(args.upsert_batches, args.batches, args.tpch_batches, args.repeat) < 1:
        parser().error("batches and --repeat must be >= 1")
    previous = read_json(path, {"entries": {}})
    entries = {k: v for k, v in previous.get("entries", {}).items() if same_size(v, args)}
    kept = bool(entries)
    pythons = {g.name: python_of(g) for g in GROUPS if g.name in args.groups}
    for name, python in pythons.items():
        if isinstance(python, str):
            log(f"{name}: {python}")
    shutil.rmtree(Path(args.work), ignore_errors=True)
    started = time.perf_counter()
    data = generate(args)
    logs = Path(args.work) / "children"
    this = {
        "command": command_line(f"benchmarks.{NAME}", argv),
        "groups": args.groups,
        "phases": args.phases,
        "skipped": {n: p for n, p in pythons.items() if isinstance(p, str)},
        "failures": [],
        "wall_s": 0.0,
        "stamp": stamp(),
    }
    invocations = [*(previous.get("invocations", []) if kept else []), this]

    def document() -> dict[str, Any]:
        this["wall_s"] = time.perf_counter() - started
        return {
            "machine": machine(),
            "config": {k: v for k, v in vars(args).items() if k not in ("out", "report_only")},
            "hudi": HUDI,
            "skipped": this["skipped"],
            "invocations": invocations,
            "entries": dict(sorted(entries.items())),
            "stamp": stamp(),
        }

    for item in plan(args, data):
        group: Group = item["group"]
        python = pythons[group.name]
        if isinstance(python, str):
            continue
        name = f"{item['phase']}-{group.name}" + (
            f"-{item['runs'][0]['engine']}" if item["phase"] == "upsert" else ""
        )
        log(f"{name}: {python}")
        spec = {**item["common"], "runs": item["runs"]}
        try:
            records = run_child(python, spec, logs, name)
        except RuntimeError as exc:
            log(f"FAILED {exc}")
            this["failures"].append(str(exc))
            continue
        for run, record in zip(item["runs"], records, strict=True):
            record["python"] = str(python)
            record.setdefault("workload", "synthetic")
            if run["key"] == "tpch":
                record["scale"] = args.tpch_scale
            else:
                record["rows"] = args.rows
            entries[record_key(run["key"], group.name, record)] = record
        write_json(path, document())  # each process's record as soon as it is there
    doc = document()
    disagreements = check(doc)
    doc["disagreements"] = disagreements
    write_json(path, doc)
    render(doc, out)
    shutil.rmtree(Path(args.work), ignore_errors=True)
    log(f"done in {this['wall_s']:.0f}s; results in {out}")
    failures = this["failures"]
    if failures or disagreements:
        raise AssertionError("; ".join(failures + disagreements)[:2000])


if __name__ == "__main__":
    main()
