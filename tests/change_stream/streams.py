"""Running ``spark.readStream.format("versioned")`` to a sink in tests, and the tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from tests.support.layout_profiles import table_args
from versioned.api.catalog import Catalog
from versioned.api.change_stream import register_data_source

CHANGE = ("_change_type", "_commit_version", "_commit_timestamp", "_commit_seq")


def change_reader(spark: Any, cat: Catalog, table: str, **options: str) -> Any:
    """``spark.readStream.format("versioned")`` locating ``cat`` by options alone."""
    register_data_source(spark)  # no catalog baked in: the options say where it is
    reader = (
        spark.readStream.format("versioned")
        .option("catalog", cat.settings.catalog_url)
        .option("warehouse", cat.settings.warehouse)
        .option("user", cat.user)
    )
    if table:
        reader = reader.option("table", table)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader


def run_to_memory(frame: Any, checkpoint: Path) -> list[dict[str, Any]]:
    """Run the stream once over everything available (``availableNow``), resuming from
    ``checkpoint``; the rows of the micro-batches this run made, in order."""
    rows: list[dict[str, Any]] = []

    def collect(batch_frame: Any, _batch_id: int) -> None:
        rows.extend(r.asDict() for r in batch_frame.collect())

    query = (
        frame.writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination()
    finally:
        query.stop()
    return rows


def run_to_parquet(frame: Any, out: Path, checkpoint: Path) -> None:
    """Run the stream once to a Parquet sink (Spark's exactly-once file sink)."""
    query = (
        frame.writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination()
    finally:
        query.stop()


def folded(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """Stream rows as `Table.changes` shows them: ``insert`` and ``delete`` as they are,
    ``update_postimage`` as ``update``, pre-images left out; sorted."""
    kinds = {"insert": "insert", "update_postimage": "update", "delete": "delete"}
    return sorted(
        (
            (kinds[r["_change_type"]], *[r[c] for c in columns])
            for r in rows
            if r["_change_type"] in kinds
        ),
        key=repr,
    )


def batch(rows: Sequence[tuple[Any, ...]], *, extra: bool = False) -> pa.Table:
    """Changes ``(op, id, v, n, p[, extra])`` of the test table."""
    names = ["op", "id", "v", "n", "p"] + (["extra"] if extra else [])
    types = [pa.string(), pa.int32(), pa.string(), pa.float64(), pa.string(), pa.string()]
    columns = list(zip(*rows, strict=True))
    return pa.table({n: pa.array(columns[i], types[i]) for i, n in enumerate(names)})


def create(cat: Catalog, layout: str, name: str = "cs.t", **options: Any) -> Any:
    """A table keyed by ``id`` unique table-wide (partition ``p`` is not in the key)."""
    args: dict[str, Any] = table_args(layout, buckets=2)
    args.update(options)
    return cat.create_table(
        name,
        columns="id INT, v STRING, n DOUBLE, p STRING",
        primary_key="id",
        partition_by="p",
        op_code_column="op",
        layout=layout,
        **args,
    )
