"""Feed values land exactly or become dead letters: no guessed dates, no silent rounding or
replacement characters, unless the table opts into it (and then it is counted)."""

from __future__ import annotations

import math
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from versioned.engine.feeds.reader import Feed, read_feed
from versioned.errors import SchemaError
from versioned.schema import TableSpec

DATED = TableSpec.build(
    "db.t",
    columns="k BIGINT, d DATE, v STRING, lsn BIGINT",
    primary_key="k",
    partition_by="d",
    ordering_column="lsn",
    op_code_column="op",
)


def _spec(columns: str, **properties: str) -> TableSpec:
    return TableSpec.build("db.t", columns=columns, primary_key="k", properties=properties)


def _rows(feed: Feed) -> list[dict[str, Any]]:
    return sorted((r.asDict() for r in feed.rows.collect()), key=lambda r: int(r["_seq"]))


def _reasons(feed: Feed) -> list[str]:
    return sorted(r["_reason"] for r in feed.rejected.collect())


def test_a_bare_number_in_a_date_column_is_a_dead_letter_not_a_year(
    spark: Any, tmp_path: Path
) -> None:
    """Issue 10 item 1: Spark's cast reads ``19788`` as the year 19788."""
    path = tmp_path / "f.csv"
    path.write_bytes(b"k,d,v,lsn,op\n2,19788,x,2,I\n1,2024-02-29,y,1,I\n3,2024-1-5,z,3,I\n")
    feed = read_feed(spark, str(path), DATED)
    assert [(r["k"], r["d"]) for r in _rows(feed)] == [(1, date(2024, 2, 29))]
    assert _reasons(feed) == [
        "column d: '19788' is not a DATE",
        "column d: '2024-1-5' is not a DATE",
    ]


def test_invalid_utf8_in_csv_is_a_dead_letter_unless_the_table_replaces_it(
    spark: Any, tmp_path: Path
) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b'k,v\n1,caf\xe9\n2,\xc3\xa9t\xc3\xa9\n3,"a\xff\nb"\n')
    strict = read_feed(spark, str(path), _spec("k BIGINT, v STRING"))
    assert [(r["k"], r["v"]) for r in _rows(strict)] == [(2, "été")]
    reasons = _reasons(strict)
    assert len(reasons) == 2 and all("is not valid UTF-8" in r for r in reasons)
    assert "column v: 'caf\ufffd'" in reasons[0] + reasons[1]

    lenient = read_feed(spark, str(path), _spec("k BIGINT, v STRING", replace_invalid_utf8="true"))
    got = [(r["k"], r["v"]) for r in _rows(lenient)]
    assert got == [(1, "caf\ufffd"), (2, "été"), (3, "a\ufffd\nb")]
    assert lenient.coerced_count() == 2 and _reasons(lenient) == []


def test_invalid_utf8_json_line_is_a_dead_letter_unless_the_table_replaces_it(
    spark: Any, tmp_path: Path
) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(b'{"k": 1, "v": "caf\xe9"}\n{"k": 2, "v": "ok"}\n')
    strict = read_feed(spark, str(path), _spec("k BIGINT, v STRING"))
    assert [r["k"] for r in _rows(strict)] == [2]
    assert [r.startswith("JSON line is not valid UTF-8") for r in _reasons(strict)] == [True]
    lenient = read_feed(spark, str(path), _spec("k BIGINT, v STRING", replace_invalid_utf8="true"))
    assert [(r["k"], r["v"]) for r in _rows(lenient)] == [(1, "caf\ufffd"), (2, "ok")]
    assert lenient.coerced_count() == 1


def test_an_unpaired_surrogate_escape_is_a_dead_letter_on_every_spark_line(
    spark: Any, tmp_path: Path
) -> None:
    """PySpark 4.0's JSON parser read ``"\\ud800"`` as a null string (4.1 refuses the line):
    the feed refuses such lines itself; a pair, an escaped backslash before ``ud800`` and a
    plain character stay values."""
    lines = [
        rb'{"k": 1, "v": "\ud800"}',  # a high surrogate alone
        rb'{"k": 2, "v": "a\udc00b"}',  # a low surrogate alone
        rb'{"k": 3, "v": "\\\ud800"}',  # an escaped backslash, then a lone high surrogate
        rb'{"k": 4, "v": "\ud83d\ude00"}',  # a pair: U+1F600
        rb'{"k": 5, "v": "\\ud800"}',  # an escaped backslash, then the text "ud800"
        rb'{"k": 6, "v": "\u00e9"}',
    ]
    path = tmp_path / "f.json"
    path.write_bytes(b"\n".join(lines) + b"\n")
    feed = read_feed(spark, str(path), _spec("k BIGINT, v STRING"))
    assert [(r["k"], r["v"]) for r in _rows(feed)] == [
        (4, "\U0001f600"),
        (5, "\\ud800"),
        (6, "\u00e9"),
    ]
    reasons = _reasons(feed)
    assert len(reasons) == 3 and all("unpaired surrogate escape" in r for r in reasons), reasons


