"""read_feed: every input kind, op codes, typing, dead letters and whole-batch schema errors."""

from __future__ import annotations

import gzip
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from versioned.engine.feeds.reader import Feed, read_feed
from versioned.errors import InputError, SchemaError
from versioned.schema import TableSpec

SALES = TableSpec.build(
    "db.sales",
    columns="id BIGINT NOT NULL, name VARCHAR(5), total_amt DOUBLE",
    primary_key="id",
    op_code_column="op",
)


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def rows(feed: Feed) -> list[dict[str, Any]]:
    return sorted((r.asDict() for r in feed.rows.collect()), key=lambda r: int(r["_seq"]))


def rejected(feed: Feed) -> dict[str, str]:
    """Dead letters as ``{raw: reason}``."""
    return {r["_raw"]: r["_reason"] for r in feed.rejected.collect()}


# --- op codes ----------------------------------------------------------------------------------


def test_every_op_code_spelling_maps_to_i_u_or_d(spark: Any) -> None:
    spellings = {
        "I": "I", "i": "I", " insert ": "I", "INSERT": "I", "Insert": "I", "c": "I", "C": "I",
        "U": "U", "u": "U", "update": "U", "UPDATE": "U", "upsert": "U", " Upsert": "U",
        "r": "U", "R": "U",
        "D": "D", "d": "D", "delete": "D", "DELETE ": "D",
    }  # fmt: skip
    frame = spark.createDataFrame(
        [(i, spelling) for i, spelling in enumerate(spellings)], "id long, op string"
    )
    feed = read_feed(spark, frame, SALES, partial=True)
    assert [(r["id"], r["_op"]) for r in rows(feed)] == list(enumerate(spellings.values()))
    assert feed.rejected.count() == 0


def test_null_and_unknown_op_codes_are_dead_letters(spark: Any) -> None:
    frame = spark.createDataFrame(
        [(1, "X"), (2, None), (3, ""), (4, "merge"), (5, "I"), (6, "x" * 50)], "id long, op string"
    )
    feed = read_feed(spark, frame, SALES, partial=True)
    assert [r["id"] for r in rows(feed)] == [5]
    assert rejected(feed) == {
        '{"id":1,"op":"X"}': "unknown op code 'X'",
        '{"id":2}': "op code is null",
        '{"id":3,"op":""}': "unknown op code ''",
        '{"id":4,"op":"merge"}': "unknown op code 'merge'",
        '{"id":6,"op":"' + "x" * 50 + '"}': "unknown op code '" + "x" * 40 + "...'",
    }


def test_rejected_rows_are_counted_while_the_rows_are_read(spark: Any, tmp_path: Path) -> None:
    """The writer skips its dead-letter job when this count is 0, so it must be exact."""
    path = write(tmp_path / "f.csv", "id,name,total_amt,op\n1,a,1.5,I\n2,toolong,2,I\nx,b,3,U\n")
    feed = read_feed(spark, path, SALES, partial=True)
    assert feed.rejected_count() is None  # nothing has read the rows yet: unknown, not 0
    assert [r["id"] for r in rows(feed)] == [1]
    assert feed.rejected_count() == 2 == len(rejected(feed))
    clean = read_feed(
        spark, spark.createDataFrame([(1, "I")], "id long, op string"), SALES, partial=True
    )
    clean.rows.count()
    assert clean.rejected_count() == 0


def test_without_an_op_code_column_every_row_is_an_upsert(spark: Any, tmp_path: Path) -> None:
    spec = TableSpec.build("db.t", columns="id BIGINT, name STRING", primary_key="id")
    path = write(tmp_path / "f.csv", "id,name\n1,a\n2,b\n")
    assert [r["_op"] for r in rows(read_feed(spark, path, spec))] == ["U", "U"]


def test_op_code_column_argument_overrides_the_tables(spark: Any, tmp_path: Path) -> None:
    path = write(tmp_path / "f.csv", "id,name,total_amt,kind\n1,a,1,d\n")
    feed = read_feed(spark, path, SALES, op_code_column="kind")
    assert [r["_op"] for r in rows(feed)] == ["D"]


def test_a_feed_without_the_op_code_column_is_refused(spark: Any, tmp_path: Path) -> None:
    path = write(tmp_path / "f.csv", "id,name,total_amt\n1,a,1\n")
    with pytest.raises(SchemaError, match="op code column 'op' is missing"):
        read_feed(spark, path, SALES)


