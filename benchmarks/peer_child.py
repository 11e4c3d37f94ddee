"""One process of `benchmarks.peers`: one phase on one Spark line, its record as JSON.

``python -m benchmarks.peer_child SPEC RESULT`` runs with the Python of the Spark line the
phase's peers need (`benchmarks.harness.jars.spark_python`: PySpark 4.2 for Delta, 4.1 for
Iceberg, ours for versioned beside delta-rs and the plain write), started by `benchmarks.peers`
with the checkout as its working folder. ``SPEC`` (JSON, written by the parent) lists the
phases to run, one after the other in one session (a measurement runs one a process; a
smoke run all of a group's); their records go to ``RESULT``. Phases:

* ``upsert``: one engine (``engine``) in a fresh process: a session of Spark's defaults
  (`benchmarks.continuous.caller_session`), the engine's load of the base table, then
  ``batches`` change batches, each timed: the first is the first batch of a fresh session;
  the report takes the median of the others. Then the workload's last query (``full``: count,
  sum and a hash of every column) on the table, which must agree across engines.
* ``continuous``: every engine of the group (``engines``) in one session:
  `benchmarks.continuous.run_workload` with a versioned table (own maintenance on) and the
  group's Spark peers (`benchmarks.peer_engines`), delta-rs MERGE when the group has it.

delta-rs needs no Spark: its upsert phase starts the JVM only after its timings (to read
its answer). Nothing here imports deltalake or matplotlib unless the phase needs them; the
Spark lines' virtualenvs hold PySpark, pyarrow, numpy and versioned only.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from benchmarks.continuous_data import Workload
from benchmarks.harness import log, machine, median, stamp, write_json
from benchmarks.harness.jars import spark_jars

MASTER = "local[2]"


def workload_of(doc: dict[str, Any]) -> Workload:
    """The `Workload` a spec describes (its fields, as the parent wrote them)."""
    return Workload(**{**doc, "batches": tuple(doc["batches"]), "key": tuple(doc["key"])})


def build_session(spec: dict[str, Any], work: Path) -> Any:
    """This process's Spark session: the spec's settings, the group's jars and format."""
    from benchmarks.continuous import caller_session
    from benchmarks.peer_engines import session_conf
    from versioned.engine.spark.session import get_or_create_spark

    conf = {"spark.driver.memory": spec["driver_memory"], **spec.get("conf", {})}
    if spec.get("jar_set"):
        # One Iceberg catalog for the process, beside the phases' folders (each phase's
        # tables in a namespace of its own: `continuous_writers`).
        conf |= session_conf(spec["format"], work.parent / f"iceberg-{spec['group']}")
        conf["spark.jars"] = spark_jars(spec["jar_set"])
    get_or_create_spark(MASTER, app_name=f"peers-{spec['group']}", conf=conf, archive=False)
    # The caller's session: a new one of the JVM, at Spark's defaults (continuous's), but
    # for what the spec sets (a smoke run: fewer shuffle partitions).
    caller = caller_session(spec["driver_memory"])
    for key, value in spec.get("caller_conf", {}).items():
        caller.conf.set(key, value)
    return caller


class _Engine:
    """One engine of the upsert phase: ``load``, ``apply(path)``, ``answer`` (its rows of
    the workload's last query)."""

    def __init__(self, name: str, spec: dict[str, Any], workload: Workload, work: Path) -> None:
        self.name, self.spec, self.workload, self.work = name, spec, workload, work
        self.spark: Any = None
        self.writer: Any = None

    def session(self) -> Any:
        if self.spark is None:
            self.spark = build_session(self.spec, self.work)
        return self.spark

    def load(self) -> dict[str, Any]:
        if self.name == "delta_rs":
            from benchmarks.continuous_engines import DeltaMerge

            self.writer = DeltaMerge(self.work / "delta", self.workload)
            return self.writer.load()
        spark = self.session()
        if self.name == "plain":
            from benchmarks.continuous_data import OP
            from benchmarks.peer_engines import column_names
            from benchmarks.upsert_engines import NaiveEngine

            names = column_names(self.workload.columns)
            assert OP not in names
            self.writer = NaiveEngine(
                spark,
                self.work,
                key=self.workload.key,
                partition=self.workload.partition,
                columns=names,
            )
            return self.writer.load(self.workload)
        self.writer = continuous_writers(spark, [self.name], self.spec, self.workload, self.work)[0]
        result: dict[str, Any] = self.writer.load(spark, self.workload.base)
        return result

    def apply(self, path: str) -> dict[str, Any]:
        if self.name == "delta_rs":
            result: dict[str, Any] = self.writer.apply(pq.read_table(path))  # read untimed
        elif self.name == "plain":
            result = self.writer.apply(path)
        else:
            result = self.writer.apply(self.spark, path)
        return result

    def answer(self) -> list[list[Any]]:
        from benchmarks.continuous_reads import delta_rs_live, rows

        query = list(self.workload.queries.values())[-1]
        spark = self.session()
        if self.name in ("delta_rs", "plain"):
            if self.name == "delta_rs":
                live = delta_rs_live(spark, self.workload, self.writer.files(), self.writer.path)
            else:
                live = self.writer.live()
            live.createOrReplaceTempView("answer_rows")
            frame = spark.sql(query.replace("{t}", "answer_rows"))
        else:
            frame = self.writer.sql(query)
        return [list(r) for r in rows(frame)]


