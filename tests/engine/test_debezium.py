"""Debezium change events through read_feed: envelopes, wrappers, flattened rows, ordering."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from versioned.engine.feeds.reader import Feed, read_feed
from versioned.errors import InputError, SchemaError
from versioned.schema import TableSpec

CUSTOMERS = TableSpec.build(
    "db.customers", columns="id BIGINT NOT NULL, name STRING, lsn BIGINT", primary_key="id",
    ordering_column="lsn",
)  # fmt: skip


def event(op: str, before: dict[str, Any] | None, after: dict[str, Any] | None, **meta: Any) -> str:
    return json.dumps({"before": before, "after": after, "op": op, **meta})


def write_lines(path: Path, lines: list[str]) -> str:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def rows(feed: Feed, *columns: str) -> list[tuple[Any, ...]]:
    got = sorted(feed.rows.collect(), key=lambda r: int(r["_seq"]))
    return [tuple(r[c] for c in columns) for r in got]


def test_envelope_ops_deletes_keyed_by_before_tombstones_and_truncates_counted(
    spark: Any, tmp_path: Path
) -> None:
    spec = TableSpec.build(
        "db.c", columns="id BIGINT NOT NULL, name STRING NOT NULL", primary_key="id"
    )
    lines = [
        event("r", None, {"id": 1, "name": "snap"}),
        event("c", None, {"id": 2, "name": "new"}),
        event("u", {"id": 2, "name": "new"}, {"id": 2, "name": "renamed"}),
        event("d", {"id": 1, "name": None}, None),
        "null",  # the Kafka tombstone after a delete
        event("t", None, None),
    ]
    feed = read_feed(spark, write_lines(tmp_path / "cdc.json", lines), spec, format="debezium")
    assert rows(feed, "id", "name", "_op") == [
        (1, "snap", "U"),
        (2, "new", "I"),
        (2, "renamed", "U"),
        (1, None, "D"),
    ]
    assert feed.rejected.count() == 0
    assert feed.events is not None
    assert (feed.events.tombstones(), feed.events.truncates()) == (1, 1)


def test_schema_payload_wrapper_and_ordering_from_source_lsn(spark: Any, tmp_path: Path) -> None:
    def wrapped(op: str, before: Any, after: Any, lsn: int) -> str:
        payload = {"before": before, "after": after, "op": op, "ts_ms": 99,
                   "source": {"lsn": lsn, "ts_ms": 5, "db": "shop"}}  # fmt: skip
        return json.dumps({"schema": {"type": "struct", "fields": []}, "payload": payload})

    lines = [
        wrapped("c", None, {"id": 7, "name": "a"}, 1000),
        wrapped("u", {"id": 7, "name": "a"}, {"id": 7, "name": "b"}, 1010),
        wrapped("d", {"id": 7, "name": "b"}, None, 1020),
        json.dumps({"schema": None, "payload": None}),  # tombstone
    ]
    feed = read_feed(spark, write_lines(tmp_path / "w.json", lines), CUSTOMERS, format="debezium")
    assert rows(feed, "id", "name", "lsn", "_op") == [
        (7, "a", 1000, "I"),
        (7, "b", 1010, "U"),
        (7, "b", 1020, "D"),
    ]
    assert feed.rejected.count() == 0


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({"ts_ms": 3, "source": {"lsn": 1, "ts_ms": 2}}, 1),
        ({"ts_ms": 3, "source": {"ts_ms": 2, "file": "binlog.1"}}, 2),
        ({"ts_ms": 3}, 3),
    ],
    ids=["lsn", "source-ts_ms", "ts_ms"],
)
def test_ordering_comes_from_lsn_else_source_ts_else_event_ts(
    spark: Any, tmp_path: Path, meta: dict[str, Any], expected: int
) -> None:
    path = write_lines(tmp_path / "o.json", [event("c", None, {"id": 1, "name": "x"}, **meta)])
    assert rows(read_feed(spark, path, CUSTOMERS, format="debezium"), "lsn") == [(expected,)]


def test_ordering_in_the_row_wins_over_metadata(spark: Any, tmp_path: Path) -> None:
    line = event("c", None, {"id": 1, "name": "x", "lsn": 42}, source={"lsn": 1})
    path = write_lines(tmp_path / "o.json", [line])
    assert rows(read_feed(spark, path, CUSTOMERS, format="debezium"), "lsn") == [(42,)]


def test_timestamp_ordering_reads_source_ts_ms_as_milliseconds(spark: Any, tmp_path: Path) -> None:
    spec = TableSpec.build(
        "db.c", columns="id BIGINT, changed_at TIMESTAMP", primary_key="id",
        ordering_column="changed_at",
    )  # fmt: skip
    millis = int(datetime(2024, 5, 6, 7, 8, 9, 250000, tzinfo=UTC).timestamp() * 1000)
    line = event("u", None, {"id": 1}, source={"lsn": 5, "ts_ms": millis}, ts_ms=millis + 1000)
    ((changed_at,),) = rows(read_feed(spark, write_lines(tmp_path / "t.json", [line]), spec,
                                      format="debezium"), "changed_at")  # fmt: skip
    assert changed_at.timestamp() == millis / 1000


def test_flattened_rows_with_op_deleted_flag_and_lsn(spark: Any, tmp_path: Path) -> None:
    lines = [
        json.dumps({"id": 1, "name": "a", "__op": "c", "__lsn": 10, "__deleted": "false"}),
        json.dumps({"id": 1, "name": "b", "__op": "u", "__lsn": 11, "__deleted": "false"}),
        json.dumps({"id": 2, "name": None, "__op": "d", "__lsn": 12, "__deleted": "true"}),
        json.dumps({"id": 3, "name": "c", "__op": "r", "__lsn": 13, "__table": "customers"}),
    ]
    feed = read_feed(spark, write_lines(tmp_path / "f.json", lines), CUSTOMERS, format="debezium")
    assert rows(feed, "id", "name", "lsn", "_op") == [
        (1, "a", 10, "I"),
        (1, "b", 11, "U"),
        (2, None, 12, "D"),
        (3, "c", 13, "U"),
    ]


def test_flattened_rows_without_op_use_the_deleted_flag(spark: Any, tmp_path: Path) -> None:
    spec = TableSpec.build("db.c", columns="id BIGINT, name STRING", primary_key="id")
    lines = [
        json.dumps({"payload": {"id": 1, "name": "a", "__deleted": "false"}}),
        json.dumps({"payload": {"id": 2, "name": "b", "__deleted": True}}),
    ]
    feed = read_feed(spark, write_lines(tmp_path / "f.json", lines), spec, format="debezium")
    assert rows(feed, "id", "_op") == [(1, "U"), (2, "D")]


def test_debezium_dataframe_envelope(spark: Any) -> None:
    frame = spark.createDataFrame(
        [
            (None, (1, "a"), "c", (100, 1)),
            ((1, "a"), None, "d", (101, 2)),
            (None, (2, "b"), "x", (102, 3)),
        ],
        "before struct<id:bigint,name:string>, after struct<id:bigint,name:string>, op string, "
        "source struct<lsn:bigint,ts_ms:bigint>",
    )
    feed = read_feed(spark, frame, CUSTOMERS, format="debezium")
    assert rows(feed, "id", "name", "lsn", "_op") == [(1, "a", 100, "I"), (1, "a", 101, "D")]
    ((raw, reason),) = [(r["_raw"], r["_reason"]) for r in feed.rejected.collect()]
    assert json.loads(raw)["op"] == "x" and reason == "unknown op code 'x'"


def test_unknown_row_fields_and_missing_ordering_source_raise(spark: Any, tmp_path: Path) -> None:
    line = event("c", None, {"id": 1, "name": "x", "colour": "red"}, source={"lsn": 1})
    with pytest.raises(SchemaError, match=r"unknown column\(s\) colour"):
        read_feed(spark, write_lines(tmp_path / "a.json", [line]), CUSTOMERS, format="debezium")
    bare = event("c", None, {"id": 1, "name": "x"})
    with pytest.raises(SchemaError, match=r"missing key column\(s\) lsn"):
        read_feed(spark, write_lines(tmp_path / "b.json", [bare]), CUSTOMERS, format="debezium")


def test_debezium_feeds_take_no_op_code_column(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="carry their own op codes"):
        read_feed(spark, str(tmp_path / "x.json"), CUSTOMERS, format="debezium", op_code_column="o")
