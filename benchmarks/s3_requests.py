"""What each step of a version-layout table asks of an S3 server, counted from the server's
request log, beside a plain partitioned Parquet table written and read by Spark through the
same S3A connector (issue 46 item 3: the request budget of a 1 % batch).

Run: ``make bench-s3`` (= ``.venv/bin/python -m benchmarks.s3_requests``; defaults: 1M rows of
the 6-column shape in 20 partitions, 1 % batches; about 2 minutes; needs ``make jars`` for
Hadoop's S3A jars; writes ``s3_requests.{json,md}`` under ``--out``, default
benchmarks/results).

The server is moto's (`tests.support.s3_server`, on loopback, every request recorded). One
fresh process (its Spark has the S3A jars and the server's AWS settings) runs the steps in
order and reads the log after each:

* **versioned**: the first load (written by the tasks), a 1 % batch (80 % updates, 10 %
  inserts, 10 % deletes) written by the driver, one written by Spark's tasks
  (``write.driver_max_rows=0``), a compaction of every partition, a full read, a read of
  the first batch's version (time travel);
* **plain**: the same first load and the first 1 % batch's rows appended with
  ``DataFrame.write.partitionBy("p").parquet`` (Spark's default commit protocol: a task's
  files are renamed into place, which S3 does as copy and delete), then a full read.

A step's ``files`` is what it commits: the data, index and Bloom files a version adds to
the catalog, or the plain table's new data files. The budget the issue sets for versioned:
0 CopyObject on every write, 0 LIST on every read, objects written = files committed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.harness import log, machine, save, table
from benchmarks.harness.jars import jars
from benchmarks.harness.results import command_line, rerender

NAME = "s3_requests"
KINDS = (
    "objects",
    "UploadPart",
    "CopyObject",
    "DeleteObject",
    "DeleteObjects",
    "ListObjects",
    "HeadObject",
    "GetObject",
)
"""The columns of the report (``objects``: PutObject + CompleteMultipartUpload)."""
PARTITIONS = 20
COLUMNS = "id BIGINT, a BIGINT, b BIGINT, s STRING, d DOUBLE, p INT"


def child(args: argparse.Namespace) -> dict[str, Any]:
    """The steps, in this process (its environment names the server and the jars)."""
    import pyarrow as pa

    import versioned
    from tests.support.s3_server import logged_requests, request_counts

    request_log = Path(args.request_log)

    def counts() -> dict[str, int]:
        found = request_counts(logged_requests(request_log))
        request_log.write_text("")
        return {kind: n for kind, n in found.items() if n}

    cat = versioned.connect(
        catalog=f"sqlite:///{args.work}/catalog.db", warehouse="s3://lake/warehouse"
    )
    spark = cat.spark
    rows, batch_rows = args.rows, max(1, args.rows // 100)
    source = spark.range(0, rows, 1, 2).selectExpr(
        "id", "id * 7 AS a", "id % 1000 AS b", "concat('s', id) AS s", "id / 3.0 AS d",
        f"CAST(id % {PARTITIONS} AS INT) AS p",
    )  # fmt: skip
    steps: list[dict[str, Any]] = []
    counts()

    def step(side: str, name: str, seconds: float, files: Callable[[], int] = lambda: 0) -> None:
        """Record the requests since the last step, then count the step's files (what that
        asks of the server is not the step's)."""
        found = counts()
        entry = {"side": side, "step": name, "files": files(), "seconds": round(seconds, 2)}
        counts()
        steps.append({**entry, **found})
        log(f"{side}: {name}: {steps[-1]}")

    t = cat.create_table(
        "bench.t",
        columns=COLUMNS,
        primary_key="id",
        partition_by="p",
        # its compaction is a step of its own: none after a write
        properties={"write.bulk_load_min_bytes": "0", "auto_compact": "false"},
    )
    counts()

    started = time.perf_counter()
    loaded = t.upsert(source)
    seconds = time.perf_counter() - started
    step("versioned", f"first load ({rows:,} rows, the tasks write)", seconds, lambda: _files(t))
    first_batch = _batch(pa, rows, batch_rows, seed=1)
    versions = [loaded.version]
    for name, seed, driver_max in (("driver", 1, None), ("Spark's tasks", 2, "0")):
        if driver_max is not None:
            t.set_properties({"write.driver_max_rows": driver_max})
            counts()
        batch = first_batch if seed == 1 else _batch(pa, rows, batch_rows, seed=seed)
        started = time.perf_counter()
        result = t.upsert(batch, op_code_column="op")
        seconds = time.perf_counter() - started
        versions.append(result.version)
        step(
            "versioned",
            f"1 % batch ({batch_rows:,} rows), {name} write",
            seconds,
            lambda: len([f for f in t.snapshot().files if f.version == versions[-1]]),
        )
    started = time.perf_counter()
    done = t.compact()
    seconds = time.perf_counter() - started
    compacted_files = sum(p.files_added for p in done.partitions)
    step("versioned", f"compaction ({done.compacted} partitions)", seconds, lambda: compacted_files)
    started = time.perf_counter()
    total = t.read().count()
    step("versioned", "full read (count)", time.perf_counter() - started)
    started = time.perf_counter()
    t.read(as_of=versions[1]).where("p = 3").count()
    step("versioned", "time travel (one partition)", time.perf_counter() - started)

    plain = "s3a://lake/plain"
    started = time.perf_counter()
    source.write.partitionBy("p").parquet(plain)
    seconds = time.perf_counter() - started
    step("plain", f"first write ({rows:,} rows)", seconds, lambda: _plain_files(spark, plain))
    before = steps[-1]["files"]
    kept = first_batch.filter(pa.compute.not_equal(first_batch.column("op"), "D")).drop(["op"])
    started = time.perf_counter()
    spark.createDataFrame(kept).write.mode("append").partitionBy("p").parquet(plain)
    seconds = time.perf_counter() - started
    step(
        "plain",
        f"append of the 1 % batch's rows ({kept.num_rows:,})",
        seconds,
        lambda: _plain_files(spark, plain) - before,
    )
    started = time.perf_counter()
    spark.read.parquet(plain).count()
    step("plain", "full read (count)", time.perf_counter() - started)
    return {"rows": rows, "batch_rows": batch_rows, "live_rows": total, "steps": steps,
            "machine": machine(spark)}  # fmt: skip


