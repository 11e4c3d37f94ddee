"""Numeric table properties of both layouts: one reader, one error for a bad value."""

from __future__ import annotations

import pytest

from versioned.errors import SchemaError
from versioned.layouts.acid.table_rules import driver_write_max_events
from versioned.layouts.table_properties import whole_number_property
from versioned.layouts.version_partition.table_rules import (
    bulk_load_min_bytes,
    driver_write_max_rows,
)
from versioned.schema import Column, TableName, TableSpec


def _spec(layout: str = "versioned", **properties: str) -> TableSpec:
    return TableSpec(
        name=TableName.parse("s.t"),
        columns=(Column("id", "BIGINT"), Column("v", "STRING")),
        primary_key=("id",),
        layout=layout,
        properties=properties,
    )


def test_an_unset_property_reads_its_default_and_a_set_one_its_value() -> None:
    assert whole_number_property(_spec(), "p.n", 7, "0 means none") == 7
    assert whole_number_property(_spec(**{"p.n": " 42 "}), "p.n", 7, "0 means none") == 42
    assert bulk_load_min_bytes(_spec(**{"write.bulk_load_min_bytes": "0"})) == 0
    assert driver_write_max_rows(_spec(**{"write.driver_max_rows": "10"})) == 10


@pytest.mark.parametrize("bad", ["-1", "1.5", "many", ""])
def test_a_bad_value_names_the_property_its_default_and_what_zero_means(bad: str) -> None:
    with pytest.raises(
        SchemaError,
        match=r"write\.bulk_load_min_bytes=.* whole number >= 0 "
        r"\(default 16,777,216; 0 loads every first batch in bulk\)",
    ):
        bulk_load_min_bytes(_spec(**{"write.bulk_load_min_bytes": bad}))
    with pytest.raises(SchemaError, match=r"write\.driver_max_events=.* whole number >= 0"):
        driver_write_max_events(_spec("acid", **{"write.driver_max_events": bad}))
