"""Partitions: exact values, safe escaped paths, idempotent and race-safe creation."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable

import pytest

from tests.catalog import workers
from tests.catalog.conftest import ORDERS
from versioned.catalog import MetaStore, TableInfo
from versioned.errors import InputError, NoSuchPartitionError, SchemaError
from versioned.names import TableName
from versioned.schema import TableSpec
from versioned.storage.partition_paths import DEFAULT_PARTITION_NAME, parse_partition_path

HOSTILE = [
    "../x",
    "a/b",
    "%",
    "%2F",
    "\n",
    "ünïcødé ☃",
    "=",
    "k=v/..",
    "..",
    ".",
    " ",
    "\\",
    "\x00",
]


@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_hostile_partition_values_round_trip_exactly(
    store: MetaStore, orders: TableInfo, value: str
) -> None:
    created = store.add_partition(ORDERS, [value, "2024-01-01"])
    assert created.values == (value, "2024-01-01")
    assert store.partition(ORDERS, [value, "2024-01-01"]) == created
    assert store.partitions(ORDERS) == [created]
    segments = created.path.split("/")
    assert len(segments) == 2
    assert segments[0].startswith("store_id=") and segments[1] == "day=2024-01-01"
    assert ".." not in segments and "." not in segments
    assert parse_partition_path(created.path) == [("store_id", value), ("day", "2024-01-01")]


def test_distinct_values_give_distinct_partitions_and_paths(
    store: MetaStore, orders: TableInfo
) -> None:
    values: list[str | None] = [*HOSTILE, None, "x", "X", "a%2Fb", "a%252Fb"]
    created = [store.add_partition(ORDERS, [v, "d"]) for v in values]
    assert len({p.id for p in created}) == len(values)
    assert len({p.path for p in created}) == len(values)
    assert sorted(p.values[0] or "" for p in store.partitions(ORDERS)) == sorted(
        v or "" for v in values
    )


def test_empty_string_is_the_default_partition_like_none(
    store: MetaStore, orders: TableInfo
) -> None:
    from_none = store.add_partition(ORDERS, [None, None])
    from_empty = store.add_partition(ORDERS, ["", ""])
    assert from_none == from_empty
    assert from_none.values == (None, None)
    assert from_none.path == f"store_id={DEFAULT_PARTITION_NAME}/day={DEFAULT_PARTITION_NAME}"
    assert store.partition(ORDERS, ["", None]) == from_none


def test_adding_a_partition_twice_returns_the_same_row(store: MetaStore, orders: TableInfo) -> None:
    first = store.add_partition(ORDERS, ["s1", "d1"])
    assert store.add_partition(ORDERS, ("s1", "d1")) == first
    assert len(store.partitions(ORDERS)) == 1
    assert first.head_version is None and first.table_id == orders.id


def test_partition_values_must_fit_the_table(store: MetaStore, orders: TableInfo) -> None:
    with pytest.raises(SchemaError, match="partitioned by"):
        store.add_partition(ORDERS, ["only-one"])
    with pytest.raises(InputError):
        store.add_partition(ORDERS, [7, "d"])  # type: ignore[list-item]
    with pytest.raises(InputError):
        store.add_partition(ORDERS, "s1")
    with pytest.raises(InputError, match="255 bytes"):
        store.add_partition(ORDERS, ["x" * 300, "d"])
    with pytest.raises(NoSuchPartitionError, match="versioned partitions"):
        store.partition(ORDERS, ["s1", "d1"])
    assert store.partitions(ORDERS) == []


def test_an_unpartitioned_table_has_one_root_partition(store: MetaStore) -> None:
    name = TableName("sales", "flat")
    store.create_table(TableSpec.build(name, columns="id BIGINT, v STRING", primary_key="id"))
    root = store.add_partition(name, [])
    assert (root.values, root.path) == ((), "")
    assert store.add_partition(name, ()) == root


@pytest.mark.slow
def test_racing_creators_in_many_processes_all_succeed_with_one_row(
    store: MetaStore, orders: TableInfo, catalog_url: str, connect: Callable[[str], MetaStore]
) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = 6
    barrier = ctx.Barrier(procs)
    queue = ctx.Queue()
    values = ["race/../day", "2024-01-01"]
    children = [
        ctx.Process(target=workers.create_partition, args=(catalog_url, barrier, queue, values))
        for _ in range(procs)
    ]
    for child in children:
        child.start()
    results = [queue.get(timeout=120) for _ in children]
    for child in children:
        child.join(timeout=30)
    errors = [detail for status, detail in results if status != "ok"]
    assert not errors, errors[0]
    partitions = store.partitions(ORDERS)
    assert len(partitions) == 1
    assert {pid for _, pid in results} == {partitions[0].id}
    assert partitions[0].values == tuple(values)
