"""Data of the continuous benchmark: a 6-column table of N rows and its stream of change batches.

The table is ``id BIGINT`` (the primary key), ``a BIGINT``, ``b BIGINT``, ``s STRING``,
``amt DOUBLE`` and ``p INT`` (the partition: a hash of ``id`` over ``partitions`` values, so
keys scatter over every partition and a key's partition never changes). Everything is
generated with numpy and written with pyarrow, seeded, so two runs write the same bytes:

* the base table: ONE Parquet file of N rows in row groups of 1M rows (keys ``0 .. N-1``);
* batch ``k`` (1-based), one Parquet file of ``N / 100`` rows in random order, with an ``op``
  column: 80 % ``U`` (updates of keys live before the batch, new values for every non-key
  column), 15 % ``I`` (inserts of keys above every earlier one), 5 % ``D`` (deletes of keys
  live before the batch). Updates and deletes of one batch are distinct keys, drawn from the
  live keys at random, so later batches also update and delete keys inserted earlier.

`Workload` describes generated data to the benchmark: the table's columns, key, partition,
queries and files; `benchmarks.continuous_tpch` builds the TPC-H one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

COLUMNS = "id BIGINT, a BIGINT, b BIGINT, s STRING, amt DOUBLE, p INT"
KEY = ("id",)
PARTITION = "p"
OP = "op"
PARTITIONS = 20
ROW_GROUP = 1_000_000
SEED = 30
BATCH_SHARE = 100
"""A batch holds N / BATCH_SHARE rows (1 %)."""
MIX = (("U", 80), ("I", 15), ("D", 5))
"""The share of each op in a batch, in percent."""
QUERIES = {
    "narrow": f"SELECT {PARTITION}, SUM(amt) AS amt FROM {{t}} GROUP BY {PARTITION}",
    "full": "SELECT COUNT(*) AS n, SUM(amt) AS amt, SUM(hash(id, a, b, s, amt, p)) AS h FROM {t}",
}
"""The reads after every batch (``{t}`` is the table): one column by partition; every column."""
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("a", pa.int64()),
        ("b", pa.int64()),
        ("s", pa.string()),
        ("amt", pa.float64()),
        ("p", pa.int32()),
    ]
)


@dataclass(frozen=True)
class Workload:
    """One generated table and its change batches, as the benchmark needs to know them.

    Attributes:
        name: ``synthetic`` or ``tpch``.
        label: The run's name in the report (``N = 1,000,000``, ``TPC-H SF 1``).
        columns: The table's columns (Spark DDL, the partition column included).
        key: The primary key.
        partition: The partition column.
        bucket_by: The acid table's bucket column (part of the key).
        queries: Read queries by name, ``{t}`` standing for the table.
        base: The base table's Parquet file.
        batches: Each change batch's Parquet file (with ``op``), in order.
        rows: Rows of the base table.
        live_rows: Live rows after every batch.
    """

    name: str
    label: str
    columns: str
    key: tuple[str, ...]
    partition: str
    bucket_by: str
    queries: Mapping[str, str]
    base: str
    batches: tuple[str, ...]
    rows: int
    live_rows: int


def batch_mix(batch_rows: int) -> dict[str, int]:
    """Rows of each op in a batch of ``batch_rows`` rows (deletes take the rounding)."""
    updates = batch_rows * MIX[0][1] // 100
    inserts = batch_rows * MIX[1][1] // 100
    return {"U": updates, "I": inserts, "D": batch_rows - updates - inserts}


def partition_of(ids: np.ndarray, partitions: int) -> np.ndarray:
    """Each key's partition: a multiplicative hash of the key (scattered, never moving)."""
    mixed = ids.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    return ((mixed >> np.uint64(33)) % np.uint64(partitions)).astype(np.int32)


def rows_of(ids: np.ndarray, rng: np.random.Generator, partitions: int) -> pa.Table:
    """Rows for the keys ``ids``, with new values of every non-key column."""
    n = len(ids)
    text = pa.array(rng.integers(0, 10**9, n)).cast(pa.string())
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "a": pa.array(rng.integers(0, 1 << 40, n), pa.int64()),
            "b": pa.array(rng.integers(-(1 << 31), 1 << 31, n), pa.int64()),
            "s": pc.binary_join_element_wise("s-", text, ""),
            "amt": pa.array(np.round(rng.random(n) * 1000, 2), pa.float64()),
            "p": pa.array(partition_of(ids, partitions), pa.int32()),
        },
        schema=SCHEMA,
    )


def with_op(table: pa.Table, op: str) -> pa.Table:
    """``table`` with an ``op`` column holding ``op`` on every row."""
    return table.append_column(OP, pa.array([op] * table.num_rows, pa.string()))


def write_base(rows: int, path: Path, partitions: int, seed: int = SEED) -> None:
    """Keys ``0 .. rows-1`` as one Parquet file of `ROW_GROUP`-row row groups."""
    rng = np.random.default_rng([seed, 0])
    with pq.ParquetWriter(path, SCHEMA) as writer:
        for start in range(0, rows, ROW_GROUP):
            ids = np.arange(start, min(rows, start + ROW_GROUP), dtype=np.int64)
            writer.write_table(rows_of(ids, rng, partitions), row_group_size=ROW_GROUP)


def generate(
    rows: int, root: Path, batches: int, *, partitions: int = PARTITIONS, seed: int = SEED
) -> Workload:
    """Write the base table and ``batches`` change batches under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    base = root / "base.parquet"
    write_base(rows, base, partitions, seed)
    mix = batch_mix(rows // BATCH_SHARE)
    live = np.arange(rows, dtype=np.int64)
    next_id = rows
    paths = []
    for k in range(1, batches + 1):
        rng = np.random.default_rng([seed, k])
        picked = rng.choice(len(live), mix["U"] + mix["D"], replace=False)
        updated, deleted = live[picked[: mix["U"]]], live[picked[mix["U"] :]]
        inserted = np.arange(next_id, next_id + mix["I"], dtype=np.int64)
        next_id += mix["I"]
        batch = pa.concat_tables(
            [
                with_op(rows_of(updated, rng, partitions), "U"),
                with_op(rows_of(inserted, rng, partitions), "I"),
                with_op(rows_of(deleted, rng, partitions), "D"),
            ]
        )
        path = root / f"batch_{k:03d}.parquet"
        pq.write_table(batch.take(rng.permutation(batch.num_rows)), path)
        paths.append(str(path))
        live = np.concatenate([np.delete(live, picked[mix["U"] :]), inserted])
    return Workload(
        name="synthetic",
        label=f"N = {rows:,}",
        columns=COLUMNS,
        key=KEY,
        partition=PARTITION,
        bucket_by=KEY[0],
        queries=QUERIES,
        base=str(base),
        batches=tuple(paths),
        rows=rows,
        live_rows=len(live),
    )
