"""The Spark peers of `benchmarks.peers`: Delta Lake and Apache Iceberg tables fed by MERGE INTO.

Each `SparkPeer` is a continuous-benchmark writer (`benchmarks.continuous_engines.Writer`) in
the session of its format's Spark line (`session_conf`: the format's SQL extensions and
catalog; the jars come from `benchmarks.harness.jars`), beside a versioned table of the same
session. A batch is one statement (the batch's Parquet file read by Spark, as versioned's
upsert reads it; its ``op`` column says ``I`` / ``U`` / ``D``)::

    MERGE INTO t USING batch s ON t.<partition> = s.<partition> AND t.<key> = s.<key>
    WHEN MATCHED AND s.op = 'D' THEN DELETE
    WHEN MATCHED THEN UPDATE SET <every column> = s.<column>
    WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT (<every column>) VALUES (s.<column>, ...)

The kinds (`KINDS`), each with the maintenance its format's documentation recommends for a
table that keeps receiving MERGEs, at that documentation's defaults, and the scheduled
compaction both formats' docs recommend, every ``every`` batches (`MAINTENANCE_EVERY`; its
time is part of that batch's):

* **Delta, copy-on-write** (``delta.enableDeletionVectors=false``) and **Delta, deletion
  vectors** (``true``): auto compaction on (``delta.autoOptimize.autoCompact=true``), which
  Delta runs after a commit, inside the writer's statement, when a partition holds enough
  small files (``spark.databricks.delta.autoCompact.minNumFiles``, 50), and ``OPTIMIZE`` on
  schedule (bin-packing; it also purges the rows deletion vectors mark in the files it
  rewrites). Delta's docs: https://docs.delta.io/optimizations-oss (compaction with OPTIMIZE,
  auto compaction), https://docs.delta.io/delta-deletion-vectors (rows are purged when a file
  is rewritten: OPTIMIZE, auto compaction, ``REORG TABLE ... APPLY (PURGE)``); the auto
  compaction hook: https://github.com/delta-io/delta/pull/2414.
* **Iceberg, copy-on-write** (``write.merge.mode``, ``write.update.mode``,
  ``write.delete.mode`` = ``copy-on-write``, Iceberg's default) and **Iceberg,
  merge-on-read** (the three = ``merge-on-read``: position delete files), format version 2
  (Iceberg 1.12's default). Iceberg runs no maintenance inside a write; its docs recommend
  compaction on a schedule (https://iceberg.apache.org/docs/latest/maintenance/: "Compact
  data files", "Rewrite position delete files"; the procedures:
  https://iceberg.apache.org/docs/latest/spark-procedures/): ``rewrite_data_files``
  (bin-pack, default options; it applies delete files to the data files it rewrites) and,
  merge-on-read, ``rewrite_position_delete_files``. Snapshots are not expired (that deletes
  files, as versioned's vacuum, which the benchmark does not run either).

A batch's record has ``seconds`` (the MERGE and any maintenance it ran), ``merge_s``, what
the format says the MERGE did (Delta's ``operationMetrics``: rows copied, files added and
removed, scan and rewrite time; Iceberg's snapshot summary) and the maintenance commits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from benchmarks.continuous_data import OP, Workload
from benchmarks.harness import Meter

MAINTENANCE_EVERY = 5
"""The scheduled compaction (Delta's OPTIMIZE, Iceberg's procedures) runs after every this
many batches."""
CATALOG = "lake"
"""The Iceberg catalog's name in the session (a Hadoop catalog in the scratch folder)."""
NAMESPACE = "bench"
"""The Iceberg namespace of a peer whose spec names none."""


@dataclass(frozen=True)
class PeerKind:
    """One peer table: its format, table properties and maintenance."""

    label: str
    format: str
    title: str
    properties: dict[str, str]
    maintenance: str
    """In words, for the report."""


_MOR = "merge-on-read"
_COW = "copy-on-write"


def _iceberg(mode: str) -> dict[str, str]:
    """Format version 2, MERGE, UPDATE and DELETE in ``mode``."""
    return {"format-version": "2"} | {
        f"write.{op}.mode": mode for op in ("merge", "update", "delete")
    }


