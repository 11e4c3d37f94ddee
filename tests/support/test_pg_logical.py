"""The test_decoding parser of tests/support/pg_logical.py, on literal lines (no Spark, no
server) and once on what a real PostgreSQL writes into a slot."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

import pytest

from tests.support.pg_logical import (
    UNCHANGED_TOAST,
    Change,
    change_rows,
    connect,
    convert,
    create_slot,
    decode,
    drop_slot,
    parse_change,
    parse_lsn,
    read_changes,
)
from tests.support.postgres import PgCluster

UTC = dt.UTC


def test_lsn_text_is_the_64_bit_position() -> None:
    assert parse_lsn("0/1924E50") == 0x1924E50
    assert parse_lsn("16/B374D848") == (0x16 << 32) | 0xB374D848


def test_insert_with_every_kind_of_literal() -> None:
    line = (
        "table public.t: INSERT: id[bigint]:-42 name[text]:'it''s a [x] y:z' "
        "qty[integer]:-7 price[numeric]:-12.50 born[date]:'2024-02-29' "
        "seen[timestamp without time zone]:'2024-01-02 03:04:05.123456' active[boolean]:true "
        "off[boolean]:false at[timestamp with time zone]:'2024-05-01 10:00:00+02' "
        "ratio[double precision]:-1.5e-05 note[text]:null uni[text]:'ünï ✓ 🎉' "
        "tags[text[]]:'{\"a b\",c}' empty[text]:'' word[text]:'null' "
        "vc[character varying]:'a  b '"
    )
    change = parse_change(line, 7)
    assert change == Change(7, "public.t", "INSERT", None, change.new)
    assert change.new == {
        "id": -42,
        "name": "it's a [x] y:z",
        "qty": -7,
        "price": Decimal("-12.50"),
        "born": dt.date(2024, 2, 29),
        "seen": dt.datetime(2024, 1, 2, 3, 4, 5, 123456),
        "active": True,
        "off": False,
        "at": dt.datetime(2024, 5, 1, 8, 0, tzinfo=UTC),
        "ratio": -1.5e-05,
        "note": None,
        "uni": "ünï ✓ 🎉",
        "tags": '{"a b",c}',
        "empty": "",
        "word": "null",
        "vc": "a  b ",
    }
    assert str(change.new["price"]) == "-12.50"  # the scale is kept


def test_quotes_doubled_at_the_edges_and_a_value_like_a_column() -> None:
    line = (
        "table public.t: INSERT: a[text]:'''' b[text]:'''x''' "
        "c[text]:' d[text]:''y'' ' e[text]:'line\nbreak\ttab'"
    )
    assert parse_change(line, 1).new == {
        "a": "'",
        "b": "'x'",
        "c": " d[text]:'y' ",
        "e": "line\nbreak\ttab",
    }


def test_quoted_names_of_table_and_columns() -> None:
    line = 'table "My Schema"."a: ""b""": INSERT: "my col"[integer]:1 "x[y]"[text]:\'v\''
    change = parse_change(line, 1)
    assert change.table == 'My Schema.a: "b"'
    assert change.new == {"my col": 1, "x[y]": "v"}


def test_update_with_and_without_an_old_key() -> None:
    plain = parse_change("table public.t: UPDATE: id[bigint]:1 v[text]:'new'", 5)
    assert (plain.kind, plain.old, plain.new) == ("UPDATE", None, {"id": 1, "v": "new"})
    moved = parse_change(
        "table public.t: UPDATE: old-key: id[bigint]:1 new-tuple: id[bigint]:2 v[text]:'old-key: '",
        6,
    )
    assert (moved.old, moved.new) == ({"id": 1}, {"id": 2, "v": "old-key: "})


def test_delete_carries_the_key_only_and_unchanged_toast_is_marked() -> None:
    assert parse_change("table public.t: DELETE: id[bigint]:3 k[text]:'a b'", 9) == Change(
        9, "public.t", "DELETE", {"id": 3, "k": "a b"}, None
    )
    toast = parse_change("table public.t: UPDATE: id[bigint]:3 big[text]:unchanged-toast-datum", 1)
    assert toast.new == {"id": 3, "big": UNCHANGED_TOAST}


