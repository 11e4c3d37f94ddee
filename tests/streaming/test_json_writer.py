"""StrictJsonWriter: Hive's testTransactionBatchCommit_Json and the Hive 3 JSON behaviours
(case-insensitive keys, unknown keys), with a JSON feed's value rules."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from tests.streaming.writers import ALERTS, Endpoint, one_column
from versioned.layouts.ingest_errors import SerializationError
from versioned.streaming.record_writers import StrictJsonWriter

MALFORMED = "malformed JSON record (expected one JSON object, keys unique)"


def test_json_objects_become_rows() -> None:
    writer = StrictJsonWriter(endpoint=Endpoint(ALERTS))
    out = writer.encode([b'{"id" : 1, "msg": "Hello streaming"}', '{"msg":"x","id":2}'])
    assert out.rows.to_pylist() == [{"id": 1, "msg": "Hello streaming"}, {"id": 2, "msg": "x"}]


def test_keys_match_columns_case_insensitively() -> None:
    writer = StrictJsonWriter(spec=ALERTS)
    assert writer.encode(['{"ID": 1, "Msg": "a"}']).rows.to_pylist() == [{"id": 1, "msg": "a"}]


def test_a_missing_key_is_null() -> None:
    writer = StrictJsonWriter(spec=ALERTS)
    assert writer.encode(['{"id": 1}']).rows.to_pylist() == [{"id": 1, "msg": None}]


def test_an_unknown_key_is_a_serialization_error_naming_it() -> None:
    writer = StrictJsonWriter(spec=ALERTS)
    with pytest.raises(SerializationError, match=r"unknown key\(s\) 'mesage'.*id, msg"):
        writer.encode(['{"id": 1, "mesage": "a"}'])


def test_ignore_unknown_drops_unknown_keys_partition_columns_included() -> None:
    writer = StrictJsonWriter(spec=ALERTS, ignore_unknown=True)
    out = writer.encode(['{"id": 1, "msg": "a", "country": "India", "extra": [1]}'])
    assert out.rows.to_pylist() == [{"id": 1, "msg": "a"}]


@pytest.mark.parametrize(
    "record",
    ["[1, 2]", '"text"', "42", "null", "", "{", '{"id": 1} trailing', '{"id": 1, "id": 2}'],
)
def test_a_record_that_is_not_one_json_object_with_unique_keys_is_malformed(record: str) -> None:
    writer = StrictJsonWriter(spec=ALERTS, dead_letter=True)
    assert writer.encode([record]).rejected[0].reason == MALFORMED


def test_a_duplicate_key_inside_a_nested_value_is_malformed() -> None:
    writer = StrictJsonWriter(spec=ALERTS, dead_letter=True)
    (rejected,) = writer.encode(['{"id": 1, "msg": "a", "x": {"k": 1, "k": 2}}']).rejected
    assert rejected.reason == MALFORMED


def test_two_keys_naming_one_column_reject_the_record() -> None:
    writer = StrictJsonWriter(spec=ALERTS, dead_letter=True)
    (rejected,) = writer.encode(['{"id": 1, "Id": 2}']).rejected
    assert rejected.reason == "keys 'id' and 'Id' both name column id"


def test_dead_letter_keeps_the_good_records() -> None:
    writer = StrictJsonWriter(spec=ALERTS, dead_letter=True)
    out = writer.encode(['{"id": 1}', "oops", '{"id": "x"}', '{"id": 4}'])
    assert [r["id"] for r in out.rows.to_pylist()] == [1, 4]
    assert [(r.index, r.reason) for r in out.rejected] == [
        (1, MALFORMED),
        (2, "column id: 'x' is not an INT"),
    ]


@pytest.mark.parametrize(
    ("type_name", "value", "expected"),
    [
        ("INT", "5.0", 5),  # numbers are taken by value
        ("INT", "-0", 0),
        ("BIGINT", "1e3", 1000),
        ("BIGINT", '"12"', 12),
        ("DECIMAL(20,19)", "1.2345678901234567891", Decimal("1.2345678901234567891")),
        ("DOUBLE", "0.1", 0.1),
        ("STRING", "12.50", "12.5"),  # a number in a STRING column: its plain decimal form
        ("STRING", "-0.0", "0"),
        ("STRING", "1E+2", "100"),
        ("STRING", "true", "true"),
        ("STRING", '""', ""),  # an empty JSON string is an empty string in a STRING column
        ("INT", '""', None),  # and null in other columns
        ("STRING", "null", None),
        ("BOOLEAN", "true", True),
        ("BOOLEAN", '"f"', False),
        ("DATE", '"2024-01-05"', dt.date(2024, 1, 5)),
        ("TIMESTAMP", '"2024-01-05T10:00:00+01:00"', dt.datetime(2024, 1, 5, 9, tzinfo=dt.UTC)),
        ("BINARY", '"aGk="', b"hi"),
        ("STRING", '"Grüße 🌍"', "Grüße 🌍"),
        ("STRING", '"\\u00fc\\n"', "ü\n"),
    ],
)
def test_json_values_are_typed_like_a_json_feed(
    type_name: str, value: str, expected: object
) -> None:
    writer = StrictJsonWriter(spec=one_column(type_name))
    out = writer.encode([f'{{"id": 1, "v": {value}}}'])
    assert out.rows.column("v")[0].as_py() == expected


@pytest.mark.parametrize(
    ("type_name", "value", "reason"),
    [
        ("INT", "5.5", "column v: '5.5' is not an INT"),
        ("INT", "true", "column v: 'true' is not an INT"),
        ("INT", '"5.0"', "column v: '5.0' is not an INT"),  # text follows the text rules
        ("INT", "[1]", "column v: '[1]' is not an INT"),
        ("STRING", '{"a": 1}', "column v: a JSON object is not a STRING; send it as a JSON string"),
        (
            "VARCHAR(5)",
            "[1]",
            "column v: a JSON array is not a VARCHAR(5); send it as a JSON string",
        ),
        ("DECIMAL(10,2)", "1.239", "has more decimal places than DECIMAL(10,2)"),
    ],
)
def test_json_values_that_do_not_fit_reject_the_record(
    type_name: str, value: str, reason: str
) -> None:
    writer = StrictJsonWriter(spec=one_column(type_name), dead_letter=True)
    (rejected,) = writer.encode([f'{{"id": 1, "v": {value}}}']).rejected
    assert reason in rejected.reason


def test_a_json_record_that_is_not_utf8_is_rejected() -> None:
    writer = StrictJsonWriter(spec=ALERTS, dead_letter=True)
    (rejected,) = writer.encode([b'{"id": 1, "msg": "caf\xe9"}']).rejected
    assert rejected.reason.startswith("record is not valid UTF-8")
