"""Data of the upsert benchmark: a sell-like table of N rows and change batches of 1 % of N.

Everything is generated with Spark from ``spark.range`` and written once as Parquet, so every
engine reads the same bytes. A key's ``store_id`` (the partition, 20 values) is a hash of its
``sell_id`` and never changes, so updates and deletes are scattered over all partitions.

Batch ``k`` (1-based) holds, with ``n = N / 100``:

* updates: about ``0.80 n`` existing keys chosen by a per-batch hash (new ``change_ts``,
  ``total_amt``, ``status_id`` and ``batch``);
* inserts: exactly ``0.15 n`` new keys ``N + (k-1) * 0.15 n ...``;
* deletes: about ``0.05 n`` existing keys from a reserved pool, disjoint between batches and
  never updated, so every delete hits a live row.

The ``op`` column carries ``U`` / ``I`` / ``D``; the base table has no ``op`` column.

Two settings from the environment are for smoke runs (``python -m benchmarks run --size
smoke`` sets them): ``$VERSIONED_BENCH_STORES``, the number of ``store_id`` values (default
20: on a few thousand rows the cost of an operation is its number of partitions, and the acid
layout compacts partition by partition); ``$VERSIONED_BENCH_DATA``, a folder where each size's
data is written once for every benchmark of the run (a batch depends only on N, the number of
stores and its own number). Unset, each benchmark writes its own data (a benchmark's reported
generation time is its own).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

STORES = 20
STORES_SETTING = "VERSIONED_BENCH_STORES"
MAX_BATCHES = 10
COLUMNS = (
    "sell_id BIGINT, acct_id BIGINT, change_ts STRING, create_ts STRING, "
    "payment_type_id STRING, status_id STRING, total_amt DOUBLE, batch INT, store_id STRING"
)
COLUMN_NAMES = tuple(c.split()[0] for c in COLUMNS.split(", "))
KEY = "sell_id"
PARTITION = "store_id"
OP = "op"
_SCALE = 100_000  # hash buckets per key: fractions below are in 1/100_000 of N
SHARED_DATA = "VERSIONED_BENCH_DATA"


@dataclass(frozen=True)
class BenchData:
    """Paths of the generated Parquet data of one size."""

    rows: int
    base: str
    batches: tuple[str, ...]


def _bucket(seed: int) -> Column:
    return F.pmod(F.xxhash64(F.col(KEY), F.lit(seed)), F.lit(_SCALE))


def stores() -> int:
    """The number of ``store_id`` values: 20, unless ``$VERSIONED_BENCH_STORES`` says."""
    return int(os.environ.get(STORES_SETTING) or STORES)


def _store(int_partitions: bool = False) -> Column:
    store = F.pmod(F.xxhash64(F.col(KEY)), F.lit(stores()))
    return store.cast("int") if int_partitions else F.format_string("store_%02d", store)


def _pick(values: list[str], seed: int) -> Column:
    arr = F.array(*[F.lit(v) for v in values])
    return F.element_at(
        arr, (F.pmod(F.xxhash64(F.col(KEY), F.lit(seed)), len(values)) + 1).cast("int")
    )


def _ts(epoch: Column) -> Column:
    return F.date_format(F.timestamp_seconds(epoch), "yyyy-MM-dd HH:mm:ss")


def _ids(spark: SparkSession, start: int, end: int) -> DataFrame:
    return spark.range(start, end).withColumnRenamed("id", KEY)


def _rows(keys: DataFrame, batch: int, int_partitions: bool = False) -> DataFrame:
    """Full rows for ``keys`` (a frame with ``sell_id``) as of batch ``batch`` (0 = base);
    ``store_id`` is ``store_NN`` text, or the INT ``NN`` with ``int_partitions``."""
    created = F.lit(1_600_000_000) + F.col(KEY) % F.lit(31_536_000)
    changed = created + F.lit(batch * 86_400)
    return keys.select(
        F.col(KEY).cast("long").alias(KEY),
        F.pmod(F.xxhash64(F.col(KEY), F.lit(1)), F.lit(5_000_000)).alias("acct_id"),
        _ts(changed).alias("change_ts"),
        _ts(created).alias("create_ts"),
        _pick(["CASH", "CARD", "GIFT_CARD", "CHECK", "ON_ACCOUNT"], 2).alias("payment_type_id"),
        _pick(["OPEN", "PAID", "SHIPPED", "RETURNED", "VOID"], 3 + batch).alias("status_id"),
        F.round(F.rand(seed=batch) * 1000, 2).alias("total_amt"),
        F.lit(batch).cast("int").alias("batch"),
        _store(int_partitions).alias(PARTITION),
    )


def generate(spark: SparkSession, rows: int, root: Path, batches: int = MAX_BATCHES) -> BenchData:
    """Write the base table and ``batches`` change batches under ``root`` (under
    ``$VERSIONED_BENCH_DATA`` instead if set); what an earlier call wrote there is reused."""
    if batches > MAX_BATCHES:
        raise ValueError(f"at most {MAX_BATCHES} batches")
    shared = os.environ.get(SHARED_DATA)
    if shared:
        return _generate(spark, rows, Path(shared) / f"n{rows}_s{stores()}", batches)
    return _generate(spark, rows, root, batches)


def _written(path: Path | str) -> bool:
    """Whether Spark finished writing ``path`` (an earlier call's data, reused)."""
    return (Path(path) / "_SUCCESS").exists()


def _generate(spark: SparkSession, rows: int, root: Path, batches: int) -> BenchData:
    base = root / "base"
    paths = tuple(str(root / f"batch_{k:02d}") for k in range(1, batches + 1))
    files = max(2, rows // 1_000_000)
    if not _written(base):
        frame = _rows(_ids(spark, 0, rows).repartition(files), 0)
        frame.write.mode("overwrite").parquet(str(base))
    per_batch = rows // 100
    inserts = per_batch * 15 // 100
    update_share = _SCALE * 80 // 100 // 100  # 0.8 % of N
    delete_share = _SCALE * 5 // 100 // 100  # 0.05 % of N per batch, pool of MAX_BATCHES
    existing = _ids(spark, 0, rows)
    pool = _bucket(99) < F.lit(delete_share * MAX_BATCHES)
    for k, path in enumerate(paths, start=1):
        if _written(path):
            continue
        updates = existing.where(~pool & (_bucket(k) < F.lit(update_share)))
        deletes = existing.where(pool & (_bucket(99) >= F.lit(delete_share * (k - 1))))
        deletes = deletes.where(_bucket(99) < F.lit(delete_share * k))
        new = _ids(spark, rows + (k - 1) * inserts, rows + k * inserts)
        batch = (
            _rows(updates, k)
            .withColumn(OP, F.lit("U"))
            .unionByName(_rows(new, k).withColumn(OP, F.lit("I")))
            .unionByName(_rows(deletes, k).withColumn(OP, F.lit("D")))
        )
        batch.orderBy(F.rand(seed=k)).coalesce(1).write.mode("overwrite").parquet(path)
    return BenchData(rows, str(base), paths)


def columns(int_partitions: bool = False) -> str:
    """The table's columns, ``store_id`` as STRING or INT."""
    return COLUMNS.replace("store_id STRING", "store_id INT") if int_partitions else COLUMNS


def fixed_size_data(
    spark: SparkSession,
    rows: int,
    root: Path,
    *,
    batch_rows: int,
    batches: int,
    int_partitions: bool = False,
) -> BenchData:
    """A base table of ``rows`` rows and ``batches`` change batches of ``batch_rows`` rows
    each, whatever ``rows`` is (the scaling benchmark: a fixed batch on tables of 3M-30M).

    Batch ``k`` (1-based): 80 % updates of existing keys spread evenly over the key space
    (``j * step + k``), 15 % inserts of new keys above every earlier one, 5 % deletes of
    existing keys (``i * 16 step + step / 2 + k``: never a key another batch updates or
    deletes, as long as ``batches < step / 2``).
    """
    base = root / "base"
    paths = tuple(str(root / f"batch_{k:02d}") for k in range(1, batches + 1))
    if (root / "_DONE").exists():
        return BenchData(rows, str(base), paths)
    files = max(2, rows // 1_000_000)
    keys = _ids(spark, 0, rows).repartition(files)
    _rows(keys, 0, int_partitions).write.mode("overwrite").parquet(str(base))
    updates, inserts = batch_rows * 80 // 100, batch_rows * 15 // 100
    deletes = batch_rows - updates - inserts
    step = rows // updates
    if step < 2 * (batches + 1):
        raise ValueError(f"{rows} rows are too few for batches of {batch_rows}")
    for k, path in enumerate(paths, start=1):
        changed = spark.range(0, updates).select((F.col("id") * step + k).alias(KEY))
        gone = spark.range(0, deletes).select(
            (F.col("id") * (step * (updates // deletes)) + step // 2 + k).alias(KEY)
        )
        new = _ids(spark, rows + (k - 1) * inserts, rows + k * inserts)
        batch = (
            _rows(changed, k, int_partitions)
            .withColumn(OP, F.lit("U"))
            .unionByName(_rows(new, k, int_partitions).withColumn(OP, F.lit("I")))
            .unionByName(_rows(gone, k, int_partitions).withColumn(OP, F.lit("D")))
        )
        batch.orderBy(F.rand(seed=k)).coalesce(1).write.mode("overwrite").parquet(path)
    (root / "_DONE").write_text("ok\n")
    return BenchData(rows, str(base), paths)
