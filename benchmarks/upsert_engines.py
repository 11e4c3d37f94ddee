"""The four ways the upsert benchmark applies a change batch, behind one small interface.

Each engine has ``load(data)`` (initial load of the base table), ``apply(batch_path)`` (one
change batch; the timed operation) and ``summary()`` (live row count and sum of ``total_amt``,
to check that all engines agree). ``versioned`` and the naive rewrite run in the shared
SparkSession; delta-rs and pyiceberg get pyarrow tables read from the same Parquet files.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from benchmarks.harness import Meter
from benchmarks.upsert_data import COLUMN_NAMES, COLUMNS, KEY, OP, PARTITION, BenchData


def spark_summary(frame: DataFrame) -> tuple[int, float]:
    row = frame.agg(F.count(F.lit(1)).alias("n"), F.sum("total_amt").alias("s")).first()
    assert row is not None  # an aggregate has one row
    return int(row["n"]), round(float(row["s"] or 0.0), 2)


def full_aggregate(frame: DataFrame) -> tuple[int, float, int]:
    """count, sum(total_amt) and sum(hash(every column)): forces every column to be read."""
    row = frame.agg(
        F.count(F.lit(1)).alias("n"),
        F.sum("total_amt").alias("s"),
        F.sum(F.hash(*[F.col(c) for c in COLUMN_NAMES])).alias("h"),
    ).first()
    assert row is not None  # an aggregate has one row
    return int(row["n"]), round(float(row["s"] or 0.0), 2), int(row["h"] or 0)


def _arrow_summary(dataset: ds.Dataset) -> tuple[int, float]:
    table = dataset.to_table(columns=["total_amt"])
    return table.num_rows, round(float(pc.sum(table.column("total_amt")).as_py() or 0.0), 2)


class VersionedEngine:
    """A versioned table (version partitions); batches carry I/U/D in ``op``."""

    name = "versioned"

    def __init__(self, spark: SparkSession, work: Path, label: str) -> None:
        from versioned import connect

        self.spark = spark
        warehouse = work / "warehouse"
        warehouse.mkdir(parents=True, exist_ok=True)
        self.catalog = connect(
            catalog=f"sqlite:///{warehouse}/catalog.db",
            warehouse=str(warehouse),
            spark=spark,
            user="bench",
        )
        self.table = self.catalog.create_table(
            f"bench.sell_{label}", columns=COLUMNS, primary_key=KEY, partition_by=PARTITION
        )
        self.stages: list[dict[str, Any]] = []

    def _upsert(self, frame: DataFrame, op_column: str | None) -> dict[str, Any]:
        marks: list[tuple[float, str]] = []
        with Meter() as meter:
            start = time.perf_counter()
            result = self.table.upsert(
                frame,
                op_code_column=op_column,
                progress=lambda msg: marks.append((time.perf_counter(), msg)),
            )
            end = time.perf_counter()
        stages = []
        previous = ("start", start)
        for at, msg in [*marks, (end, "returned")]:
            stages.append({"stage": f"{previous[0]} -> {msg}", "seconds": at - previous[1]})
            previous = (msg, at)
        return {
            **meter.result(),
            "stages": stages,
            "version": result.version,
            "inserted": result.inserted,
            "updated": result.updated,
            "deleted": result.deleted,
            "ignored_deletes": result.ignored_deletes,
            "files_written": result.files_written,
        }

    def load(self, data: BenchData) -> dict[str, Any]:
        return self._upsert(self.spark.read.parquet(data.base), None)

    def apply(self, batch: str) -> dict[str, Any]:
        out = self._upsert(self.spark.read.parquet(batch), OP)
        self.stages.append(out)
        return out

    def live(self) -> DataFrame:
        return self.table.read()

    def summary(self) -> tuple[int, float]:
        return spark_summary(self.live())

    def versions(self) -> int:
        return len(self.table.history())


class NaiveEngine:
    """The blog's starting point: union table + batch, latest per key, rewrite everything.

    The upsert benchmark's table by default; ``key``, ``partition`` and ``columns`` name
    another's (`benchmarks.peers`: the continuous benchmark's 6 columns).
    """

    name = "naive rewrite"

    def __init__(
        self,
        spark: SparkSession,
        work: Path,
        *,
        key: Sequence[str] = (KEY,),
        partition: str = PARTITION,
        columns: Sequence[str] = COLUMN_NAMES,
    ) -> None:
        self.spark = spark
        self.root = work / "naive"
        self.current: str | None = None
        self.generation = 0
        self.key, self.partition, self.columns = tuple(key), partition, tuple(columns)

    def _next_dir(self) -> str:
        self.generation += 1
        return str(self.root / f"gen_{self.generation:03d}")

    def load(self, data: BenchData | Any) -> dict[str, Any]:
        """A plain partitioned Parquet write of ``data.base`` (timed)."""
        target = self._next_dir()
        with Meter() as meter:
            self.spark.read.parquet(data.base).write.partitionBy(self.partition).parquet(target)
        self.current = target
        return meter.result()

    def apply(self, batch: str) -> dict[str, Any]:
        assert self.current is not None
        target = self._next_dir()
        with Meter() as meter:
            table = self.spark.read.parquet(self.current).select(*self.columns)
            changes = self.spark.read.parquet(batch).select(*self.columns, OP)
            both = (
                table.withColumn(OP, F.lit("I"))
                .withColumn("_seq", F.lit(0))
                .unionByName(changes.withColumn("_seq", F.lit(1)))
            )
            latest = Window.partitionBy(self.partition, *self.key).orderBy(F.col("_seq").desc())
            kept = (
                both.withColumn("_rn", F.row_number().over(latest))
                .where((F.col("_rn") == 1) & (F.col(OP) != "D"))
                .select(*self.columns)
            )
            kept.write.mode("overwrite").partitionBy(self.partition).parquet(target)
        old, self.current = self.current, target
        shutil.rmtree(old, ignore_errors=True)  # keep the disk footprint flat (not timed)
        return meter.result()

    def live(self) -> DataFrame:
        assert self.current is not None
        return self.spark.read.parquet(self.current)

    def summary(self) -> tuple[int, float]:
        return spark_summary(self.live())


class DeltaEngine:
    """delta-rs: ``write_deltalake`` partitioned by store_id, then one MERGE per batch."""

    name = "delta-rs merge"

    def __init__(self, work: Path) -> None:
        self.path = str(work / "delta")

    def load(self, data: BenchData) -> dict[str, Any]:
        from deltalake import write_deltalake

        table = pq.read_table(data.base)
        with Meter() as meter:
            write_deltalake(self.path, table, partition_by=[PARTITION])
        return meter.result()

    def apply(self, batch: str) -> dict[str, Any]:
        from deltalake import DeltaTable

        source = pq.read_table(batch)
        with Meter() as meter:
            metrics = (
                DeltaTable(self.path)
                .merge(
                    source,
                    predicate=f"t.{PARTITION} = s.{PARTITION} AND t.{KEY} = s.{KEY}",
                    source_alias="s",
                    target_alias="t",
                )
                .when_matched_delete(predicate=f"s.{OP} = 'D'")
                .when_matched_update_all(except_cols=[OP])
                .when_not_matched_insert_all(predicate=f"s.{OP} <> 'D'", except_cols=[OP])
                .execute()
            )
        keep: tuple[str, ...] = (
            "num_target_rows_updated",
            "num_target_rows_inserted",
            "num_target_rows_deleted",
        )
        keep += ("num_target_files_added", "num_target_files_removed")
        return {**meter.result(), **{k: metrics.get(k) for k in keep}}

    def summary(self) -> tuple[int, float]:
        from deltalake import DeltaTable

        return _arrow_summary(DeltaTable(self.path).to_pyarrow_dataset())


class IcebergEngine:
    """pyiceberg on a SQLite SqlCatalog: ``upsert`` plus a delete, in one transaction."""

    name = "pyiceberg upsert"

    def __init__(self, work: Path) -> None:
        from pyiceberg.catalog.sql import SqlCatalog

        root = work / "iceberg"
        root.mkdir(parents=True, exist_ok=True)
        self.catalog = SqlCatalog(
            "bench", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}"
        )
        self.catalog.create_namespace_if_not_exists("bench")
        self.table: Any = None

    def load(self, data: BenchData) -> dict[str, Any]:
        table = pq.read_table(data.base)
        with Meter() as meter:
            self.table = self.catalog.create_table("bench.sell", schema=table.schema)
            with self.table.update_spec() as spec:
                spec.add_identity(PARTITION)
            self.table.append(table)
        return meter.result()

    def apply(self, batch: str) -> dict[str, Any]:
        from pyiceberg.expressions import In

        source = pq.read_table(batch)
        is_delete = pc.equal(source.column(OP), "D")
        upserts = source.filter(pc.invert(is_delete)).drop_columns([OP])
        deleted = source.filter(is_delete).column(KEY).to_pylist()
        with Meter() as meter:
            tx = self.table.transaction()
            result = tx.upsert(upserts, join_cols=[KEY])
            if deleted:
                # In(term, literals) at run time; pyiceberg's typing names other fields.
                tx.delete(cast(Any, In)(KEY, deleted))
            tx.commit_transaction()
        return {
            **meter.result(),
            "rows_updated": result.rows_updated,
            "rows_inserted": result.rows_inserted,
        }

    def summary(self) -> tuple[int, float]:
        self.table = self.catalog.load_table("bench.sell")
        return _arrow_summary(
            ds.dataset(self.table.scan(selected_fields=("total_amt",)).to_arrow())
        )