def _files(t: Any) -> int:
    return len(t.snapshot().files)


def _plain_files(spark: Any, uri: str) -> int:
    return len(spark.read.parquet(uri).inputFiles())


def _batch(pa: Any, rows: int, n: int, *, seed: int) -> Any:
    """``n`` changes: 80 % updates and 10 % deletes of existing keys, 10 % new keys."""
    import numpy as np

    rng = np.random.default_rng(seed)
    updates = rng.choice(rows, size=int(n * 0.9), replace=False)
    inserts = np.arange(rows + seed * n, rows + seed * n + (n - len(updates)))
    ids = np.concatenate([updates, inserts]).astype(np.int64)
    ops = ["U"] * int(n * 0.8) + ["D"] * (len(updates) - int(n * 0.8)) + ["I"] * len(inserts)
    return pa.table(
        {
            "op": ops,
            "id": ids,
            "a": ids * 11,
            "b": ids % 1000,
            "s": [f"changed {i}" for i in ids.tolist()],
            "d": ids / 7.0,
            "p": (ids % PARTITIONS).astype(np.int32),
        }
    )


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Start the server, run the steps in a fresh process, stop the server."""
    from tests.support.s3_server import S3Server

    with tempfile.TemporaryDirectory(prefix="versioned-bench-s3-") as work:
        server = S3Server.start(Path(work) / "s3")
        try:
            server.create_bucket("lake")
            env = {
                **os.environ,
                **server.env(),
                "VERSIONED_SPARK_JARS": ",".join(str(p) for p in jars("s3a")),
                "PYSPARK_PYTHON": sys.executable,
            }
            env.pop("SPARK_HOME", None)
            argv = [sys.executable, "-m", "benchmarks.s3_requests", "--child",
                    "--rows", str(args.rows), "--work", work,
                    "--request-log", str(server.log_path)]  # fmt: skip
            done = subprocess.run(argv, env=env, stdout=subprocess.PIPE, text=True, check=True)
        finally:
            server.stop()
    doc: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    doc["command"] = command_line("benchmarks.s3_requests", args.argv)
    return doc


def render(doc: dict[str, Any], out: Path) -> None:
    header = ["side", "step", "files committed", *KINDS, "seconds"]
    rows = [
        [s["side"], s["step"], s["files"], *[s.get(k, 0) for k in KINDS], s["seconds"]]
        for s in doc["steps"]
    ]
    lines = [
        "# Requests to S3 per step: versioned and a plain Spark table",
        "",
        f"`{doc.get('command', 'python -m benchmarks.s3_requests')}`; "
        f"{doc['rows']:,} rows, 1 % batches of {doc['batch_rows']:,} changes, "
        f"{PARTITIONS} partitions, moto's S3 server on loopback, Hadoop's S3A connector. "
        "objects: PutObject + CompleteMultipartUpload; a file below a part's size goes in "
        "one PutObject (UploadPart 0), a bigger one in a multipart upload of 3 or more "
        "requests. Seconds are one run's, on a server on loopback: not a timing "
        "claim.",
        "",
        *table(header, "ll" + "r" * (len(header) - 2), rows),
        "",
    ]
    if "stamp" in doc:
        stamp = doc["stamp"]
        dirty = " (with uncommitted changes)" if stamp.get("dirty") else ""
        lines.append(f"Run {stamp['date']} at commit {stamp['commit'][:10]}{dirty}.")
    (out / f"{NAME}.md").write_text("\n".join(lines) + "\n")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000, help="rows of the first load")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    p.add_argument("--report-only", action="store_true", help="render the saved JSON again")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--work", help=argparse.SUPPRESS)
    p.add_argument("--request-log", help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    args.argv = argv
    if args.child:
        print(json.dumps(child(args)))
        return
    if args.report_only:
        rerender(args.out, NAME, render)
        return
    doc = measure(args)
    save(args.out, NAME, doc, render)
    print((args.out / f"{NAME}.md").read_text())


if __name__ == "__main__":
    main()
