"""Debezium values decoded by their semantic type, or by the column type without a schema.

Expected values come from Debezium's documentation (debezium/debezium, documentation/modules/
ROOT/pages/connectors/postgresql.adoc, "Temporal types", "TIMESTAMP type", "Decimal types";
partials/modules/all-connectors/shared-mariadb-mysql.adoc, "Temporal values without time
zones") and from Kafka Connect's Decimal logical type (unscaled value as the big-endian
two's-complement bytes of ``BigInteger.toByteArray``, base64 in JSON).
"""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.engine.debezium_events import decimal_bytes, envelope, field, write_lines
from versioned.engine.feeds.reader import Feed, read_feed
from versioned.schema import TableSpec

TYPES = TableSpec.build(
    "db.types",
    columns="id INT NOT NULL, d DATE, cd DATE, ts TIMESTAMP, dt TIMESTAMP, nts TIMESTAMP, "
    "cts TIMESTAMP, zts TIMESTAMP, nts_text STRING, t_us STRING, t_ms STRING, zt STRING, "
    "price DECIMAL(10,2), neg DECIMAL(10,2), vsd DECIMAL(12,4), big DECIMAL(38,0)",
    primary_key="id",
)
SCHEMA = [
    field("id", "int32"),
    # postgresql.adoc, adaptive mode: DATE -> INT32 io.debezium.time.Date, days since the epoch
    field("d", "int32", "io.debezium.time.Date"),
    # connect mode: org.apache.kafka.connect.data.Date, days since the epoch
    field("cd", "int32", "org.apache.kafka.connect.data.Date"),
    # postgresql.adoc "TIMESTAMP type": "2018-06-20 15:13:16.945104" is MicroTimestamp
    # 1529507596945104
    field("ts", "int64", "io.debezium.time.MicroTimestamp"),
    # shared-mariadb-mysql.adoc: DATETIME "2018-06-20 06:37:03" becomes 1529476623000 (ms)
    field("dt", "int64", "io.debezium.time.Timestamp"),
    field("nts", "int64", "io.debezium.time.NanoTimestamp"),
    field("cts", "int64", "org.apache.kafka.connect.data.Timestamp"),
    # shared-mariadb-mysql.adoc: TIMESTAMP "2018-06-20 06:37:03" becomes
    # "2018-06-20T13:37:03Z" (ZonedTimestamp, in UTC)
    field("zts", "string", "io.debezium.time.ZonedTimestamp"),
    field("nts_text", "int64", "io.debezium.time.NanoTimestamp"),
    # TIME(4..6) -> MicroTime (µs past midnight); TIME(1..3) -> Time (ms past midnight)
    field("t_us", "int64", "io.debezium.time.MicroTime"),
    field("t_ms", "int32", "io.debezium.time.Time"),
    field("zt", "string", "io.debezium.time.ZonedTime"),
    # NUMERIC(M,D) -> BYTES org.apache.kafka.connect.data.Decimal, scale in parameters.scale
    field("price", "bytes", "org.apache.kafka.connect.data.Decimal", scale="2"),
    field("neg", "bytes", "org.apache.kafka.connect.data.Decimal", scale="2"),
    # NUMERIC without scale -> STRUCT io.debezium.data.VariableScaleDecimal {scale, value}
    field("vsd", "struct", "io.debezium.data.VariableScaleDecimal"),
    field("big", "bytes", "org.apache.kafka.connect.data.Decimal", scale="0"),
]
DAYS_2018_06_20 = (date(2018, 6, 20) - date(1970, 1, 1)).days  # 17702
AFTER = {
    "id": 1,
    "d": DAYS_2018_06_20,
    "cd": -1,
    "ts": 1529507596945104,
    "dt": 1529476623000,
    "nts": 1529507596945104000,
    "cts": 1529476623000,
    "zts": "2018-06-20T13:37:03Z",
    "nts_text": 1529507596945104123,
    "t_us": 36930123456,
    "t_ms": 36930123,
    "zt": "13:37:03Z",
    "price": decimal_bytes(123450),
    "neg": decimal_bytes(-123450),
    "vsd": {"scale": 4, "value": decimal_bytes(123450)},
    "big": decimal_bytes(10**38 - 1),
}


def only_row(feed: Feed) -> dict[str, Any]:
    assert feed.rejected.count() == 0, feed.rejected.collect()
    (row,) = feed.rows.collect()
    return row.asDict()