KINDS: dict[str, PeerKind] = {
    "delta_cow": PeerKind(
        "delta_cow",
        "delta",
        "Delta MERGE, copy-on-write",
        {"delta.enableDeletionVectors": "false", "delta.autoOptimize.autoCompact": "true"},
        "auto compaction (delta.autoOptimize.autoCompact); OPTIMIZE every {every} batches",
    ),
    "delta_dv": PeerKind(
        "delta_dv",
        "delta",
        "Delta MERGE, deletion vectors",
        {"delta.enableDeletionVectors": "true", "delta.autoOptimize.autoCompact": "true"},
        "auto compaction (delta.autoOptimize.autoCompact); OPTIMIZE every {every} batches",
    ),
    "iceberg_cow": PeerKind(
        "iceberg_cow",
        "iceberg",
        "Iceberg MERGE, copy-on-write",
        {"format-version": "2"}
        | {f"write.{op}.mode": _COW for op in ("merge", "update", "delete")},
        "rewrite_data_files every {every} batches",
    ),
    "iceberg_mor": PeerKind(
        "iceberg_mor",
        "iceberg",
        "Iceberg MERGE, merge-on-read",
        {"format-version": "2"}
        | {f"write.{op}.mode": _MOR for op in ("merge", "update", "delete")},
        "rewrite_data_files + rewrite_position_delete_files every {every} batches",
    ),
}
FORMAT_SETS = {"delta": "delta", "iceberg": "iceberg"}
"""The jar set (`benchmarks.harness.jars`) of each format."""


