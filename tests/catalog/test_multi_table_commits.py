"""One transaction committing to several tables at once (`MetaStore.commit_tables`): every
table gets its commit or none does; runs on SQLite and PostgreSQL."""

from __future__ import annotations

import time

import pytest

from tests.catalog.conftest import ORDERS, orders_spec
from versioned.catalog import FileAdd, MetaStore, PartitionCommit, PartitionInfo, TableCommit
from versioned.errors import (
    CommitConflictError,
    InputError,
    TransactionExpiredError,
    TransactionStateError,
)
from versioned.names import TableName

RETURNS = TableName("sales", "returns")
P1 = ["s1", "2024-01-01"]


def _change(part: PartitionInfo, txn: int, **guard: object) -> PartitionCommit:
    add = (FileAdd(part.id, f"{part.path}/delta_{txn}/bucket_00000", "delta", txn, 10, 1),)
    return PartitionCommit(part.id, add=add, **guard)  # type: ignore[arg-type]


@pytest.fixture
def parts(store: MetaStore) -> tuple[PartitionInfo, PartitionInfo]:
    store.create_table(orders_spec())
    store.create_table(orders_spec(RETURNS))
    return store.add_partition(ORDERS, P1), store.add_partition(RETURNS, P1)


def test_a_transaction_commits_to_every_table_at_once(
    store: MetaStore, parts: tuple[PartitionInfo, PartitionInfo]
) -> None:
    orders, returns = parts
    txn = store.begin()
    infos = store.commit_tables(
        txn,
        [
            TableCommit(RETURNS, "mutate", (_change(returns, txn, check_head=False),)),
            TableCommit(ORDERS, "mutate", (_change(orders, txn, check_head=False),), {"n": 1}),
        ],
    )
    assert [i.table_id for i in infos] == [store.table(RETURNS).id, store.table(ORDERS).id]
    assert [c.txn_id for c in store.history(ORDERS)] == [txn]
    assert [c.metrics for c in store.history(ORDERS)] == [{"n": 1}]
    assert [c.txn_id for c in store.history(RETURNS)] == [txn]
    assert len(store.snapshot(ORDERS).files) == len(store.snapshot(RETURNS).files) == 1
    assert store.transaction(txn).state == "committed"


def test_a_conflict_in_one_table_writes_nothing_in_any_and_leaves_the_transaction_open(
    store: MetaStore, parts: tuple[PartitionInfo, PartitionInfo]
) -> None:
    orders, returns = parts
    txn = store.begin()
    stale = _change(returns, txn, expected_head=12345, new_head=txn)  # the head is None
    with pytest.raises(CommitConflictError):
        store.commit_tables(
            txn,
            [
                TableCommit(ORDERS, "mutate", (_change(orders, txn, check_head=False),)),
                TableCommit(RETURNS, "mutate", (stale,)),
            ],
        )
    assert store.history(ORDERS) == store.history(RETURNS) == []
    assert store.snapshot(ORDERS).files == ()
    assert store.transaction(txn).state == "open"
    store.commit_tables(txn, [TableCommit(ORDERS, "mutate", (_change(orders, txn),))])
    assert [c.txn_id for c in store.history(ORDERS)] == [txn]


def test_committing_a_table_twice_or_no_table_is_refused(
    store: MetaStore, parts: tuple[PartitionInfo, PartitionInfo]
) -> None:
    orders, _ = parts
    txn = store.begin()
    one = TableCommit(ORDERS, "mutate", (_change(orders, txn, check_head=False),))
    with pytest.raises(InputError, match="once"):
        store.commit_tables(txn, [one, TableCommit("sales.orders", "mutate", ())])
    with pytest.raises(InputError):
        store.commit_tables(txn, [])
    assert store.transaction(txn).state == "open"


def test_a_committed_or_expired_transaction_commits_nothing(
    store: MetaStore, parts: tuple[PartitionInfo, PartitionInfo]
) -> None:
    orders, returns = parts
    done = store.begin()
    store.commit_transaction(done)
    with pytest.raises(TransactionStateError):
        store.commit_tables(done, [TableCommit(ORDERS, "mutate", (_change(orders, done),))])
    gone = store.begin(timeout_s=0.001)
    time.sleep(0.05)
    with pytest.raises(TransactionExpiredError):
        store.commit_tables(gone, [TableCommit(RETURNS, "mutate", (_change(returns, gone),))])
    assert store.history(ORDERS) == store.history(RETURNS) == []
    assert store.transaction(gone).state == "aborted"


def test_add_partitions_creates_the_missing_ones_in_one_call(
    store: MetaStore, parts: tuple[PartitionInfo, PartitionInfo]
) -> None:
    orders, _ = parts
    got = store.add_partitions(ORDERS, [P1, ["s2", "2024-01-02"], ["s2", ""]])
    assert got[0].id == orders.id
    assert [p.values for p in got[1:]] == [("s2", "2024-01-02"), ("s2", None)]
    assert len(store.partitions(ORDERS)) == 3
