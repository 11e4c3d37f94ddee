"""Cost of finding a table-wide key in other partitions (the cross-partition Bloom probe).

A table whose partition column is not part of its primary key must retire a key's row in
whatever partition holds it. The writer probes every other partition's Bloom filters
(`layouts.version_partition.elsewhere.probe_elsewhere`). This measures that probe on real
Bloom files for a table of ``--partitions`` partitions holding ``--keys-per-partition`` keys
each, with a batch of ``--batch`` keys (half of them existing keys that moved, half new),
next to the probe a partition-scoped key needs (its own partition only) in the same run.

Two key layouts:
- ``correlated``: ids grow with the partition (a table partitioned by creation date):
  each partition's min/max key range prunes most keys before any Bloom test;
- ``uncorrelated``: every partition holds ids from the whole range (partitioned by a status
  or region): every key is tested against every partition's filter.

Run: ``.venv/bin/python -m benchmarks.key_scope_probe [--partitions 1000] [--batch 100000]``
Writes ``benchmarks/results/key_scope_probe.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from benchmarks.harness import read_json, table, write_json
from benchmarks.internals import (
    WRITE_HEADROOM,
    DataFile,
    FileIO,
    KeyBloomFilter,
    KeyDigests,
    PartitionInfo,
    encode_keys,
    key_stats,
    part_column,
    probe_elsewhere,
    probe_partition,
)

RESULTS = Path(__file__).parent / "results"


def _table(root: Path, partitions: int, per: int, correlated: bool, seed: int) -> Any:
    """Bloom files and catalog records of a table; returns (fileio, infos, blooms, ids)."""
    rng = np.random.default_rng(seed)
    fileio = FileIO.for_root(str(root))
    total = partitions * per
    ids = np.arange(total, dtype=np.int64)
    if not correlated:
        rng.shuffle(ids)
    infos, blooms = [], {}
    for p in range(partitions):
        keys = pa.table({"id": pa.array(ids[p * per : (p + 1) * per])})
        bloom = KeyBloomFilter.build(encode_keys(keys, ["id"]), headroom=WRITE_HEADROOM)
        rel = f"p={p}/_bloom"
        size = bloom.write(fileio, f"t/{rel}")
        stats = {**key_stats(keys, ["id"]), **bloom.sizing_stats()}
        infos.append(PartitionInfo(p + 1, 1, (str(p),), f"p={p}", 1, 0.0))
        blooms[p + 1] = [DataFile(p + 1, p + 1, rel, "bloom", 1, size, per, stats, 1, None)]
    return fileio, infos, blooms, ids


def _batch(ids: np.ndarray, partitions: int, batch: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed + 1)
    existing = rng.choice(ids, batch // 2, replace=False)
    new = np.arange(len(ids), len(ids) + batch - len(existing), dtype=np.int64)
    chosen = np.concatenate([existing, new])
    parts = rng.integers(0, partitions, len(chosen)).astype(str)
    return pa.table({"id": pa.array(chosen), part_column(0): pa.array(parts)})


def _run(partitions: int, per: int, batch: int, correlated: bool, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        fileio, infos, blooms, ids = _table(Path(tmp), partitions, per, correlated, seed)
        keys = _batch(ids, partitions, batch, seed)
        parts = keys.column(part_column(0)).to_numpy(zero_copy_only=False)
        own_rows: dict[tuple[str | None, ...], np.ndarray] = {
            (v,): np.flatnonzero(parts == v) for v in np.unique(parts)
        }
        started = time.perf_counter()
        digests = KeyDigests(encode_keys(keys, ["id"]))
        probe = probe_elsewhere(
            fileio, "t", keys, digests, own_rows=own_rows, partitions=infos, blooms=blooms,
            key_columns=["id"], keyed_partition_columns=[],
        )  # fmt: skip
        elsewhere_s = time.perf_counter() - started
        started = time.perf_counter()
        own_hits = 0
        for values, rows in own_rows.items():
            pid = int(str(values[0])) + 1
            own = probe_partition(fileio, "t", keys.take(pa.array(rows)), ["id"], blooms[pid])
            own_hits += int(own.may_exist.sum())
        own_s = time.perf_counter() - started
        found = int(probe.may_exist(keys.num_rows).sum())
    return {
        "layout": "correlated" if correlated else "uncorrelated",
        "partitions": partitions,
        "keys_per_partition": per,
        "batch": batch,
        "moved_keys": batch // 2,
        "found_elsewhere": found,
        "filters_read": probe.filters_read,
        "partitions_probed": probe.partitions_probed,
        "elsewhere_s": round(elsewhere_s, 3),
        "own_partition_s": round(own_s, 3),
        "ratio": round(elsewhere_s / own_s, 2) if own_s else None,
    }


def render(rows: list[dict[str, Any]], command: str, repeat: int) -> str:
    """``key_scope_probe.md`` for the rows of ``key_scope_probe.json``."""
    lines = [
        "# Cross-partition key probe (table-wide primary key)",
        "",
        f"`{command}` (best of {repeat}; half the batch are existing keys named in another "
        "partition).",
        "",
        *table(
            (
                "key layout",
                "partitions",
                "batch",
                "found elsewhere",
                "filters read",
                "probe, other partitions (s)",
                "probe, own partition (s)",
                "ratio",
            ),
            "lrrrrrrr",
            (
                (
                    r["layout"],
                    r["partitions"],
                    r["batch"],
                    r["found_elsewhere"],
                    r["filters_read"],
                    r["elsewhere_s"],
                    r["own_partition_s"],
                    r["ratio"],
                )
                for r in rows
            ),
        ),
    ]
    return "\n".join(lines) + "\n"


def _command(partitions: int, keys_per_partition: int, batch: int) -> str:
    return (
        f".venv/bin/python -m benchmarks.key_scope_probe --partitions {partitions} "
        f"--keys-per-partition {keys_per_partition} --batch {batch}"
    )


def parser() -> argparse.ArgumentParser:
    """The probe's command line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--keys-per-partition", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="re-render the Markdown (with the run's --repeat)",
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run both key layouts and write the results table."""
    args = parser().parse_args(argv)
    if args.report_only:  # the command line is not in the JSON: the sizes of its first row
        rows = read_json(args.out / "key_scope_probe.json", None)
        first = rows[0]
        command = _command(first["partitions"], first["keys_per_partition"], first["batch"])
        (args.out / "key_scope_probe.md").write_text(render(rows, command, args.repeat))
        return
    rows = []
    for correlated in (True, False):
        runs = [
            _run(args.partitions, args.keys_per_partition, args.batch, correlated, seed)
            for seed in range(args.repeat)
        ]
        best = min(runs, key=lambda r: r["elsewhere_s"])
        rows.append(best)
        print(json.dumps(best))
    write_json(args.out / "key_scope_probe.json", rows, indent=2)
    command = _command(args.partitions, args.keys_per_partition, args.batch)
    (args.out / "key_scope_probe.md").write_text(render(rows, command, args.repeat))


if __name__ == "__main__":
    main()
