"""Streamed text values typed by the rules of docs/input-formats.md (the rules a CSV feed
given to ``Table.upsert`` follows), for every column type."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from tests.streaming.writers import one_column
from versioned.streaming.record_writers import DelimitedInputWriter

UTC = dt.UTC


def typed(type_name: str, text: str, **properties: str) -> Any:
    """The stored value of ``text`` in a column of ``type_name``; fails if it is rejected."""
    writer = DelimitedInputWriter(["id", "v"], "\t", spec=one_column(type_name, **properties))
    return writer.encode([f"1\t{text}"]).rows.column("v")[0].as_py()


def reason(type_name: str, text: str, **properties: str) -> str:
    """Why a record with ``text`` in a column of ``type_name`` is rejected."""
    spec = one_column(type_name, **properties)
    writer = DelimitedInputWriter(["id", "v"], "\t", spec=spec, dead_letter=True)
    out = writer.encode([f"1\t{text}"])
    assert out.rows.num_rows == 0, out.rows.to_pylist()
    return out.rejected[0].reason


ACCEPTED = [
    ("BOOLEAN", "true", True),
    ("BOOLEAN", "F", False),
    ("BOOLEAN", " t ", True),
    ("BOOLEAN", "0", False),
    ("TINYINT", "+5", 5),
    ("TINYINT", "-128", -128),
    ("SMALLINT", "007", 7),
    ("INT", "2147483647", 2147483647),
    ("BIGINT", "-9223372036854775808", -9223372036854775808),
    ("FLOAT", "1.5", 1.5),
    ("FLOAT", ".5", 0.5),
    ("FLOAT", "5.", 5.0),
    ("FLOAT", "-Infinity", float("-inf")),
    ("FLOAT", "inf", float("inf")),
    ("DOUBLE", "-1e-3", -0.001),
    ("DOUBLE", "1e308", 1e308),
    ("DOUBLE", "0e5", 0.0),
    ("DECIMAL(10,2)", "1.2300", Decimal("1.23")),
    ("DECIMAL(10,2)", "1e3", Decimal("1000.00")),
    ("DECIMAL(10,2)", "-.5", Decimal("-0.50")),
    ("DECIMAL(10,2)", "100e-2", Decimal("1.00")),
    ("DECIMAL(38,0)", "9" * 38, Decimal("9" * 38)),
    ("STRING", " spaced ", " spaced "),
    ("STRING", "Grüße 世界", "Grüße 世界"),
    ("VARCHAR(3)", "abc", "abc"),
    ("VARCHAR(2)", "é€", "é€"),  # characters, not bytes
    ("CHAR(2)", "ab", "ab"),
    ("DATE", "2024-02-29", dt.date(2024, 2, 29)),
    ("DATE", " 0001-01-01 ", dt.date(1, 1, 1)),
    ("TIMESTAMP", "2024-01-01", dt.datetime(2024, 1, 1, tzinfo=UTC)),
    ("TIMESTAMP", "2024-01-01T10:00", dt.datetime(2024, 1, 1, 10, tzinfo=UTC)),
    ("TIMESTAMP", "2024-01-01 10:00:05.123456", dt.datetime(2024, 1, 1, 10, 0, 5, 123456, UTC)),
    ("TIMESTAMP", "2024-01-01T10:00:05.1234560", dt.datetime(2024, 1, 1, 10, 0, 5, 123456, UTC)),
    ("TIMESTAMP", "2024-01-01T10:00:05Z", dt.datetime(2024, 1, 1, 10, 0, 5, tzinfo=UTC)),
    ("TIMESTAMP", "2024-01-01T10:00:05+02:00", dt.datetime(2024, 1, 1, 8, 0, 5, tzinfo=UTC)),
    ("TIMESTAMP", "2024-01-01T10:00:05+0200", dt.datetime(2024, 1, 1, 8, 0, 5, tzinfo=UTC)),
    ("TIMESTAMP", "2024-01-01 10:00:05-01", dt.datetime(2024, 1, 1, 11, 0, 5, tzinfo=UTC)),
    ("TIMESTAMP", "2024-01-01T10:00:05+02", dt.datetime(2024, 1, 1, 8, 0, 5, tzinfo=UTC)),
    ("BINARY", "aGVsbG8=", b"hello"),
    ("BINARY", "aGk", b"hi"),  # padding may be left out (as Spark decodes base64)
    ("BINARY", "aG Vs\nbG8=", b"hello"),  # spaces and line breaks are ignored
]


@pytest.mark.parametrize(("type_name", "text", "expected"), ACCEPTED)
def test_text_in_the_documented_format_is_stored_exactly(
    type_name: str, text: str, expected: Any
) -> None:
    assert typed(type_name, text) == expected


def test_nan_text_is_a_float_nan() -> None:
    value = typed("DOUBLE", "NaN")
    assert value != value


REFUSED = [
    ("BOOLEAN", "yes"),
    ("BOOLEAN", "2"),
    ("TINYINT", "128"),
    ("INT", "2147483648"),
    ("INT", "1.0"),
    ("INT", "1e3"),
    ("INT", "0x10"),
    ("BIGINT", "9223372036854775808"),
    ("FLOAT", "1e39"),
    ("FLOAT", "1,5"),
    ("FLOAT", "1.5d"),
    ("FLOAT", "0x1p3"),
    ("DOUBLE", "1e309"),
    ("DOUBLE", "1e-400"),
    ("DECIMAL(10,2)", "123456789012"),
    ("DECIMAL(10,2)", "NaN"),
    ("DECIMAL(10,2)", "."),
    ("DECIMAL(10,2)", "1e"),
    ("DATE", "2023-02-29"),
    ("DATE", "19788"),
    ("DATE", "2024-1-5"),
    ("DATE", "2024-01-01 10:00"),
    ("DATE", "0000-01-01"),
    ("TIMESTAMP", "1704067200"),
    ("TIMESTAMP", "2024-01-01T24:00"),
    ("TIMESTAMP", "2024-01-01T23:59:60"),
    ("TIMESTAMP", "2024-01-01T10:00:05.1234567"),
    ("TIMESTAMP", "yesterday"),
    ("TIMESTAMP", "0000-01-01"),
    ("BINARY", "not base64!"),
    ("TIMESTAMP", "2024-01-01T10:00Z"),  # Spark wants seconds before an offset
    ("TIMESTAMP", "2024-01-01 10:00+02:00"),
    ("BINARY", "a"),
    ("BINARY", "aGVsbG8=="),  # padding beyond what is missing
    ("BINARY", "-_8="),  # the URL-safe alphabet
]


@pytest.mark.parametrize(("type_name", "text"), REFUSED)
def test_text_that_is_not_a_value_of_the_type_rejects_its_record(type_name: str, text: str) -> None:
    article = "an" if type_name[0] in "AEIOU" else "a"
    assert reason(type_name, text) == f"column v: '{text}' is not {article} {type_name}"


def test_a_long_refused_value_is_shown_cut_to_60_characters() -> None:
    assert reason("INT", "9" * 70) == f"column v: '{'9' * 60}...' is not an INT"


def test_a_decimal_with_more_places_than_the_scale_is_refused_not_rounded() -> None:
    assert reason("DECIMAL(10,2)", "1.239") == (
        "column v: '1.239' has more decimal places than DECIMAL(10,2) keeps; round it in the "
        "feed, or set table property round_decimals=true"
    )


def test_round_decimals_rounds_half_up_and_counts_the_record() -> None:
    spec = one_column("DECIMAL(10,2)", round_decimals="true")
    writer = DelimitedInputWriter(["id", "v"], "\t", spec=spec)
    out = writer.encode(["1\t1.235", "2\t-1.235", "3\t1.5"])
    assert out.rows.column("v").to_pylist() == [
        Decimal("1.24"),
        Decimal("-1.24"),
        Decimal("1.50"),
    ]
    assert out.coerced == 2


def test_a_rounded_decimal_that_does_not_fit_the_precision_is_not_a_decimal() -> None:
    assert reason("DECIMAL(3,2)", "9.999", round_decimals="true") == (
        "column v: '9.999' is not a DECIMAL(3,2)"
    )


@pytest.mark.parametrize(("type_name", "text"), [("VARCHAR(3)", "abcd"), ("CHAR(2)", "abc")])
def test_text_longer_than_varchar_or_char_is_refused_never_truncated(
    type_name: str, text: str
) -> None:
    assert reason(type_name, text) == f"column v: '{text}' is longer than {type_name}"


def test_a_not_null_column_refuses_an_empty_value() -> None:
    assert reason("STRING NOT NULL", "") == "column v is NOT NULL but null"


@pytest.mark.parametrize("type_name", ["INT", "DOUBLE", "DATE", "TIMESTAMP", "BOOLEAN", "BINARY"])
def test_a_blank_value_is_null_in_a_non_text_column(type_name: str) -> None:
    assert typed(type_name, "   ") is None