def session_conf(fmt: str, warehouse: Path) -> dict[str, str]:
    """The settings a session needs for the format ``fmt`` (its jars not included)."""
    if fmt == "delta":
        return {
            "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        }
    if fmt == "iceberg":
        prefix = f"spark.sql.catalog.{CATALOG}"
        return {
            "spark.sql.extensions": (
                "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
            ),
            prefix: "org.apache.iceberg.spark.SparkCatalog",
            f"{prefix}.type": "hadoop",
            f"{prefix}.warehouse": str(warehouse),
        }
    raise ValueError(f"no Spark peer of format {fmt!r}")


def column_names(columns: str) -> list[str]:
    """The names of a Spark DDL column list (``id BIGINT, a DECIMAL(15,2), ...``)."""
    return [part.split()[0] for part in columns.split(", ")]


@dataclass
class SparkPeer:
    """A Delta or Iceberg table of the session, fed by MERGE INTO (see the module)."""

    kind: PeerKind
    spark: SparkSession
    workload: Workload
    root: Path
    every: int = MAINTENANCE_EVERY
    namespace: str = NAMESPACE
    """Its Iceberg namespace (one per phase: a process's phases share its catalog)."""
    plain: str = "parquet"
    batches: int = 0
    seen: int = -1
    """The last Delta version / number of Iceberg snapshots already accounted for."""
    names: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.kind.label

    @property
    def ident(self) -> str:
        """The table's name in SQL."""
        if self.kind.format == "delta":
            return f"delta.`{self.root / self.label}`"
        return f"{CATALOG}.{self.namespace}.{self.label}"

    def create(self) -> SparkPeer:
        """Create the empty table (partitioned like versioned's); returns the peer."""
        self.names = column_names(self.workload.columns)
        props = ", ".join(f"'{k}' = '{v}'" for k, v in self.kind.properties.items())
        if self.kind.format == "iceberg":
            self.spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{self.namespace}")
        self.spark.sql(
            f"CREATE TABLE {self.ident} ({self.workload.columns}) USING {self.kind.format} "
            f"PARTITIONED BY ({self.workload.partition}) TBLPROPERTIES ({props})"
        )
        self._commits()
        return self

    def load(self, spark: SparkSession, path: str) -> dict[str, Any]:
        """The base table's Parquet file into the empty table (timed)."""
        view = f"base_{self.label}"
        with Meter() as meter:
            spark.read.parquet(path).createOrReplaceTempView(view)
            spark.sql(f"INSERT INTO {self.ident} SELECT {', '.join(self.names)} FROM {view}")
        return {**meter.result(), "commits": self._commits()}

    def merge_sql(self, view: str) -> str:
        """The MERGE statement of a batch in the temporary view ``view``."""
        on = [self.workload.partition, *self.workload.key]
        condition = " AND ".join(f"t.{c} = s.{c}" for c in on)
        sets = ", ".join(f"{c} = s.{c}" for c in self.names if c not in on)
        values = ", ".join(f"s.{c}" for c in self.names)
        return (
            f"MERGE INTO {self.ident} t USING {view} s ON {condition} "
            f"WHEN MATCHED AND s.{OP} = 'D' THEN DELETE "
            f"WHEN MATCHED THEN UPDATE SET {sets} "
            f"WHEN NOT MATCHED AND s.{OP} <> 'D' THEN INSERT ({', '.join(self.names)}) "
            f"VALUES ({values})"
        )

    def apply(self, spark: SparkSession, path: str) -> dict[str, Any]:
        """One change batch: the MERGE, then the scheduled maintenance when it is due."""
        self.batches += 1
        view = f"batch_{self.label}"
        with Meter() as total:
            with Meter() as merge:
                spark.read.parquet(path).createOrReplaceTempView(view)
                spark.sql(self.merge_sql(view))
            maintenance = self._maintain() if self._due() else None
        out = {**total.result(), "merge_s": merge.seconds, "merge_cpu_s": merge.cpu_s}
        return {
            **out,
            "maintenance": None,  # versioned's CompactionResult field: none here
            "peer_maintenance": maintenance,
            "commits": self._commits(),
        }

    def _due(self) -> bool:
        return self.batches % self.every == 0

    def _maintain(self) -> dict[str, Any]:
        """The scheduled compaction (timed; see the module)."""
        if self.kind.format == "delta":
            calls = {"OPTIMIZE": f"OPTIMIZE {self.ident}"}
        else:
            system, table = f"{CATALOG}.system", f"'{self.namespace}.{self.label}'"
            calls = {"rewrite_data_files": f"CALL {system}.rewrite_data_files(table => {table})"}
            if self.kind.properties.get("write.merge.mode") == _MOR:
                calls["rewrite_position_delete_files"] = (
                    f"CALL {system}.rewrite_position_delete_files(table => {table})"
                )
        out: dict[str, Any] = {"calls": []}
        with Meter() as meter:
            for name, call in calls.items():
                rows = [r.asDict(recursive=True) for r in self.spark.sql(call).collect()]
                out["calls"].append({"call": name, "result": rows})
        return {**out, "seconds": meter.seconds}

    def _commits(self) -> dict[str, Any]:
        """The commits since the last call: operations, what the MERGE did, compactions."""
        if self.kind.format == "delta":
            return self._delta_commits()
        return self._iceberg_commits()

    def _delta_commits(self) -> dict[str, Any]:
        history = self.spark.sql(f"DESCRIBE HISTORY {self.ident}").collect()
        new = sorted((r for r in history if r["version"] > self.seen), key=lambda r: r["version"])
        if new:
            self.seen = max(r["version"] for r in new)
        compactions = [r for r in new if r["operation"] == "OPTIMIZE"]
        merges = [dict(r["operationMetrics"] or {}) for r in new if r["operation"] == "MERGE"]
        return {
            "operations": [r["operation"] for r in new],
            "compactions": len(compactions),
            "triggers": sorted(
                {
                    "auto"
                    if (r["operationParameters"] or {}).get("auto") == "true"
                    else "scheduled"
                    for r in compactions
                }
            ),
            "merge_metrics": merges[-1] if merges else {},
            "compaction_metrics": [dict(r["operationMetrics"] or {}) for r in compactions],
        }

    def _iceberg_commits(self) -> dict[str, Any]:
        snapshots = self.spark.sql(
            f"SELECT operation, summary FROM {self.ident}.snapshots ORDER BY committed_at"
        ).collect()
        new = snapshots[self.seen + 1 :] if self.seen >= 0 else snapshots
        self.seen = len(snapshots) - 1
        compactions = [r for r in new if r["operation"] == "replace"]
        writes = [dict(r["summary"] or {}) for r in new if r["operation"] != "replace"]
        return {
            "operations": [r["operation"] for r in new],
            "compactions": len(compactions),
            "triggers": [f"every {self.every} batches"] if compactions else [],
            "merge_metrics": writes[-1] if writes else {},
            "compaction_metrics": [dict(r["summary"] or {}) for r in compactions],
        }

    def sql(self, text: str) -> DataFrame:
        """A query of the workload on the table (the session's SQL), the table as ``{t}``."""
        return self.spark.sql(text.replace("{t}", self.ident))

    def live(self) -> DataFrame:
        """The table's live rows."""
        return self.spark.sql(f"SELECT {', '.join(self.names)} FROM {self.ident}")

    def files(self) -> dict[str, Any]:
        """How many data files (and Iceberg delete files) the table's current state holds."""
        if self.kind.format == "delta":
            detail = self.spark.sql(f"DESCRIBE DETAIL {self.ident}").first()
            return {"data_files": int(detail["numFiles"]) if detail else 0}
        rows = self.spark.sql(
            f"SELECT content, COUNT(*) AS n FROM {self.ident}.files GROUP BY content"
        ).collect()
        by_content = {int(r["content"]): int(r["n"]) for r in rows}
        return {"data_files": by_content.get(0, 0), "delete_files": by_content.get(1, 0)}

    def describe(self) -> dict[str, Any]:
        """What the report says about the table."""
        return {
            "layout": self.kind.format,
            "title": self.kind.title,
            "auto_compact": True,
            "plain": self.plain,
            "table": self.ident,
            "properties": self.kind.properties,
            "maintenance": self.kind.maintenance.format(every=self.every),
            "files": self.files(),
            "spark": self.spark.version,
        }


def plain_json(value: Any) -> Any:
    """``value`` with what JSON cannot hold as text (Row values, decimals)."""
    return json.loads(json.dumps(value, default=str))