def test_decimal_places_beyond_the_scale_are_refused_or_rounded_and_counted(
    spark: Any, tmp_path: Path
) -> None:
    path = tmp_path / "f.csv"
    path.write_text("k,p\n1,1.239\n2,1.2300\n3,5e-3\n4,100e-2\n5,-0.001\n")
    strict = read_feed(spark, str(path), _spec("k BIGINT, p DECIMAL(10,2)"))
    assert [(r["k"], r["p"]) for r in _rows(strict)] == [
        (2, Decimal("1.23")),
        (4, Decimal("1.00")),
    ]
    assert _reasons(strict) == [
        f"column p: '{v}' has more decimal places than DECIMAL(10,2) keeps; round it in the "
        "feed, or set table property round_decimals=true"
        for v in ("-0.001", "1.239", "5e-3")
    ]
    lenient = read_feed(spark, str(path), _spec("k BIGINT, p DECIMAL(10,2)", round_decimals="true"))
    assert [r["p"] for r in _rows(lenient)] == [
        Decimal(v) for v in ("1.24", "1.23", "0.01", "1.00", "0.00")
    ]
    assert lenient.coerced_count() == 3

    typed = pa.table({"k": [1, 2], "p": [1.239, 0.1]})
    feed = read_feed(spark, typed, _spec("k BIGINT, p DECIMAL(10,2)"))
    assert [(r["k"], r["p"]) for r in _rows(feed)] == [(2, Decimal("0.10"))]
    assert len(_reasons(feed)) == 1


def test_typed_values_that_would_change_are_refused(spark: Any) -> None:
    """A number other than 0/1 is not a BOOLEAN; a timestamp with a time is not a DATE."""
    frame = spark.createDataFrame(
        [(1, 1, "2024-01-01 00:00:00"), (2, 2, "2024-01-01 10:00:00")],
        "k long, b int, d string",
    ).selectExpr("k", "b", "cast(d as timestamp) as d")
    feed = read_feed(spark, frame, _spec("k BIGINT, b BOOLEAN, d DATE"))
    assert [(r["k"], r["b"], r["d"]) for r in _rows(feed)] == [(1, True, date(2024, 1, 1))]
    assert _reasons(feed) == [
        "column b: '2' is not a BOOLEAN; column d: '2024-01-01 10:00:00' is not a DATE"
    ]


def test_csv_byte_order_mark_and_crlf_are_read_and_duplicate_headers_refused(
    spark: Any, tmp_path: Path
) -> None:
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b'\xef\xbb\xbfk,v\r\n1,"a\r\nb"\r\n2,c\r\n')
    feed = read_feed(spark, str(bom), _spec("k BIGINT, v STRING"))
    # Spark's CSV parser reads a line break inside quotes as \n (documented)
    assert [(r["k"], r["v"]) for r in _rows(feed)] == [(1, "a\nb"), (2, "c")]
    twice = tmp_path / "twice.csv"
    twice.write_text("k,v,v\n1,a,b\n")
    with pytest.raises(SchemaError, match="names column\\(s\\) 'v' more than once"):
        read_feed(spark, str(twice), _spec("k BIGINT, v STRING"))


def test_partition_values_that_cannot_be_a_directory_are_dead_letters(
    spark: Any, tmp_path: Path
) -> None:
    """Issue 10 item 5: the literal default-partition name, and a name over 255 bytes."""
    spec = TableSpec.build("db.t", columns="k BIGINT, p STRING", primary_key="k", partition_by="p")
    longest = "é" * 125 + "/"  # 250 bytes + %2F = 253 bytes, plus "p=": 255
    too_long = "é" * 125 + "//"
    table = pa.table(
        {
            "k": [1, 2, 3, 4, 5],
            "p": ["__HIVE_DEFAULT_PARTITION__", None, longest, too_long, "../x"],
        }
    )
    feed = read_feed(spark, table, spec)
    assert [(r["k"], r["p"]) for r in _rows(feed)] == [(2, None), (3, longest), (5, "../x")]
    reserved, long = _reasons(feed)
    assert "'__HIVE_DEFAULT_PARTITION__' is Hive's name of the null partition" in reserved
    assert "makes a directory name of 258 bytes, longer than the 255" in long


