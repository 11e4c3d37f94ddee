"""Untrusted names never reach SQL or a path: they are rejected with InvalidNameError."""

from __future__ import annotations

import pytest

from tests.catalog.conftest import ORDERS, orders_spec
from versioned.catalog import MetaStore, TableInfo
from versioned.errors import InvalidNameError
from versioned.names import TableName

HOSTILE = ["../x", "a;drop table tables", "", " ", "x" * 200, "ünïcødé", "a.b.c", "a/b", "1abc"]


@pytest.mark.parametrize("bad", HOSTILE, ids=repr)
def test_hostile_table_names_are_rejected(store: MetaStore, orders: TableInfo, bad: str) -> None:
    with pytest.raises(InvalidNameError):
        TableName.parse(bad)
    with pytest.raises(InvalidNameError):
        TableName.parse(f"sales.{bad}")
    # A TableName built by hand is validated again at the catalog boundary.
    for name in (TableName("sales", bad), TableName(bad, "orders")):
        with pytest.raises(InvalidNameError):
            store.table(name)
        with pytest.raises(InvalidNameError):
            store.add_partition(name, ["s", "d"])
        with pytest.raises(InvalidNameError):
            store.create_table(orders_spec(name))
    with pytest.raises(InvalidNameError):
        store.grant("mallory", "read", database=bad)
    with pytest.raises(InvalidNameError):
        store.grant("mallory", "read", database="sales", table=bad)
    with pytest.raises(InvalidNameError):
        store.tables(bad)
    assert [t.spec.name for t in store.tables()] == [ORDERS]


@pytest.mark.parametrize("bad", ["", "a b", "x;y", "../x", "a" * 200, "é"], ids=repr)
def test_hostile_principals_are_rejected(
    catalog_url: str, store: MetaStore, orders: TableInfo, bad: str
) -> None:
    with pytest.raises(InvalidNameError):
        store.grant(bad, "read", database="sales")
    with pytest.raises(InvalidNameError):
        MetaStore.connect(catalog_url, bad)
    assert store.grants(database="sales") == []


def test_names_are_case_insensitive(store: MetaStore, orders: TableInfo) -> None:
    assert store.table(TableName("SALES", "Orders")).id == orders.id
    assert store.table("Sales.ORDERS").id == orders.id  # type: ignore[arg-type]