def test_every_semantic_type_decodes_to_the_documented_value(spark: Any, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "pg.json", [envelope("c", None, AFTER, SCHEMA)])
    row = only_row(read_feed(spark, path, TYPES, format="debezium"))
    assert row["d"] == date(2018, 6, 20)
    assert row["cd"] == date(1969, 12, 31)
    assert row["ts"] == datetime(2018, 6, 20, 15, 13, 16, 945104)  # session time zone UTC
    assert row["dt"] == row["cts"] == datetime(2018, 6, 20, 6, 37, 3)
    assert row["nts"] == datetime(2018, 6, 20, 15, 13, 16, 945104)
    assert row["zts"] == datetime(2018, 6, 20, 13, 37, 3)
    assert row["nts_text"] == "2018-06-20 15:13:16.945104123"
    assert (row["t_us"], row["t_ms"]) == ("10:15:30.123456", "10:15:30.123000")
    assert row["zt"] == "13:37:03Z"
    assert (row["price"], row["neg"]) == (Decimal("1234.50"), Decimal("-1234.50"))
    assert row["vsd"] == Decimal("12.3450")
    assert row["big"] == Decimal(10**38 - 1)


def test_a_value_that_does_not_decode_is_dead_lettered_with_its_text(
    spark: Any, tmp_path: Path
) -> None:
    bad = {**AFTER, "price": "not base64!", "d": "yesterday"}
    path = write_lines(tmp_path / "bad.json", [envelope("c", None, bad, SCHEMA)])
    feed = read_feed(spark, path, TYPES, format="debezium")
    assert feed.rows.count() == 0
    ((reason,),) = feed.rejected.select("_reason").collect()
    assert "column d: 'yesterday' is not a DATE" in reason
    assert "column price: 'not base64!' is not a DECIMAL(10,2)" in reason


def test_without_a_schema_the_column_type_decides(spark: Any, tmp_path: Path) -> None:
    spec = TableSpec.build(
        "db.plain",
        columns="id INT NOT NULL, d DATE, price DECIMAL(10,2), vsd DECIMAL(12,4), "
        "txt DECIMAL(10,2), ts TIMESTAMP",
        primary_key="id",
    )
    lines = [
        # epoch days, base64 with the column's scale, a VariableScaleDecimal object, and a
        # decimal in decimal.handling.mode=string (digits that are also valid base64)
        envelope("c", None, {"id": 1, "d": DAYS_2018_06_20, "price": decimal_bytes(123450),
                             "vsd": {"scale": 1, "value": decimal_bytes(-5)}, "txt": "1234"}),
        envelope("c", None, {"id": 2, "ts": 1529507596945104}),  # µs? ms? ns? unknown
        envelope("c", None, {"id": 3, "d": "2018-06-21", "ts": "2018-06-20 15:13:16"}),
    ]  # fmt: skip
    feed = read_feed(spark, write_lines(tmp_path / "p.json", lines), spec, format="debezium")
    got = {r["id"]: r.asDict() for r in feed.rows.collect()}
    assert (got[1]["d"], got[1]["price"], got[1]["vsd"], got[1]["txt"]) == (
        date(2018, 6, 20), Decimal("1234.50"), Decimal("-0.5000"), Decimal("1234.00"),
    )  # fmt: skip
    assert (got[3]["d"], got[3]["ts"]) == (date(2018, 6, 21), datetime(2018, 6, 20, 15, 13, 16))
    ((raw, reason),) = [(json.loads(r["_raw"]), r["_reason"]) for r in feed.rejected.collect()]
    assert raw["after"]["id"] == 2
    assert "integer TIMESTAMP without a schema" in reason
    assert "debezium.timestamp_unit" in reason


@pytest.mark.parametrize(
    ("unit", "value"),
    [("us", 1529507596945104), ("ms", 1529507596945), ("ns", 1529507596945104000)],
)
def test_table_property_names_the_unit_of_schemaless_timestamps(
    spark: Any, tmp_path: Path, unit: str, value: int
) -> None:
    spec = TableSpec.build(
        "db.plain", columns="id INT NOT NULL, ts TIMESTAMP", primary_key="id",
        properties={"debezium.timestamp_unit": unit},
    )  # fmt: skip
    path = write_lines(tmp_path / "u.json", [envelope("c", None, {"id": 1, "ts": value})])
    row = only_row(read_feed(spark, path, spec, format="debezium"))
    expected = datetime(2018, 6, 20, 15, 13, 16, 945000 if unit == "ms" else 945104)
    assert row["ts"] == expected


def test_typed_dataframe_events_decode_days_and_decimal_bytes(spark: Any) -> None:
    spec = TableSpec.build(
        "db.typed", columns="id INT NOT NULL, d DATE, price DECIMAL(10,2)", primary_key="id"
    )
    frame = spark.createDataFrame(
        [(None, (1, DAYS_2018_06_20, bytearray(b"\x01\xe2\x3a")), "c")],
        "before struct<id:int,d:int,price:binary>, after struct<id:int,d:int,price:binary>, "
        "op string",
    )
    row = only_row(read_feed(spark, frame, spec, format="debezium"))
    assert (row["d"], row["price"]) == (date(2018, 6, 20), Decimal("1234.50"))