def continuous_writers(
    spark: Any, engines: list[str], spec: dict[str, Any], workload: Workload, work: Path
) -> list[Any]:
    """The writers named ``engines`` (``versioned`` and `benchmarks.peer_engines.KINDS`), in
    the session ``spark``; a versioned table has its own maintenance on."""
    from benchmarks.continuous_engines import bench_catalog, create_subject
    from benchmarks.peer_engines import KINDS, SparkPeer

    writers: list[Any] = []
    for name in engines:
        if name == "versioned":
            catalog = bench_catalog(spark, work)
            writers.append(
                create_subject(catalog, workload, layout="versioned", auto_compact=True, buckets=1)
            )
        else:
            namespace = "".join(c if c.isalnum() else "_" for c in work.name)
            peer = SparkPeer(KINDS[name], spark, workload, work / "peers", spec["every"], namespace)
            writers.append(peer.create())
    return writers


def upsert_phase(spec: dict[str, Any], workload: Workload, work: Path) -> dict[str, Any]:
    """One engine's load and first batches in this (fresh) process."""
    engine = _Engine(spec["engine"], spec, workload, work)
    log(f"{spec['group']}/{engine.name}: loading {workload.rows:,} rows")
    load = engine.load()
    batches = []
    for k, path in enumerate(workload.batches[: spec["batches"]], start=1):
        batches.append(engine.apply(path))
        log(f"  batch {k}: {batches[-1]['seconds']:.2f}s (CPU {batches[-1]['cpu_s']:.1f}s)")
    later = batches[1:]
    return {
        "engine": engine.name,
        "load": load,
        "batches": batches,
        "first_s": batches[0]["seconds"],
        "first_cpu_s": batches[0]["cpu_s"],
        "median_s": median(b["seconds"] for b in later),
        "median_cpu_s": median(b["cpu_s"] for b in later),
        "answer": engine.answer(),
        "spark": engine.session().version,
        "session": engine.session(),
    }


def continuous_phase(spec: dict[str, Any], workload: Workload, work: Path) -> dict[str, Any]:
    """The group's engines fed every batch in one session, read after each."""
    from benchmarks import continuous

    spark = build_session(spec, work)
    args = continuous.parser().parse_args(
        [
            *("--layout", "versioned", "--no-maintenance-reference", "--warm-up-rows", "0"),
            *("--batches", str(len(workload.batches)), "--repeat", str(spec["repeat"])),
        ]
    )
    from benchmarks.peer_engines import KINDS

    spark_peers = [e for e in spec["engines"] if e in KINDS]  # versioned: run_workload's own
    peers = continuous_writers(spark, spark_peers, spec, workload, work)
    run = continuous.run_workload(
        spark, workload, work, args, peers=peers, delta_rs="delta_rs" in spec["engines"]
    )
    return {**run, "spark": spark.version, "session": spark}


def parser() -> argparse.ArgumentParser:
    """The child's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", type=Path, help="what to run (JSON, from benchmarks.peers)")
    parser.add_argument("result", type=Path, help="where its record goes (JSON)")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run each phase the spec lists, in one session; write their records."""
    from benchmarks.peer_engines import plain_json

    args = parser().parse_args(argv)
    spec = json.loads(args.spec.read_text())
    records, session = [], None
    for run in spec["runs"]:
        workload = workload_of(run["workload"])
        work = Path(run["work"])
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        phase = upsert_phase if run["phase"] == "upsert" else continuous_phase
        result = phase({**spec, **run}, workload, work)
        session = result.pop("session")
        records.append({**plain_json(result), "machine": machine(session), "stamp": stamp()})
        shutil.rmtree(work, ignore_errors=True)
    write_json(args.result, {"runs": records})
    if session is not None:
        session.stop()


if __name__ == "__main__":
    main()
