"""Hive 2 lock semantics: compatibility, table/partition overlap, waiting and fairness."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from tests.catalog.conftest import ORDERS
from versioned.catalog import LockInfo, MetaStore, TableInfo
from versioned.errors import LockTimeoutError, NoSuchPartitionError, TransactionStateError

P1 = ["s1", "2024-01-01"]
P2 = ["s2", "2024-01-01"]


@pytest.fixture
def parts(store: MetaStore, orders: TableInfo) -> None:
    store.add_partition(ORDERS, P1)
    store.add_partition(ORDERS, P2)


def _waiting(store: MetaStore) -> list[LockInfo]:
    return [lock for lock in store.locks(ORDERS) if lock.state == "waiting"]


def _until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


@pytest.mark.usefixtures("parts")
def test_shared_write_waits_for_shared_write_and_times_out(store: MetaStore) -> None:
    first, second = store.open_transactions(2)
    held = store.lock(first, ORDERS, "shared_write", partition=P1)
    assert held.state == "acquired"
    started = time.monotonic()
    with pytest.raises(LockTimeoutError) as raised:
        store.lock(second, ORDERS, "shared_write", partition=P1, wait_s=0.4)
    assert time.monotonic() - started >= 0.4
    assert vars(raised.value)["blocking_txn_id"] == first
    assert raised.value.retryable
    # The timed-out request is gone; the holder keeps its lock.
    assert [(lock.txn_id, lock.state) for lock in store.locks(ORDERS)] == [(first, "acquired")]


@pytest.mark.usefixtures("parts")
def test_compatible_locks_are_granted_at_once(store: MetaStore) -> None:
    a, b, c, d = store.open_transactions(4)
    assert store.lock(a, ORDERS, "shared_read", partition=P1, wait_s=0).state == "acquired"
    assert store.lock(b, ORDERS, "shared_write", partition=P1, wait_s=0).state == "acquired"
    assert store.lock(c, ORDERS, "shared_read", wait_s=0).state == "acquired"  # table level
    # shared_write on another partition does not conflict with shared_write on P1.
    assert store.lock(d, ORDERS, "shared_write", partition=P2, wait_s=0).state == "acquired"
    assert len(store.locks(ORDERS)) == 4


@pytest.mark.usefixtures("parts")
def test_exclusive_table_lock_blocks_partition_locks_and_vice_versa(store: MetaStore) -> None:
    owner, reader, writer = store.open_transactions(3)
    store.lock(owner, ORDERS, "exclusive")
    with pytest.raises(LockTimeoutError):
        store.lock(reader, ORDERS, "shared_read", partition=P2, wait_s=0.2)
    store.commit_transaction(owner)
    store.lock(writer, ORDERS, "shared_write", partition=P2, wait_s=0)
    late = store.begin()
    with pytest.raises(LockTimeoutError):
        store.lock(late, ORDERS, "exclusive", wait_s=0.2)
    with pytest.raises(LockTimeoutError):
        store.lock(late, ORDERS, "shared_write", wait_s=0.2)  # table-level SW vs partition SW
    assert store.lock(late, ORDERS, "shared_read", wait_s=0).state == "acquired"


@pytest.mark.usefixtures("parts")
def test_waiting_lock_is_granted_when_the_holder_commits(
    store: MetaStore, connect: Callable[[str], MetaStore]
) -> None:
    holder, waiter = store.open_transactions(2)
    store.lock(holder, ORDERS, "exclusive")
    other = connect("alice")
    releaser = threading.Timer(0.5, other.commit_transaction, args=(holder,))
    started = time.monotonic()
    releaser.start()
    try:
        lock = store.lock(waiter, ORDERS, "shared_write", partition=P1, wait_s=20)
    finally:
        releaser.join()
    assert lock.state == "acquired"
    assert time.monotonic() - started >= 0.45
    assert store.transaction(holder).state == "committed"


@pytest.mark.usefixtures("parts")
def test_waiting_lock_is_granted_when_the_holder_expires(store: MetaStore) -> None:
    holder = store.begin(timeout_s=0.5)
    waiter = store.begin(timeout_s=60)
    store.lock(holder, ORDERS, "exclusive", partition=P1)
    lock = store.lock(waiter, ORDERS, "exclusive", partition=P1, wait_s=20)
    assert lock.state == "acquired"
    assert store.transaction(holder).state == "aborted"


@pytest.mark.usefixtures("parts")
def test_a_later_request_does_not_overtake_an_earlier_waiting_one(
    store: MetaStore, connect: Callable[[str], MetaStore]
) -> None:
    writer, exclusive, reader = store.open_transactions(3)
    store.lock(writer, ORDERS, "shared_write", partition=P1)
    granted: list[LockInfo] = []
    other = connect("alice")
    waiting = threading.Thread(
        target=lambda: granted.append(other.lock(exclusive, ORDERS, "exclusive", wait_s=20))
    )
    waiting.start()
    try:
        _until(lambda: len(_waiting(store)) == 1)
        # shared_read is compatible with the held shared_write, but the exclusive request
        # came first: the reader queues behind it.
        with pytest.raises(LockTimeoutError) as raised:
            store.lock(reader, ORDERS, "shared_read", partition=P1, wait_s=0.3)
        assert vars(raised.value)["blocking_txn_id"] == exclusive
        store.commit_transaction(writer)
    finally:
        waiting.join(timeout=30)
    assert granted and granted[0].state == "acquired"
    with pytest.raises(LockTimeoutError):
        store.lock(reader, ORDERS, "shared_read", partition=P1, wait_s=0.1)
    store.commit_transaction(exclusive)
    assert store.lock(reader, ORDERS, "shared_read", partition=P1, wait_s=0).state == "acquired"


@pytest.mark.usefixtures("parts")
def test_locks_are_released_on_commit_and_abort(store: MetaStore) -> None:
    committed, aborted, last = store.open_transactions(3)
    store.lock(committed, ORDERS, "exclusive", partition=P1)
    store.lock(aborted, ORDERS, "exclusive", partition=P2)
    store.commit_transaction(committed)
    store.abort(aborted)
    assert store.locks(ORDERS) == []
    assert store.lock(last, ORDERS, "exclusive", wait_s=0).state == "acquired"


@pytest.mark.usefixtures("parts")
def test_a_transaction_does_not_conflict_with_itself(store: MetaStore) -> None:
    txn = store.begin()
    first = store.lock(txn, ORDERS, "shared_write", partition=P1)
    assert store.lock(txn, ORDERS, "shared_read", partition=P1, wait_s=0) == first
    upgraded = store.lock(txn, ORDERS, "exclusive", partition=P1, wait_s=0)
    assert upgraded.mode == "exclusive" and upgraded.state == "acquired"
    assert store.lock(txn, ORDERS, "exclusive", wait_s=0).state == "acquired"


@pytest.mark.usefixtures("parts")
def test_lock_needs_an_open_transaction_and_an_existing_partition(store: MetaStore) -> None:
    txn, done = store.open_transactions(2)
    store.commit_transaction(done)
    with pytest.raises(TransactionStateError):
        store.lock(done, ORDERS, "shared_read")
    with pytest.raises(NoSuchPartitionError):
        store.lock(txn, ORDERS, "shared_read", partition=["nowhere", "2024-01-01"])
    assert store.locks(ORDERS) == []


@pytest.mark.usefixtures("parts")
def test_locks_lists_every_table_the_user_may_read(store: MetaStore) -> None:
    txn = store.begin()
    lock = store.lock(txn, ORDERS, "shared_read", partition=P1)
    assert store.locks() == [lock]
    assert lock.partition_id == store.partition(ORDERS, P1).id
    assert lock.table_id == store.table(ORDERS).id
