"""A commit may create the partitions it writes into, so a failed commit leaves none behind."""

from __future__ import annotations

import pytest

from tests.catalog.conftest import ORDERS
from versioned.catalog import FileAdd, MetaStore, PartitionCommit, TableInfo
from versioned.errors import CommitConflictError, InputError, SchemaError


def _new(values: tuple[str | None, ...], txn: int, name: str = "a") -> PartitionCommit:
    path = f"v/version_id={txn}/{name}.parquet"
    return PartitionCommit(
        None,
        new_head=txn,
        add=(FileAdd(None, path, "data", txn, 10, 1),),
        values=values,
    )


def test_a_commit_creates_its_new_partitions_and_their_files_belong_to_them(
    store: MetaStore, orders: TableInfo
) -> None:
    txn = store.begin()
    store.commit(txn, ORDERS, operation="upsert", partitions=[_new(("s1", None), txn)])
    (part,) = store.partitions(ORDERS)
    assert part.values == ("s1", None) and part.head_version == txn
    assert [f.partition_id for f in store.snapshot(ORDERS).files] == [part.id]


def test_a_failed_commit_leaves_no_partition_behind(store: MetaStore, orders: TableInfo) -> None:
    existing = store.add_partition(ORDERS, ["s0", "d"])
    first = store.begin()
    store.commit(
        first,
        ORDERS,
        operation="upsert",
        partitions=[PartitionCommit(existing.id, expected_head=None, new_head=first)],
    )
    txn = store.begin()
    stale = PartitionCommit(existing.id, expected_head=None, new_head=txn)  # head moved on
    with pytest.raises(CommitConflictError):
        store.commit(txn, ORDERS, operation="upsert", partitions=[_new(("s1", "x"), txn), stale])
    assert [p.values for p in store.partitions(ORDERS)] == [("s0", "d")]


def test_a_partition_created_meanwhile_is_found_and_its_head_guarded(
    store: MetaStore, orders: TableInfo
) -> None:
    """Two writers plan the same new partition; the second commit conflicts (and retries)."""
    a, b = store.begin(), store.begin()
    store.commit(a, ORDERS, operation="upsert", partitions=[_new(("s1", "x"), a)])
    with pytest.raises(CommitConflictError, match="head version"):
        store.commit(b, ORDERS, operation="upsert", partitions=[_new(("s1", "x"), b, "b")])
    assert len(store.partitions(ORDERS)) == 1


def test_the_same_new_partition_twice_in_one_commit_is_refused(
    store: MetaStore, orders: TableInfo
) -> None:
    txn = store.begin()
    twice = [_new(("s1", ""), txn), _new(("s1", None), txn, "b")]  # "" is the null partition
    with pytest.raises(SchemaError, match="twice in one commit"):
        store.commit(txn, ORDERS, operation="upsert", partitions=twice)
    assert store.partitions(ORDERS) == []


def test_hive_default_partition_name_is_not_a_partition_value(
    store: MetaStore, orders: TableInfo
) -> None:
    """Its directory is the null partition's and Hive reads it back as null."""
    with pytest.raises(InputError, match="null partition"):
        store.add_partition(ORDERS, ["__HIVE_DEFAULT_PARTITION__", "d"])
    txn = store.begin()
    with pytest.raises(InputError, match="null partition"):
        store.commit(
            txn,
            ORDERS,
            operation="upsert",
            partitions=[_new(("__HIVE_DEFAULT_PARTITION__", "d"), txn)],
        )
    assert store.partitions(ORDERS) == []