TS, TSTZ = "timestamp without time zone", "timestamp with time zone"
BIG = "123456789012345678901234567890.123"
CONVERSIONS: list[tuple[str, str, Any]] = [
    ("smallint", "-32768", -32768),
    ("bigint", "9223372036854775807", 9223372036854775807),
    ("numeric", "0.00", Decimal("0.00")),
    ("numeric", BIG, Decimal(BIG)),
    ("numeric", "NaN", Decimal("NaN")),
    ("real", "Infinity", float("inf")),
    ("date", "0001-01-01", dt.date(1, 1, 1)),
    (TS, "2024-01-02 03:04:05", dt.datetime(2024, 1, 2, 3, 4, 5)),
    (TS, "1999-12-31 23:59:59.5", dt.datetime(1999, 12, 31, 23, 59, 59, 500000)),
    (TSTZ, "2024-01-02 03:04:05+05:30", dt.datetime(2024, 1, 1, 21, 34, 5, tzinfo=UTC)),
    ("uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    ("bytea", "\\x00ff", "\\x00ff"),
]


@pytest.mark.parametrize(("type_name", "text", "value"), CONVERSIONS)
def test_values_convert_by_their_type(type_name: str, text: str, value: Any) -> None:
    got = convert(type_name, text)
    assert type(got) is type(value)
    assert got == value or (got != got and value != value)  # NaN
    if isinstance(value, Decimal) and value == value:
        assert str(got) == str(value)


@pytest.mark.parametrize("text", ["infinity", "-infinity", "2024-01-01 BC"])
def test_dates_python_cannot_hold_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="no Python value"):
        convert("date", text)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("table public.t: TRUNCATE: (no-flags)", "truncated"),
        ("table public.t: INSERT: (no-tuple-data)", "without tuple data"),
        ("table public.t: INSERT: id[bigint]:'1", "unterminated"),
        ("table public.t: MERGE: id[bigint]:1", "unknown change"),
        ("relation public.t: INSERT: id[bigint]:1", "not a test_decoding change"),
        ("table public.t: INSERT: id[bigint]:1  v[text]:'x'", "expected a name"),
        ("table public.t: INSERT: id:1 v[text]:'x'", "has no type"),
    ],
)
def test_malformed_lines_are_refused(line: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_change(line, 1)


def test_decode_keeps_committed_transactions_in_order() -> None:
    lines = [
        ("0/10", "BEGIN"),
        ("0/10", "table public.t: INSERT: id[bigint]:1"),
        ("0/18", "message: transactional: 1 prefix: p, sz: 1 content:x"),
        ("0/20", "table public.t: DELETE: id[bigint]:1"),
        ("0/30", "COMMIT"),
        ("0/30", "BEGIN 731"),
        ("0/40", "table public.t: INSERT: id[bigint]:2"),
        ("0/50", "COMMIT 731 (at 2024-01-01 00:00:00+00)"),
    ]
    assert [(c.lsn, c.kind) for c in decode(lines)] == [
        (0x10, "INSERT"),
        (0x20, "DELETE"),
        (0x40, "INSERT"),
    ]
    with pytest.raises(ValueError, match="end inside a transaction"):
        decode(lines[:3])
    with pytest.raises(ValueError, match="outside a transaction"):
        decode(lines[1:])


def test_change_rows_split_a_key_change_and_order_rows_of_one_record() -> None:
    changes = [
        Change(0x100, "public.t", "INSERT", None, {"id": 1, "v": "a"}),
        Change(0x100, "public.t", "INSERT", None, {"id": 2, "v": "b"}),  # one COPY record
        Change(0x200, "public.t", "UPDATE", {"id": 1}, {"id": 3, "v": "a"}),
        Change(0x300, "public.t", "UPDATE", {"id": 3, "v": "a"}, {"id": 3, "v": "c"}),  # FULL
        Change(0x400, "public.t", "UPDATE", None, {"id": 2, "v": "d"}),
        Change(0x500, "public.t", "DELETE", {"id": 2}, None),
    ]
    rows = change_rows(changes, ["id"], op_column="op", ordering_column="seq")
    assert [(r["op"], r["id"], r.get("v"), r["seq"]) for r in rows] == [
        ("I", 1, "a", 0x100 << 12),
        ("I", 2, "b", (0x100 << 12) + 1),
        ("D", 1, None, 0x200 << 12),
        ("I", 3, "a", (0x200 << 12) + 1),
        ("U", 3, "c", 0x300 << 12),
        ("U", 2, "d", 0x400 << 12),
        ("D", 2, None, 0x500 << 12),
    ]
    assert rows[2] == {"id": 1, "op": "D", "seq": 0x200 << 12}  # only the key


def test_unchanged_toast_values_come_from_the_previous_row_of_the_key() -> None:
    changes = [
        Change(1, "public.t", "INSERT", None, {"id": 1, "big": "long", "v": "a"}),
        Change(2, "public.t", "UPDATE", {"id": 1}, {"id": 2, "big": UNCHANGED_TOAST, "v": "b"}),
        Change(3, "public.t", "UPDATE", None, {"id": 2, "big": UNCHANGED_TOAST, "v": "c"}),
    ]
    assert [r.get("big") for r in change_rows(changes, ["id"])] == [
        "long", None, UNCHANGED_TOAST, UNCHANGED_TOAST
    ]  # fmt: skip
    images: dict[tuple[Any, ...], dict[str, Any]] = {}
    rows = change_rows(changes, ["id"], images=images)
    assert [(r["op"], r["id"], r.get("big"), r.get("v")) for r in rows] == [
        ("I", 1, "long", "a"),
        ("D", 1, None, None),
        ("I", 2, "long", "b"),
        ("U", 2, "long", "c"),
    ]
    assert images == {(2,): {"id": 2, "big": "long", "v": "c"}}
    change_rows([Change(4, "public.t", "DELETE", {"id": 2}, None)], ["id"], images=images)
    assert images == {}
    with pytest.raises(ValueError, match="never seen whole"):
        change_rows(changes[2:], ["id"], images=images)


def test_change_rows_refuse_an_ordering_value_past_bigint() -> None:
    with pytest.raises(ValueError, match="too large"):
        change_rows([Change(1 << 52, "public.t", "INSERT", None, {"id": 1})], ["id"])


def test_a_real_slot_decodes_committed_changes_only(pg_cluster: PgCluster) -> None:
    """What PostgreSQL 15's test_decoding writes: a key change, COPY, a rollback, and an
    unchanged TOASTed value left out of updates (also of the one that changes the key)."""
    import psycopg

    dbname = pg_cluster.create_database().rsplit("/", 1)[1]
    slot = "s_" + uuid.uuid4().hex[:12]
    with connect(pg_cluster.port, dbname) as conn:
        create_slot(conn, slot)
        try:
            conn.execute(
                'CREATE TABLE "T x" (id bigint PRIMARY KEY, "a b" text, n numeric(12,2), '
                "ts timestamp, big text)"
            )
            conn.execute('ALTER TABLE "T x" ALTER big SET STORAGE EXTERNAL')  # not compressed
            with conn.transaction():
                conn.execute(
                    """INSERT INTO "T x" VALUES (1, 'it''s', -1.50, '2024-01-02 03:04:05.5',
                    repeat('x', 5000) || 'it''s' || repeat('y', 5000))"""
                )
                conn.execute('UPDATE "T x" SET id = 2 WHERE id = 1')
            with pytest.raises(psycopg.errors.DivisionByZero), conn.transaction():
                conn.execute("""INSERT INTO "T x" VALUES (9, 'rolled back')""")
                conn.execute("SELECT 1 / 0")
            with conn.cursor() as cur, cur.copy('COPY "T x" (id, "a b") FROM STDIN') as copy:
                for i in (3, 4):
                    copy.write_row((i, f"c {i}"))
            conn.execute('UPDATE "T x" SET n = 0 WHERE id = 2')  # big is TOASTed, unchanged
            conn.execute('DELETE FROM "T x" WHERE id = 3')
            changes = read_changes(conn, slot)
            assert read_changes(conn, slot) == []  # consumed
        finally:
            drop_slot(conn, slot)
    rows = change_rows(changes, ["id"], images={})
    big = "x" * 5000 + "it's" + "y" * 5000
    assert [{k: v for k, v in r.items() if k != "lsn"} for r in rows] == [
        {"id": 1, "a b": "it's", "n": Decimal("-1.50"),
         "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 500000), "big": big, "op": "I"},
        {"id": 1, "op": "D"},
        {"id": 2, "a b": "it's", "n": Decimal("-1.50"),
         "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 500000), "big": big, "op": "I"},
        {"id": 3, "a b": "c 3", "n": None, "ts": None, "big": None, "op": "I"},
        {"id": 4, "a b": "c 4", "n": None, "ts": None, "big": None, "op": "I"},
        {"id": 2, "a b": "it's", "n": Decimal("0.00"),
         "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 500000), "big": big, "op": "U"},
        {"id": 3, "op": "D"},
    ]  # fmt: skip
    assert {c.table for c in changes} == {"public.T x"}
    toasted = [c.new["id"] for c in changes if c.new and c.new["big"] is UNCHANGED_TOAST]
    assert toasted == [2, 2]  # the key change and the update of n
    ordering = [r["lsn"] for r in rows]
    assert ordering == sorted(ordering) and len(set(ordering)) == len(ordering)
