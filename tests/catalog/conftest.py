"""Fixtures of the catalog behaviour suite; every test runs against SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from versioned.catalog import MetaStore, TableInfo
from versioned.names import TableName
from versioned.schema import TableSpec

ORDERS = TableName("sales", "orders")


def orders_spec(name: TableName = ORDERS) -> TableSpec:
    """A table partitioned by two columns."""
    return TableSpec.build(
        name,
        columns="order_id BIGINT, store_id STRING, day STRING, total DOUBLE",
        primary_key="order_id",
        partition_by=["store_id", "day"],
    )


@pytest.fixture
def connect(catalog_url: str) -> Iterator[Callable[[str], MetaStore]]:
    """Open the test catalog as any user; every store opened is closed afterwards."""
    opened: list[MetaStore] = []

    def open_as(user: str) -> MetaStore:
        store = MetaStore.connect(catalog_url, user)
        opened.append(store)
        return store

    yield open_as
    for store in opened:
        store.close()


@pytest.fixture
def store(connect: Callable[[str], MetaStore]) -> MetaStore:
    """The catalog as ``alice``, who owns the tables the tests create."""
    return connect("alice")


@pytest.fixture
def mallory(connect: Callable[[str], MetaStore]) -> MetaStore:
    """The catalog as ``mallory``, who owns nothing."""
    return connect("mallory")


@pytest.fixture
def orders(store: MetaStore) -> TableInfo:
    """``sales.orders``, owned by alice, partitioned by (store_id, day)."""
    return store.create_table(orders_spec())