# --- input kinds and order ---------------------------------------------------------------------


def test_csv_quoting_multiline_fields_and_empty_values(spark: Any, tmp_path: Path) -> None:
    spec = TableSpec.build("db.t", columns="id BIGINT, note STRING, amt DOUBLE", primary_key="id")
    path = write(
        tmp_path / "f.csv",
        'id,note,amt\n1,"a, ""quoted"" note",1.5\n2,"two\nlines",\n3,,  7 \n',
    )
    feed = read_feed(spark, path, spec)
    assert [(r["id"], r["note"], r["amt"]) for r in rows(feed)] == [
        (1, 'a, "quoted" note', 1.5),
        (2, "two\nlines", None),
        (3, None, 7.0),
    ]
    assert feed.rejected.count() == 0


def test_csv_files_are_read_in_the_given_order_each_with_its_own_header(
    spark: Any, tmp_path: Path
) -> None:
    first = write(tmp_path / "b.csv", "name,op,id\nc,I,3\nd,U,1\n")
    second = write(tmp_path / "a.csv", "id,total_amt,op,name\n1,1.5,U,a\n2,,D,b\n")
    got = rows(read_feed(spark, [first, second], SALES, partial=True))
    assert [(r["id"], r["name"], r["total_amt"], r["_op"]) for r in got] == [
        (3, "c", None, "I"),
        (1, "d", None, "U"),
        (1, "a", 1.5, "U"),
        (2, "b", None, "D"),
    ]
    assert len({r["_seq"] for r in got}) == 4


def test_a_directory_is_read_in_path_order_and_needs_a_format(spark: Any, tmp_path: Path) -> None:
    folder = tmp_path / "feed"
    folder.mkdir()
    write(folder / "b.csv", "id,name,total_amt,op\n2,b,,I\n")
    write(folder / "a.csv", "id,name,total_amt,op\n1,a,,I\n")
    write(folder / "_SUCCESS", "")
    with pytest.raises(InputError, match=r"give the format \(--format in the command line"):
        read_feed(spark, str(folder), SALES)
    assert [r["name"] for r in rows(read_feed(spark, folder, SALES, format="csv"))] == ["a", "b"]
    assert [r["name"] for r in rows(read_feed(spark, str(folder / "*.csv"), SALES))] == ["a", "b"]


def test_gzipped_csv_is_recognised_by_its_extension(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "f.csv.gz"
    path.write_bytes(gzip.compress(b"id,name,total_amt,op\n1,a,2.5,I\n"))
    assert [r["total_amt"] for r in rows(read_feed(spark, str(path), SALES))] == [2.5]


def test_json_lines_values_are_exact_and_nested_values_are_refused(
    spark: Any, tmp_path: Path
) -> None:
    """Fractions keep every digit (Spark's JSON reader would take them through a double), an
    object or array in a STRING column is a dead letter (a JSON string holding JSON is
    fine), and blank lines are skipped."""
    spec = TableSpec.build(
        "db.t",
        columns="id BIGINT, attrs STRING, amt DECIMAL(22,19), ok BOOLEAN",
        primary_key="id",
    )
    path = write(
        tmp_path / "f.jsonl",
        '{"id": 1, "Attrs": {"k": [1, 2]}, "amt": 3.14159, "ok": true}\n'
        "\n"
        '{"id": "2", "ok": "f", "amt": 1.2345678901234567891, "Attrs": "{\\"k\\": 1}"}\n'
        '{"id": 3, "Attrs": [1]}\n'
        '{"id": 4, "Attrs": 12.50, "ok": 1}\n',
    )
    feed = read_feed(spark, path, spec)
    assert [(r["id"], r["attrs"], r["amt"], r["ok"]) for r in rows(feed)] == [
        (2, '{"k": 1}', Decimal("1.2345678901234567891"), False),
        (4, "12.5", None, True),
    ]
    assert sorted(rejected(feed).values()) == [
        "column attrs: a JSON array is not a STRING; send it as a JSON string",
        "column attrs: a JSON object is not a STRING; send it as a JSON string",
    ]


def test_parquet_typed_values_convert_to_the_table_types(spark: Any, tmp_path: Path) -> None:
    spec = TableSpec.build(
        "db.t",
        columns="id BIGINT, day DATE, at TIMESTAMP, price DECIMAL(10,2), blob BINARY, qty INT",
        primary_key="id",
    )
    table = pa.table(
        {
            "id": pa.array([1, 2], pa.int32()),
            "day": pa.array([date(2024, 1, 2), None]),
            "at": pa.array(
                [datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), None], pa.timestamp("us", "UTC")
            ),
            "price": pa.array([Decimal("1.25"), Decimal("7.00")], pa.decimal128(5, 2)),
            "blob": pa.array([b"\x00\xff", None]),
            "qty": pa.array([3.0, 2.5], pa.float64()),
        }
    )
    pq.write_table(table, tmp_path / "f.parquet")
    feed = read_feed(spark, str(tmp_path / "f.parquet"), spec)
    (good,) = rows(feed)
    assert good["id"] == 1 and good["day"] == date(2024, 1, 2)
    assert good["at"].timestamp() == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp()
    assert good["price"] == Decimal("1.25") and bytes(good["blob"]) == b"\x00\xff"
    assert good["qty"] == 3
    assert list(rejected(feed).values()) == ["column qty: '2.5' is not an INT"]


