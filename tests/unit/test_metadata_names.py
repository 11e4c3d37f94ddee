"""The names of metadata tables: ``db.t__history`` stands for the history of ``db.t``."""

from __future__ import annotations

import pytest

from versioned.api.metadata_tables import (
    KINDS,
    check_table_name,
    metadata_name,
    metadata_target,
)
from versioned.errors import InvalidNameError
from versioned.names import TableName


def test_every_kind_round_trips_through_its_name() -> None:
    table = TableName("sales", "orders__eu")
    for kind in KINDS:
        name = metadata_name(table, kind)
        assert name == TableName("sales", f"orders__eu__{kind}")
        assert metadata_target(name) == (table, kind)


@pytest.mark.parametrize("table", ["orders", "orders__historic", "__history", "orders_history"])
def test_other_names_are_tables(table: str) -> None:
    assert metadata_target(TableName("sales", table)) is None
    check_table_name(TableName("sales", table))  # allowed


def test_a_new_table_cannot_take_a_metadata_name() -> None:
    with pytest.raises(InvalidNameError, match=r"reserved.*history metadata table of sales\.t"):
        check_table_name(TableName("sales", "t__history"))
