"""Streaming ingest: records/s and commit latency of `versioned.streaming` (issue 13).

Run: ``.venv/bin/python -m benchmarks.streaming`` (``make bench-streaming``); results go to
``benchmarks/results/streaming.{json,md}``. Nothing else may run meanwhile (2 cores).

Per catalog (SQLite file; PostgreSQL in a throw-away cluster on loopback, started here as
the tests start theirs, ``fsync=off``) and layout (``acid`` bucketed by ``id`` into 5
buckets, as the seed's ``alerts`` table; ``versioned``):

- one connection streams ``--records`` delimited records of the seed's ``alerts`` shape
  (``id,msg``; new keys) into one partition, ``--txn-records`` per transaction, 10
  transactions per batch: records/s from the first record to the last batch closed, the
  p50 / p99 latency of ``commit()``, and the files the run left in the table folder;
- ``--parallel`` connections in as many processes, one partition each, the same records
  between them: total records/s and errors;
- the reference: delta-rs (``deltalake.write_deltalake(mode="append")``) appending the
  same transactions as Arrow tables to a Delta table partitioned the same way (no record
  parsing, no primary key: a lower bound on what an append costs).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import versioned
from benchmarks.harness import machine, read_json, stamp, write_json

WORK = Path("/tmp/versioned-bench-streaming")
COLUMNS = "id BIGINT NOT NULL, msg STRING, continent STRING, country STRING"
PARTITIONS = [["Asia", "India"], ["Europe", "Germany"], ["America", "Peru"], ["Africa", "Kenya"]]
PER_BATCH = 10


def _records(start: int, count: int) -> list[bytes]:
    return [f"{i},Hello streaming record number {i}".encode() for i in range(start, start + count)]


def _catalog(url: str, warehouse: Path) -> Any:
    return versioned.connect(catalog=url, warehouse=str(warehouse), user="bench")


def _create(url: str, warehouse: Path, layout: str) -> None:
    cat = _catalog(url, warehouse)
    extra = {"bucket_by": "id", "buckets": 5} if layout == "acid" else {}
    cat.create_table(
        "testing.alerts",
        columns=COLUMNS,
        primary_key="continent,country,id",  # unique per partition: no cross-partition probe
        partition_by="continent,country",
        layout=layout,
        **extra,
    )
    cat.close()


def stream(
    url: str,
    warehouse: str,
    partition: list[str],
    start: int,
    records: int,
    per_txn: int,
    start_at: float | None = None,
) -> dict[str, Any]:
    """One connection streaming ``records`` records into ``partition``; its figures.

    A warm-up stream of two transactions into a partition of its own comes first (imports,
    caches: a streaming client runs for hours), then, at ``start_at`` (wall clock) if
    given, the measured one.
    """
    warm = [*partition[:-1], f"{partition[-1]} warm-up"]
    _stream(url, warehouse, warm, 10**9 + start, 2 * per_txn, per_txn)
    if start_at is not None:
        time.sleep(max(0.0, start_at - time.time()))
    return _stream(url, warehouse, partition, start, records, per_txn)


def _stream(
    url: str, warehouse: str, partition: list[str], start: int, records: int, per_txn: int
) -> dict[str, Any]:
    from versioned import streaming as vs

    cat = _catalog(url, Path(warehouse))
    endpoint = vs.EndPoint(cat, "testing.alerts", partition)
    writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint)
    data = _records(start, records)
    latencies: list[float] = []
    began = time.perf_counter()
    with endpoint.connect(create_partition=True, agent="bench") as conn:
        position = 0
        while position < records:
            with conn.fetch_transaction_batch(PER_BATCH, writer) as batch:
                while position < records and batch.remaining_transactions():
                    batch.begin_next_transaction()
                    batch.write_many(data[position : position + per_txn])
                    position += per_txn
                    tick = time.perf_counter()
                    batch.commit()
                    latencies.append(time.perf_counter() - tick)
    seconds = time.perf_counter() - began
    cat.close()
    return {"records": records, "seconds": seconds, "latencies": latencies, "ended": time.time()}


def _parallel(
    url: str, warehouse: Path, records: int, per_txn: int, n: int, start_delay: float | None
) -> dict[str, Any]:
    share = records // n
    # After every process started and warmed up (20 + 5 s a process unless told).
    start_at = time.time() + (20 + 5 * n if start_delay is None else start_delay)
    jobs = [
        (url, str(warehouse), PARTITIONS[i], i * share, share, per_txn, start_at) for i in range(n)
    ]
    errors: list[str] = []
    results: list[dict[str, Any]] = []
    with multiprocessing.get_context("spawn").Pool(n) as pool:
        pending = [pool.apply_async(stream, job) for job in jobs]
        for p in pending:
            try:
                results.append(p.get())
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
    seconds = max((r["ended"] for r in results), default=start_at) - start_at
    latencies = sorted(x for r in results for x in r["latencies"])
    return {
        "records": share * n,
        "seconds": seconds,
        "errors": errors,
        "connections": n,
        "latencies": latencies,
    }


def _check(url: str, warehouse: Path, expected: int) -> int:
    """Live rows of the table, read without Spark (pyarrow over the catalog's files is not
    the reader's job): count with the library's reader."""
    cat = _catalog(url, warehouse)
    try:
        return int(cat.table("testing.alerts").read().count())
    finally:
        cat.close()


def _files(warehouse: Path) -> int:
    """Files the measured streams left (not the warm-up partitions')."""
    files = (warehouse / "testing.db").rglob("*")
    return sum(1 for p in files if p.is_file() and "warm-up" not in str(p))


def _delta(records: int, per_txn: int, where: Path) -> dict[str, Any]:
    import pyarrow as pa
    from deltalake import write_deltalake

    latencies = []
    began = time.perf_counter()
    for start in range(0, records, per_txn):
        ids = list(range(start, start + per_txn))
        table = pa.table(
            {
                "id": pa.array(ids, pa.int64()),
                "msg": [f"Hello streaming record number {i}" for i in ids],
                "continent": ["Asia"] * per_txn,
                "country": ["India"] * per_txn,
            }
        )
        tick = time.perf_counter()
        write_deltalake(str(where), table, mode="append", partition_by=["continent", "country"])
        latencies.append(time.perf_counter() - tick)
    return {"records": records, "seconds": time.perf_counter() - began, "latencies": latencies}


def _figures(run: dict[str, Any]) -> dict[str, Any]:
    lat = sorted(run.get("latencies", []))
    out = {
        "records": run["records"],
        "seconds": round(run["seconds"], 3),
        "records_per_s": round(run["records"] / run["seconds"]),
    }
    if lat:
        out["commit_p50_ms"] = round(1000 * statistics.median(lat), 1)
        out["commit_p99_ms"] = round(1000 * lat[min(len(lat) - 1, int(len(lat) * 0.99))], 1)
        out["commits"] = len(lat)
    for key in ("errors", "connections", "files", "live_rows"):
        if key in run:
            out[key] = run[key]
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    catalogs: dict[str, Any] = {"sqlite": None}
    cluster = None
    if not args.sqlite_only:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.support.postgres import start_cluster

        cluster = start_cluster()
        catalogs["postgres"] = cluster
    results: dict[str, Any] = {"runs": [], "args": vars(args)}
    try:
        for name, pg in catalogs.items():
            for layout in args.layouts:
                for mode in ("one connection", f"{args.parallel} connections"):
                    where = Path(args.work) / f"{name}-{layout}-{mode.split()[0]}"
                    shutil.rmtree(where, ignore_errors=True)
                    where.mkdir(parents=True)
                    url = pg.create_database() if pg else f"sqlite:///{where}/catalog.db"
                    _create(url, where, layout)
                    print(f"{name} {layout} {mode} ...", file=sys.stderr, flush=True)
                    if mode == "one connection":
                        got = stream(
                            url, str(where), PARTITIONS[0], 0, args.records, args.txn_records
                        )
                    else:
                        got = _parallel(
                            url,
                            where,
                            args.records,
                            args.txn_records,
                            args.parallel,
                            args.start_delay,
                        )
                    got["files"] = _files(where)
                    if args.check:
                        got["live_rows"] = _check(url, where, got["records"])
                    figures = {"catalog": name, "layout": layout, "mode": mode, **_figures(got)}
                    print(json.dumps(figures), file=sys.stderr, flush=True)
                    results["runs"].append(figures)
        where = Path(args.work) / "delta"
        shutil.rmtree(where, ignore_errors=True)
        delta = _delta(args.records, args.txn_records, where)
        results["runs"].append(
            {"catalog": "-", "layout": "delta-rs append", "mode": "one writer", **_figures(delta)}
        )
    finally:
        if cluster is not None:
            cluster.stop()
    results["machine"] = {"cpu_count": os.cpu_count(), **machine()}
    results["stamp"] = stamp()
    return results


def render(results: dict[str, Any]) -> str:
    args = results["args"]
    lines = [
        "# Streaming ingest benchmark (issue 13)",
        "",
        "Reproduce (alone on the machine): `.venv/bin/python -m benchmarks.streaming "
        f"--records {args['records']} --txn-records {args['txn_records']} "
        f"--parallel {args['parallel']}{' --check' if args.get('check') else ''}`.",
        "",
        "Records of the seed's `alerts` shape (`id,msg`, new keys), "
        f"{args['txn_records']:,} per transaction, {PER_BATCH} transactions per batch. "
        "Each process first streams two transactions into a partition of its own (imports, "
        "caches), then the measured records; with several connections they start together "
        "and records/s is their total over the time until the last one finished. "
        "Records/s count from the first record to the last batch closed (parsing, typing, "
        "bucketing, key lookup, ORC/Parquet writing, catalog commits). Commit latency is "
        "`TransactionBatch.commit()` alone. PostgreSQL runs with `fsync=off` (a throw-away "
        "cluster as the tests start it). delta-rs appends the same rows as Arrow tables "
        "(no parsing, no key): a lower bound on an append. *Files*: what the measured "
        "streams left in the table folder. *Live rows after* (with `--check`): "
        "`Table.read().count()` of the table, the measured records plus 20,000 warm-up "
        "records per connection.",
        "",
        "| catalog | layout | mode | records | records/s | commit p50 ms | commit p99 ms "
        "| files | errors | live rows after |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results["runs"]:
        lines.append(
            f"| {r['catalog']} | {r['layout']} | {r['mode']} | {r['records']:,} | "
            f"{r['records_per_s']:,} | {r.get('commit_p50_ms', '-')} | "
            f"{r.get('commit_p99_ms', '-')} | {r.get('files', '-')} | "
            f"{len(r.get('errors', [])) if 'errors' in r else '-'} | "
            f"{format(r['live_rows'], ',') if 'live_rows' in r else '-'} |"
        )
    m = results["machine"]
    lines += ["", f"Machine: {m['cpu_count']} cores, {m['os']}, Python {m['python']}.", ""]
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--txn-records", type=int, default=10_000)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--layouts", nargs="+", default=["acid", "versioned"])
    parser.add_argument("--sqlite-only", action="store_true")
    parser.add_argument("--check", action="store_true", help="count live rows with Spark after")
    parser.add_argument(
        "--start-delay",
        type=float,
        default=None,
        help="seconds the parallel connections wait to start together (20 + 5 a connection)",
    )
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--work", default=str(WORK), help="scratch folder")
    parser.add_argument("--report-only", action="store_true", help="re-render streaming.md")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark (or re-render) and write ``streaming.{json,md}``."""
    args = parser().parse_args(argv)
    out = Path(args.out)
    if args.report_only:
        (out / "streaming.md").write_text(render(read_json(out / "streaming.json", None)))
        return
    results = run(args)
    write_json(out / "streaming.json", results, indent=2)
    (out / "streaming.md").write_text(render(results))
    print(render(results))


if __name__ == "__main__":
    main()
