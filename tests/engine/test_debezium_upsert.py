"""Debezium feeds applied end to end: Table.upsert and ``versioned upsert --format debezium``.

Event shapes follow Debezium's PostgreSQL and MySQL connector documentation (see
`tests.engine.debezium_events`); the unchanged-TOAST placeholder is the connector property
``unavailable.value.placeholder`` (default ``__debezium_unavailable_value``, postgresql.adoc
"Toasted values"), "inserted into appropriately typed fields, for example, a byte array for
bytes, a string for strings" (debezium.io, post-processors/reselect-columns).
"""

from __future__ import annotations

import base64
import json
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.engine.debezium_events import decimal_bytes, envelope, field, write_lines
from versioned.api.catalog import Catalog
from versioned.cli.main import cli
from versioned.errors import InputError

PLACEHOLDER = "__debezium_unavailable_value"
ORDERS = "id INT NOT NULL, d DATE, ts TIMESTAMP, amount DECIMAL(10,2), doc STRING, lsn BIGINT"
PG_SCHEMA = [
    field("id", "int32"),
    field("d", "int32", "io.debezium.time.Date"),
    field("ts", "int64", "io.debezium.time.MicroTimestamp"),
    field("amount", "bytes", "org.apache.kafka.connect.data.Decimal", scale="2"),
    field("doc", "string"),
]
DAY = (date(2024, 3, 6) - date(1970, 1, 1)).days
MICROS = 1529507596945104  # postgresql.adoc: "2018-06-20 15:13:16.945104"
TS = datetime(2018, 6, 20, 15, 13, 16, 945104)


def pg(op: str, lsn: int, before: Any = None, after: Any = None) -> str:
    return envelope(op, before, after, PG_SCHEMA, source={"lsn": lsn, "ts_ms": 1})


def order(id_: int, amount_cents: int, doc: str, days: int = DAY) -> dict[str, Any]:
    return {"id": id_, "d": days, "ts": MICROS, "amount": decimal_bytes(amount_cents), "doc": doc}


def snapshot_then_changes(tmp_path: Path) -> tuple[str, str]:
    first = [
        pg("r", 100, after=order(1, 123450, "long text of order 1")),
        pg("r", 100, after=order(2, 500, "long text of order 2")),
    ]
    second = [
        # update of 1 leaving its TOASTed doc unchanged (REPLICA IDENTITY DEFAULT)
        pg("u", 210, before={"id": 1}, after=order(1, -100, PLACEHOLDER, DAY + 1)),
        # 3 is inserted, then updated with doc unchanged, in the same batch
        pg("c", 220, after=order(3, 300, "doc of 3")),
        pg("u", 230, before={"id": 3}, after=order(3, 301, PLACEHOLDER)),
        # 4 was never seen: its kept doc has no stored value and is NULL
        pg("u", 240, before={"id": 4}, after=order(4, 400, PLACEHOLDER)),
        pg("d", 250, before={"id": 2}),
        "null",  # the Kafka tombstone that follows a delete
    ]
    return (
        write_lines(tmp_path / "snapshot.json", first),
        write_lines(tmp_path / "changes.json", second),
    )


def table_rows(cat: Catalog, name: str) -> dict[int, tuple[Any, ...]]:
    frame = cat.table(name).read()
    return {r["id"]: tuple(r)[1:] for r in frame.collect()}


EXPECTED = {
    1: (date(2024, 3, 7), TS, Decimal("-1.00"), "long text of order 1", 210),
    3: (date(2024, 3, 6), TS, Decimal("3.01"), "doc of 3", 230),
    4: (date(2024, 3, 6), TS, Decimal("4.00"), None, 240),
}


def test_postgres_envelope_with_date_timestamp_numeric_and_toast_lands_right(
    cat: Catalog, tmp_path: Path
) -> None:
    t = cat.create_table("shop.orders", columns=ORDERS, primary_key="id", ordering_column="lsn")
    snapshot, changes = snapshot_then_changes(tmp_path)
    t.upsert(snapshot, format="debezium", ordering_from="lsn")
    result = t.upsert(changes, format="debezium", ordering_from="lsn")
    assert table_rows(cat, "shop.orders") == EXPECTED
    assert (result.deleted, result.rejected, result.tombstones) == (1, 0, 1)


def test_cli_upsert_format_debezium_lands_the_same_table(cat: Catalog, tmp_path: Path) -> None:
    cat.create_table(
        "shop.orders", columns=ORDERS, primary_key="id", ordering_column="lsn",
        properties={"debezium.ordering_from": "lsn"},
    )  # fmt: skip
    snapshot, changes = snapshot_then_changes(tmp_path)
    settings = cat.settings
    base = ["--warehouse", str(settings.warehouse), "--catalog", settings.catalog_url]
    base += ["--user", "alice", "--output", "json", "upsert", "shop.orders", "-q"]
    for path in (snapshot, changes):
        out = CliRunner().invoke(cli, [*base, path, "--format", "debezium"])
        assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["tombstones"] == 1
    assert table_rows(cat, "shop.orders") == EXPECTED