def test_lenience_properties_must_be_true_or_false(spark: Any) -> None:
    with pytest.raises(SchemaError, match="round_decimals='yes'; set it to true or false"):
        read_feed(spark, pa.table({"k": [1]}), _spec("k BIGINT", round_decimals="yes"))


def test_a_json_minus_zero_keeps_its_sign_as_csv_and_parquet_do(spark: Any, tmp_path: Path) -> None:
    """Issue 27 item 5: JSON numbers go through a decimal, which has no -0."""
    spec = _spec("k BIGINT, x DOUBLE, f FLOAT, s STRING")
    path = tmp_path / "f.json"
    lines = [
        '{"k": 1, "x": -0.0, "f": -0.0, "s": "-0.0"}',
        '{"k": 2, "x": -0e0, "f": -0e5, "s": "a"}',
        '{"k": 3, "x": 0.0, "f": 0, "s": "b"}',
        '{"k": 4, "x": -1.5e-320, "f": -2.5, "s": "c"}',
    ]
    path.write_text("\n".join(lines) + "\n")
    rows = _rows(read_feed(spark, str(path), spec))
    signs = [(r["k"], math.copysign(1, r["x"]), math.copysign(1, r["f"])) for r in rows]
    assert signs == [(1, -1, -1), (2, -1, -1), (3, 1, 1), (4, -1, -1)]
    assert [r["s"] for r in rows] == ["-0.0", "a", "b", "c"]
    assert rows[3]["x"] == -1.5e-320 and rows[3]["f"] == -2.5
    csv = tmp_path / "f.csv"
    csv.write_text("k,x,f,s\n1,-0.0,-0.0,z\n")
    (row,) = _rows(read_feed(spark, str(csv), spec))
    assert (math.copysign(1, row["x"]), math.copysign(1, row["f"])) == (-1, -1)


def test_orc_tables_dead_letter_the_values_orc_would_not_give_back(
    spark: Any, tmp_path: Path
) -> None:
    """Issue 27 item 4: acid (ORC) tables gave back 1582-10-10 as 1582-10-15 and
    1969-12-31 23:59:59.5 one second later; the version layout's Parquet keeps them."""
    csv = tmp_path / "f.csv"
    csv.write_text(
        "k,d,t\n1,1582-10-10,2024-01-01 00:00:00\n2,2024-01-01,1969-12-31 23:59:59.5\n"
        "3,1582-10-15,1969-12-31 23:59:59\n4,1582-10-04,1969-12-31 23:59:58.5\n"
    )
    columns = "k BIGINT, d DATE, t TIMESTAMP"
    orc = TableSpec.build(
        "db.t", columns=columns, primary_key="k", layout="acid", file_format="orc"
    )
    feed = read_feed(spark, str(csv), orc)
    assert [r["k"] for r in _rows(feed)] == [3, 4]
    assert _reasons(feed) == [
        "column d: '1582-10-10' is a day ORC's readers skip (1582-10-05..14): it would read "
        "back as 1582-10-15",
        "column t: '1969-12-31 23:59:59.5' is within the last second before 1970, which "
        "ORC's readers read one second later",
    ]
    parquet = read_feed(spark, str(csv), _spec(columns))
    assert [r["k"] for r in _rows(parquet)] == [1, 2, 3, 4]


def test_spark_s_own_orc_files_do_change_those_values(spark: Any, tmp_path: Path) -> None:
    """Why the values above are refused: Spark writes and reads them back changed (should a
    Spark release stop doing so, this fails and the refusal can go)."""
    frame = spark.sql(
        "SELECT DATE'1582-10-10' AS d, TIMESTAMP'1969-12-31 23:59:59.5' AS t, "
        "DATE'1582-10-04' AS d_ok, TIMESTAMP'1969-12-31 23:59:58.5' AS t_ok"
    )
    frame.write.orc(str(tmp_path / "o"))
    (row,) = spark.read.orc(str(tmp_path / "o")).collect()
    assert (row["d"].isoformat(), str(row["t"])) != ("1582-10-10", "1969-12-31 23:59:59.500000")
    assert (row["d_ok"].isoformat(), str(row["t_ok"])) == (
        "1582-10-04",
        "1969-12-31 23:59:58.500000",
    )
