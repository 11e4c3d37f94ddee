"""The writers of the continuous benchmark: versioned tables and delta-rs MERGE, any workload.

A writer (`Writer`: a versioned table here, a Spark peer's table in `benchmarks.peer_engines`)
loads the base table, applies one change batch at a time and answers the workload's queries.

`Subject` is one versioned table fed every batch through the public API (``Table.upsert`` of
the batch's Parquet file read as a DataFrame of the caller's session), with its layout
(``versioned`` version partitions or ``acid``) and its own maintenance on (the default: a new
table runs it after its commits) or off (table property ``auto_compact=false``: the reference
line). What maintenance ran after a batch comes from ``CommitResult.maintenance`` (a
`versioned.results.CompactionResult`, or None) and from the table's history (commits of
operation ``compact`` since the batch's upsert).

`DeltaMerge` is delta-rs: ``write_deltalake`` partitioned like the table, then one MERGE per
batch of the batch read into an Arrow table beforehand (only the MERGE is timed), on the
table's key and partition column; it also hands out its live data files, from which the
plain copies of the reads are written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession

from benchmarks.continuous_data import OP, Workload
from benchmarks.harness import Meter

AUTO_COMPACT = "auto_compact"
"""The table property that turns a table's own maintenance off (``"false"``)."""


class Writer(Protocol):
    """A table the continuous benchmark feeds every change batch and reads after each."""

    label: str
    plain: str
    """The format of the plain copy its reads are compared with (``parquet``, ``orc``)."""

    def load(self, spark: SparkSession, path: str) -> dict[str, Any]:
        """The base table's Parquet file into the empty table (timed)."""
        ...

    def apply(self, spark: SparkSession, path: str) -> dict[str, Any]:
        """One change batch's Parquet file (timed, with any maintenance it runs)."""
        ...

    def sql(self, text: str) -> DataFrame:
        """A query of the workload, the table standing for ``{t}``."""
        ...

    def live(self) -> DataFrame:
        """The table's live rows."""
        ...

    def describe(self) -> dict[str, Any]:
        """What the report says about the table."""
        ...


@dataclass
class Subject:
    """One versioned table of the run, and where it stands in its history."""

    label: str
    """``version``, ``acid``; ``version_off`` / ``acid_off`` for the reference tables."""
    layout: str
    auto_compact: bool
    plain: str
    """The format of its plain copy: ``parquet`` (version layout) or ``orc`` (acid)."""
    table: Any
    name: str
    catalog: Any = None
    """The `versioned.Catalog` its queries run through (``Catalog.sql``)."""
    seen: int = 0
    """The history's last commit sequence number already accounted for."""
    extra: dict[str, Any] = field(default_factory=dict)

    def sql(self, text: str) -> DataFrame:
        """A query through ``Catalog.sql``, the table standing for ``{t}``."""
        frame: DataFrame = self.catalog.sql(text.replace("{t}", self.name))
        return frame

    def live(self) -> DataFrame:
        """The table's latest view (``Table.read``)."""
        frame: DataFrame = self.table.read()
        return frame

    def describe(self) -> dict[str, Any]:
        """What the report says about the table."""
        return {
            "layout": self.layout,
            "auto_compact": self.auto_compact,
            "plain": self.plain,
            "table": self.name,
            **self.extra,
        }

    def load(self, spark: SparkSession, path: str) -> dict[str, Any]:
        """The first load: the base table's Parquet file into the empty table."""
        with Meter() as meter:
            result = self.table.upsert(spark.read.parquet(path))
        self._commits()
        return {**meter.result(), "version": result.version, "inserted": result.inserted}

    def apply(self, spark: SparkSession, path: str) -> dict[str, Any]:
        """One change batch (timed: the upsert, including any maintenance it ran inline)."""
        with Meter() as meter:
            result = self.table.upsert(spark.read.parquet(path), op_code_column=OP)
        return {
            **meter.result(),
            "version": result.version,
            "inserted": result.inserted,
            "updated": result.updated,
            "deleted": result.deleted,
            "ignored_deletes": result.ignored_deletes,
            "files_written": result.files_written,
            "maintenance": maintenance(getattr(result, "maintenance", None)),
            "commits": self._commits(),
        }

    def _commits(self) -> dict[str, Any]:
        """The commits since the last call: their operations, and the compactions' metrics."""
        new = [c for c in self.table.history() if c.seq > self.seen]
        if new:
            self.seen = max(c.seq for c in new)
        compactions = [c for c in new if c.operation == "compact"]
        return {
            "operations": [c.operation for c in new],
            "compactions": len(compactions),
            "triggers": sorted({str(c.metrics.get("trigger", "-")) for c in compactions}),
        }