def test_delete_with_an_epoch_day_partition_value_deletes_the_row(
    cat: Catalog, tmp_path: Path
) -> None:
    """Issue 10, item 2: the delete's date 19788 used to be read as the year 19788."""
    t = cat.create_table(
        "shop.t", columns="k INT, d DATE, v STRING, lsn BIGINT", primary_key="k",
        partition_by="d", ordering_column="lsn",
    )  # fmt: skip
    t.upsert(write_lines(tmp_path / "a.json", ['{"k": 2, "d": "2024-03-06", "v": "x", "lsn": 1}']))
    delete = envelope("d", {"k": 2, "d": 19788, "v": "x"}, None, source={"lsn": 2})
    result = t.upsert(write_lines(tmp_path / "b.json", [delete]), format="debezium")
    assert (result.deleted, result.ignored_deletes) == (1, 0)
    assert t.read().count() == 0


def test_truncate_event_refuses_the_batch_and_writes_nothing(cat: Catalog, tmp_path: Path) -> None:
    t = cat.create_table("shop.orders", columns=ORDERS, primary_key="id", ordering_column="lsn")
    truncate = envelope("t", None, None, PG_SCHEMA, source={"lsn": 2})
    lines = [pg("c", 1, after=order(1, 100, "a")), truncate]
    with pytest.raises(InputError, match=r"1 truncate event\(s\).*nothing was written"):
        t.upsert(write_lines(tmp_path / "t.json", lines), format="debezium")
    assert t.history() == []
    assert not (Path(cat.settings.warehouse) / "shop.db" / "orders" / "_dead_letter").exists()


def test_mysql_binlog_position_orders_changes_across_batches(cat: Catalog, tmp_path: Path) -> None:
    """shared-mariadb-mysql.adoc: source.file "mysql-bin.000003", pos 154 / 484 / 805."""
    t = cat.create_table(
        "shop.c", columns="id INT, name STRING, pos BIGINT", primary_key="id", ordering_column="pos"
    )

    def event(name: str, file: str, pos: int) -> str:
        source = {"file": file, "pos": pos, "row": 0, "ts_ms": 0}
        return envelope("u", {"id": 1}, {"id": 1, "name": name}, source=source)

    batches = [
        [event("at 805", "mysql-bin.000003", 805)],
        [event("at 484, older", "mysql-bin.000003", 484)],  # stale: skipped
        [event("next file", "mysql-bin.000004", 154)],
    ]
    stale = []
    for i, lines in enumerate(batches):
        path = write_lines(tmp_path / f"{i}.json", lines)
        stale.append(t.upsert(path, format="debezium", ordering_from="binlog").stale)
        if i == 1:
            assert [tuple(r) for r in t.read().collect()] == [(1, "at 805", 3_000_000_000_805)]
    assert stale == [0, 1, 0]
    assert [tuple(r) for r in t.read().collect()] == [(1, "next file", 4_000_000_000_154)]


def test_placeholder_is_configurable_and_binary_placeholders_are_kept(
    cat: Catalog, tmp_path: Path
) -> None:
    t = cat.create_table(
        "shop.files", columns="id INT, body STRING, blob BINARY", primary_key="id",
        properties={"debezium.unavailable_value_placeholder": "__toasted__"},
    )  # fmt: skip
    first = envelope("c", None, {"id": 1, "body": "b1", "blob": base64.b64encode(b"x").decode()})
    t.upsert(write_lines(tmp_path / "a.json", [first]), format="debezium")
    encoded = base64.b64encode(b"__toasted__").decode()
    kept = envelope("u", {"id": 1}, {"id": 1, "body": "__toasted__", "blob": encoded})
    default = envelope("c", None, {"id": 2, "body": PLACEHOLDER, "blob": None})
    t.upsert(write_lines(tmp_path / "b.json", [kept, default]), format="debezium")
    got = {r["id"]: (r["body"], r["blob"]) for r in t.read().collect()}
    assert got == {1: ("b1", bytearray(b"x")), 2: (PLACEHOLDER, None)}


def test_typed_dataframe_of_events_without_text_columns_lands(cat: Catalog, spark: Any) -> None:
    t = cat.create_table("shop.days", columns="id INT, d DATE", primary_key="id")
    frame = spark.createDataFrame(
        [(None, (1, DAY), "c"), (None, (2, DAY + 1), "r")],
        "before struct<id:int,d:int>, after struct<id:int,d:int>, op string",
    )
    result = t.upsert(frame, format="debezium")
    assert (result.inserted, result.tombstones) == (2, 0)
    assert sorted(tuple(r) for r in t.read().collect()) == [
        (1, date(2024, 3, 6)),
        (2, date(2024, 3, 7)),
    ]


def test_kafka_record_values_land_like_the_json_lines_file(
    cat: Catalog, spark: Any, tmp_path: Path
) -> None:
    """A DataFrame of one ``value`` column (BINARY, as Kafka's source gives it, or STRING)
    holds one event per row; a null value is the Kafka tombstone."""
    t = cat.create_table("shop.orders", columns=ORDERS, primary_key="id", ordering_column="lsn")
    for path in snapshot_then_changes(tmp_path):
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        values = [(None if line == "null" else line.encode(),) for line in lines]
        result = t.upsert(
            spark.createDataFrame(values, "value BINARY"), format="debezium", ordering_from="lsn"
        )
    assert table_rows(cat, "shop.orders") == EXPECTED
    assert (result.deleted, result.rejected, result.tombstones) == (1, 0, 1)
    text = spark.createDataFrame([("not json",)], "value STRING")
    assert t.upsert(text, format="debezium").rejected == 1
