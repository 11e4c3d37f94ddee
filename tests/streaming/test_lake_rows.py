"""The Spark-free reader the client tests check their results with (tests/support/lake_rows.py)
reads what `Table.read()` reads, on both layouts: streamed and upserted rows, updates, deletes,
a key moving to another partition, a null partition value, an open streaming transaction, a
past version, and (acid) the ROW__IDs."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from tests.support.lake_rows import ROW_ID, lake_rows
from tests.support.layout_profiles import LAYOUTS, table_args
from versioned import streaming as vs

TABLE = "testing.alerts"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_lake_reader_reads_what_table_read_reads(cat: Any, layout: str) -> None:
    extra = table_args(layout, buckets=2)
    table = cat.create_table(
        TABLE,
        columns="id INT NOT NULL, msg STRING, continent STRING, country STRING",
        primary_key="id",
        partition_by="continent,country",
        op_code_column="op",
        layout=layout,
        **extra,
    )
    endpoint = vs.EndPoint(cat, TABLE, ["Asia", "India"])
    writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint)
    conn = endpoint.connect(create_partition=True)
    seen: dict[int, list[dict[str, Any]]] = {}

    def check() -> None:
        expected = sorted(table.read().toArrow().to_pylist(), key=repr)
        assert lake_rows(table) == expected
        seen[table.snapshot().version] = expected

    with conn, conn.fetch_transaction_batch(2, writer) as batch:
        batch.begin_next_transaction()
        batch.write_many([f"{i},streamed {i}" for i in range(1, 9)])
        batch.commit()
        check()
        batch.begin_next_transaction()
        batch.write_many(["2,open", "20,open"])  # not committed yet: read by neither
        check()
        batch.commit()
    check()
    table.upsert(
        pa.table(
            {
                "id": pa.array([1, 3, 4, 30, 31], pa.int32()),
                "msg": ["moved", None, "updated", "europe", "no country"],
                "continent": ["Europe", "Asia", "Asia", "Europe", None],
                "country": ["UK", "India", "India", "UK", None],
                "op": ["U", "D", "U", "I", "I"],
            }
        )
    )
    check()
    table.upsert(
        pa.table(
            {
                "id": pa.array([5, 31], pa.int32()),
                "msg": [None, None],
                "continent": ["Asia", None],
                "country": ["India", None],
                "op": ["D", "D"],
            }
        )
    )
    check()
    assert {r["id"] for r in lake_rows(table)} == {1, 2, 4, 6, 7, 8, 20, 30}
    for version, expected in seen.items():
        assert lake_rows(table, version) == expected, version
    if layout == "acid":
        with_ids = sorted(table.read(with_row_id=True).toArrow().to_pylist(), key=repr)
        expected = [
            {**r, ROW_ID: tuple(r[ROW_ID][f] for f in ("writeid", "bucketid", "rowid"))}
            for r in with_ids
        ]
        assert lake_rows(table, with_row_id=True) == sorted(expected, key=repr)
