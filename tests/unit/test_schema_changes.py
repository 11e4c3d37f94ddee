"""Which column changes a table accepts (plain Python, no Spark, no catalog)."""

from __future__ import annotations

import pytest

from versioned.errors import SchemaError
from versioned.schema import TableSpec
from versioned.schema_changes import SchemaChange, evolve, is_widening

SPEC = TableSpec.build(
    "db.t",
    columns="id INT NOT NULL, b TINYINT, s SMALLINT, n INT, f FLOAT, d DECIMAL(5,2), "
    "t STRING, p STRING",
    primary_key="id",
    partition_by="p",
)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("TINYINT", "SMALLINT"),
        ("TINYINT", "BIGINT"),
        ("SMALLINT", "INT"),
        ("INT", "BIGINT"),
        ("FLOAT", "DOUBLE"),
        ("DECIMAL(5,2)", "DECIMAL(6,2)"),
        ("DECIMAL(5,2)", "DECIMAL(38,2)"),
    ],
)
def test_lossless_widenings_are_allowed(old: str, new: str) -> None:
    assert is_widening(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("BIGINT", "INT"),
        ("INT", "INT"),
        ("DOUBLE", "FLOAT"),
        ("INT", "DOUBLE"),
        ("INT", "STRING"),
        ("DECIMAL(5,2)", "DECIMAL(4,2)"),
        ("DECIMAL(5,2)", "DECIMAL(7,3)"),
        ("STRING", "BINARY"),
        ("DATE", "TIMESTAMP"),
    ],
)
def test_narrowing_and_other_type_changes_are_not_widenings(old: str, new: str) -> None:
    assert not is_widening(old, new)


def test_added_columns_come_last_and_widened_ones_keep_their_place_and_nullability() -> None:
    spec = evolve(SPEC, SchemaChange.parse(add="note STRING, qty DECIMAL(9,0)", widen="id BIGINT"))
    assert spec.column_names == (*SPEC.column_names, "note", "qty")
    assert spec.column("id").type == "BIGINT" and not spec.column("id").nullable
    assert spec.column("qty").nullable
    assert (spec.primary_key, spec.partition_by) == (SPEC.primary_key, SPEC.partition_by)


@pytest.mark.parametrize(
    ("add", "widen", "message"),
    [
        (None, "n SMALLINT", "cannot change n from INT to SMALLINT"),
        (None, "t INT", "only widening that keeps every stored value"),
        (None, "p VARCHAR(3)", "partition column p"),
        (None, "n INT", "n is INT already"),
        (None, "n BIGINT NOT NULL", "cannot make n NOT NULL"),
        (None, "n BIGINT, n BIGINT", "widened twice"),
        ("x INT, x STRING", None, "cannot add x"),
        ("x INT NOT NULL", None, "add it nullable"),
        ("_op STRING", None, "reserved by versioned"),
    ],
)
def test_refused_changes_say_why(add: str | None, widen: str | None, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        evolve(SPEC, SchemaChange.parse(add=add, widen=widen))


def test_an_empty_change_is_refused_with_the_options_to_use() -> None:
    with pytest.raises(SchemaError, match="--add-columns"):
        SchemaChange.parse(add="  ", widen=None)
