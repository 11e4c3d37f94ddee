"""Matching feed columns to a table: pure Python, no Spark."""

from __future__ import annotations

import pytest

from versioned.engine.feeds.schema import map_columns, required_columns
from versioned.errors import SchemaError
from versioned.schema import TableSpec

SPEC = TableSpec.build(
    "db.sales",
    columns="store_id INT NOT NULL, sell_id BIGINT NOT NULL, qty INT NOT NULL, note STRING, "
    "change_ts TIMESTAMP",
    primary_key="sell_id",
    partition_by="store_id",
    ordering_column="change_ts",
)


def test_required_columns_are_key_partition_and_ordering() -> None:
    assert required_columns(SPEC) == ("sell_id", "store_id", "change_ts")


def test_columns_match_ignoring_case_and_spaces_and_keep_input_names() -> None:
    mapping = map_columns(
        ["Sell_ID", "STORE_ID", " qty", "note ", "change_ts", "Op"],
        SPEC,
        source="feed.csv",
        op_code_column="op",
    )
    assert mapping.present == {
        "store_id": "STORE_ID",
        "sell_id": "Sell_ID",
        "qty": " qty",
        "note": "note ",
        "change_ts": "change_ts",
    }
    assert mapping.op_column == "Op"
    assert mapping.filled == ()


def test_missing_key_partition_and_ordering_columns_are_named() -> None:
    with pytest.raises(SchemaError) as caught:
        map_columns(["qty", "note"], SPEC, source="feed.csv")
    message = str(caught.value)
    assert "feed.csv" in message and "db.sales" in message
    assert "missing key column(s) store_id, sell_id, change_ts" in message
    assert caught.value.missing == ("store_id", "sell_id", "change_ts")  # type: ignore[attr-defined]


def test_unknown_columns_are_named_and_the_fix_is_said() -> None:
    with pytest.raises(SchemaError) as caught:
        map_columns(
            ["store_id", "sell_id", "qty", "note", "change_ts", "colour", "size"],
            SPEC,
            source="feed.csv",
        )
    assert "unknown column(s) colour, size" in str(caught.value)
    assert "add them to the table" in str(caught.value)
    assert caught.value.unknown == ("colour", "size")  # type: ignore[attr-defined]


def test_missing_data_columns_fail_the_batch_and_suggest_partial() -> None:
    for given, missing in [(["note"], "qty"), (["qty"], "note"), ([], "qty, note")]:
        with pytest.raises(SchemaError) as caught:
            map_columns(["store_id", "sell_id", "change_ts", *given], SPEC, source="f")
        assert f"missing column(s) {missing}" in str(caught.value)
        assert "--partial" in str(caught.value)
        assert caught.value.missing == tuple(missing.split(", "))  # type: ignore[attr-defined]


def test_partial_update_keeps_missing_columns_nullable_or_not() -> None:
    mapping = map_columns(["store_id", "sell_id", "change_ts"], SPEC, source="f", partial=True)
    assert mapping.filled == ("qty", "note")
    with pytest.raises(SchemaError, match=r"missing key column\(s\) change_ts"):
        map_columns(["store_id", "sell_id", "qty"], SPEC, source="f", partial=True)


def test_missing_op_code_column_raises() -> None:
    with pytest.raises(SchemaError, match="op code column 'op' is missing"):
        map_columns(
            ["store_id", "sell_id", "qty", "change_ts"], SPEC, source="f", op_code_column="op"
        )


def test_names_differing_only_in_case_are_ambiguous() -> None:
    with pytest.raises(SchemaError, match="differ only in case: SELL_ID, sell_id"):
        map_columns(["store_id", "sell_id", "SELL_ID", "qty", "change_ts"], SPEC, source="f")


def test_derived_and_ignored_columns() -> None:
    mapping = map_columns(
        ["store_id", "sell_id", "qty", "__op", "__deleted"],
        SPEC,
        source="f",
        derived={"change_ts"},
        ignore=lambda name: name.startswith("__"),
        partial=True,
    )
    assert set(mapping.present) == {"store_id", "sell_id", "qty"}
    assert mapping.filled == ("note",)


def test_a_partial_update_may_lack_partition_columns_outside_the_key_for_its_deletes() -> None:
    """SPEC's key is sell_id: a delete of it finds its row in any store_id."""
    mapping = map_columns(["sell_id", "change_ts"], SPEC, source="f", partial=True)
    assert set(mapping.present) == {"sell_id", "change_ts"}
    assert mapping.filled == ("qty", "note")  # the partition column is not kept: it is absent
    with pytest.raises(SchemaError) as caught:
        map_columns(["sell_id", "qty", "note", "change_ts"], SPEC, source="f")
    message = str(caught.value)
    assert "missing key column(s) store_id" in message
    assert "a file of deletes by key alone may leave out store_id as a partial update" in message


def test_a_partition_column_in_the_key_is_needed_by_deletes_too() -> None:
    spec = TableSpec.build(
        "db.s", columns="store_id INT, sell_id BIGINT, qty INT", primary_key="store_id,sell_id",
        partition_by="store_id",
    )  # fmt: skip
    with pytest.raises(SchemaError) as caught:
        map_columns(["sell_id"], spec, source="f", partial=True)
    message = str(caught.value)
    assert "missing key column(s) store_id" in message
    assert "store_id is a partition column in the primary key, so every row, deletes too" in (
        message
    )
