"""Attribution of versioned's read and load costs (the profile in ``upsert_notes.md``).

Run: ``.venv/bin/python -m benchmarks.upsert_profile --rows 1000000 [--work DIR] [--repeat 5]``

Builds (or reuses, under ``--work``) a versioned table with the benchmark's data: initial load
plus 9 batches = 10 versions, and a plain Parquet copy of its live rows. Then it times
interleaved variants, CPU-metered like `benchmarks.upsert`:

* read: plain scan; the data files without the join; the index GROUP BY (180 files, and the
  same entries as one file per version); ``read()``; ``read()`` against a pre-aggregated index
  map; a map built on the driver with pyarrow (composite key and bigint key).
* load: the feed's scan and checks; the ``latest_per_key`` window; the writer's window +
  persist + ``toArrow`` of the keys; a hash-aggregate duplicate check.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from benchmarks.harness import interleave, medians, spark_session
from benchmarks.internals import latest_per_key, read_feed
from benchmarks.internals import version_reader as vr
from benchmarks.upsert_data import COLUMNS, generate
from benchmarks.upsert_engines import full_aggregate
from versioned import connect


def _table(spark: Any, rows: int, work: Path, batches: int) -> tuple[Any, Any, str]:
    """The catalog, the table (loaded, then ``batches`` batches) and the base rows' path."""
    data = generate(spark, rows, work / "data", batches=batches)
    (work / "wh").mkdir(parents=True, exist_ok=True)
    catalog = connect(
        catalog=f"sqlite:///{work}/wh/catalog.db", warehouse=str(work / "wh"), spark=spark
    )
    try:
        table = catalog.table("b.s")
    except Exception:  # first run: create and load
        table = catalog.create_table(
            "b.s", columns=COLUMNS, primary_key="sell_id", partition_by="store_id"
        )
        table.upsert(spark.read.parquet(data.base))
    for batch in data.batches[len(table.history()) - 1 :]:
        table.upsert(spark.read.parquet(batch), op_code_column="op")
    return catalog, table, data.base


def _latest(data: DataFrame, index_map: DataFrame, key_only: bool = False) -> DataFrame:
    m = index_map.withColumnRenamed("store_id", "m_store").withColumnRenamed("sell_id", "m_sell")
    if key_only:  # bigint key; correct only while sell_id is unique in the map (asserted)
        cond = data.sell_id == m.m_sell
        keep = ~data.store_id.eqNullSafe(m.m_store) | (data.version_id >= m.max_version)
    else:
        cond = data.store_id.eqNullSafe(m.m_store) & (data.sell_id == m.m_sell)
        keep = data.version_id >= m.max_version
    joined = data.join(F.broadcast(m), cond, "left")
    kept = joined.where(m.max_version.isNull() | keep)
    return kept.select(*[data[c] for c in data.columns if c != "version_id"])


