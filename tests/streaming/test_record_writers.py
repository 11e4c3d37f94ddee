"""Delimited and regex record writers: Hive's TestStreaming / TestDelimitedInputWriter
behaviours, translated, and the `encode` contract the transaction batch relies on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from tests.streaming.writers import ALERTS, ALERTS2, EVENTS, Endpoint, one_column
from versioned.errors import InputError
from versioned.layouts.ingest_errors import InvalidColumn, SerializationError
from versioned.streaming.encoding import RejectedRecord
from versioned.streaming.record_writers import DelimitedInputWriter, StrictRegexWriter

ROOT = Path(__file__).resolve().parents[2]


def rows(writer: DelimitedInputWriter | StrictRegexWriter, records: list) -> list[dict]:
    return writer.encode(records).rows.to_pylist()


# --- field names (TestDelimitedInputWriter.testFieldReordering) ---------------------------


def test_fields_in_table_order_become_the_rows() -> None:
    writer = DelimitedInputWriter(["id", "msg"], ",", endpoint=Endpoint(ALERTS))
    assert rows(writer, [b"1,Hello streaming", b"2,Welcome to streaming"]) == [
        {"id": 1, "msg": "Hello streaming"},
        {"id": 2, "msg": "Welcome to streaming"},
    ]


def test_fields_are_reordered_to_the_table_columns_by_name() -> None:
    writer = DelimitedInputWriter(["msg", "id"], ",", spec=ALERTS)
    assert rows(writer, [b"Hello streaming,1"]) == [{"id": 1, "msg": "Hello streaming"}]


@pytest.mark.parametrize("dropped", [None, "", "  "])
def test_a_field_named_none_or_blank_is_dropped(dropped: str | None) -> None:
    writer = DelimitedInputWriter(["id", dropped, "msg"], ",", spec=ALERTS)
    assert rows(writer, [b"1,x,Hello streaming"]) == [{"id": 1, "msg": "Hello streaming"}]


def test_columns_no_field_names_are_null() -> None:
    writer = DelimitedInputWriter(["note", "id"], ",", spec=EVENTS)
    assert rows(writer, [b"hi,7"]) == [{"id": 7, "kind": None, "note": "hi"}]


def test_field_names_match_columns_case_insensitively() -> None:
    writer = DelimitedInputWriter([" ID", "Msg"], ",", spec=ALERTS)
    assert rows(writer, [b"1,a"]) == [{"id": 1, "msg": "a"}]


def test_an_unknown_field_name_is_an_invalid_column_naming_it() -> None:
    with pytest.raises(InvalidColumn, match=r"field 1 names column 'mgs'.*id, msg"):
        DelimitedInputWriter(["id", "mgs"], ",", spec=ALERTS)


def test_a_partition_column_is_not_a_field_its_value_comes_from_the_endpoint() -> None:
    with pytest.raises(InvalidColumn, match=r"partition column 'country'.*endpoint"):
        DelimitedInputWriter(["id", "country"], ",", spec=ALERTS)


def test_more_field_names_than_data_columns_is_an_invalid_column() -> None:
    with pytest.raises(InvalidColumn, match=r"3 field names.*2 data column"):
        DelimitedInputWriter(["id", "msg", "id"], ",", spec=ALERTS2)


def test_a_column_named_twice_is_an_invalid_column() -> None:
    with pytest.raises(InvalidColumn, match="fields 0 and 2 both name column 'id'"):
        DelimitedInputWriter(["id", None, "ID"], ",", spec=EVENTS)


def test_an_invalid_column_is_raised_before_any_record() -> None:
    with pytest.raises(InvalidColumn) as raised:
        DelimitedInputWriter(["nope"], ",", spec=ALERTS)
    assert raised.value.column == "nope"


def test_a_writer_needs_a_table_and_a_delimiter() -> None:
    with pytest.raises(InputError, match="endpoint= or spec="):
        DelimitedInputWriter(["id"], ",")
    with pytest.raises(InputError, match="delimiter"):
        DelimitedInputWriter(["id"], "", spec=ALERTS)
    with pytest.raises(InputError, match="different table"):
        DelimitedInputWriter(["id"], ",", endpoint=Endpoint(ALERTS), spec=ALERTS2)


# --- records: field counts, delimiters, text ------------------------------------------------


def test_a_record_with_fewer_fields_has_nulls_in_the_missing_ones_as_hive_pads() -> None:
    writer = DelimitedInputWriter(["id", "kind", "note"], ",", spec=EVENTS)
    assert rows(writer, [b"1,click", b"2"]) == [
        {"id": 1, "kind": "click", "note": None},
        {"id": 2, "kind": None, "note": None},
    ]


def test_fields_past_the_named_ones_are_ignored_as_hive_ignores_them() -> None:
    writer = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS)
    assert rows(writer, [b"1,Hello,extra,more"]) == [{"id": 1, "msg": "Hello"}]


def test_exact_fields_rejects_a_record_with_another_number_of_fields() -> None:
    writer = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS, exact_fields=True)
    with pytest.raises(SerializationError, match=r"record 1 .*has 3 field\(s\).*expected 2"):
        writer.encode([b"1,a", b"2,b,c"])
    with pytest.raises(SerializationError, match=r"record 0 .*has 1 field\(s\)"):
        writer.encode([b"1"])


@pytest.mark.parametrize(
    ("delimiter", "record"),
    [
        ("\t", b"1\tHello, streaming"),
        ("|", b"1|Hello, streaming"),  # a regex metacharacter, taken literally
        ("||", b"1||Hello, streaming"),
        ("::", b"1::Hello, streaming"),
        ("\x01", b"1\x01Hello, streaming"),  # Hive's default field separator
        ("\u00a7", "1\u00a7Hello, streaming"),  # a non-ASCII delimiter
    ],
)
def test_the_delimiter_is_literal_text_of_any_length(delimiter: str, record: bytes | str) -> None:
    writer = DelimitedInputWriter(["id", "msg"], delimiter, spec=ALERTS)
    assert rows(writer, [record]) == [{"id": 1, "msg": "Hello, streaming"}]


def test_quotes_are_not_special() -> None:
    writer = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS)
    assert rows(writer, [b'1,"Hello,world"']) == [{"id": 1, "msg": '"Hello'}]


def test_a_line_break_inside_a_record_stays_in_its_field() -> None:
    writer = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS)
    assert rows(writer, [b"1,two\nlines\r\n"]) == [{"id": 1, "msg": "two\nlines\r\n"}]


def test_an_empty_field_is_null_in_every_column_type_as_in_a_csv_feed() -> None:
    writer = DelimitedInputWriter(["id", "kind", "note"], ",", spec=EVENTS)
    assert rows(writer, [b"1,,"]) == [{"id": 1, "kind": None, "note": None}]


def test_backslash_n_is_text_unless_it_is_the_null_marker() -> None:
    plain = DelimitedInputWriter(["id", "kind"], ",", spec=EVENTS)
    assert rows(plain, [b"1,\\N"]) == [{"id": 1, "kind": "\\N", "note": None}]
    hive = DelimitedInputWriter(["id", "kind"], ",", spec=EVENTS, null_marker="\\N")
    assert rows(hive, [b"1,\\N"]) == [{"id": 1, "kind": None, "note": None}]


def test_spaces_around_a_value_are_ignored_except_in_text_columns() -> None:
    writer = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS)
    assert rows(writer, [b" 1 , Hello "]) == [{"id": 1, "msg": " Hello "}]


def test_non_ascii_text_is_kept_from_bytes_and_str_records() -> None:
    writer = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS)
    text = "Grüße, 世界 🌍"
    assert rows(writer, [f"1,{text}".encode(), f"2,{text}"]) == [
        {"id": 1, "msg": "Grüße"},  # the comma in the text is a delimiter
        {"id": 2, "msg": "Grüße"},
    ]
    tabbed = DelimitedInputWriter(["id", "msg"], "\t", spec=ALERTS)
    assert rows(tabbed, [f"3\t{text}".encode()]) == [{"id": 3, "msg": text}]


def test_a_record_that_is_not_utf8_is_rejected() -> None:
    writer = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS, dead_letter=True)
    out = writer.encode([b"1,ok", b"2,caf\xe9"])
    assert out.rows.to_pylist() == [{"id": 1, "msg": "ok"}]
    assert out.rejected == (
        RejectedRecord(
            1,
            b"2,caf\xe9",
            "record is not valid UTF-8; fix the encoding, or set table property "
            "replace_invalid_utf8=true",
        ),
    )


def test_replace_invalid_utf8_repairs_the_record_and_counts_it() -> None:
    spec = one_column("STRING", replace_invalid_utf8="true")
    writer = DelimitedInputWriter(["id", "v"], ",", spec=spec)
    out = writer.encode([b"1,caf\xe9", b"2,ok"])
    assert out.rows.to_pylist() == [{"id": 1, "v": "caf\ufffd"}, {"id": 2, "v": "ok"}]
    assert (out.rejected, out.coerced) == ((), 1)


# --- the encode contract ---------------------------------------------------------------------


def test_rows_have_the_data_columns_in_table_order_with_their_types() -> None:
    writer = DelimitedInputWriter(["note", "kind", "id"], ",", spec=EVENTS)
    out = writer.encode([b"n,k,1"])
    assert out.rows.schema == pa.schema(
        [pa.field("id", pa.int64()), pa.field("kind", pa.string()), pa.field("note", pa.string())]
    )


def test_no_records_encode_to_an_empty_table() -> None:
    out = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS).encode([])
    assert out.rows.num_rows == 0 and out.rows.column_names == ["id", "msg"]
    assert out.rejected == ()


def test_a_bad_record_raises_a_serialization_error_naming_it_and_nothing_is_returned() -> None:
    writer = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS)
    with pytest.raises(SerializationError) as raised:
        writer.encode([b"1,a", b"two,b", b"3,c", b",d"])
    error = raised.value
    assert str(error).startswith(
        "record 1 cannot be written to testing.alerts: column id: 'two' is not an INT "
        "(2 of 4 record(s) rejected, none of them written)"
    )
    assert "dead_letter=True" in str(error)
    assert (error.index, error.reason, error.rejected, error.records) == (
        1,
        "column id: 'two' is not an INT",
        2,
        4,
    )


def test_the_writer_stays_usable_after_a_serialization_error() -> None:
    writer = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS)
    with pytest.raises(SerializationError):
        writer.encode([b"x,a"])
    assert rows(writer, [b"1,a"]) == [{"id": 1, "msg": "a"}]


def test_dead_letter_keeps_good_records_in_order_and_returns_the_bad_with_reasons() -> None:
    writer = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS, dead_letter=True)
    out = writer.encode([b"1,a", "two,b", b"3,c", b",d", b"5,e"])
    assert out.rows.to_pylist() == [
        {"id": 1, "msg": "a"},
        {"id": 3, "msg": "c"},
        {"id": 5, "msg": "e"},
    ]
    assert out.rejected == (
        RejectedRecord(1, b"two,b", "column id: 'two' is not an INT"),
        RejectedRecord(3, b",d", "primary key column id is null"),
    )


def test_every_problem_of_a_record_is_listed() -> None:
    writer = DelimitedInputWriter(["id", "note"], ",", spec=EVENTS, dead_letter=True)
    (rejected,) = writer.encode([b"x,far too long a note"]).rejected
    assert rejected.reason == (
        "column id: 'x' is not a BIGINT; column note: 'far too long a note' is longer than "
        "VARCHAR(10)"
    )


def test_a_few_bad_values_among_many_are_found_exactly() -> None:
    writer = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS, dead_letter=True)
    records = [f"{i},m".encode() for i in range(5000)]
    records[1234] = b"2147483648,m"  # the shape of an INT, out of its range
    records[4321] = b"99999999999999999999999,m"
    out = writer.encode(records)
    assert [r.index for r in out.rejected] == [1234, 4321]
    assert out.rows.num_rows == 4998


def test_a_record_must_be_bytes_or_str() -> None:
    writer = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS)
    with pytest.raises(TypeError, match="bytes or str, got int"):
        writer.encode([b"1,a", 2])
    with pytest.raises(TypeError, match="NoneType"):
        writer.encode([None])


def test_records_may_be_any_iterable() -> None:
    writer = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS)
    assert writer.encode(f"{i},m" for i in range(3)).rows.num_rows == 3


def test_the_writers_need_no_spark() -> None:
    code = (
        "import sys, versioned.streaming.record_writers, versioned.layouts.ingest_errors; "
        "bad = sorted(m for m in sys.modules if m.startswith(('pyspark', 'versioned.engine'))); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# --- StrictRegexWriter (testTransactionBatchCommit_Regex) ---------------------------------


@pytest.mark.parametrize(
    ("regex", "record"),
    [(r"([^,]*),(.*)", b"1,Hello streaming"), (r"([^:]*):(.*)", b"1:Hello streaming")],
)
def test_regex_groups_map_to_the_data_columns_in_order(regex: str, record: bytes) -> None:
    writer = StrictRegexWriter(regex, endpoint=Endpoint(ALERTS))
    assert rows(writer, [record]) == [{"id": 1, "msg": "Hello streaming"}]


def test_a_record_the_regex_does_not_match_fully_is_a_serialization_error() -> None:
    writer = StrictRegexWriter(r"(\d+),(\w+)", spec=ALERTS)
    with pytest.raises(SerializationError, match=r"record 1 .*does not match the regular"):
        writer.encode([b"1,Hello", b"1,Hello streaming"])


def test_regex_dead_letters_keep_the_matching_records() -> None:
    writer = StrictRegexWriter(r"([^,]*),(.*)", spec=ALERTS, dead_letter=True)
    out = writer.encode([b"1,a", b"no comma", b"3,c"])
    assert [r["id"] for r in out.rows.to_pylist()] == [1, 3]
    assert [r.index for r in out.rejected] == [1]


def test_an_empty_or_absent_regex_group_is_null() -> None:
    writer = StrictRegexWriter(r"(\d+)(?:,(.*))?", spec=ALERTS)
    assert rows(writer, [b"1", b"2,"]) == [{"id": 1, "msg": None}, {"id": 2, "msg": None}]


def test_regex_dot_matches_line_breaks_as_in_hives_regex_serde() -> None:
    writer = StrictRegexWriter(r"([^,]*),(.*)", spec=ALERTS)
    assert rows(writer, [b"1,two\nlines"]) == [{"id": 1, "msg": "two\nlines"}]


def test_a_regex_needs_one_group_per_data_column() -> None:
    with pytest.raises(InvalidColumn, match=r"1 capturing group.*2 data column"):
        StrictRegexWriter(r"(.*)", spec=ALERTS)
    with pytest.raises(InvalidColumn, match="3 capturing group"):
        StrictRegexWriter(r"(.*),(.*),(.*)", spec=ALERTS)


def test_a_regex_that_does_not_compile_is_a_serialization_error() -> None:
    with pytest.raises(SerializationError, match="does not compile"):
        StrictRegexWriter(r"([^,]*", spec=ALERTS)
