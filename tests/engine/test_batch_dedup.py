"""latest_per_key: the last change per key within one batch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from versioned.engine.feeds.batch_dedup import key_columns, latest_per_key
from versioned.engine.feeds.reader import read_feed
from versioned.errors import SchemaError
from versioned.schema import TableSpec

PLAIN = TableSpec.build(
    "db.t", columns="region STRING, id BIGINT, sub INT, v STRING", primary_key="id,sub",
    partition_by="region",
)  # fmt: skip
KEYED_BY_REGION = TableSpec.build(
    "db.t", columns="region STRING, id BIGINT, sub INT, v STRING", primary_key="region,id,sub",
    partition_by="region",
)  # fmt: skip
ORDERED = TableSpec.build(
    "db.t", columns="id BIGINT, v STRING, ts BIGINT", primary_key="id", ordering_column="ts"
)
PLAIN_ROWS = "region string, id bigint, sub int, v string, _op string, _seq bigint"
ORDERED_ROWS = "id bigint, v string, ts bigint, _op string, _seq bigint"


def latest(frame: Any, spec: TableSpec, **kwargs: Any) -> set[tuple[Any, ...]]:
    result = latest_per_key(frame, spec, **kwargs).collect()
    assert len(result) == len(set(map(tuple, result)))
    return {tuple(r) for r in result}


def test_key_is_the_primary_key_led_by_partition_columns_when_they_are_part_of_it() -> None:
    assert key_columns(PLAIN) == ("id", "sub")  # unique table-wide: region is not in the key
    assert key_columns(KEYED_BY_REGION) == ("region", "id", "sub")


def test_last_change_in_input_order_wins_per_composite_key_and_partition(spark: Any) -> None:
    frame = spark.createDataFrame(
        [
            ("eu", 1, 1, "first", "I", 10),
            ("eu", 1, 1, "third", "U", 30),
            ("eu", 1, 2, "other sub", "I", 15),  # another key: (id, sub) is composite
            ("us", 1, 1, "other region", "I", 5),  # another key: a different partition
            ("eu", 1, 1, "second", "U", 20),
            (None, 1, 1, "null region", "I", 1),  # the null partition is a partition too
            (None, 1, 1, "null region, later", "U", 2),
        ],
        PLAIN_ROWS,
    )
    assert latest(frame, KEYED_BY_REGION) == {
        ("eu", 1, 1, "third", "U", 30),
        ("eu", 1, 2, "other sub", "I", 15),
        ("us", 1, 1, "other region", "I", 5),
        (None, 1, 1, "null region, later", "U", 2),
    }
    # A table-wide key moves between partitions within the batch: its last change wins.
    assert latest(frame, PLAIN) == {
        ("eu", 1, 1, "third", "U", 30),
        ("eu", 1, 2, "other sub", "I", 15),
    }


def test_ordering_column_beats_input_order_and_seq_breaks_ties(spark: Any) -> None:
    frame = spark.createDataFrame(
        [
            (1, "newest", 300, "U", 1),
            (1, "older", 200, "U", 2),
            (2, "tie, earlier", 50, "U", 3),
            (2, "tie, later", 50, "U", 4),
            (3, "stale", 10, "U", 6),
            (3, "fresh", 11, "U", 5),
        ],
        ORDERED_ROWS,
    )
    assert latest(frame, ORDERED) == {
        (1, "newest", 300, "U", 1),
        (2, "tie, later", 50, "U", 4),
        (3, "fresh", 11, "U", 5),
    }


def test_a_delete_that_comes_last_wins(spark: Any) -> None:
    frame = spark.createDataFrame(
        [(1, "a", 1, "I", 1), (1, None, 2, "D", 2), (2, None, 1, "D", 3), (2, "b", 2, "I", 4)],
        ORDERED_ROWS,
    )
    assert latest(frame, ORDERED) == {(1, None, 2, "D", 2), (2, "b", 2, "I", 4)}


def test_change_count_tells_how_many_changes_were_superseded(spark: Any) -> None:
    frame = spark.createDataFrame(
        [(1, "a", 1, "I", 1), (1, "b", 2, "U", 2), (1, "c", 3, "U", 3), (2, "x", 1, "I", 4)],
        ORDERED_ROWS,
    )
    result = latest_per_key(frame, ORDERED, with_change_count=True)
    assert result.columns == ["id", "v", "ts", "_op", "_seq", "_changes"]
    assert {(r["id"], r["v"], r["_changes"]) for r in result.collect()} == {
        (1, "c", 3),
        (2, "x", 1),
    }

    clash = TableSpec.build("db.t", columns="id BIGINT, _changes INT", primary_key="id")
    with pytest.raises(SchemaError, match="_changes"):
        latest_per_key(frame, clash, with_change_count=True)


def test_feed_files_then_dedup_keeps_the_last_row_of_the_last_file(
    spark: Any, tmp_path: Path
) -> None:
    first, second = tmp_path / "1.csv", tmp_path / "2.csv"
    first.write_text("region,id,sub,v,op\neu,1,1,a,I\neu,2,1,b,I\n", encoding="utf-8")
    second.write_text("region,id,sub,v,op\neu,1,1,c,U\neu,2,1,,D\n", encoding="utf-8")
    feed = read_feed(spark, [str(first), str(second)], PLAIN, op_code_column="op")
    got = {(r["id"], r["v"], r["_op"]) for r in latest_per_key(feed.rows, PLAIN).collect()}
    assert got == {(1, "c", "U"), (2, None, "D")}