def maintenance(result: Any) -> dict[str, Any] | None:
    """A `CompactionResult` in plain data (None: no maintenance ran)."""
    if result is None:
        return None
    parts = getattr(result, "partitions", ())
    return {
        "compacted": sum(1 for p in parts if p.status == "compacted"),
        "partitions": len(parts),
        "seconds": float(getattr(result, "seconds", 0.0)),
        "rows": sum(p.rows for p in parts),
        "files_removed": sum(p.files_removed for p in parts),
        "files_added": sum(p.files_added for p in parts),
    }


def bench_catalog(spark: SparkSession, work: Path) -> Any:
    """A `versioned.Catalog` of the run: SQLite and the warehouse in ``work/warehouse``."""
    from versioned import connect

    warehouse = work / "warehouse"
    warehouse.mkdir(parents=True, exist_ok=True)
    return connect(
        catalog=f"sqlite:///{warehouse}/catalog.db",
        warehouse=str(warehouse),
        spark=spark,
        user="bench",
    )


def create_subject(
    catalog: Any,
    workload: Workload,
    *,
    layout: str,
    auto_compact: bool,
    buckets: int,
    properties: dict[str, str] | None = None,
) -> Subject:
    """Create the table of ``layout`` in ``catalog``; maintenance off unless ``auto_compact``
    (on: the table's default, no property set); ``properties`` (thresholds) go to the tables
    with maintenance on."""
    label = ("version" if layout == "versioned" else "acid") + ("" if auto_compact else "_off")
    name = f"bench.{workload.name}_{label}"
    given = dict(properties or {}) if auto_compact else {AUTO_COMPACT: "false"}
    extra: dict[str, Any] = {}
    if layout == "acid":
        extra = {"bucket_by": workload.bucket_by, "buckets": buckets}
    table = catalog.create_table(
        name,
        columns=workload.columns,
        primary_key=list(workload.key),
        partition_by=workload.partition,
        layout=layout,
        properties=given,
        **extra,
    )
    described = table.describe()  # key_scope: table (the partition is not part of the key)
    extra.update(key_scope=described["key_scope"], properties=described.get("properties", {}))
    plain = "orc" if layout == "acid" else "parquet"
    return Subject(label, layout, auto_compact, plain, table, name, catalog=catalog, extra=extra)


class DeltaMerge:
    """delta-rs: a table partitioned like the benchmark's, one MERGE per change batch."""

    def __init__(self, path: Path, workload: Workload) -> None:
        self.path = str(path)
        self.workload = workload
        on = [workload.partition, *workload.key]
        self.predicate = " AND ".join(f"t.{c} = s.{c}" for c in on)

    def load(self) -> dict[str, Any]:
        """Write the base table (timed; the Parquet file is read before)."""
        from deltalake import write_deltalake

        table = pq.read_table(self.workload.base)
        with Meter() as meter:
            write_deltalake(self.path, table, partition_by=[self.workload.partition])
        return meter.result()

    def apply(self, batch: pa.Table) -> dict[str, Any]:
        """MERGE one change batch, already in memory (timed)."""
        from deltalake import DeltaTable

        with Meter() as meter:
            metrics = (
                DeltaTable(self.path)
                .merge(batch, predicate=self.predicate, source_alias="s", target_alias="t")
                .when_matched_delete(predicate=f"s.{OP} = 'D'")
                .when_matched_update_all(except_cols=[OP])
                .when_not_matched_insert_all(predicate=f"s.{OP} <> 'D'", except_cols=[OP])
                .execute()
            )
        keep = (
            "num_target_rows_updated",
            "num_target_rows_inserted",
            "num_target_rows_deleted",
            "num_target_files_added",
            "num_target_files_removed",
        )
        return {**meter.result(), **{k: metrics.get(k) for k in keep}}

    def files(self) -> list[str]:
        """The live data files (delta-rs rewrites files on MERGE: no deletion vectors)."""
        from deltalake import DeltaTable

        return list(DeltaTable(self.path).file_uris())
