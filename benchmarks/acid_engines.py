"""The acid table of the acid benchmark, behind the interface of `benchmarks.upsert_engines`.

`AcidEngine` is a `VersionedEngine` (same ``load`` / ``apply`` / ``live`` / ``summary``, the
same staged timing from the writer's ``progress`` callback) whose table is created with
``layout="acid"``, bucketed by the key or not. Each acid table has its own catalog and
warehouse folder, so that the compaction benchmark can save the table (catalog and files) once
and put it back before every timed compaction. Everything goes through the public API
(`versioned.connect`, `Catalog.create_table`, `Table.upsert` / `read` / `compact`).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from benchmarks.harness import Meter
from benchmarks.upsert_data import COLUMNS, KEY, PARTITION
from benchmarks.upsert_engines import VersionedEngine


def _table_name(label: str) -> str:
    return f"bench.sell_{label}"


class AcidEngine(VersionedEngine):
    """An acid table partitioned like the others; ``buckets=None``: unbucketed (bucket 0)."""

    def __init__(
        self, spark: SparkSession, work: Path, label: str, buckets: int | None = None
    ) -> None:
        # VersionedEngine.__init__ is not called: it creates a versioned table in the shared
        # warehouse; this one owns its folder (`state`) so that it can be saved and restored.
        self.spark = spark
        self.label = label
        self.buckets = buckets
        self.name = f"acid, {buckets} buckets" if buckets else "acid, unbucketed"
        self.state = work / f"acid_{label}"
        self.state.mkdir(parents=True, exist_ok=True)
        self.catalog = self._connect()
        bucketing: dict[str, Any] = {"bucket_by": KEY, "buckets": buckets} if buckets else {}
        self.table = self.catalog.create_table(
            _table_name(label),
            columns=COLUMNS,
            primary_key=KEY,
            partition_by=PARTITION,
            layout="acid",
            **bucketing,
        )
        self.stages: list[dict[str, Any]] = []

    def _connect(self) -> Any:
        from versioned import connect

        return connect(
            catalog=f"sqlite:///{self.state}/catalog.db",
            warehouse=str(self.state),
            spark=self.spark,
            user="bench",
        )

    def reopen(self) -> None:
        """Close the catalog and open the table again (after its folder was replaced)."""
        self.catalog.close()
        self.catalog = self._connect()
        self.table = self.catalog.table(_table_name(self.label))

    def save(self, to: Path) -> None:
        """Copy the table (catalog and files) to ``to``; the table stays usable."""
        self.catalog.close()
        shutil.rmtree(to, ignore_errors=True)
        shutil.copytree(self.state, to)
        self.reopen()

    def restore(self, saved: Path) -> None:
        """Put back a copy made by `save` (the files keep their paths: same folder)."""
        self.catalog.close()
        shutil.rmtree(self.state)
        shutil.copytree(saved, self.state)
        self.reopen()

    def event_files(self) -> dict[str, int]:
        """Committed bucket files of the latest snapshot by kind (base, delta, delete_delta)."""
        counts = {"base": 0, "delta": 0, "delete_delta": 0}
        for f in self.table.snapshot().files:
            if f.kind in counts:
                counts[f.kind] += 1
        return counts

    def compact_major(self) -> dict[str, Any]:
        """A major compaction of every partition (`Table.compact`, as ``compact --kind major``)."""
        from versioned import CompactionOptions

        with Meter() as meter:
            result = self.table.compact(options=CompactionOptions(kind="major"))
        parts = result.partitions
        return {
            **meter.result(),
            "partitions": len(parts),
            "compacted": result.compacted,
            "rows": sum(p.rows for p in parts),
            "files_added": sum(p.files_added for p in parts),
            "files_removed": sum(p.files_removed for p in parts),
            "bytes_before": sum(p.bytes_before for p in parts),
            "bytes_after": sum(p.bytes_after for p in parts),
        }

    def close(self) -> None:
        self.catalog.close()


def plain_rewrite(live: DataFrame, out: Path) -> dict[str, Any]:
    """What a user would do without the compactor: read the latest view, write ORC.

    Partitioned like the table, no shuffle (one file per scan task and partition).
    """
    shutil.rmtree(out, ignore_errors=True)
    with Meter() as meter:
        live.write.partitionBy(PARTITION).orc(str(out))
    return meter.result()