def read_variants(spark: Any, catalog: Any, table: Any, work: Path) -> dict[str, Callable]:
    """The read variants, by name (see the module docstring)."""
    snap = table.snapshot()
    plain, per_version, map_dir = (str(work / d) for d in ("plain", "idx_per_version", "idx_map"))
    frames = vr.snapshot_frames(catalog.engine_context, snap)
    assert frames.index is not None, "a table with versions has a version index"
    if not Path(plain).exists():
        table.read().repartition("store_id").write.partitionBy("store_id").parquet(plain)
    if not Path(per_version).exists():
        idx = frames.index.select("store_id", "sell_id", "version_id")
        idx.repartition("version_id").write.partitionBy("version_id").parquet(per_version)
        grouped = frames.index.groupBy("store_id", "sell_id")
        grouped.agg(F.max("version_id").alias("max_version")).coalesce(1).write.parquet(map_dir)
    root = catalog.full_path(snap.table.location).removeprefix("file:")
    index_files = [f for f in snap.files if f.kind == "index"]

    def arrow_map() -> pa.Table:
        parts = []
        for f in index_files:
            t = pq.read_table(f"{root}/{f.path}", columns=["sell_id"])
            store = next(p.split("=", 1)[1] for p in f.path.split("/") if p.startswith("store_id="))
            t = t.append_column("store_id", pa.array([store] * t.num_rows))
            parts.append(t.append_column("v", pa.array([f.version] * t.num_rows, pa.int64())))
        grouped = pa.concat_tables(parts).group_by(["store_id", "sell_id"])
        return grouped.aggregate([("v", "max")]).rename_columns(
            ["store_id", "sell_id", "max_version"]
        )

    def data() -> DataFrame:
        return vr.snapshot_frames(catalog.engine_context, table.snapshot()).data

    def driver_map(key_only: bool) -> DataFrame:
        amap = arrow_map()
        if key_only:
            assert amap.num_rows == len(set(amap.column("sell_id").to_pylist()))
        return _latest(data(), spark.createDataFrame(amap), key_only)

    def group_count(frame: DataFrame | None) -> Any:
        assert frame is not None
        return frame.groupBy("store_id", "sell_id").agg(F.max("version_id")).count()

    return {
        "plain Parquet (one file per partition)": lambda: full_aggregate(spark.read.parquet(plain)),
        "snapshot data files, no join": lambda: full_aggregate(data().drop("version_id")),
        "index GROUP BY, current files": lambda: group_count(
            vr.snapshot_frames(catalog.engine_context, table.snapshot()).index
        ),
        "index GROUP BY, one file per version": lambda: group_count(
            spark.read.parquet(per_version)
        ),
        "read() (current)": lambda: full_aggregate(table.read()),
        "read() with a pre-aggregated map file": lambda: full_aggregate(
            _latest(data(), spark.read.parquet(map_dir))
        ),
        "driver-built map (pyarrow)": lambda: full_aggregate(driver_map(False)),
        "driver-built map, bigint key": lambda: full_aggregate(driver_map(True)),
    }


def load_variants(spark: Any, table: Any, base_path: str) -> dict[str, Callable]:
    """The load variants over the base rows at ``base_path``, by name (module docstring)."""
    spec, base = table.spec, spark.read.parquet(base_path)

    def rows() -> DataFrame:
        return read_feed(spark, base, spec).rows

    def writer_like() -> None:
        batch = latest_per_key(rows(), spec, with_change_count=True)
        batch = batch.persist(StorageLevel.MEMORY_AND_DISK)
        batch.select("store_id", "sell_id", "_op", "_changes").toArrow()
        batch.unpersist()

    return {
        "feed scan + checks": lambda: rows().agg(F.count("*")).collect(),
        "latest_per_key window": lambda: (
            latest_per_key(rows(), spec, with_change_count=True).agg(F.count("*")).collect()
        ),
        "window + persist + toArrow keys (writer)": writer_like,
        "hash-aggregate duplicate check": lambda: (
            rows().groupBy("store_id", "sell_id").count().agg(F.max("count")).collect()
        ),
    }


def measure(variants: dict[str, Callable], repeat: int) -> None:
    """Run the variants interleaved ``repeat`` times; print wall and CPU medians."""
    done = interleave(variants, repeat)
    for name, entries in done.timings.items():
        times = medians(entries)
        others = statistics.mean(e["others_cpu_s"] / e["seconds"] / 2 for e in entries)
        print(
            f"{name:42s} wall {times['seconds']:6.2f}s  CPU {times['cpu_s']:6.2f}s  "
            f"others {others:.0%}",
            flush=True,
        )


def parser() -> argparse.ArgumentParser:
    """The profile's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--work", default=None, help="default /tmp/versioned-profile-<rows>")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--batches", type=int, default=9, help="change batches after the load")
    parser.add_argument("--only", choices=("read", "load"), default=None)
    return parser


def main(argv: list[str] | None = None) -> None:
    """Build (or reuse) the table, then print the timings of each variant."""
    args = parser().parse_args(argv)
    spark = spark_session("upsert-profile", {"spark.driver.memory": "8g"})
    work = Path(args.work or f"/tmp/versioned-profile-{args.rows}")
    catalog, table, base = _table(spark, args.rows, work, args.batches)
    print(f"{args.rows:,} rows, {len(table.history())} versions", flush=True)
    if args.only in (None, "read"):
        measure(read_variants(spark, catalog, table, work), args.repeat)
    if args.only in (None, "load"):
        measure(load_variants(spark, table, base), args.repeat)


if __name__ == "__main__":
    main()
