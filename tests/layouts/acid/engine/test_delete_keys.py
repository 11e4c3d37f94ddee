"""Delete events packed into one number for the merge on read (`engine.acid.delete_keys`)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pytest

from tests.layouts.acid.engine.tables import acid_table
from versioned.layouts.acid.engine import delete_keys
from versioned.layouts.acid.engine.delete_keys import KeyPacking, valid_rows
from versioned.layouts.acid.write_ids import ValidWriteIdList

COLUMNS = ("p", "w", "b", "r")


def _events(rows: list[tuple[int, int, int, int]]) -> pa.Table:
    return pa.table({c: pa.array([r[i] for r in rows], pa.int64()) for i, c in enumerate(COLUMNS)})


def test_packed_keys_are_exact_within_the_ranges_and_null_outside(spark: Any) -> None:
    bucket = 1 << 29
    deletes = _events([(3, 1, bucket, 0), (7, 4, bucket + (5 << 16), 900), (3, 2, bucket, 17)])
    packing = KeyPacking.of(deletes, COLUMNS)
    assert packing is not None
    assert [(f.low, f.high, f.bits) for f in packing.fields] == [
        (3, 7, 3),
        (1, 4, 2),
        (bucket, bucket + (5 << 16), 19),
        (0, 900, 10),
    ]
    keys = packing.pack(deletes).tolist()
    assert len(set(keys)) == 3 and min(keys) >= 0
    # Every combination within the ranges gets its own key, the same in numpy and Spark.
    probe = [
        (p, w, b, r)
        for p in (3, 5, 7)
        for w in (1, 2, 4)
        for b in (bucket, bucket + (5 << 16))
        for r in (0, 17, 900)
    ]
    outside = [(2, 1, bucket, 0), (3, 5, bucket, 0), (3, 1, bucket - 1, 0), (3, 1, bucket, 901)]
    frame = spark.createDataFrame(probe + outside, "p bigint, w bigint, b int, r bigint")
    got = [row[0] for row in frame.select(packing.column()).collect()]
    expected = packing.pack(_events(probe)).tolist()
    assert got[: len(probe)] == expected and len(set(expected)) == len(probe)
    assert got[len(probe) :] == [None] * len(outside)
    assert set(keys) <= set(expected)


def test_ranges_wider_than_a_bigint_do_not_pack() -> None:
    wide = _events([(0, 0, 0, 0), (1 << 20, 1 << 20, 1 << 20, 1 << 4)])
    assert KeyPacking.of(wide, COLUMNS) is None  # 21 + 21 + 21 + 5 bits > 63


def test_valid_rows_drop_open_aborted_and_later_write_ids() -> None:
    events = _events([(1, 1, 0, 0)] * 5).set_column(1, "w", pa.array([1, 2, 3, 4, 6], pa.int64()))
    ids = ValidWriteIdList("t", high_water_mark=5, open_ids=(2,), aborted_ids=(4,))
    assert valid_rows(events, "w", ids).column("w").to_pylist() == [1, 3]


@pytest.mark.parametrize("reader", ["driver", "spark", "driver, too wide to pack"])
def test_reads_merge_on_packed_keys_when_the_driver_reads_the_deletes(
    cat: Any, reader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Packed keys when the driver reads the delete events; the four fields when Spark
    reads them, or when their ranges need more bits than a key has (here: none allowed)."""
    properties = {"read.driver_max_events": "0"} if reader == "spark" else {}
    if reader == "driver, too wide to pack":
        monkeypatch.setattr(delete_keys, "MAX_BITS", 0)
    table = acid_table(
        cat,
        "k.t",
        columns="id BIGINT NOT NULL, v STRING, store STRING",
        buckets=2,
        op_code_column="op",
        properties=properties,
    )
    ids = list(range(1, 201))
    stores = [["a", "b", None][i % 3] for i in ids]
    first = {"id": ids, "v": [str(i) for i in ids], "store": stores, "op": ["I"] * 200}
    table.upsert(pa.table(first))
    gone = list(range(1, 201, 3))
    kept = [i for i in ids if i not in gone]
    table.upsert(
        pa.table(
            {
                "id": gone + kept[:5],
                "v": ["x"] * (len(gone) + 5),
                "store": [stores[i - 1] for i in gone + kept[:5]],
                "op": ["D"] * len(gone) + ["U"] * 5,
            }
        )
    )
    frame = table.read()
    plan = frame._jdf.queryExecution().optimizedPlan().toString()
    assert ("#d_key" in plan) == (reader == "driver")
    assert "#d_#partition_id" in plan or reader == "driver"
    rows = {r["id"]: r["v"] for r in frame.collect()}
    assert sorted(rows) == kept
    assert [rows[i] for i in kept[:5]] == ["x"] * 5 and rows[kept[5]] == str(kept[5])


def test_spark_read_inserts_meet_driver_read_deletes_in_an_unpartitioned_table(cat: Any) -> None:
    """A DATE column sends the insert files to Spark while the delete events stay on the
    driver: both sides must name the table's one partition by the same catalog id."""
    table = acid_table(
        cat,
        "k.flat",
        columns="id BIGINT NOT NULL, day DATE",
        partition_by=None,
        buckets=2,
        op_code_column="op",
    )
    days = [dt.date(2024, 1, d) for d in range(1, 11)]
    table.upsert(pa.table({"id": list(range(1, 11)), "day": days, "op": ["I"] * 10}))
    table.upsert(pa.table({"id": [2, 5], "day": [days[1], days[4]], "op": ["D", "D"]}))
    frame = table.read()
    assert "#d_key" in frame._jdf.queryExecution().optimizedPlan().toString()
    assert sorted(r["id"] for r in frame.collect()) == [1, 3, 4, 6, 7, 8, 9, 10]