def test_pyarrow_table_input(spark: Any) -> None:
    table = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "name": pa.array(["a", "b", "c"], pa.large_string()),
            "op": ["I", "U", "D"],
        }
    )
    feed = read_feed(spark, table.append_column("total_amt", pa.array(["1", "x", "y"])), SALES)
    # row 3 is a delete: its total_amt is neither checked nor used
    assert [(r["id"], r["name"], r["_op"]) for r in rows(feed)] == [(1, "a", "I"), (3, "c", "D")]
    assert [(r["_source"], r["_reason"]) for r in feed.rejected.collect()] == [
        ("pyarrow.Table", "column total_amt: 'x' is not a DOUBLE")
    ]
    assert read_feed(spark, table, SALES, partial=True).filled_columns == ("total_amt",)


def test_dataframe_input_order_is_partition_then_row_order(spark: Any) -> None:
    data = [(i, f"n{i}", "U") for i in range(10)]
    frame = spark.createDataFrame(data, "id long, name string, op string")
    assert frame.rdd.getNumPartitions() > 1
    got = rows(read_feed(spark, frame, SALES, partial=True))
    assert [r["id"] for r in got] == list(range(10))


def test_only_schema_work_runs_spark_jobs(spark: Any, tmp_path: Path) -> None:
    context = spark.sparkContext
    frame = spark.createDataFrame(
        [(1, "a", "x", "I")], "id long, name string, total_amt string, op string"
    )
    csv_files = [write(tmp_path / f"{n}.csv", "id,name,total_amt,op\n1,a,2,I\n") for n in "ab"]
    json_file = write(tmp_path / "f.json", '{"id": 1, "name": "a", "total_amt": 2, "op": "I"}\n')

    def jobs(group: str, read: Any) -> int:
        context.setJobGroup(group, "count the jobs read_feed runs")
        try:
            feed = read()
            assert feed.rows.columns == ["id", "name", "total_amt", "_op", "_seq"]
            assert feed.rejected.columns == ["_raw", "_reason", "_source"]
            return len(context.statusTracker().getJobIdsForGroup(group))
        finally:
            context.setLocalProperty("spark.jobGroup.id", None)

    assert jobs("feed-frame", lambda: read_feed(spark, frame, SALES)) == 0
    # Plain local files' headers are read without Spark; others by a job each.
    assert jobs("feed-csv", lambda: read_feed(spark, csv_files, SALES)) == 0
    gzipped = []
    for n in "ab":
        gzipped.append(str(tmp_path / f"{n}.csv.gz"))
        with gzip.open(gzipped[-1], "wt") as out:
            out.write("id,name,total_amt,op\n1,a,2,I\n")
    assert jobs("feed-csv-gz", lambda: read_feed(spark, gzipped, SALES)) == 2  # the headers
    # the keys: one scan, whose small shuffle (distinct keys) AQE runs as a job of its own
    assert jobs("feed-json", lambda: read_feed(spark, json_file, SALES)) <= 2


