"""Cost of finding the stored ROW__IDs of a batch's keys in an acid table (`row_lookup`).

Builds an acid table of ``--rows`` rows (``--buckets`` buckets on the key) and ``--deltas``
update batches of 1 % of the keys each, then upserts, each once:
- ``updates``: 1 % of the keys, chosen at random (every key exists);
- ``new keys``: as many keys the table has never held (above every stored key, as an
  identity column's next values are);
- ``new keys, spread``: as many new keys inside the stored key range (odd keys, the table
  holds even ones), so that only Bloom filters can tell them apart.

Each case runs ``--repeat`` times with fresh keys (each run adds its delta, so later runs
see a few more files). It reports the seconds of the lookup phase (from the writer's
"looking up" progress message to its "writing" message: the lookup and the batch counts,
one Spark job) and the bucket files the lookup handed to Spark. Files are counted by wrapping
``engine.acid.events.read_events`` (the one function that turns bucket files into a Spark
scan), so the same script measures the code before and after a change.

Small by default (the machine is shared): ``python -m benchmarks.acid_lookup``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from typing import Any

import numpy as np
import pyarrow as pa

from benchmarks.harness import spark_session
from benchmarks.internals import acid_events as events
from versioned import connect

_read: list[int] = []
_original = events.read_events


def _counting_read_events(ctx: Any, snapshot: Any, refs: Any, **kw: Any) -> Any:
    _read.append(len(refs))
    return _original(ctx, snapshot, refs, **kw)


def _batch(ids: np.ndarray, tag: str) -> pa.Table:
    return pa.table({"id": ids, "name": [f"{tag}{i}" for i in ids.tolist()]})


def _timed_upsert(table: Any, batch: pa.Table) -> tuple[float, int, Any]:
    marks: dict[str, float] = {}

    def progress(message: str) -> None:
        if message.startswith("looking up"):
            marks["start"] = time.monotonic()
        elif message.startswith("writing") and "start" in marks:
            marks["end"] = time.monotonic()

    _read.clear()
    result = table.upsert(batch, progress=progress)
    return marks["end"] - marks["start"], sum(_read), result


def parser() -> argparse.ArgumentParser:
    """The probe's command line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--deltas", type=int, default=20)
    parser.add_argument("--buckets", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    return parser


def main(argv: list[str] | None = None) -> None:
    """Build the table, time the three lookups, print one line each."""
    args = parser().parse_args(argv)
    spark = spark_session("acid-lookup", {"spark.sql.shuffle.partitions": "4"})
    events.read_events = _counting_read_events
    try:
        _measure(spark, args)
    finally:  # the engine's own function again (other benchmarks may run in this process)
        events.read_events = _original


def _measure(spark: Any, args: argparse.Namespace) -> None:
    rng = np.random.default_rng(7)
    n, one_percent = args.rows, max(1, args.rows // 100)
    with tempfile.TemporaryDirectory() as tmp:
        catalog = connect(warehouse=tmp, spark=spark, user="bench")
        table = catalog.create_table(
            "b.t",
            columns="id BIGINT NOT NULL, name STRING",
            primary_key="id",
            layout="acid",
            bucket_by="id",
            buckets=args.buckets,
        )
        started = time.monotonic()
        table.upsert(_batch(np.arange(n, dtype=np.int64) * 2, "v0-"))
        load = time.monotonic() - started
        for d in range(args.deltas):
            keys = rng.choice(n, one_percent, replace=False).astype(np.int64) * 2
            table.upsert(_batch(keys, f"v{d + 1}-"))
        per_delta = (time.monotonic() - started - load) / max(args.deltas, 1)
        files = len([f for f in table.snapshot().files if f.kind in ("delta", "delete_delta")])
        print(
            f"table: {n} rows, {args.deltas} deltas, {files} bucket files; "
            f"load {load:.1f}s, {per_delta:.1f}s per 1 % update batch"
        )
        top = 2 * n
        odd = rng.choice(n, one_percent * args.repeat, replace=False).astype(np.int64) * 2 + 1
        for name in ("updates", "new keys", "new keys, spread"):
            runs = []
            for run in range(args.repeat):
                if name == "updates":
                    keys = rng.choice(n, one_percent, replace=False).astype(np.int64) * 2
                elif name == "new keys":
                    keys = np.arange(one_percent, dtype=np.int64) + top
                    top += one_percent
                else:
                    keys = odd[run * one_percent : (run + 1) * one_percent]
                runs.append(_timed_upsert(table, _batch(keys, "x")))
            print(
                f"{name:17s} lookup min {min(r[0] for r in runs):6.2f}s "
                f"(runs {', '.join(f'{r[0]:.2f}' for r in runs)})  "
                f"bucket files read {', '.join(str(r[1]) for r in runs)}"
            )
        catalog.close()


if __name__ == "__main__":
    main()
