"""The driver's merge of a partition (pyarrow) against Spark's latest-version query, row for row.

Compaction merges partitions that fit the driver with `latest_partition_rows` and the others
with the Spark reader (`engine/spark/sql/latest_view.sql`): both must keep the same rows, over
composite keys, deletes and re-inserts, a column added after the first versions, and a key
written to several partitions of a table-wide key.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from versioned.api.catalog import Catalog
from versioned.layouts.version_partition.driver_compaction import (
    fits_driver,
    latest_partition_rows,
)


@pytest.mark.parametrize("key", ["a", "a, b"])
def test_the_driver_keeps_the_rows_the_spark_reader_keeps(cat: Catalog, key: str) -> None:
    t = cat.create_table(
        "t.merge",
        columns="a BIGINT, b STRING, v DOUBLE, p STRING, op STRING",
        primary_key=[k.strip() for k in key.split(",")],
        partition_by="p",
        op_code_column="op",
        properties={"auto_compact": "false"},
    )

    def batch(rows: list[tuple[Any, ...]], extra: bool = False) -> pa.Table:
        names = ["a", "b", "v", "p", "op"] + (["w"] if extra else [])
        return pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)})

    t.upsert(batch([(i, f"k{i % 3}", float(i), "xy"[i % 2], "I") for i in range(60)]))
    t.upsert(
        batch(
            [(i, f"k{i % 3}", 100.0 + i, "xy"[i % 2], "U") for i in range(0, 60, 4)]
            + [(i, f"k{i % 3}", None, "xy"[i % 2], "D") for i in range(1, 60, 7)]
        )
    )
    t.add_columns("w INT")
    t.upsert(
        batch(
            [(i, f"k{i % 3}", 200.0 + i, "xy"[i % 2], "U", i) for i in range(0, 60, 5)]
            + [(1, "k1", 7.0, "y", "I", 1), (500, "new", 5.0, "x", "I", 2)],
            extra=True,
        )
    )
    spec = t.refresh().spec
    snapshot = t.snapshot()
    columns = [c.name for c in spec.data_columns]
    location = t.info.location
    for partition in snapshot.partitions.values():
        files = [f for f in snapshot.files if f.partition_id == partition.id]
        assert fits_driver(spec, sum(f.row_count for f in files if f.kind == "data"))
        merged = latest_partition_rows(cat.engine_context.fileio, location, spec, files)
        assert merged.column_names == columns
        value = partition.path.split("=", 1)[1]
        spark_rows = t.read().where(f"p = '{value}'").select(*columns).collect()
        ours = [tuple(r[c] for c in columns) for r in merged.to_pylist()]
        theirs = [tuple(r[c] for c in columns) for r in spark_rows]
        assert sorted(ours, key=repr) == sorted(theirs, key=repr)
        assert merged.num_rows == len(spark_rows) > 0


def test_orc_tables_and_ordering_columns_stay_with_spark(cat: Catalog) -> None:
    orc = cat.create_table("t.o", columns="a BIGINT, v DOUBLE", primary_key="a", file_format="orc")
    ordered = cat.create_table(
        "t.s", columns="a BIGINT, ts BIGINT", primary_key="a", ordering_column="ts"
    )
    plain = cat.create_table("t.p", columns="a BIGINT, v DOUBLE", primary_key="a")
    assert not fits_driver(orc.spec, 10)
    assert not fits_driver(ordered.spec, 10)
    assert fits_driver(plain.spec, 10)
    assert not fits_driver(plain.spec, 10_000_000)