def test_empty_directory_and_empty_csv_give_an_empty_feed(spark: Any, tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    feed = read_feed(spark, folder, SALES, format="json")
    assert feed.rows.columns == ["id", "name", "total_amt", "_op", "_seq"]
    assert feed.rows.count() == 0 and feed.rejected.count() == 0
    empty = write(tmp_path / "e.csv", "")
    header_only = write(tmp_path / "h.csv", "id,name,total_amt,op\n")
    assert read_feed(spark, [empty, header_only], SALES).rows.count() == 0


def test_bad_paths_and_formats_raise_input_errors(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read feed"):
        read_feed(spark, str(tmp_path / "missing.csv"), SALES)
    with pytest.raises(InputError, match="cannot tell the format"):
        read_feed(spark, str(tmp_path / "f.txt"), SALES)
    with pytest.raises(InputError, match="mix formats"):
        read_feed(spark, [str(tmp_path / "a.csv"), str(tmp_path / "b.parquet")], SALES)
    with pytest.raises(InputError, match="unknown feed format"):
        read_feed(spark, str(tmp_path / "a.csv"), SALES, format="xml")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="a feed is"):
        read_feed(spark, 42, SALES)


# --- dead letters --------------------------------------------------------------------------------


def test_each_rejection_reason_keeps_the_raw_record_and_good_rows_pass(
    spark: Any, tmp_path: Path
) -> None:
    path = write(
        tmp_path / "f.csv",
        "id,name,total_amt,op\n"
        "1,ok,1.5,I\n"
        "2,bad,abc,U\n"
        ",nokey,1,U\n"
        "4,x,1,Z\n"
        "5,toolong,1,U\n"
        "6,a\n"
        "7,two,bad,??\n"
        "8,last,,D\n",
    )
    feed = read_feed(spark, path, SALES)
    assert [(r["id"], r["_op"]) for r in rows(feed)] == [(1, "I"), (8, "D")]
    assert rejected(feed) == {
        "2,bad,abc,U": "column total_amt: 'abc' is not a DOUBLE",
        ",nokey,1,U": "primary key column id is null",
        "4,x,1,Z": "unknown op code 'Z'",
        "5,toolong,1,U": "column name: 'toolong' is longer than VARCHAR(5)",
        "6,a": "malformed CSV record (wrong number of fields or unbalanced quotes)",
        "7,two,bad,??": "unknown op code '??'; column total_amt: 'bad' is not a DOUBLE",
    }
    assert {r["_source"] for r in feed.rejected.collect()} == {Path(path).as_uri()}


def test_unparseable_json_lines_are_rejected_verbatim(spark: Any, tmp_path: Path) -> None:
    lines = ['{"id": 1, "op": "I"}', "not json", "[1, 2]", "42", '{"id": 2, "op"']
    lines += ['{"id": 4, "id": 5, "op": "I"}', '{"id": 3, "op": "U"}']  # a duplicate key too
    path = write(tmp_path / "f.json", "\n".join(lines) + "\n")
    feed = read_feed(spark, path, SALES, partial=True)
    assert [r["id"] for r in rows(feed)] == [1, 3]
    reason = "malformed JSON record (expected one JSON object per line, keys unique)"
    assert rejected(feed) == {line: reason for line in lines[1:6]}


def test_a_json_feed_of_only_bad_lines_is_all_dead_letters(spark: Any, tmp_path: Path) -> None:
    path = write(tmp_path / "f.json", "oops\n{broken\n")
    feed = read_feed(spark, path, SALES)
    assert feed.rows.count() == 0
    assert set(rejected(feed)) == {"oops", "{broken"}


def test_deletes_need_only_key_partition_and_ordering_columns(spark: Any, tmp_path: Path) -> None:
    spec = TableSpec.build(
        "db.t",
        columns="region STRING, day DATE NOT NULL, id BIGINT NOT NULL, qty INT NOT NULL, "
        "note VARCHAR(2), seq_no BIGINT",
        primary_key="id",
        partition_by="region,day",
        ordering_column="seq_no",
        op_code_column="op",
    )
    path = write(
        tmp_path / "f.csv",
        "region,day,id,qty,note,seq_no,op\n"
        ",2024-01-01,1,,,10,D\n"  # delete: qty and note may be null, region is nullable
        "eu,2024-01-01,2,abc,toolong,11,D\n"  # delete: other values are not checked
        "eu,2024-01-01,3,,,12,U\n"  # upsert: qty is NOT NULL
        "eu,2024-01-01,4,abc,,13,U\n"
        "eu,,5,1,,14,D\n"  # a delete still needs its NOT NULL partition value
        "eu,2024-01-01,6,1,,,D\n"  # and its ordering value
        "eu,2024-01-01,7,1,,x,U\n",
    )
    feed = read_feed(spark, path, spec)
    assert [(r["id"], r["region"], r["_op"]) for r in rows(feed)] == [
        (1, None, "D"),
        (2, "eu", "D"),
    ]
    assert sorted(rejected(feed).values()) == [
        "column day is NOT NULL but null",
        "column qty is NOT NULL but null",
        "column qty: 'abc' is not an INT",
        "column seq_no: 'x' is not a BIGINT",
        "ordering column seq_no is null",
    ]


def test_text_values_convert_to_every_type_or_are_rejected(spark: Any, tmp_path: Path) -> None:
    spec = TableSpec.build(
        "db.t",
        columns="id INT NOT NULL, flag BOOLEAN, tiny TINYINT, small SMALLINT, big BIGINT, "
        "ratio FLOAT, total_amt DOUBLE, price DECIMAL(10,2), name STRING, code VARCHAR(3), "
        "cc CHAR(2), day DATE, at TIMESTAMP, blob BINARY",
        primary_key="id",
    )
    header = "id,flag,tiny,small,big,ratio,total_amt,price,name,code,cc,day,at,blob"
    good = (
        "1,TRUE,-128,32767,9223372036854775807,1.5,2.25,12.340,hi,abc,de,2024-02-29,"
        "2024-03-01T12:30:00+02:00,aGVsbG8="
    )
    bad = {
        2: ("flag", "maybe", "BOOLEAN"),
        3: ("tiny", "128", "TINYINT"),
        4: ("small", "32768", "SMALLINT"),
        5: ("big", "9223372036854775808", "BIGINT"),
        6: ("ratio", "abc", "FLOAT"),
        7: ("total_amt", "1,5", "DOUBLE"),
        8: ("price", "123456789.1", "DECIMAL(10,2)"),
        9: ("day", "2024-02-30", "DATE"),
        10: ("at", "yesterday", "TIMESTAMP"),
        11: ("blob", "not base64!", "BINARY"),
        12: ("id", "1.0", "INT"),
        # Spark's cast would take these, changing them (issue 10, items 1 and 3)
        16: ("day", "19788", "DATE"),
        17: ("day", "2024-01-01 10:00:00", "DATE"),
        18: ("flag", "yes", "BOOLEAN"),
        19: ("ratio", "1e39", "FLOAT"),
        20: ("total_amt", "1e-400", "DOUBLE"),
        21: ("at", "2024-01-01T00:00:00.1234567", "TIMESTAMP"),
        22: ("day", "0000-01-01", "DATE"),
    }
    names = header.split(",")
    lines = [header, good, "13" + "," * 13]
    for row_id, (column, value, _) in bad.items():
        values = [""] * len(names)
        values[0] = str(row_id)
        values[names.index(column)] = f'"{value}"'
        lines.append(",".join(values))
    lines += ["14,,,,,,,,,abcd,,,,", "15,,,,,,,,,,xyz,,,", "23,,,,,,,12.345,,,,,,"]
    feed = read_feed(spark, write(tmp_path / "f.csv", "\n".join(lines) + "\n"), spec)

    first, empty = rows(feed)
    assert first["flag"] is True and (first["tiny"], first["small"]) == (-128, 32767)
    assert first["big"] == 9223372036854775807 and first["ratio"] == 1.5
    assert first["total_amt"] == 2.25 and first["price"] == Decimal("12.34")
    assert (first["name"], first["code"], first["cc"]) == ("hi", "abc", "de")
    assert first["day"] == date(2024, 2, 29)
    assert first["at"].timestamp() == datetime(2024, 3, 1, 10, 30, tzinfo=UTC).timestamp()
    assert bytes(first["blob"]) == b"hello"
    assert empty["id"] == 13 and all(empty[c] is None for c in names[1:])

    reasons = sorted(rejected(feed).values())
    expected = [
        f"column {column}: '{value}' is not {'an' if kind[0] in 'AEIOU' else 'a'} {kind}"
        for column, value, kind in bad.values()
    ]
    expected += [
        "column code: 'abcd' is longer than VARCHAR(3)",
        "column cc: 'xyz' is longer than CHAR(2)",
        "column price: '12.345' has more decimal places than DECIMAL(10,2) keeps; round it in "
        "the feed, or set table property round_decimals=true",
    ]
    assert reasons == sorted(expected)


def test_fractional_numbers_are_not_integers_and_types_must_be_convertible(spark: Any) -> None:
    spec = TableSpec.build("db.t", columns="id BIGINT, qty INT, day DATE", primary_key="id")
    frame = spark.createDataFrame([(1, 2.0), (2, 2.5), (3, None)], "id long, qty double")
    feed = read_feed(spark, frame, spec, partial=True)
    assert [(r["id"], r["qty"]) for r in rows(feed)] == [(1, 2), (3, None)]
    assert rejected(feed) == {'{"id":2,"qty":2.5}': "column qty: '2.5' is not an INT"}

    dated = spark.createDataFrame([(1, date(2024, 1, 1))], "id long, qty date")
    with pytest.raises(SchemaError, match=r"qty \(DATE in the feed, INT in the table\)"):
        read_feed(spark, dated, spec, partial=True)


# --- whole-batch schema errors ------------------------------------------------------------------


def test_missing_key_columns_raise_before_reading_rows(spark: Any, tmp_path: Path) -> None:
    spec = TableSpec.build(
        "db.t",
        columns="store INT, id BIGINT, qty INT, ts TIMESTAMP",
        primary_key="id",
        partition_by="store",
        ordering_column="ts",
    )
    csv = write(tmp_path / "f.csv", "qty,note\n1,x\n")
    with pytest.raises(SchemaError) as caught:
        read_feed(spark, csv, spec)
    message = str(caught.value)
    assert "missing key column(s) store, id, ts" in message
    assert "unknown column(s) note" in message
    assert csv in message

    jsonl = write(tmp_path / "f.json", '{"id": 1, "store": 2}\n')
    with pytest.raises(SchemaError, match=r"missing key column\(s\) ts"):
        read_feed(spark, jsonl, spec)


def test_unknown_columns_raise_naming_them(spark: Any, tmp_path: Path) -> None:
    frame = spark.createDataFrame([(1, "a", 2, 3)], "id long, name string, colour int, _seq int")
    with pytest.raises(SchemaError, match=r"unknown column\(s\) colour, _seq"):
        read_feed(spark, frame, SALES, op_code_column="name")
    parquet = tmp_path / "f.parquet"
    pq.write_table(pa.table({"id": [1], "op": ["I"], "extra": [1.0]}), parquet)
    with pytest.raises(SchemaError, match=r"unknown column\(s\) extra"):
        read_feed(spark, str(parquet), SALES)


def test_missing_columns_raise_unless_partial_which_marks_them_kept(
    spark: Any, tmp_path: Path
) -> None:
    spec = TableSpec.build(
        "db.t", columns="id BIGINT, qty INT NOT NULL, note STRING", primary_key="id"
    )
    with pytest.raises(SchemaError, match=r"missing column\(s\) qty; .*--partial"):
        read_feed(spark, write(tmp_path / "a.csv", "id,note\n1,x\n"), spec)
    with pytest.raises(SchemaError, match=r"missing column\(s\) note; .*--partial"):
        read_feed(spark, write(tmp_path / "b.csv", "ID,Qty\n1,5\n"), spec)
    feed = read_feed(spark, write(tmp_path / "c.csv", "ID,Qty\n1,5\n"), spec, partial=True)
    (row,) = rows(feed)
    assert (row["id"], row["qty"], row["note"], row["_op"]) == (1, 5, None, "U")
    assert (feed.filled_columns, feed.keeps, row["#keep"]) == (("note",), True, ["note"])


def test_json_keys_differing_only_in_case_raise(spark: Any, tmp_path: Path) -> None:
    path = write(tmp_path / "f.json", '{"id": 1}\n{"ID": 2}\n')
    with pytest.raises(SchemaError, match="differ only in case: ID, id"):
        read_feed(spark, path, SALES, op_code_column="id")


def test_table_columns_may_share_names_with_dead_letter_fields(spark: Any, tmp_path: Path) -> None:
    spec = TableSpec.build(
        "db.t", columns="id BIGINT, _raw STRING, _source STRING, _malformed INT", primary_key="id"
    )
    path = write(tmp_path / "f.csv", "id,_raw,_source,_malformed\n1,r,s,2\n2,r,s,x\n")
    feed = read_feed(spark, path, spec)
    assert [(r["id"], r["_raw"], r["_source"], r["_malformed"]) for r in rows(feed)] == [
        (1, "r", "s", 2)
    ]
    assert [tuple(r) for r in feed.rejected.collect()] == [
        ("2,r,s,x", "column _malformed: 'x' is not an INT", Path(path).as_uri())
    ]
